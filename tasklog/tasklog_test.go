package tasklog_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/internal/natstest"
	"github.com/a2abus/a2abus/tasklog"
)

func newLog(t *testing.T) *tasklog.Log {
	t.Helper()
	s := natstest.Run(t, natstest.Options{})
	nc, js := natstest.Connect(t, s)
	if err := engine.Provision(context.Background(), js, engine.DefaultConfig()); err != nil {
		t.Fatal(err)
	}
	return tasklog.New(nc, js, engine.DefaultConfig().EventsStream)
}

func created(id a2a.TaskID) events.Event {
	now := time.Now().UTC()
	return events.Event{ID: "c-" + string(id), Type: events.TypeCreated, Tenant: "default", TaskID: id, Time: now,
		Body: &events.Created{Task: &a2a.Task{ID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
			History: []*a2a.Message{{ID: "m", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi")}}}}}}
}

func status(id a2a.TaskID, n int, lease string) events.Event {
	now := time.Now().UTC()
	return events.Event{ID: fmt.Sprintf("s-%s-%d", id, n), Type: events.TypeStatus, Tenant: "default", TaskID: id, Time: now, Lease: lease,
		Body: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now,
			Message: &a2a.Message{ID: fmt.Sprint(n), Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprint(n))}}}}}
}

func TestAppendConcurrencyChain(t *testing.T) {
	l := newLog(t)
	ctx := context.Background()
	head, err := l.Append(ctx, created("t1"), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	// A second create of the same task: the head is no longer 0.
	if _, err := l.Append(ctx, created("t1"), 0, false); !errors.Is(err, tasklog.ErrConflict) {
		t.Fatalf("second create: err = %v, want ErrConflict", err)
	}
	// Events on other tasks do not move this task's head.
	if _, err := l.Append(ctx, created("t2"), 0, true); err != nil {
		t.Fatal(err)
	}
	next, err := l.Append(ctx, status("t1", 1, "A"), head, true)
	if err != nil {
		t.Fatal(err)
	}
	// A writer still holding the old head is fenced, whatever the subject.
	for _, ev := range []events.Event{status("t1", 2, "B"), created("t1")} {
		if _, err := l.Append(ctx, ev, head, false); !errors.Is(err, tasklog.ErrConflict) {
			t.Errorf("append %s at stale head: err = %v, want ErrConflict", ev.Type, err)
		}
	}
	got, err := l.Head(ctx, "default", "t1")
	if err != nil || got != next {
		t.Fatalf("Head() = %d, %v, want %d", got, err, next)
	}
	// A retried publish of the same event (same id) is stored once.
	dup, err := l.Append(ctx, status("t1", 1, "A"), head, true)
	if !errors.Is(err, tasklog.ErrDuplicate) || dup != next {
		t.Errorf("retried append = %d, %v, want %d (deduplicated)", dup, err, next)
	}
}

func TestHeadAndLoadUnknownTask(t *testing.T) {
	l := newLog(t)
	ctx := context.Background()
	if _, err := l.Head(ctx, "default", "nope"); !errors.Is(err, events.ErrTaskNotFound) {
		t.Errorf("Head(unknown) err = %v, want ErrTaskNotFound", err)
	}
	if _, err := l.Load(ctx, "default", "nope"); !errors.Is(err, events.ErrTaskNotFound) {
		t.Errorf("Load(unknown) err = %v, want ErrTaskNotFound", err)
	}
}

func TestReadAcrossBatches(t *testing.T) {
	l := newLog(t)
	ctx := context.Background()
	head, err := l.Append(ctx, created("big"), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	const n = 1300 // more than two read batches
	for i := 1; i <= n; i++ {
		if head, err = l.Append(ctx, status("big", i, "L"), head, false); err != nil {
			t.Fatal(err)
		}
		// Interleave another task so the subject filter matters.
		if i%100 == 0 {
			if _, err := l.Append(ctx, created(a2a.TaskID(fmt.Sprint("other", i))), 0, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	v, err := l.Load(ctx, "default", "big")
	if err != nil {
		t.Fatal(err)
	}
	if v.Seq != head || len(v.Task.History) != n+1 {
		t.Fatalf("Load() seq=%d history=%d, want seq=%d history=%d", v.Seq, len(v.Task.History), head, n+1)
	}
	for i, m := range v.Task.History[1:] {
		if m.ID != fmt.Sprint(i+1) {
			t.Fatalf("history[%d] = %s, want %d (events out of order)", i+1, m.ID, i+1)
		}
	}
	// CatchUp from a midpoint reads only what follows it.
	mid := &events.View{}
	count := 0
	if _, err := l.Read(ctx, "default", "big", 0, 0, func(ev events.Event) error {
		count++
		if count <= 700 {
			events.Apply(mid, ev)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	caught, err := l.CatchUp(ctx, mid, "default", "big")
	if err != nil || caught.Seq != head || len(caught.Task.History) != n+1 {
		t.Fatalf("CatchUp() = seq %d, history %d, err %v", caught.Seq, len(caught.Task.History), err)
	}
	if len(mid.Task.History) != 700 {
		t.Errorf("CatchUp changed its input view: %d history entries, want 700", len(mid.Task.History))
	}
}
