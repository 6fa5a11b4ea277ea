package jwks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestRotationSchedule(t *testing.T) {
	const grace, ttl = 10 * time.Minute, 5 * time.Minute
	r, err := Ring{}.Rotate(ES256, t0, grace, ttl)
	if err != nil {
		t.Fatal(err)
	}
	first := r.Keys[0]
	if k, err := r.Signer(t0); err != nil || k.ID != first.ID {
		t.Fatalf("first key does not sign at once: %v, %v", k, err)
	}
	at := t0.Add(time.Hour)
	r, err = r.Rotate(EdDSA, at, grace, ttl)
	if err != nil {
		t.Fatal(err)
	}
	second := r.Keys[1]
	tests := []struct {
		name          string
		at            time.Time
		signer        string
		published     []string
		wantNoSigning bool
	}{
		{"right after rotating: old signs, both published", at, first.ID, []string{first.ID, second.ID}, false},
		{"just before the grace ends", at.Add(grace - time.Nanosecond), first.ID, []string{first.ID, second.ID}, false},
		{"grace over: new signs, old still published", at.Add(grace), second.ID, []string{first.ID, second.ID}, false},
		{"old tokens may live until ttl+skew", at.Add(grace + ttl + ClockSkew - time.Nanosecond), second.ID, []string{first.ID, second.ID}, false},
		{"old key retired", at.Add(grace + ttl + ClockSkew), second.ID, []string{second.ID}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := r.Signer(tt.at)
			if err != nil || k.ID != tt.signer {
				t.Errorf("Signer() = %s, %v; want %s", k.ID, err, tt.signer)
			}
			var got []string
			for _, k := range r.Published(tt.at) {
				got = append(got, k.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.published) {
				t.Errorf("Published() = %v, want %v", got, tt.published)
			}
		})
	}
	if got := r.Prune(at.Add(grace + ttl + ClockSkew)); len(got.Keys) != 1 || got.Keys[0].ID != second.ID {
		t.Errorf("Prune() kept %d keys, want only the new one", len(got.Keys))
	}
	if next := r.NextChange(at); !next.Equal(at.Add(grace)) {
		t.Errorf("NextChange() = %v, want the end of the grace %v", next, at.Add(grace))
	}
	if _, err := (Ring{}).Signer(t0); !errors.Is(err, ErrNoSigningKey) {
		t.Errorf("empty ring Signer() err = %v, want ErrNoSigningKey", err)
	}
}

func TestPrivateKeysNeverLeak(t *testing.T) {
	for _, alg := range []Alg{ES256, EdDSA, RS256} {
		r, err := Ring{}.Rotate(alg, t0, 0, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := r.JWKS(t0)
		if err != nil {
			t.Fatal(err)
		}
		var set struct {
			Keys []map[string]any `json:"keys"`
		}
		if err := json.Unmarshal(doc, &set); err != nil || len(set.Keys) != 1 {
			t.Fatalf("%s: JWKS %s (%v)", alg, doc, err)
		}
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			if _, ok := set.Keys[0][private]; ok {
				t.Errorf("%s: JWKS has private member %q", alg, private)
			}
		}
		if set.Keys[0]["kid"] != r.Keys[0].ID || set.Keys[0]["alg"] != string(alg) || set.Keys[0]["use"] != "sig" {
			t.Errorf("%s: JWKS key = %v", alg, set.Keys[0])
		}
		for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
			if s := fmt.Sprintf(f, r.Keys[0]); strings.Contains(s, string(r.Keys[0].Private)) || strings.Contains(s, `"d"`) {
				t.Errorf("%s: fmt %s of a key prints its private part: %s", alg, f, s)
			}
		}
	}
}

// serveJWKS serves the ring's JWKS as an edge does.
func serveJWKS(t *testing.T, ring func() Ring) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := ring().JWKS(time.Now())
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func pushRequest(t *testing.T, token, header string, body []byte) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "https://receiver.example/hook", strings.NewReader(string(body)))
	if header == "" {
		r.Header.Set("Authorization", "Bearer "+token)
	} else {
		r.Header.Set(header, token)
	}
	return r
}

func TestSignVerify(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []Alg{ES256, EdDSA, RS256} {
		t.Run(string(alg), func(t *testing.T) {
			now := time.Now()
			ring, err := Ring{}.Rotate(alg, now.Add(-time.Minute), 0, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			signer := NewSigner("https://agent.example/", time.Minute)
			signer.SetRing(ring)
			srv := serveJWKS(t, signer.Ring)
			v, err := NewVerifier(ctx, srv.URL, VerifierOptions{Audience: "https://receiver.example/hook", Issuer: "https://agent.example/"})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close(ctx)
			body := []byte(`{"statusUpdate":{"taskId":"t"}}`)
			tok, kid, err := signer.Sign(now, Token{Audience: "https://receiver.example/hook", ID: "d-1", TaskID: "t", Seq: 7, Body: body})
			if err != nil || kid != ring.Keys[0].ID {
				t.Fatalf("Sign() kid %s, %v", kid, err)
			}
			claims, err := v.Verify(ctx, pushRequest(t, tok, "", body), body)
			if err != nil {
				t.Fatalf("Verify() = %v", err)
			}
			if claims.TaskID != "t" || claims.Seq != 7 || claims.ID != "d-1" {
				t.Errorf("claims = %+v", claims)
			}
			if _, err := v.Verify(ctx, pushRequest(t, tok, "", body), body); !errors.Is(err, ErrReplayed) {
				t.Errorf("replay: err = %v, want ErrReplayed", err)
			}
			tok2, _, _ := signer.Sign(now, Token{Audience: "https://receiver.example/hook", ID: "d-2", TaskID: "t", Seq: 8, Body: body})
			tampered := []byte(strings.Replace(string(body), `"t"`, `"u"`, 1))
			if _, err := v.Verify(ctx, pushRequest(t, tok2, "", tampered), tampered); !errors.Is(err, ErrBodyMismatch) {
				t.Errorf("tampered body: err = %v, want ErrBodyMismatch", err)
			}
			if _, err := v.Verify(ctx, pushRequest(t, tok2, SignatureHeader, body), body); err != nil {
				t.Errorf("token in %s: %v", SignatureHeader, err)
			}
			other, _, _ := signer.Sign(now, Token{Audience: "https://someone.else/hook", ID: "d-3", Body: body})
			if _, err := v.Verify(ctx, pushRequest(t, other, "", body), body); err == nil {
				t.Error("token for another audience verified")
			}
			old, _, _ := signer.Sign(now.Add(-time.Hour), Token{Audience: "https://receiver.example/hook", ID: "d-4", Body: body})
			if _, err := v.Verify(ctx, pushRequest(t, old, "", body), body); err == nil {
				t.Error("expired token verified")
			}
			if _, err := v.Verify(ctx, httptest.NewRequest(http.MethodPost, "/", nil), body); !errors.Is(err, ErrNoToken) {
				t.Errorf("no token: err = %v, want ErrNoToken", err)
			}
			// A foreign key with the same kid does not verify.
			forged, _ := Ring{}.Rotate(alg, now.Add(-time.Minute), 0, time.Minute)
			forged.Keys[0].ID = ring.Keys[0].ID
			fs := NewSigner("https://agent.example/", time.Minute)
			fs.SetRing(forged)
			ftok, _, _ := fs.Sign(now, Token{Audience: "https://receiver.example/hook", ID: "d-5", Body: body})
			if _, err := v.Verify(ctx, pushRequest(t, ftok, "", body), body); err == nil {
				t.Error("token signed by a foreign key verified")
			}
		})
	}
}

func TestVerifierFindsRotatedKey(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	ring, _ := Ring{}.Rotate(ES256, now.Add(-time.Hour), 0, time.Minute)
	signer := NewSigner("iss", time.Minute)
	signer.SetRing(ring)
	srv := serveJWKS(t, signer.Ring)
	v, err := NewVerifier(ctx, srv.URL, VerifierOptions{Audience: "aud"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close(ctx)
	// The verifier cached the JWKS with the first key. Rotate with no
	// grace (the worst case): the unknown kid makes it fetch again.
	ring, _ = ring.Rotate(EdDSA, now.Add(-time.Second), 0, time.Minute)
	signer.SetRing(ring)
	tok, kid, err := signer.Sign(now, Token{Audience: "aud", ID: "x", Body: nil})
	if err != nil || kid != ring.Keys[1].ID {
		t.Fatalf("Sign() = %s, %v", kid, err)
	}
	if _, err := v.Verify(ctx, pushRequest(t, tok, "", nil), nil); err != nil {
		t.Errorf("token of a key added after the JWKS was cached: %v", err)
	}
}
