// Package jwks holds the signing keys of push notifications: the key ring
// shared by every edge, its rotation schedule, the public JWKS document,
// the JWT signer, and a [Verifier] for webhook receivers.
//
// # Rotation
//
// A [Ring] is data: keys with the times they are published, sign and stop
// being published. [Ring.Rotate] adds a key that is published at once but
// signs only after a grace period, so every receiver's cached JWKS knows it
// before the first token it signs arrives; the key it replaces stops
// signing then, and stays published until every token it signed has
// expired, after which [Ring.Prune] drops it. Because the states follow
// from the times, every edge holding the same ring agrees on which key
// signs and which keys are published, with no coordination beyond sharing
// the ring.
//
// # Tokens
//
// [Signer.Sign] makes a short-lived JWT (ES256 by default; EdDSA and RS256
// selectable) whose kid is the RFC 7638 thumbprint of the key, with the
// claims of [PushClaims]: iss, aud (the webhook URL), iat, exp, jti (stable
// across retries of one delivery), the tenant, task id, event sequence and
// a SHA-256 of the body. Private keys never leave the ring: [Ring.JWKS]
// holds public keys only, and keys do not format their private parts.
package jwks
