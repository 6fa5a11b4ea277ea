package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/jwks"
	"github.com/a2abus/a2abus/tasklog"
)

// ringKey is the key of the ring in the A2A_KEYS bucket.
const ringKey = "ring"

// Keys shares the signing key ring through the A2A_KEYS bucket: every edge
// loads it at start-up, follows its changes, and signs with it.
type Keys struct {
	kv     jetstream.KeyValue
	signer *jwks.Signer
	logger *slog.Logger
	stop   context.CancelFunc
	done   chan struct{}
}

// OpenKeys loads the ring into signer, creating a first key of alg if the
// ring is empty, and follows later changes (rotations by any edge or by
// a2abus keys rotate) until [Keys.Close].
func OpenKeys(ctx context.Context, js jetstream.JetStream, signer *jwks.Signer, alg jwks.Alg, logger *slog.Logger) (*Keys, error) {
	kv, err := js.KeyValue(ctx, KeysBucket)
	if err != nil {
		return nil, fmt.Errorf("key ring: %w", err)
	}
	k := &Keys{kv: kv, signer: signer, logger: logger, done: make(chan struct{})}
	ring, _, err := loadRing(ctx, kv)
	if err != nil {
		return nil, err
	}
	if len(ring.Keys) == 0 {
		ring, err = ring.Rotate(alg, time.Now(), 0, signer.TTL())
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(ring)
		if err != nil {
			return nil, err
		}
		if _, err := kv.Create(ctx, ringKey, b); err != nil {
			if !errors.Is(err, jetstream.ErrKeyExists) {
				return nil, fmt.Errorf("key ring: create: %w", err)
			}
			// Another edge made it first.
			if ring, _, err = loadRing(ctx, kv); err != nil {
				return nil, err
			}
		} else {
			logger.Info("created the first signing key", "kid", ring.Keys[0].ID, "alg", alg)
		}
	}
	signer.SetRing(ring)
	w, err := kv.Watch(context.WithoutCancel(ctx), ringKey, jetstream.UpdatesOnly())
	if err != nil {
		return nil, fmt.Errorf("key ring: watch: %w", err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	k.stop = cancel
	go func() {
		defer close(k.done)
		defer func() {
			if err := w.Stop(); err != nil {
				logger.Warn("key ring: stop watch", "err", err)
			}
		}()
		for {
			select {
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil || e.Operation() != jetstream.KeyValuePut {
					continue
				}
				var r jwks.Ring
				if err := json.Unmarshal(e.Value(), &r); err != nil {
					logger.Error("key ring: bad update ignored", "err", err)
					continue
				}
				signer.SetRing(r)
				logger.Info("key ring updated", "keys", len(r.Keys))
			case <-wctx.Done():
				return
			}
		}
	}()
	return k, nil
}

// Close stops following the ring.
func (k *Keys) Close() {
	k.stop()
	<-k.done
}

func loadRing(ctx context.Context, kv jetstream.KeyValue) (jwks.Ring, uint64, error) {
	e, err := kv.Get(ctx, ringKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return jwks.Ring{}, 0, nil
	}
	if err != nil {
		return jwks.Ring{}, 0, fmt.Errorf("key ring: read: %w", err)
	}
	var r jwks.Ring
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return jwks.Ring{}, 0, fmt.Errorf("key ring: decode: %w", err)
	}
	return r, e.Revision(), nil
}

// RotateKeys adds a new key of alg to the shared ring: published at once,
// signing after grace; the current key stops signing then and is retired
// once its last token (tokenTTL) has expired. Every edge follows the change
// without a restart. It returns the new ring.
func RotateKeys(ctx context.Context, js jetstream.JetStream, alg jwks.Alg, grace, tokenTTL time.Duration) (jwks.Ring, error) {
	kv, err := js.KeyValue(ctx, KeysBucket)
	if err != nil {
		return jwks.Ring{}, fmt.Errorf("key ring: %w", err)
	}
	for range 10 {
		ring, rev, err := loadRing(ctx, kv)
		if err != nil {
			return jwks.Ring{}, err
		}
		next, err := ring.Rotate(alg, time.Now(), grace, tokenTTL)
		if err != nil {
			return jwks.Ring{}, err
		}
		b, err := json.Marshal(next)
		if err != nil {
			return jwks.Ring{}, err
		}
		if rev == 0 {
			_, err = kv.Create(ctx, ringKey, b)
		} else {
			_, err = kv.Update(ctx, ringKey, b, rev)
		}
		if err == nil {
			return next, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !tasklog.IsWrongLastSequence(err) {
			return jwks.Ring{}, fmt.Errorf("key ring: save: %w", err)
		}
	}
	return jwks.Ring{}, errors.New("key ring: too many concurrent rotations")
}
