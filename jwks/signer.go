package jwks

import (
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultTokenTTL is the lifetime of a push token.
const DefaultTokenTTL = 5 * time.Minute

// PushClaims are the claims of a push notification token.
type PushClaims struct {
	jwt.RegisteredClaims
	Tenant string `json:"tenant,omitempty"`
	TaskID string `json:"taskId"`
	// Seq is the stream sequence of the event the push reports.
	Seq uint64 `json:"seq"`
	// BodySHA256 is the base64url SHA-256 of the request body.
	BodySHA256 string `json:"bodySha256"`
}

// BodyHash returns the value of [PushClaims.BodySHA256] for body.
func BodyHash(body []byte) string {
	h := sha256.Sum256(body)
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// Signer signs push tokens with the ring's current key. It is safe for
// concurrent use; [Signer.SetRing] swaps the ring while it signs.
type Signer struct {
	issuer string
	ttl    time.Duration

	// mu guards ring and keys.
	mu   sync.Mutex
	ring Ring
	keys map[string]crypto.Signer // parsed private keys by kid
}

// NewSigner returns a signer whose tokens name issuer and live ttl (0:
// [DefaultTokenTTL]).
func NewSigner(issuer string, ttl time.Duration) *Signer {
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	return &Signer{issuer: issuer, ttl: ttl, keys: map[string]crypto.Signer{}}
}

// TTL returns the lifetime of the tokens the signer makes.
func (s *Signer) TTL() time.Duration { return s.ttl }

// SetRing makes r the ring the signer uses.
func (s *Signer) SetRing(r Ring) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ring = r
}

// Ring returns the ring the signer uses.
func (s *Signer) Ring() Ring {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ring
}

// Token describes one push for [Signer.Sign].
type Token struct {
	Audience string // the webhook URL
	ID       string // jti: the same for every attempt of one delivery
	Tenant   string
	TaskID   string
	Seq      uint64
	Body     []byte
}

// Sign returns a JWT for the push t, signed at now by the ring's signing
// key, and that key's id. It returns [ErrNoSigningKey] if no key signs now.
func (s *Signer) Sign(now time.Time, t Token) (token, kid string, err error) {
	s.mu.Lock()
	k, err := s.ring.Signer(now)
	if err != nil {
		s.mu.Unlock()
		return "", "", err
	}
	key, ok := s.keys[k.ID]
	if !ok {
		if key, err = k.signer(); err != nil {
			s.mu.Unlock()
			return "", "", err
		}
		s.keys[k.ID] = key
	}
	s.mu.Unlock()

	var method jwt.SigningMethod
	switch k.Alg {
	case ES256:
		method = jwt.SigningMethodES256
	case EdDSA:
		method = jwt.SigningMethodEdDSA
	case RS256:
		method = jwt.SigningMethodRS256
	default:
		return "", "", fmt.Errorf("sign: key %s has unknown algorithm %q", k.ID, k.Alg)
	}
	claims := PushClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.issuer,
			Audience:  jwt.ClaimStrings{t.Audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(s.ttl)),
			ID:        t.ID,
		},
		Tenant:     t.Tenant,
		TaskID:     t.TaskID,
		Seq:        t.Seq,
		BodySHA256: BodyHash(t.Body),
	}
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = k.ID
	signed, err := tok.SignedString(key)
	if err != nil {
		return "", "", fmt.Errorf("sign with key %s: %w", k.ID, err)
	}
	return signed, k.ID, nil
}
