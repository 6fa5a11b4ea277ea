package jwks

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/lestrrat-go/httprc/v3"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

// SignatureHeader carries the push JWT when the webhook's own credentials
// occupy the Authorization header.
const SignatureHeader = "A2A-Push-Signature"

// Errors returned by [Verifier.Verify].
var (
	// ErrNoToken: the request carries no push token.
	ErrNoToken = errors.New("push: no token")
	// ErrBodyMismatch: the body is not the one the token was signed for.
	ErrBodyMismatch = errors.New("push: body does not match the token's bodySha256")
	// ErrReplayed: a token with this jti was accepted before.
	ErrReplayed = errors.New("push: token replayed (jti seen before)")
	// ErrUnknownKey: the token's kid is not in the sender's JWKS.
	ErrUnknownKey = errors.New("push: unknown key id")
)

// VerifierOptions configure a [Verifier].
type VerifierOptions struct {
	// Audience is the webhook URL the receiver registered; tokens for any
	// other audience are refused. Required.
	Audience string
	// Issuer, if set, must equal the token's iss (the agent's URL).
	Issuer string
	// Leeway tolerates clock skew on exp and iat; default 30s.
	Leeway time.Duration
	// HTTPClient fetches the JWKS; default http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Verifier checks push notifications on the receiving side: the JWT's
// signature against the sender's JWKS (fetched and cached, refetched once
// when a token names an unknown key), its expiry and audience, the body
// hash, and that its jti was not seen before. It is safe for concurrent
// use.
type Verifier struct {
	url   string
	opts  VerifierOptions
	cache *jwk.Cache

	// mu guards seen, lastSweep and lastRefresh.
	mu          sync.Mutex
	seen        map[string]time.Time // jti → token expiry
	lastSweep   time.Time
	lastRefresh time.Time
}

// NewVerifier returns a verifier using the JWKS at jwksURL. It fetches the
// JWKS once before returning. Call [Verifier.Close] to stop its cache.
func NewVerifier(ctx context.Context, jwksURL string, opts VerifierOptions) (*Verifier, error) {
	if opts.Audience == "" {
		return nil, errors.New("push verifier: Audience is required")
	}
	if opts.Leeway == 0 {
		opts.Leeway = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	cache, err := jwk.NewCache(ctx, httprc.NewClient())
	if err != nil {
		return nil, fmt.Errorf("push verifier: %w", err)
	}
	if err := cache.Register(ctx, jwksURL, jwk.WithHTTPClient(opts.HTTPClient)); err != nil {
		return nil, fmt.Errorf("push verifier: fetch %s: %w", jwksURL, err)
	}
	return &Verifier{url: jwksURL, opts: opts, cache: cache, seen: map[string]time.Time{}}, nil
}

// Close stops the verifier's JWKS cache.
func (v *Verifier) Close(ctx context.Context) error { return v.cache.Shutdown(ctx) }

// tokenOf returns the push token of r: the A2A-Push-Signature header, or
// the Authorization bearer token.
func tokenOf(r *http.Request) string {
	if t := strings.TrimSpace(r.Header.Get(SignatureHeader)); t != "" {
		return t
	}
	auth := r.Header.Get("Authorization")
	if len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		return strings.TrimSpace(auth[7:])
	}
	return ""
}

// Verify checks the push request r with body and returns its claims.
// Errors: [ErrNoToken], [ErrUnknownKey], [ErrBodyMismatch],
// [ErrReplayed], or the JWT library's validation errors (expired, wrong
// audience, bad signature), all wrapped.
func (v *Verifier) Verify(ctx context.Context, r *http.Request, body []byte) (*PushClaims, error) {
	raw := tokenOf(r)
	if raw == "" {
		return nil, ErrNoToken
	}
	parserOpts := []jwt.ParserOption{
		jwt.WithAudience(v.opts.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(v.opts.Leeway),
		jwt.WithTimeFunc(v.opts.Now),
		jwt.WithValidMethods([]string{string(ES256), string(EdDSA), string(RS256)}),
	}
	if v.opts.Issuer != "" {
		parserOpts = append(parserOpts, jwt.WithIssuer(v.opts.Issuer))
	}
	var claims PushClaims
	_, err := jwt.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.publicKey(ctx, kid, t.Method.Alg())
	}, parserOpts...)
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(claims.BodySHA256), []byte(BodyHash(body))) != 1 {
		return nil, ErrBodyMismatch
	}
	if err := v.remember(claims.ID, claims.ExpiresAt.Time); err != nil {
		return nil, err
	}
	return &claims, nil
}

// publicKey returns the raw public key kid names, refetching the JWKS at
// most every 10 seconds when the kid is unknown.
func (v *Verifier) publicKey(ctx context.Context, kid, alg string) (any, error) {
	if kid == "" {
		return nil, ErrUnknownKey
	}
	set, err := v.cache.Lookup(ctx, v.url)
	if err != nil {
		return nil, err
	}
	key, ok := set.LookupKeyID(kid)
	if !ok {
		v.mu.Lock()
		refresh := v.opts.Now().Sub(v.lastRefresh) >= 10*time.Second
		if refresh {
			v.lastRefresh = v.opts.Now()
		}
		v.mu.Unlock()
		if refresh {
			if set, err = v.cache.Refresh(ctx, v.url); err != nil {
				return nil, err
			}
			key, ok = set.LookupKeyID(kid)
		}
	}
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKey, kid)
	}
	if a, ok := key.Algorithm(); ok && a.String() != alg {
		return nil, fmt.Errorf("push: key %s is for %s, token uses %s", kid, a, alg)
	}
	var raw any
	if err := jwk.Export(key, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Forget drops a jti the verifier accepted, so that a retry of the same
// delivery verifies again. Call it when you answer the push with a failure
// (a 5xx) after Verify accepted it.
func (v *Verifier) Forget(jti string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.seen, jti)
}

// remember records jti until exp, failing if it was seen.
func (v *Verifier) remember(jti string, exp time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.opts.Now()
	if now.Sub(v.lastSweep) >= time.Second {
		// Expired ids can no longer verify, so they need not be kept.
		v.lastSweep = now
		for id, until := range v.seen {
			if now.After(until.Add(v.opts.Leeway)) {
				delete(v.seen, id)
			}
		}
	}
	if _, ok := v.seen[jti]; ok {
		return ErrReplayed
	}
	v.seen[jti] = exp
	return nil
}
