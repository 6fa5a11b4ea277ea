package projections_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/internal/natstest"
	"github.com/a2abus/a2abus/projections"
	"github.com/a2abus/a2abus/tasklog"
)

type fixture struct {
	js     jetstream.JetStream
	log    *tasklog.Log
	kv     jetstream.KeyValue
	logger *slog.Logger
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	s := natstest.Run(t, natstest.Options{})
	nc, js := natstest.Connect(t, s)
	cfg := engine.DefaultConfig()
	if err := engine.Provision(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, cfg.SnapshotBucket)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{js: js, log: tasklog.New(nc, js, cfg.EventsStream), kv: kv, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func (f *fixture) create(t *testing.T, id a2a.TaskID, ctxID string) uint64 {
	t.Helper()
	now := time.Now().UTC()
	seq, err := f.log.Append(context.Background(), events.Event{ID: "c" + string(id), Type: events.TypeCreated, Tenant: "default", TaskID: id, Time: now,
		Body: &events.Created{Task: &a2a.Task{ID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
			History: []*a2a.Message{{ID: "m", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}}}}}, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func (f *fixture) status(t *testing.T, id a2a.TaskID, head uint64, state a2a.TaskState) uint64 {
	t.Helper()
	now := time.Now().UTC()
	seq, err := f.log.Append(context.Background(), events.Event{ID: fmt.Sprint("s", id, head), Type: events.TypeStatus, Tenant: "default", TaskID: id, Time: now,
		Body: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: state, Timestamp: &now}}}, head, true)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func (f *fixture) startEdge(t *testing.T) (*projections.Feed, *projections.Index) {
	t.Helper()
	ctx := context.Background()
	index := projections.NewIndex()
	feed, err := projections.StartFeed(ctx, f.js, f.log, index, f.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(feed.Stop)
	if err := index.Load(ctx, f.js, "A2A_EVENTS"); err != nil {
		t.Fatal(err)
	}
	return feed, index
}

func TestIndexRebuildsFromStreamAndFollowsFeed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// Tasks written before the edge starts.
	for i := range 5 {
		id := a2a.TaskID(fmt.Sprint("old-", i))
		h := f.create(t, id, "ctx")
		if i%2 == 0 {
			f.status(t, id, f.status(t, id, h, a2a.TaskStateWorking), a2a.TaskStateCompleted)
		}
	}
	feed, index := f.startEdge(t)
	// Tasks written after: the feed delivers them; Sync makes them visible.
	for i := range 3 {
		f.create(t, a2a.TaskID(fmt.Sprint("new-", i)), "ctx")
	}
	if err := feed.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := index.Query(ctx, projections.Query{Tenant: "default", PageSize: 100})
	if err != nil || p.TotalSize != 8 {
		t.Fatalf("total = %d (%v), want 8", p.TotalSize, err)
	}
	done, err := index.Query(ctx, projections.Query{Tenant: "default", State: a2a.TaskStateCompleted, PageSize: 100})
	if err != nil || done.TotalSize != 3 {
		t.Errorf("completed = %d (%v), want 3", done.TotalSize, err)
	}
}

func TestEmptyStreamLoads(t *testing.T) {
	f := newFixture(t)
	_, index := f.startEdge(t)
	p, err := index.Query(context.Background(), projections.Query{Tenant: "default", PageSize: 10})
	if err != nil || p.TotalSize != 0 {
		t.Errorf("Query() = %+v, %v; want empty", p, err)
	}
}

func TestWatchSeesEveryEventAfterRegistering(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	feed, _ := f.startEdge(t)
	w := feed.Watch("default", "w1")
	defer w.Close()
	h := f.create(t, "w1", "ctx")
	h = f.status(t, "w1", h, a2a.TaskStateWorking)
	f.create(t, "unrelated", "ctx")
	last := f.status(t, "w1", h, a2a.TaskStateCompleted)
	var got []uint64
	for len(got) < 3 {
		ev, err := w.Next(ctx)
		if err != nil {
			t.Fatalf("Next() after %v: %v", got, err)
		}
		if ev.TaskID != "w1" {
			t.Fatalf("watch got an event of %s", ev.TaskID)
		}
		got = append(got, ev.Seq)
	}
	if got[2] != last || got[0] >= got[1] || got[1] >= got[2] {
		t.Errorf("watch sequences = %v, want 3 increasing ending at %d", got, last)
	}
	feed.Stop()
	if _, err := w.Next(ctx); !errors.Is(err, projections.ErrFeedClosed) {
		t.Errorf("Next() after Stop: %v, want ErrFeedClosed", err)
	}
}

func TestViewsCacheAndSnapshots(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	views := projections.NewViews(f.log, f.kv, 10, f.logger)
	h := f.create(t, "v1", "ctx")
	v, err := views.Load(ctx, "default", "v1")
	if err != nil || v.Seq != h {
		t.Fatalf("Load() = %v, %v", v, err)
	}
	again, err := views.Load(ctx, "default", "v1")
	if err != nil || again != v {
		t.Errorf("second Load() of an unchanged task returned a new view (%v); want the cached one", err)
	}
	for range projections.SnapshotMin {
		h = f.status(t, "v1", h, a2a.TaskStateWorking)
	}
	h = f.status(t, "v1", h, a2a.TaskStateCompleted)
	// A small task is not worth a snapshot.
	small := f.status(t, "v2", f.create(t, "v2", "ctx"), a2a.TaskStateCompleted)
	if v, err := views.Load(ctx, "default", "v2"); err != nil || v.Seq != small {
		t.Fatalf("Load(v2) = %v, %v", v, err)
	}
	v, err = views.Load(ctx, "default", "v1")
	if err != nil || v.Seq != h || v.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("Load() after changes = %+v, %v; want COMPLETED at %d", v, err, h)
	}
	views.Close() // flushes the snapshot written for the terminal state
	e, err := f.kv.Get(ctx, "default.v1")
	if err != nil {
		t.Fatalf("snapshot of a terminal task: %v", err)
	}
	var snap events.View
	if err := json.Unmarshal(e.Value(), &snap); err != nil || snap.Seq != h {
		t.Fatalf("snapshot = seq %d (%v), want %d", snap.Seq, err, h)
	}
	if _, err := f.kv.Get(ctx, "default.v2"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("snapshot of a 2-event task: err = %v, want none written", err)
	}
	// A fresh edge starts from the snapshot; a forged one proves it.
	snap.Task.Metadata = map[string]any{"from": "snapshot"}
	b, _ := json.Marshal(snap)
	if _, err := f.kv.Put(ctx, "default.v1", b); err != nil {
		t.Fatal(err)
	}
	fresh := projections.NewViews(f.log, f.kv, 10, f.logger)
	defer fresh.Close()
	got, err := fresh.Load(ctx, "default", "v1")
	if err != nil || got.Task.Metadata["from"] != "snapshot" {
		t.Errorf("fresh Load() = %v, %v; want the snapshot", got.Task.Metadata, err)
	}
	if _, err := fresh.Load(ctx, "default", "missing"); !errors.Is(err, events.ErrTaskNotFound) {
		t.Errorf("Load(missing) err = %v, want ErrTaskNotFound", err)
	}
}

func TestBoundedWatchIsCutOffNotTheFeed(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	feed, _ := f.startEdge(t)
	slow := feed.WatchBounded("default", "busy", 3)
	defer slow.Close()
	fast := feed.WatchBounded("default", "busy", 100)
	defer fast.Close()
	h := f.create(t, "busy", "ctx")
	for range 9 {
		h = f.status(t, "busy", h, a2a.TaskStateWorking)
	}
	// The fast reader gets all ten events although the slow one reads none.
	for i := range 10 {
		if _, err := fast.Next(ctx); err != nil {
			t.Fatalf("fast watch event %d: %v", i, err)
		}
	}
	if _, err := slow.Next(ctx); !errors.Is(err, projections.ErrWatchOverflow) {
		t.Errorf("slow watch: err = %v, want ErrWatchOverflow", err)
	}
	if err := feed.Sync(ctx); err != nil {
		t.Errorf("feed stalled behind a slow watch: %v", err)
	}
}
