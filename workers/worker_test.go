package workers_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/internal/natstest"
	"github.com/a2abus/a2abus/projections"
	"github.com/a2abus/a2abus/tasklog"
	"github.com/a2abus/a2abus/workers"
)

type fixture struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	log    *tasklog.Log
	eng    *engine.Engine
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
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	log := tasklog.New(nc, js, cfg.EventsStream)
	views := projections.NewViews(log, nil, 100, logger)
	t.Cleanup(views.Close)
	eng, err := engine.New(ctx, js, log, views, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{nc: nc, js: js, log: log, eng: eng, logger: logger}
}

func (f *fixture) start(t *testing.T, cfg workers.Config, h workers.Handler) *workers.Worker {
	t.Helper()
	w, err := workers.New(f.nc, f.js, cfg, h, f.logger)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func (f *fixture) send(t *testing.T, text string) a2a.TaskID {
	t.Helper()
	r, err := f.eng.Send(context.Background(), engine.SendCommand{Tenant: "default",
		Message: &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}})
	if err != nil {
		t.Fatal(err)
	}
	return r.View.Task.ID
}

// waitState waits, on the task's status subject, until the task is in one
// of the given states, and returns its view.
func (f *fixture) waitState(t *testing.T, id a2a.TaskID, states ...a2a.TaskState) *events.View {
	t.Helper()
	ch := make(chan *nats.Msg, 64)
	sub, err := f.nc.ChanSubscribe(events.Subject("default", id, events.KindStatus), ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	deadline := time.After(20 * time.Second)
	for {
		v, err := f.log.Load(context.Background(), "default", id)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range states {
			if v.Task.Status.State == s {
				return v
			}
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("task %s is %s after 20s, want one of %v", id, v.Task.Status.State, states)
		}
	}
}

func testConfig(name string) workers.Config {
	c := workers.DefaultConfig()
	c.Consumer = name
	c.AckWait = time.Second
	return c
}

func lastText(v *events.View) string {
	if m := v.Task.Status.Message; m != nil && len(m.Parts) > 0 {
		return m.Parts[0].Text()
	}
	return ""
}

func TestHandlerErrorOrPanicFailsTask(t *testing.T) {
	f := newFixture(t)
	f.start(t, testConfig("w"), func(ctx context.Context, task *workers.Task) error {
		switch task.Input.Parts[0].Text() {
		case "error":
			return errors.New("model unavailable")
		case "panic":
			panic("boom")
		case "nothing":
			return nil
		}
		return task.Status(ctx, a2a.TaskStateCompleted, nil)
	})
	for text, want := range map[string]string{
		"error":   "model unavailable",
		"panic":   "agent panic: boom",
		"nothing": "the agent ended without a final status",
	} {
		v := f.waitState(t, f.send(t, text), a2a.TaskStateFailed)
		if got := lastText(v); got != want {
			t.Errorf("%s: failure message %q, want %q", text, got, want)
		}
	}
	f.waitState(t, f.send(t, "ok"), a2a.TaskStateCompleted)
}

func TestCancelStopsHandler(t *testing.T) {
	f := newFixture(t)
	started := make(chan a2a.TaskID, 1)
	stopped := make(chan error, 1)
	f.start(t, testConfig("w"), func(ctx context.Context, task *workers.Task) error {
		started <- task.ID()
		<-ctx.Done()
		// A write after the cancel is fenced.
		err := task.Status(context.Background(), a2a.TaskStateCompleted, nil)
		stopped <- err
		return err
	})
	id := f.send(t, "work")
	<-started
	if _, err := f.eng.Cancel(context.Background(), "default", id, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, workers.ErrFenced) {
			t.Errorf("write after cancel: err = %v, want ErrFenced", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("handler context not canceled 10s after the cancel")
	}
	v := f.waitState(t, id, a2a.TaskStateCanceled)
	head, err := f.log.Head(context.Background(), "default", id)
	if err != nil || head != v.Seq {
		t.Errorf("head = %d (%v), want the cancel at %d", head, err, v.Seq)
	}
}

func TestStaleWorkerIsFenced(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	took := make(chan *workers.Task, 1)
	release := make(chan struct{})
	result := make(chan error, 1)
	f.start(t, testConfig("w"), func(hctx context.Context, task *workers.Task) error {
		took <- task
		<-release
		err := task.Status(ctx, a2a.TaskStateWorking, workers.AgentMessage(a2a.NewTextPart("still mine?")))
		result <- err
		if hctx.Err() == nil {
			t.Error("handler context not canceled after takeover")
		}
		return err
	})
	id := f.send(t, "work")
	task := <-took
	// Another worker takes the task over: WORKING under its own lease.
	v, err := f.log.Load(ctx, "default", id)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	takeover := events.Event{ID: "takeover", Type: events.TypeStatus, Tenant: "default", TaskID: id, Time: now, Lease: "other-worker",
		Body: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: v.Task.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}}}
	if _, err := f.log.Append(ctx, takeover, v.Seq, true); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-result; !errors.Is(err, workers.ErrFenced) {
		t.Fatalf("stale worker write: err = %v, want ErrFenced", err)
	}
	after, err := f.log.Load(ctx, "default", id)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lease != "other-worker" || after.Seq != v.Seq+1 {
		t.Errorf("after fencing: lease %q seq %d, want other-worker at %d (stale write must not land)", after.Lease, after.Seq, v.Seq+1)
	}
	// The fenced worker's view shows why: the other worker's lease.
	if got := task.View().Lease; got != "other-worker" {
		t.Errorf("fenced task view lease = %q, want other-worker", got)
	}
}

func TestInputDuringWorkTakesOver(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	took := make(chan struct{}, 1)
	firstErr := make(chan error, 1)
	f.start(t, testConfig("w"), func(hctx context.Context, task *workers.Task) error {
		if task.Input.Parts[0].Text() == "first" {
			took <- struct{}{}
			<-hctx.Done() // fenced by the follow-up's work item
			err := task.Status(ctx, a2a.TaskStateCompleted, nil)
			firstErr <- err
			return err
		}
		// The follow-up's item sees the whole conversation.
		if n := len(task.View().Task.History); n != 2 {
			return errors.New("follow-up handler sees " + string(rune('0'+n)) + " messages, want 2")
		}
		return task.Status(ctx, a2a.TaskStateCompleted, workers.AgentMessage(a2a.NewTextPart("took over")))
	})
	id := f.send(t, "first")
	<-took
	in := &a2a.Message{ID: a2a.NewMessageID(), TaskID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("second")}}
	if _, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: in}); err != nil {
		t.Fatal(err)
	}
	v := f.waitState(t, id, a2a.TaskStateCompleted, a2a.TaskStateFailed)
	if lastText(v) != "took over" {
		t.Errorf("final status %s %q, want COMPLETED by the follow-up's handler", v.Task.Status.State, lastText(v))
	}
	if err := <-firstErr; !errors.Is(err, workers.ErrFenced) {
		t.Errorf("first handler's late write: err = %v, want ErrFenced", err)
	}
}

// crashedDelivery takes the next work item off the consumer and never acks
// it, like a worker process that died.
func crashedDelivery(t *testing.T, f *fixture, consumer string) {
	t.Helper()
	cons, err := f.js.Consumer(context.Background(), "A2A_EVENTS", consumer)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range batch.Messages() {
		n++
	}
	if n != 1 {
		t.Fatalf("fetched %d work items, want 1 (%v)", n, batch.Error())
	}
}

// createConsumer makes the durable consumer a worker with cfg would use,
// without starting the worker.
func createConsumer(t *testing.T, f *fixture, cfg workers.Config) {
	t.Helper()
	if _, err := workers.Provision(context.Background(), f.js, cfg); err != nil {
		t.Fatal(err)
	}
}

func TestCrashedWorkIsRedelivered(t *testing.T) {
	f := newFixture(t)
	cfg := testConfig("w")
	createConsumer(t, f, cfg)
	id := f.send(t, "work")
	crashedDelivery(t, f, cfg.Consumer)
	attempts := make(chan int, 1)
	f.start(t, cfg, func(ctx context.Context, task *workers.Task) error {
		attempts <- task.Attempt
		return task.Status(ctx, a2a.TaskStateCompleted, nil)
	})
	f.waitState(t, id, a2a.TaskStateCompleted)
	if a := <-attempts; a != 2 {
		t.Errorf("attempt = %d, want 2 (redelivered after AckWait)", a)
	}
}

func TestLastDeliveryFailsTask(t *testing.T) {
	f := newFixture(t)
	cfg := testConfig("w")
	cfg.MaxDeliver = 2
	createConsumer(t, f, cfg)
	id := f.send(t, "poison")
	crashedDelivery(t, f, cfg.Consumer)
	ran := make(chan struct{}, 1)
	f.start(t, cfg, func(ctx context.Context, task *workers.Task) error {
		ran <- struct{}{}
		return task.Status(ctx, a2a.TaskStateCompleted, nil)
	})
	v := f.waitState(t, id, a2a.TaskStateFailed, a2a.TaskStateCompleted)
	if v.Task.Status.State != a2a.TaskStateFailed || !strings.Contains(lastText(v), "gave up after 1 attempts") {
		t.Errorf("task %s %q, want FAILED: gave up after 1 attempts", v.Task.Status.State, lastText(v))
	}
	select {
	case <-ran:
		t.Error("the handler ran on the last delivery")
	default:
	}
}

// TestExhaustedItemFailsTask: a work item whose every delivery is lost
// (a worker crashing each time) fails its task once JetStream gives up on
// it, with a reason the client can read.
func TestExhaustedItemFailsTask(t *testing.T) {
	f := newFixture(t)
	x, err := workers.WatchExhausted(context.Background(), f.nc, f.js, "A2A_EVENTS", f.logger)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Stop()
	cfg := testConfig("w")
	cfg.MaxDeliver = 2
	createConsumer(t, f, cfg)
	id := f.send(t, "crash every time")
	crashedDelivery(t, f, cfg.Consumer)
	crashedDelivery(t, f, cfg.Consumer)
	// JetStream gives up on the item (and advises so) when it would
	// deliver it a third time: to the next worker that pulls.
	cons, err := f.js.Consumer(context.Background(), "A2A_EVENTS", cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*cfg.AckWait))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		t.Errorf("item delivered past MaxDeliver: %s", m.Subject())
	}
	v := f.waitState(t, id, a2a.TaskStateFailed, a2a.TaskStateCompleted)
	if v.Task.Status.State != a2a.TaskStateFailed || !strings.Contains(lastText(v), "delivered 2 times") {
		t.Errorf("task %s %q, want FAILED: delivered 2 times", v.Task.Status.State, lastText(v))
	}
}

// TestExceptLeavesTenantAlone: an agent of every tenant acks the items
// of the tenants it leaves to others without writing to their tasks.
func TestExceptLeavesTenantAlone(t *testing.T) {
	f := newFixture(t)
	cfg := testConfig("w")
	cfg.Except = []string{"default"}
	f.start(t, cfg, func(ctx context.Context, task *workers.Task) error {
		return task.Status(ctx, a2a.TaskStateCompleted, nil)
	})
	id := f.send(t, "not for the demo")
	head, err := f.log.Head(context.Background(), "default", id)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := f.js.Consumer(context.Background(), "A2A_EVENTS", cfg.Consumer)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := cons.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.AckFloor.Stream >= head {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("item %d not acked: ack floor %d", head, info.AckFloor.Stream)
		}
		<-time.After(20 * time.Millisecond)
	}
	v, err := f.log.Load(context.Background(), "default", id)
	if err != nil {
		t.Fatal(err)
	}
	if v.Task.Status.State != a2a.TaskStateSubmitted || v.Seq != head {
		t.Errorf("task %s at %d, want SUBMITTED untouched at %d", v.Task.Status.State, v.Seq, head)
	}
}
