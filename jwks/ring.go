package jwks

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

// Alg is a signing algorithm.
type Alg string

// The signing algorithms.
const (
	ES256 Alg = "ES256"
	EdDSA Alg = "EdDSA"
	RS256 Alg = "RS256"
)

// ParseAlg returns the algorithm named s (ES256, EdDSA, RS256).
func ParseAlg(s string) (Alg, error) {
	switch a := Alg(s); a {
	case ES256, EdDSA, RS256:
		return a, nil
	}
	return "", fmt.Errorf("unknown signing algorithm %q (want ES256, EdDSA or RS256)", s)
}

// ClockSkew is added to a retired key's publication so that receivers with
// a clock slightly behind still find it.
const ClockSkew = time.Minute

// Key is one signing key of the ring and its schedule.
type Key struct {
	// ID is the RFC 7638 SHA-256 thumbprint of the key, base64url.
	ID  string `json:"kid"`
	Alg Alg    `json:"alg"`
	// Private is the private key as a JWK. It is never logged: Key's
	// String and Format omit it.
	Private json.RawMessage `json:"private"`
	// PublishAt is when the key enters the JWKS.
	PublishAt time.Time `json:"publishAt"`
	// SignFrom is when the key starts signing.
	SignFrom time.Time `json:"signFrom"`
	// SignUntil is when it stops signing; zero while it is the newest.
	SignUntil time.Time `json:"signUntil,omitzero"`
	// PublishUntil is when it leaves the JWKS; zero while it signs.
	PublishUntil time.Time `json:"publishUntil,omitzero"`
}

// String describes the key without its private part.
func (k Key) String() string {
	return fmt.Sprintf("key %s (%s) published %s, signs %s..%s, published until %s", k.ID, k.Alg,
		k.PublishAt.Format(time.RFC3339), k.SignFrom.Format(time.RFC3339), fmtTime(k.SignUntil), fmtTime(k.PublishUntil))
}

// Format implements fmt.Formatter so that %v, %+v and %#v never print the
// private key.
func (k Key) Format(f fmt.State, _ rune) { fmt.Fprint(f, k.String()) }

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}

// Ring is the shared key ring.
type Ring struct {
	Keys []Key `json:"keys"`
}

// ErrNoSigningKey is returned by [Ring.Signer] when no key signs at the
// given time.
var ErrNoSigningKey = errors.New("no signing key")

// NewKey makes a key of the given algorithm, publishing and signing from
// now.
func NewKey(alg Alg, now time.Time) (Key, error) {
	var raw any
	var err error
	switch alg {
	case ES256:
		raw, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case EdDSA:
		_, raw, err = ed25519.GenerateKey(rand.Reader)
	case RS256:
		raw, err = rsa.GenerateKey(rand.Reader, 2048)
	default:
		return Key{}, fmt.Errorf("new key: unknown algorithm %q", alg)
	}
	if err != nil {
		return Key{}, fmt.Errorf("new %s key: %w", alg, err)
	}
	k, err := jwk.Import(raw)
	if err != nil {
		return Key{}, fmt.Errorf("new %s key: %w", alg, err)
	}
	tp, err := k.Thumbprint(crypto.SHA256)
	if err != nil {
		return Key{}, fmt.Errorf("new %s key: thumbprint: %w", alg, err)
	}
	kid := base64.RawURLEncoding.EncodeToString(tp)
	if err := k.Set(jwk.KeyIDKey, kid); err != nil {
		return Key{}, err
	}
	priv, err := json.Marshal(k)
	if err != nil {
		return Key{}, err
	}
	return Key{ID: kid, Alg: alg, Private: priv, PublishAt: now, SignFrom: now}, nil
}

// Rotate returns the ring with a new key of alg: published now, signing
// after grace. The key signing until then stops at that moment and stays
// published for tokenTTL plus [ClockSkew] after, so tokens it signed
// verify until they expire. An empty ring gets a key that signs at once.
// Retired keys are pruned.
func (r Ring) Rotate(alg Alg, now time.Time, grace, tokenTTL time.Duration) (Ring, error) {
	k, err := NewKey(alg, now)
	if err != nil {
		return r, err
	}
	out := r.Prune(now)
	if len(out.Keys) > 0 {
		k.SignFrom = now.Add(grace)
	}
	keys := slices.Clone(out.Keys)
	for i := range keys {
		if keys[i].SignUntil.IsZero() || keys[i].SignUntil.After(k.SignFrom) {
			keys[i].SignUntil = k.SignFrom
			if keys[i].SignUntil.Before(keys[i].SignFrom) {
				// A key that never got to sign.
				keys[i].SignUntil = keys[i].SignFrom
			}
			keys[i].PublishUntil = keys[i].SignUntil.Add(tokenTTL + ClockSkew)
		}
	}
	out.Keys = append(keys, k)
	return out, nil
}

// Prune returns the ring without the keys no longer published at now.
func (r Ring) Prune(now time.Time) Ring {
	return Ring{Keys: slices.DeleteFunc(slices.Clone(r.Keys), func(k Key) bool {
		return !k.PublishUntil.IsZero() && !now.Before(k.PublishUntil)
	})}
}

// Signer returns the key that signs at now: of those whose signing window
// holds now, the one that started last. It returns [ErrNoSigningKey] if
// there is none.
func (r Ring) Signer(now time.Time) (Key, error) {
	var best *Key
	for i := range r.Keys {
		k := &r.Keys[i]
		if now.Before(k.SignFrom) || (!k.SignUntil.IsZero() && !now.Before(k.SignUntil)) {
			continue
		}
		if best == nil || k.SignFrom.After(best.SignFrom) {
			best = k
		}
	}
	if best == nil {
		return Key{}, ErrNoSigningKey
	}
	return *best, nil
}

// Published returns the keys in the JWKS at now.
func (r Ring) Published(now time.Time) []Key {
	var out []Key
	for _, k := range r.Keys {
		if !now.Before(k.PublishAt) && (k.PublishUntil.IsZero() || now.Before(k.PublishUntil)) {
			out = append(out, k)
		}
	}
	return out
}

// NextChange returns the first time after now at which the published set
// or the signer changes, or the zero time if none is scheduled. Servers
// use it to bound JWKS caching.
func (r Ring) NextChange(now time.Time) time.Time {
	var next time.Time
	for _, k := range r.Keys {
		for _, t := range []time.Time{k.PublishAt, k.SignFrom, k.SignUntil, k.PublishUntil} {
			if t.After(now) && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
	}
	return next
}

// JWKS returns the JSON Web Key Set of the keys published at now: public
// keys only, each with kid, alg and use "sig".
func (r Ring) JWKS(now time.Time) ([]byte, error) {
	set := jwk.NewSet()
	for _, k := range r.Published(now) {
		priv, err := jwk.ParseKey(k.Private)
		if err != nil {
			return nil, fmt.Errorf("jwks: key %s: %w", k.ID, err)
		}
		pub, err := priv.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("jwks: key %s: %w", k.ID, err)
		}
		for name, v := range map[string]any{jwk.KeyIDKey: k.ID, jwk.AlgorithmKey: string(k.Alg), jwk.KeyUsageKey: "sig"} {
			if err := pub.Set(name, v); err != nil {
				return nil, fmt.Errorf("jwks: key %s: %w", k.ID, err)
			}
		}
		if err := set.AddKey(pub); err != nil {
			return nil, err
		}
	}
	return json.Marshal(set)
}

// signer returns the crypto.Signer of the key.
func (k Key) signer() (crypto.Signer, error) {
	priv, err := jwk.ParseKey(k.Private)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", k.ID, err)
	}
	var raw any
	if err := jwk.Export(priv, &raw); err != nil {
		return nil, fmt.Errorf("key %s: %w", k.ID, err)
	}
	switch s := raw.(type) {
	case *ecdsa.PrivateKey:
		return s, nil
	case ed25519.PrivateKey:
		return s, nil
	case *ed25519.PrivateKey:
		return *s, nil
	case *rsa.PrivateKey:
		return s, nil
	}
	return nil, fmt.Errorf("key %s: unsupported private key %T", k.ID, raw)
}
