package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
)

// Config describes the streams and buckets and the engine's limits. Use
// [DefaultConfig] and change what you need.
type Config struct {
	// EventsStream is the stream holding task events and idempotency
	// claims.
	EventsStream string
	// SnapshotBucket is the KV bucket of task snapshots.
	SnapshotBucket string
	// AgentsBucket is the KV bucket of agent cards registered by workers,
	// one per tenant.
	AgentsBucket string
	// Replicas is the replication factor: 1 embedded, 3 on a cluster.
	Replicas int
	// MaxAge bounds how long events are kept; 0 keeps them forever.
	MaxAge time.Duration
	// IdempotencyTTL is how long a messageId claim lasts.
	IdempotencyTTL time.Duration
	// MaxConflictRetries bounds how often a command reloads and decides
	// again after a concurrent append.
	MaxConflictRetries int
}

// DefaultConfig returns the configuration of a single embedded node.
func DefaultConfig() Config {
	return Config{
		EventsStream:       "A2A_EVENTS",
		SnapshotBucket:     "A2A_SNAP",
		AgentsBucket:       "A2A_AGENTS",
		Replicas:           1,
		IdempotencyTTL:     24 * time.Hour,
		MaxConflictRetries: 32,
	}
}

// Validate reports the first invalid field of c.
func (c Config) Validate() error {
	switch {
	case c.EventsStream == "":
		return errors.New("engine config: EventsStream is empty")
	case c.SnapshotBucket == "" || c.AgentsBucket == "":
		return errors.New("engine config: SnapshotBucket and AgentsBucket are required")
	case c.Replicas < 1 || c.Replicas > 5:
		return fmt.Errorf("engine config: Replicas %d out of 1..5", c.Replicas)
	case c.MaxAge < 0:
		return errors.New("engine config: MaxAge is negative")
	case c.IdempotencyTTL < time.Second:
		return errors.New("engine config: IdempotencyTTL under 1s")
	case c.MaxConflictRetries < 1:
		return errors.New("engine config: MaxConflictRetries under 1")
	}
	return nil
}

// MaxAgentCardBytes bounds one registered agent card.
const MaxAgentCardBytes = 64 << 10

// Provision creates the events stream and the snapshot and agent buckets, or updates
// them to c. It is idempotent: every node calls it at start-up.
func Provision(ctx context.Context, js jetstream.JetStream, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        c.EventsStream,
		Description: "a2abus task events and idempotency claims",
		Subjects:    []string{events.AllEvents, events.IdemPrefix + ">"},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    c.Replicas,
		MaxAge:      c.MaxAge,
		AllowDirect: true,
		AllowMsgTTL: true,
		Duplicates:  2 * time.Minute,
		Discard:     jetstream.DiscardOld,
	})
	if err != nil {
		return fmt.Errorf("provision stream %s: %w", c.EventsStream, err)
	}
	_, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      c.SnapshotBucket,
		Description: "a2abus task snapshots",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    c.Replicas,
	})
	if err != nil {
		return fmt.Errorf("provision bucket %s: %w", c.SnapshotBucket, err)
	}
	_, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:       c.AgentsBucket,
		Description:  "a2abus agent cards registered by workers, by tenant",
		History:      1,
		MaxValueSize: MaxAgentCardBytes,
		Storage:      jetstream.FileStorage,
		Replicas:     c.Replicas,
	})
	if err != nil {
		return fmt.Errorf("provision bucket %s: %w", c.AgentsBucket, err)
	}
	return nil
}
