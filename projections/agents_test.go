package projections_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/projections"
)

// TestAgentsFollowsRegistrations: cards present at start are loaded before
// WatchAgents returns; later puts, bad cards and deletes are followed.
func TestAgentsFollowsRegistrations(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	kv, err := f.js.KeyValue(ctx, engine.DefaultConfig().AgentsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "acme", []byte(`{"name":"Acme","skills":[{"id":"echo","name":"Echo"}]}`)); err != nil {
		t.Fatal(err)
	}
	a, err := projections.WatchAgents(ctx, f.js, engine.DefaultConfig().AgentsBucket, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	if c, ok := a.Card("acme"); !ok || c.Name != "Acme" || len(c.Skills) != 1 {
		t.Fatalf("acme at start = %+v, %v", c, ok)
	}
	// Each change ends with a known put on "marker", so the watcher has
	// applied it once the marker's value is seen.
	marker := 0
	sync := func() {
		t.Helper()
		marker++
		name := "m" + string(rune('0'+marker))
		if _, err := kv.Put(ctx, "marker", []byte(`{"name":"`+name+`"}`)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for c, _ := a.Card("marker"); c.Name != name; c, _ = a.Card("marker") {
			if time.Now().After(deadline) {
				t.Fatalf("marker %s not seen", name)
			}
			<-time.After(5 * time.Millisecond)
		}
	}
	for _, bad := range []string{`{"skills":[]}`, `not json`, `{"name":"x","skills":[{"id":""}]}`} {
		if _, err := kv.Put(ctx, "acme", []byte(bad)); err != nil {
			t.Fatal(err)
		}
		sync()
		if c, ok := a.Card("acme"); ok {
			t.Errorf("after bad card %s: %+v", bad, c)
		}
	}
	if _, err := kv.Put(ctx, "acme", []byte(`{"name":"Acme 2"}`)); err != nil {
		t.Fatal(err)
	}
	sync()
	if c, _ := a.Card("acme"); c.Name != "Acme 2" {
		t.Errorf("after update: %q", c.Name)
	}
	if err := kv.Delete(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	sync()
	if _, ok := a.Card("acme"); ok {
		t.Error("deleted card still served")
	}
}
