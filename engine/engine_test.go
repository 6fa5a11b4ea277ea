package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/internal/natstest"
	"github.com/a2abus/a2abus/projections"
	"github.com/a2abus/a2abus/tasklog"
)

type fixture struct {
	eng *engine.Engine
	log *tasklog.Log
	js  jetstream.JetStream
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
	// Provisioning twice is harmless: every node does it at start-up.
	if err := engine.Provision(ctx, js, cfg); err != nil {
		t.Fatalf("second Provision: %v", err)
	}
	log := tasklog.New(nc, js, cfg.EventsStream)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	views := projections.NewViews(log, nil, 100, logger)
	t.Cleanup(views.Close)
	eng, err := engine.New(ctx, js, log, views, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{eng: eng, log: log, js: js}
}

func userMsg(id, text string) *a2a.Message {
	return &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(text)}}
}

// countEvents returns how many events of kind k the task has.
func (f *fixture) countEvents(t *testing.T, id a2a.TaskID, typ events.Type) int {
	t.Helper()
	n := 0
	if _, err := f.log.Read(context.Background(), events.DefaultTenant, id, 0, 0, func(ev events.Event) error {
		if ev.Type == typ {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSendIsIdempotentByMessageID(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	first, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: userMsg("m-1", "echo")})
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed || first.Seq == 0 || first.View.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("first Send = %+v, want a new SUBMITTED task", first)
	}
	again, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: userMsg("m-1", "echo")})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.View.Task.ID != first.View.Task.ID {
		t.Fatalf("retry = replayed %v task %s, want replay of %s", again.Replayed, again.View.Task.ID, first.View.Task.ID)
	}
	if n := f.countEvents(t, first.View.Task.ID, events.TypeCreated); n != 1 {
		t.Errorf("created events = %d, want 1", n)
	}
	// The same messageId in another tenant is another message.
	other, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "acme", Message: userMsg("m-1", "echo")})
	if err != nil || other.Replayed {
		t.Fatalf("other tenant: %+v, %v; want a new task", other, err)
	}
	// Follow-ups are idempotent too.
	in := userMsg("m-2", "more")
	in.TaskID = first.View.Task.ID
	r1, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: in})
	if err != nil || r1.Replayed {
		t.Fatalf("follow-up: %+v, %v", r1, err)
	}
	r2, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: in})
	if err != nil || !r2.Replayed {
		t.Fatalf("retried follow-up: replayed=%v err=%v, want replay", r2.Replayed, err)
	}
	if n := f.countEvents(t, first.View.Task.ID, events.TypeInput); n != 1 {
		t.Errorf("input events = %d, want 1", n)
	}
}

func TestConcurrentRetriesCreateOneTask(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	ids := make([]a2a.TaskID, 8)
	errs := make([]error, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: userMsg("same", "echo")})
			errs[i] = err
			if err == nil {
				ids[i] = r.View.Task.ID
			}
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("send %d: task %s err %v, want task %s", i, ids[i], errs[i], ids[0])
		}
	}
	if n := f.countEvents(t, ids[0], events.TypeCreated); n != 1 {
		t.Errorf("created events = %d, want 1", n)
	}
}

func TestClaimWithoutTaskIsCompletedByRetry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// A first request claimed the messageId for task "claimed" and died
	// before appending the created event.
	subj := engine.IdemSubject("default", "m-crash")
	if _, err := f.js.Publish(ctx, subj, []byte("claimed"), jetstream.WithExpectLastSequencePerSubject(0)); err != nil {
		t.Fatal(err)
	}
	r, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: userMsg("m-crash", "echo")})
	if err != nil {
		t.Fatal(err)
	}
	if r.View.Task.ID != "claimed" || r.Replayed {
		t.Fatalf("retry made task %s (replayed %v), want the claimed task created now", r.View.Task.ID, r.Replayed)
	}
}

func TestConcurrentInputsAllLand(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: userMsg("start", "ask")})
	if err != nil {
		t.Fatal(err)
	}
	id := r.View.Task.ID
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := userMsg(fmt.Sprint("in-", i), "x")
			m.TaskID = id
			if _, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: m}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent input: %v", err)
	}
	if got := f.countEvents(t, id, events.TypeInput); got != n {
		t.Errorf("input events = %d, want %d (each lands once despite conflicts)", got, n)
	}
}

func TestSendAndCancelRules(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: userMsg("a", "slow")})
	if err != nil {
		t.Fatal(err)
	}
	id := r.View.Task.ID

	mismatch := userMsg("b", "x")
	mismatch.TaskID, mismatch.ContextID = id, "another-context"
	if _, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: mismatch}); !errors.Is(err, engine.ErrContextMismatch) {
		t.Errorf("context mismatch: err = %v, want ErrContextMismatch", err)
	}
	unknown := userMsg("c", "x")
	unknown.TaskID = "0190a0a0-0000-7000-8000-000000000000"
	if _, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: unknown}); !errors.Is(err, events.ErrTaskNotFound) {
		t.Errorf("unknown task: err = %v, want ErrTaskNotFound", err)
	}
	bogus := userMsg("d", "x")
	bogus.TaskID = "a.b.>"
	if _, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: bogus}); !errors.Is(err, events.ErrTaskNotFound) {
		t.Errorf("task id with subject wildcards: err = %v, want ErrTaskNotFound", err)
	}
	if _, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "bad tenant", Message: userMsg("e", "x")}); !errors.Is(err, events.ErrInvalidTenant) {
		t.Errorf("bad tenant: err = %v, want ErrInvalidTenant", err)
	}

	v, err := f.eng.Cancel(ctx, "default", id, map[string]any{"why": "test"})
	if err != nil || v.Task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("Cancel() = %v, %v; want CANCELED", v.Task.Status.State, err)
	}
	if _, err := f.eng.Cancel(ctx, "default", id, nil); !errors.Is(err, engine.ErrTaskNotCancelable) {
		t.Errorf("second cancel: err = %v, want ErrTaskNotCancelable", err)
	}
	if _, err := f.eng.Cancel(ctx, "default", "nope", nil); !errors.Is(err, events.ErrTaskNotFound) {
		t.Errorf("cancel unknown: err = %v, want ErrTaskNotFound", err)
	}

	late := userMsg("f", "x")
	late.TaskID = id
	if _, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: late}); !errors.Is(err, engine.ErrTaskTerminal) {
		t.Fatalf("message to terminal task: err = %v, want ErrTaskTerminal", err)
	}
	// The refused message released its claim: the same messageId can start
	// a new task once the client drops the taskId.
	fresh := userMsg("f", "x")
	r2, err := f.eng.Send(ctx, engine.SendCommand{Tenant: "default", Message: fresh})
	if err != nil || r2.Replayed || r2.View.Task.ID == id {
		t.Errorf("reuse of refused messageId: %+v, %v; want a new task", r2, err)
	}
}
