package jwks_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2abus/a2abus/jwks"
)

// The push benchmarks: what signing (on the a2abus side) and verifying (on
// the receiver's side) cost per delivery, next to the cost of the delivery
// itself, a bare keep-alive HTTP POST of the same body to a local receiver.
// TestMain prints the comparison after the benchmarks:
//
//	go test -run '^$' -bench . -benchmem ./jwks/

var benchAlgs = []jwks.Alg{jwks.ES256, jwks.EdDSA, jwks.RS256}

// benchWebhook is the audience of the benchmark tokens.
const benchWebhook = "http://127.0.0.1:9999/a2a/push"

// benchBody is a typical push body: a status update of about 300 bytes.
var benchBody = []byte(`{"statusUpdate":{"taskId":"0b9e6a52-4f0c-4d59-9a8e-7f1c2d3e4f50",` +
	`"contextId":"7d2c1b0a-9e8f-4a6b-8c5d-3e2f1a0b9c8d","status":{"state":"TASK_STATE_WORKING",` +
	`"message":{"messageId":"5f4e3d2c-1b0a-4988-8776-655443322110","role":"ROLE_AGENT",` +
	`"parts":[{"text":"working on it"}]},"timestamp":"2026-11-22T12:00:00.123456Z"},"final":false}}`)

// benchNsPerOp holds each benchmark's ns/op, for the summary TestMain
// prints: "sign/ES256", "verify/ES256", "post". A benchmark function runs
// several times with growing b.N; the last write is the reported run.
var benchNsPerOp sync.Map

func recordNsPerOp(b *testing.B, key string) {
	if b.N > 0 {
		benchNsPerOp.Store(key, float64(b.Elapsed().Nanoseconds())/float64(b.N))
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	printBenchSummary(os.Stdout)
	os.Exit(code)
}

// printBenchSummary prints each measured sign and verify cost as a
// multiple of a bare local POST, if BenchmarkPOST ran.
func printBenchSummary(w io.Writer) {
	v, ok := benchNsPerOp.Load("post")
	if !ok {
		return
	}
	post := v.(float64)
	us := func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) + " µs" }
	var lines []string
	for _, op := range []string{"sign", "verify"} {
		for _, alg := range benchAlgs {
			if v, ok := benchNsPerOp.Load(op + "/" + string(alg)); ok {
				ns := v.(float64)
				lines = append(lines, fmt.Sprintf("%-6s %-5s: %10s/op = %5.2f× a bare local POST (%s)",
					strings.ToUpper(op[:1])+op[1:], alg, us(ns), ns/post, us(post)))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\npush cost per delivery vs a bare keep-alive POST of the same", len(benchBody), "byte body to a local receiver:")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// benchRing returns a one-key ring of alg, signing from an hour before t0.
func benchRing(b *testing.B, alg jwks.Alg, t0 time.Time) jwks.Ring {
	b.Helper()
	ring, err := jwks.Ring{}.Rotate(alg, t0.Add(-time.Hour), 0, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	return ring
}

// BenchmarkSign measures Signer.Sign of one push (claims, body hash,
// signature, encoding), as the pusher runs it on every attempt.
func BenchmarkSign(b *testing.B) {
	for _, alg := range benchAlgs {
		b.Run(string(alg), func(b *testing.B) {
			now := time.Now()
			s := jwks.NewSigner("http://127.0.0.1:8080/", 0)
			s.SetRing(benchRing(b, alg, now))
			// Parse the key once, as the first delivery does.
			if _, _, err := s.Sign(now, jwks.Token{Audience: benchWebhook, ID: "warm", Body: benchBody}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(benchBody)))
			b.ResetTimer()
			for i := range b.N {
				tok, _, err := s.Sign(now, jwks.Token{
					Audience: benchWebhook,
					ID:       "default.0b9e6a52-4f0c-4d59-9a8e-7f1c2d3e4f50.cfg." + strconv.Itoa(i),
					Tenant:   "default",
					TaskID:   "0b9e6a52-4f0c-4d59-9a8e-7f1c2d3e4f50",
					Seq:      uint64(i),
					Body:     benchBody,
				})
				if err != nil || tok == "" {
					b.Fatalf("Sign: %q, %v", tok, err)
				}
			}
			b.StopTimer()
			recordNsPerOp(b, "sign/"+string(alg))
		})
	}
}

// verifyPool is how many distinct tokens BenchmarkVerify signs up front;
// it cycles through them with a fresh Verifier per round (timer stopped),
// so that RS256 does not need b.N RSA signatures of setup.
const verifyPool = 512

// BenchmarkVerify measures Verifier.Verify of one push request: token
// parsing, the cached JWKS lookup and key export, the signature, the
// claims, the body hash and the replay check. The JWKS comes from a local
// httptest server once per Verifier (it is cached).
//
// Every token has its own jti (Verify refuses a replay). Token i is signed
// at t0+i seconds with a 2 s lifetime and checked with the verifier's
// clock at t0+i s and a 1 ns leeway, so the verifier's replay set (which
// Verify sweeps in full on every call) holds only the last few jtis: this
// is the cost of the crypto and the parsing. BenchmarkVerifyReplaySet
// shows what a full replay set adds.
func BenchmarkVerify(b *testing.B) {
	for _, alg := range benchAlgs {
		b.Run(string(alg), func(b *testing.B) {
			t0 := time.Now().Truncate(time.Second)
			ring := benchRing(b, alg, t0)
			s := jwks.NewSigner("http://127.0.0.1:8080/", 2*time.Second)
			s.SetRing(ring)
			jwksURL := benchJWKSServer(b, ring)
			reqs := signRequests(b, s, t0, time.Second, "v", min(b.N, verifyPool))
			var clock atomic.Int64
			newVerifier := func() *jwks.Verifier {
				v, err := jwks.NewVerifier(context.Background(), jwksURL, jwks.VerifierOptions{
					Audience: benchWebhook,
					Leeway:   time.Nanosecond,
					Now:      func() time.Time { return time.Unix(0, clock.Load()) },
				})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = v.Close(context.Background()) })
				return v
			}
			v := newVerifier()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := i % len(reqs)
				if k == 0 && i > 0 {
					b.StopTimer()
					v = newVerifier()
					b.StartTimer()
				}
				clock.Store(t0.Add(time.Duration(k) * time.Second).UnixNano())
				claims, err := v.Verify(ctx, reqs[k], benchBody)
				if err != nil || claims.Seq != uint64(k) {
					b.Fatalf("Verify token %d: %v", k, err)
				}
			}
			b.StopTimer()
			recordNsPerOp(b, "verify/"+string(alg))
		})
	}
}

// BenchmarkVerifyReplaySet measures Verify (EdDSA) with a replay set
// already holding n live jtis. Verify sweeps the whole set for expired
// entries on every call, under the verifier's mutex, so its cost grows
// with n: a receiver taking r pushes/s holds about r × (token TTL +
// leeway) = r × 330 s of jtis with the defaults.
func BenchmarkVerifyReplaySet(b *testing.B) {
	for _, n := range []int{0, 1000, 10000} {
		b.Run("seen="+strconv.Itoa(n), func(b *testing.B) {
			t0 := time.Now().Truncate(time.Second)
			ring := benchRing(b, jwks.EdDSA, t0)
			long := jwks.NewSigner("http://127.0.0.1:8080/", 1000*time.Hour)
			long.SetRing(ring)
			short := jwks.NewSigner("http://127.0.0.1:8080/", 2*time.Second)
			short.SetRing(ring)
			var clock atomic.Int64
			clock.Store(t0.UnixNano())
			v, err := jwks.NewVerifier(context.Background(), benchJWKSServer(b, ring), jwks.VerifierOptions{
				Audience: benchWebhook,
				Leeway:   time.Nanosecond,
				Now:      func() time.Time { return time.Unix(0, clock.Load()) },
			})
			if err != nil {
				b.Fatal(err)
			}
			defer v.Close(context.Background())
			ctx := context.Background()
			// n long-lived jtis, which stay in the set during the run.
			for i, r := range signRequests(b, long, t0, 0, "fill", n) {
				if _, err := v.Verify(ctx, r, benchBody); err != nil {
					b.Fatalf("fill %d: %v", i, err)
				}
			}
			// The measured tokens expire 2 s of verifier clock after they
			// are signed, so they do not pile up.
			reqs := signRequests(b, short, t0, time.Second, "m", b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				clock.Store(t0.Add(time.Duration(i) * time.Second).UnixNano())
				if _, err := v.Verify(ctx, reqs[i], benchBody); err != nil {
					b.Fatalf("Verify %d: %v", i, err)
				}
			}
		})
	}
}

// benchJWKSServer serves ring's JWKS and returns its URL.
func benchJWKSServer(b *testing.B, ring jwks.Ring) string {
	b.Helper()
	doc, err := ring.JWKS(time.Now())
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/.well-known/jwks.json"
}

// signRequests returns n push requests carrying benchBody, token i signed
// at t0+i·step with jti prefix-i and seq i, signed on every CPU (RS256
// signatures are slow).
func signRequests(b *testing.B, s *jwks.Signer, t0 time.Time, step time.Duration, prefix string, n int) []*http.Request {
	b.Helper()
	reqs := make([]*http.Request, n)
	var (
		wg       sync.WaitGroup
		next     atomic.Int64
		firstErr atomic.Pointer[error]
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				tok, _, err := s.Sign(t0.Add(time.Duration(i)*step), jwks.Token{
					Audience: benchWebhook, ID: prefix + "-" + strconv.Itoa(i), TaskID: "t", Seq: uint64(i), Body: benchBody,
				})
				if err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				r := httptest.NewRequest(http.MethodPost, benchWebhook, nil)
				r.Header.Set("Authorization", "Bearer "+tok)
				reqs[i] = r
			}
		})
	}
	wg.Wait()
	if err := firstErr.Load(); err != nil {
		b.Fatal(*err)
	}
	return reqs
}

// BenchmarkPOST is the baseline: one bare HTTP POST of benchBody (with a
// push's headers but no token) to a local httptest receiver that reads it
// and answers 200, over a keep-alive connection.
func BenchmarkPOST(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	post := func() {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/a2a/push", bytes.NewReader(benchBody))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "a2abus-push/1")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("HTTP %d", resp.StatusCode)
		}
	}
	post() // open the connection
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	b.ResetTimer()
	for range b.N {
		post()
	}
	b.StopTimer()
	recordNsPerOp(b, "post")
}
