package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
)

// Agents follows the agent cards workers register, one per tenant, in a KV
// bucket (key: the tenant). Every edge holds them all in memory; a card put
// by a worker is served by every edge within a round trip. It is safe for
// concurrent use.
type Agents struct {
	logger *slog.Logger
	w      jetstream.KeyWatcher
	done   chan struct{}

	mu    sync.RWMutex
	cards map[string]a2a.AgentCard
}

// WatchAgents loads the registered cards of bucket and follows changes
// until [Agents.Stop]. It returns once the current cards are loaded.
func WatchAgents(ctx context.Context, js jetstream.JetStream, bucket string, logger *slog.Logger) (*Agents, error) {
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("agents: bucket %s: %w", bucket, err)
	}
	w, err := kv.WatchAll(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("agents: watch %s: %w", bucket, err)
	}
	a := &Agents{logger: logger, w: w, done: make(chan struct{}), cards: map[string]a2a.AgentCard{}}
	loaded := make(chan struct{})
	go a.follow(loaded)
	select {
	case <-loaded:
		return a, nil
	case <-a.done:
		return nil, fmt.Errorf("agents: watch %s ended while loading", bucket)
	case <-ctx.Done():
		a.Stop()
		return nil, ctx.Err()
	}
}

func (a *Agents) follow(loaded chan struct{}) {
	defer close(a.done)
	for e := range a.w.Updates() {
		if e == nil { // the current values are loaded
			close(loaded)
			continue
		}
		a.apply(e)
	}
}

func (a *Agents) apply(e jetstream.KeyValueEntry) {
	tenant := e.Key()
	a.mu.Lock()
	defer a.mu.Unlock()
	if e.Operation() != jetstream.KeyValuePut {
		delete(a.cards, tenant)
		return
	}
	card, err := DecodeAgentCard(e.Value())
	if err == nil && !events.ValidTenant(tenant) {
		err = fmt.Errorf("key %q is not a tenant", tenant)
	}
	if err != nil {
		a.logger.Warn("ignoring registered agent card", "tenant", tenant, "revision", e.Revision(), "err", err)
		delete(a.cards, tenant)
		return
	}
	a.cards[tenant] = card
	a.logger.Info("agent card registered", "tenant", tenant, "name", card.Name, "skills", len(card.Skills))
}

// DecodeAgentCard decodes a card as workers register it: a JSON object
// with the A2A v1.0 AgentCard fields that describe the agent (name,
// description, version, provider, documentationUrl, iconUrl, skills,
// defaultInputModes, defaultOutputModes). A name is required; every skill
// needs an id and a name.
func DecodeAgentCard(b []byte) (a2a.AgentCard, error) {
	var card a2a.AgentCard
	if err := json.Unmarshal(b, &card); err != nil {
		return a2a.AgentCard{}, fmt.Errorf("card is not a v1.0 AgentCard JSON object: %w", err)
	}
	if card.Name == "" {
		return a2a.AgentCard{}, fmt.Errorf("card has no name")
	}
	for i, s := range card.Skills {
		if s.ID == "" || s.Name == "" {
			return a2a.AgentCard{}, fmt.Errorf("skill %d has no id or name", i)
		}
	}
	return card, nil
}

// Card returns the card registered for tenant.
func (a *Agents) Card(tenant string) (a2a.AgentCard, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	c, ok := a.cards[tenant]
	return c, ok
}

// Stop stops following the bucket.
func (a *Agents) Stop() {
	_ = a.w.Stop()
	<-a.done
}
