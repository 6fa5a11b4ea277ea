package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/tasklog"
)

// AgentConsumer is the name of the durable consumer holding the work of
// the agent of tenant: the work queue external workers of that tenant
// bind to.
func AgentConsumer(tenant string) string { return "agent-" + tenant }

// AgentConfig returns the configuration of the agent serving tenant: its
// consumer [AgentConsumer] on the tenant's in events, with the defaults of
// [DefaultConfig] otherwise.
func AgentConfig(stream, tenant string) Config {
	c := DefaultConfig()
	c.Stream, c.Consumer, c.Tenants = stream, AgentConsumer(tenant), []string{tenant}
	return c
}

// Provision creates the durable consumer of cfg, or updates it to cfg.
// [Worker.Start] calls it; a deployment calls it for the agents of its
// external workers, which only bind to their consumer (they are not
// allowed to create one).
func Provision(ctx context.Context, js jetstream.JetStream, cfg Config) (jetstream.Consumer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	filters := make([]string, len(cfg.Tenants))
	for i, t := range cfg.Tenants {
		filters[i] = events.EventsPrefix + t + ".*." + string(events.KindIn)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, cfg.Stream, jetstream.ConsumerConfig{
		Durable:        cfg.Consumer,
		Description:    "a2abus agent work queue",
		FilterSubjects: filters,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        cfg.AckWait,
		MaxDeliver:     cfg.MaxDeliver,
		MaxAckPending:  max(cfg.Concurrency*4, 1000),
	})
	if err != nil {
		return nil, fmt.Errorf("worker %s: consumer: %w", cfg.Consumer, err)
	}
	return cons, nil
}

// RegisterCard puts card as the agent card of tenant in the agents bucket,
// where every edge finds it and serves it at
// /{tenant}/.well-known/agent-card.json (the default tenant's also at the
// root). Only the fields that describe the agent are used: name,
// description, version, provider, documentationUrl, iconUrl, skills and
// the default modes.
func RegisterCard(ctx context.Context, js jetstream.JetStream, bucket, tenant string, card a2a.AgentCard) error {
	b, err := json.Marshal(card)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return fmt.Errorf("register card: bucket %s: %w", bucket, err)
	}
	if _, err := kv.Put(ctx, tenant, b); err != nil {
		return fmt.Errorf("register card of %s: %w", tenant, err)
	}
	return nil
}

// exhaustedAdvisory is the part of JetStream's max-deliveries advisory
// read here.
type exhaustedAdvisory struct {
	Stream     string `json:"stream"`
	Consumer   string `json:"consumer"`
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// Exhausted fails the tasks whose work items ran out of deliveries
// without their last delivery settling them (a worker that crashed on
// every delivery, or no worker at all). Workers fail the task themselves
// on the last delivery; this is the backstop for when that delivery is
// lost too. It listens to JetStream's max-deliveries advisories of the
// stream's consumers in a queue group, so one edge acts on each.
type Exhausted struct {
	sub    *nats.Subscription
	log    *tasklog.Log
	stream jetstream.Stream
	logger *slog.Logger
}

// WatchExhausted starts the backstop for the consumers of stream.
func WatchExhausted(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, stream string, logger *slog.Logger) (*Exhausted, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("exhausted deliveries: stream %s: %w", stream, err)
	}
	x := &Exhausted{log: tasklog.New(nc, js, stream), stream: st, logger: logger}
	subj := "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + stream + ".*"
	x.sub, err = nc.QueueSubscribe(subj, "a2abus-exhausted", func(m *nats.Msg) {
		var adv exhaustedAdvisory
		if err := json.Unmarshal(m.Data, &adv); err != nil || adv.StreamSeq == 0 {
			logger.Warn("bad max-deliveries advisory", "subject", m.Subject, "err", err)
			return
		}
		go x.fail(adv)
	})
	if err != nil {
		return nil, fmt.Errorf("exhausted deliveries: subscribe: %w", err)
	}
	return x, nil
}

// Stop stops listening.
func (x *Exhausted) Stop() { _ = x.sub.Unsubscribe() }

// fail appends FAILED to the task of the work item at adv.StreamSeq unless
// the item is settled already: the task ended, was interrupted after it,
// or a later input superseded it.
func (x *Exhausted) fail(adv exhaustedAdvisory) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := x.stream.GetMsg(ctx, adv.StreamSeq)
	if err != nil {
		x.logger.Warn("max deliveries: read work item", "seq", adv.StreamSeq, "err", err)
		return
	}
	in, err := events.Decode(raw.Subject, raw.Header, raw.Data, raw.Sequence)
	if err != nil || in.Type.Kind() != events.KindIn {
		x.logger.Warn("max deliveries: not a work item", "seq", adv.StreamSeq, "subject", raw.Subject, "err", err)
		return
	}
	logger := x.logger.With("task", in.TaskID, "seq", adv.StreamSeq, "consumer", adv.Consumer, "deliveries", adv.Deliveries)
	reason := fmt.Sprintf("no worker finished this task: its work item was delivered %d times (consumer %s)", adv.Deliveries, adv.Consumer)
	for range 16 {
		v, err := x.log.Load(ctx, in.Tenant, in.TaskID)
		if err != nil {
			logger.Warn("max deliveries: load task", "err", err)
			return
		}
		if v.Terminal() || v.InSeq > adv.StreamSeq || (v.Interrupted() && v.StatusSeq > adv.StreamSeq) {
			return
		}
		now := time.Now().UTC()
		ev := events.Event{
			ID: uuid.NewString(), Type: events.TypeStatus, Tenant: in.Tenant, TaskID: in.TaskID, Time: now,
			Body: &a2a.TaskStatusUpdateEvent{
				TaskID: v.Task.ID, ContextID: v.Task.ContextID,
				Status: a2a.TaskStatus{State: a2a.TaskStateFailed, Message: AgentMessage(a2a.NewTextPart(reason)), Timestamp: &now},
			},
		}
		_, err = x.log.Append(ctx, ev, v.Seq, true)
		if err == nil {
			logger.Warn("work item exhausted its deliveries: task failed")
			return
		}
		if !errors.Is(err, tasklog.ErrConflict) {
			logger.Warn("max deliveries: append FAILED", "err", err)
			return
		}
	}
}
