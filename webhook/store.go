package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/tasklog"
)

// Names of the push streams and buckets.
const (
	ConfigBucket = "A2A_PUSHCFG"
	StateBucket  = "A2A_PUSHSTATE"
	KeysBucket   = "A2A_KEYS"
	QueueStream  = "A2A_PUSH"
	DLQStream    = "A2A_PUSH_DLQ"
	queuePrefix  = "a2a.push."
	dlqPrefix    = "a2a.pushdlq."
	// MaxConfigsPerTask bounds the push configs of one task.
	MaxConfigsPerTask = 32
)

// Errors of the config store.
var (
	// ErrConfigNotFound is returned for a config that does not exist.
	ErrConfigNotFound = errors.New("push config not found")
	// ErrInvalidConfig is returned for a config that cannot be stored.
	ErrInvalidConfig = errors.New("invalid push config")
)

// Provision creates or updates the push streams and buckets. It is
// idempotent.
func Provision(ctx context.Context, js jetstream.JetStream, replicas int) error {
	for _, b := range []jetstream.KeyValueConfig{
		{Bucket: ConfigBucket, Description: "a2abus push configs", History: 1, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: StateBucket, Description: "a2abus push delivery cursors", History: 1, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: KeysBucket, Description: "a2abus push signing key ring", History: 5, Storage: jetstream.FileStorage, Replicas: replicas},
	} {
		if _, err := js.CreateOrUpdateKeyValue(ctx, b); err != nil {
			return fmt.Errorf("provision bucket %s: %w", b.Bucket, err)
		}
	}
	for _, s := range []jetstream.StreamConfig{
		{Name: QueueStream, Description: "a2abus pending push deliveries (one wake-up per task and config)",
			Subjects: []string{queuePrefix + ">"}, Retention: jetstream.WorkQueuePolicy, MaxMsgsPerSubject: 1,
			Storage: jetstream.FileStorage, Replicas: replicas, Discard: jetstream.DiscardOld, AllowDirect: true},
		{Name: DLQStream, Description: "a2abus push deliveries that failed for good",
			Subjects: []string{dlqPrefix + ">"}, Retention: jetstream.LimitsPolicy, MaxAge: 30 * 24 * time.Hour,
			Storage: jetstream.FileStorage, Replicas: replicas, AllowDirect: true},
	} {
		if _, err := js.CreateOrUpdateStream(ctx, s); err != nil {
			return fmt.Errorf("provision stream %s: %w", s.Name, err)
		}
	}
	return nil
}

// Store keeps push configs in the A2A_PUSHCFG bucket, keyed
// <tenant>.<task>.<config id>, visible from every edge.
type Store struct {
	kv    jetstream.KeyValue
	log   *tasklog.Log
	guard Guard
}

// NewStore returns the config store.
func NewStore(ctx context.Context, js jetstream.JetStream, log *tasklog.Log, guard Guard) (*Store, error) {
	kv, err := js.KeyValue(ctx, ConfigBucket)
	if err != nil {
		return nil, fmt.Errorf("push config store: %w", err)
	}
	return &Store{kv: kv, log: log, guard: guard}, nil
}

func configKey(tenant string, task a2a.TaskID, id string) string {
	return tenant + "." + string(task) + "." + id
}

// Put validates and stores a config for a task, making its id if it has
// none, and returns the stored config. The caller checks that the task
// exists. Errors wrap [ErrInvalidConfig] or [ErrForbiddenTarget].
func (s *Store) Put(ctx context.Context, tenant string, cfg a2a.PushConfig) (a2a.PushConfig, error) {
	if cfg.ID == "" {
		cfg.ID = uuid.NewString()
	}
	switch {
	case !events.ValidTaskID(cfg.TaskID):
		return cfg, fmt.Errorf("%w: taskId %q", ErrInvalidConfig, cfg.TaskID)
	case !events.ValidTaskID(a2a.TaskID(cfg.ID)):
		return cfg, fmt.Errorf("%w: id must be 1 to 64 of [A-Za-z0-9_-]", ErrInvalidConfig)
	case cfg.URL == "":
		return cfg, fmt.Errorf("%w: url is required", ErrInvalidConfig)
	case len(cfg.URL) > 2048 || len(cfg.Token) > 4096:
		return cfg, fmt.Errorf("%w: url or token too long", ErrInvalidConfig)
	case cfg.Auth != nil && cfg.Auth.Scheme == "":
		return cfg, fmt.Errorf("%w: authentication.scheme is required", ErrInvalidConfig)
	case cfg.Auth != nil && strings.ContainsAny(cfg.Auth.Scheme+cfg.Auth.Credentials, "\r\n"):
		return cfg, fmt.Errorf("%w: authentication must not contain line breaks", ErrInvalidConfig)
	case strings.ContainsAny(cfg.Token, "\r\n"):
		return cfg, fmt.Errorf("%w: token must not contain line breaks", ErrInvalidConfig)
	}
	if err := s.guard.CheckURL(ctx, cfg.URL); err != nil {
		if errors.Is(err, ErrForbiddenTarget) {
			return cfg, err
		}
		return cfg, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	existing, err := s.List(ctx, tenant, cfg.TaskID)
	if err != nil {
		return cfg, err
	}
	if len(existing) >= MaxConfigsPerTask && !slices.ContainsFunc(existing, func(c a2a.PushConfig) bool { return c.ID == cfg.ID }) {
		return cfg, fmt.Errorf("%w: a task has at most %d push configs", ErrInvalidConfig, MaxConfigsPerTask)
	}
	cfg.Tenant = ""
	b, err := json.Marshal(cfg)
	if err != nil {
		return cfg, err
	}
	if _, err := s.kv.Put(ctx, configKey(tenant, cfg.TaskID, cfg.ID), b); err != nil {
		return cfg, fmt.Errorf("store push config: %w", err)
	}
	return cfg, nil
}

// Get returns a config, or [ErrConfigNotFound].
func (s *Store) Get(ctx context.Context, tenant string, task a2a.TaskID, id string) (a2a.PushConfig, error) {
	if !events.ValidTaskID(task) || !events.ValidTaskID(a2a.TaskID(id)) {
		return a2a.PushConfig{}, ErrConfigNotFound
	}
	e, err := s.kv.Get(ctx, configKey(tenant, task, id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return a2a.PushConfig{}, ErrConfigNotFound
	}
	if err != nil {
		return a2a.PushConfig{}, fmt.Errorf("read push config: %w", err)
	}
	var c a2a.PushConfig
	if err := json.Unmarshal(e.Value(), &c); err != nil {
		return a2a.PushConfig{}, fmt.Errorf("read push config: %w", err)
	}
	return c, nil
}

// List returns the task's configs, ordered by id, with one batched direct
// get (no consumer).
func (s *Store) List(ctx context.Context, tenant string, task a2a.TaskID) ([]a2a.PushConfig, error) {
	if !events.ValidTaskID(task) {
		return nil, nil
	}
	var out []a2a.PushConfig
	err := s.log.LastPerSubject(ctx, "KV_"+ConfigBucket, "$KV."+ConfigBucket+"."+configKey(tenant, task, "*"), MaxConfigsPerTask*2,
		func(m *nats.Msg) error {
			if op := m.Header.Get("KV-Operation"); op == "DEL" || op == "PURGE" || len(m.Data) == 0 {
				return nil
			}
			var c a2a.PushConfig
			if err := json.Unmarshal(m.Data, &c); err != nil {
				return fmt.Errorf("read push config: %w", err)
			}
			out = append(out, c)
			return nil
		})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b a2a.PushConfig) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Delete removes a config. Deleting one that does not exist succeeds.
func (s *Store) Delete(ctx context.Context, tenant string, task a2a.TaskID, id string) error {
	if !events.ValidTaskID(task) || !events.ValidTaskID(a2a.TaskID(id)) {
		return nil
	}
	if err := s.kv.Delete(ctx, configKey(tenant, task, id)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("delete push config: %w", err)
	}
	return nil
}
