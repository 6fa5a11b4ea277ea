package workers

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/tasklog"
)

// Task is a handler's handle on the task it works on. Its methods are safe
// for concurrent use; appends are serialized and chain the task's head.
type Task struct {
	w         *Worker
	tenant    string
	id        a2a.TaskID
	contextID string
	lease     string
	cancel    context.CancelFunc

	// Input is the message this work item carries: the task's first
	// message, or the follow-up the client sent.
	Input *a2a.Message
	// Attempt is the delivery count of the work item, from 1.
	Attempt int

	// mu guards view, head, final and fenced, and serializes appends.
	mu     sync.Mutex
	view   *events.View
	head   uint64
	final  bool
	fenced bool
}

// ID returns the task id.
func (t *Task) ID() a2a.TaskID { return t.id }

// ContextID returns the task's context id.
func (t *Task) ContextID() string { return t.contextID }

// Tenant returns the task's tenant.
func (t *Task) Tenant() string { return t.tenant }

// View returns the task as this worker knows it: what it read when it
// took the item, plus what it has written since. The view must not be
// changed.
func (t *Task) View() *events.View {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.view
}

// AgentMessage returns an agent message with a fresh id and the given
// parts, for a status update.
func AgentMessage(parts ...*a2a.Part) *a2a.Message {
	return &a2a.Message{ID: uuid.NewString(), Role: a2a.MessageRoleAgent, Parts: parts}
}

// Status appends a status update. A terminal or interrupted state ends the
// work item: later appends fail. It returns [ErrFenced] if the worker lost
// the task.
func (t *Task) Status(ctx context.Context, state a2a.TaskState, msg *a2a.Message) error {
	if msg != nil {
		m := *msg
		m.TaskID, m.ContextID = t.ID(), t.ContextID()
		if m.Role == "" {
			m.Role = a2a.MessageRoleAgent
		}
		msg = &m
	}
	return t.append(ctx, statusEvent(t, state, msg), true)
}

// Artifact appends an artifact update: a whole artifact, or with append a
// chunk added to the artifact with the same id. It returns [ErrFenced] if
// the worker lost the task.
func (t *Task) Artifact(ctx context.Context, art *a2a.Artifact, appendChunk, lastChunk bool) error {
	ev := events.Event{
		ID:     uuid.NewString(),
		Type:   events.TypeArtifact,
		Tenant: t.tenant,
		TaskID: t.ID(),
		Time:   time.Now().UTC(),
		Lease:  t.lease,
		Body: &a2a.TaskArtifactUpdateEvent{
			TaskID: t.ID(), ContextID: t.ContextID(), Artifact: art, Append: appendChunk, LastChunk: lastChunk,
		},
	}
	return t.append(ctx, ev, false)
}

func statusEvent(t *Task, state a2a.TaskState, msg *a2a.Message) events.Event {
	now := time.Now().UTC()
	return events.Event{
		ID:     uuid.NewString(),
		Type:   events.TypeStatus,
		Tenant: t.tenant,
		TaskID: t.ID(),
		Time:   now,
		Lease:  t.lease,
		Body: &a2a.TaskStatusUpdateEvent{
			TaskID: t.ID(), ContextID: t.ContextID(),
			Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: &now},
		},
	}
}

// errFinal is returned for appends after the work item ended.
var errFinal = errors.New("task already has its final status for this work item")

// append writes ev at the head. While claiming (no cancel func yet) a
// conflict is returned as is. Afterwards a conflict reads what was
// appended: input from the client is folded in and the append retried;
// a cancel or another worker's status fences this one.
func (t *Task) append(ctx context.Context, ev events.Event, dedupe bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fenced {
		return ErrFenced
	}
	if t.final {
		return errFinal
	}
	for {
		seq, err := t.w.log.Append(ctx, ev, t.head, dedupe)
		if err == nil || errors.Is(err, tasklog.ErrDuplicate) {
			ev.Seq = seq
			t.head = seq
			nv := t.view.Clone()
			events.Apply(nv, ev)
			t.view = nv
			if st, ok := ev.Body.(*a2a.TaskStatusUpdateEvent); ok &&
				(st.Status.State.Terminal() || events.Interrupted(st.Status.State)) {
				t.final = true
			}
			return nil
		}
		if !errors.Is(err, tasklog.ErrConflict) || t.cancel == nil {
			return err
		}
		if err := t.rebase(ctx); err != nil {
			return err
		}
	}
}

// rebase folds the events appended after t.head by others. Called with
// t.mu held.
func (t *Task) rebase(ctx context.Context) error {
	nv := t.view.Clone()
	fenced := false
	_, err := t.w.log.Read(ctx, t.tenant, t.ID(), t.head, 0, func(ev events.Event) error {
		if ev.Type == events.TypeStatus && ev.Lease != t.lease {
			fenced = true
		}
		events.Apply(nv, ev)
		return nil
	})
	if err != nil {
		return err
	}
	t.view, t.head = nv, nv.Seq
	if fenced {
		t.fenceLocked()
		return ErrFenced
	}
	return nil
}

// checkFence reads the task after a status event from someone else and
// fences the worker if it lost the task. It reports whether it did.
func (t *Task) checkFence(ctx context.Context) bool {
	v, err := t.w.log.Load(ctx, t.tenant, t.ID())
	if err != nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.final {
		return true
	}
	if v.Lease != t.lease || v.Terminal() || v.Interrupted() {
		if v.Seq > t.head {
			t.view, t.head = v, v.Seq
		}
		t.fenceLocked()
		return true
	}
	return false
}

func (t *Task) fenceLocked() {
	t.fenced = true
	if t.cancel != nil {
		t.cancel()
	}
}

func (t *Task) done() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.final
}

func (t *Task) isFenced() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fenced
}

// fail ends the task FAILED with reason, unless the worker lost it.
func (t *Task) fail(ctx context.Context, reason string) {
	err := t.Status(context.WithoutCancel(ctx), a2a.TaskStateFailed, AgentMessage(a2a.NewTextPart(reason)))
	if err != nil && !errors.Is(err, ErrFenced) && !errors.Is(err, errFinal) {
		t.w.logger.Error("fail task", "task", t.ID(), "err", err)
	}
}

// inputAt returns the message of the in event ev, found in the view.
func (t *Task) inputAt(ev events.Event) *a2a.Message {
	switch b := ev.Body.(type) {
	case *events.Created:
		if len(b.Task.History) > 0 {
			return b.Task.History[0]
		}
	case *events.Input:
		return b.Message
	}
	return nil
}
