package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/tasklog"
)

// Errors a command can return besides [events.ErrTaskNotFound].
var (
	// ErrTaskTerminal is returned for a message to a task in a terminal
	// state; terminal tasks are immutable.
	ErrTaskTerminal = errors.New("task is in a terminal state")
	// ErrTaskNotCancelable is returned when cancelling a terminal task.
	ErrTaskNotCancelable = errors.New("task cannot be canceled")
	// ErrContextMismatch is returned for a message whose contextId differs
	// from its task's.
	ErrContextMismatch = errors.New("message contextId does not match the task")
	// ErrTooManyConflicts is returned when a command lost the race for the
	// task's head more than Config.MaxConflictRetries times.
	ErrTooManyConflicts = errors.New("too many concurrent writes to the task")
)

// Loader returns a task's current view, or an error wrapping
// [events.ErrTaskNotFound].
type Loader interface {
	Load(ctx context.Context, tenant string, id a2a.TaskID) (*events.View, error)
}

// Engine executes client commands against the task log. It is safe for
// concurrent use.
type Engine struct {
	log    *tasklog.Log
	js     jetstream.JetStream
	load   Loader
	cfg    Config
	stream jetstream.Stream
	logger *slog.Logger
}

// New returns an engine writing through log and reading views through
// load. The streams must be provisioned ([Provision]).
func New(ctx context.Context, js jetstream.JetStream, log *tasklog.Log, load Loader, cfg Config, logger *slog.Logger) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, cfg.EventsStream)
	if err != nil {
		return nil, fmt.Errorf("engine: stream %s: %w", cfg.EventsStream, err)
	}
	return &Engine{log: log, js: js, load: load, cfg: cfg, stream: st, logger: logger}, nil
}

// SendCommand is a client message to the agent.
type SendCommand struct {
	Tenant string
	// Message is the client's message, already validated. A non-empty
	// TaskID makes it a follow-up to that task; otherwise it starts a
	// new task.
	Message *a2a.Message
	// Dialect is the protocol version of the request ("1.0", ...).
	Dialect string
	// NewTaskID is the id a new task gets. Callers make it so that they
	// can watch the task before it exists. Empty: the engine makes one.
	NewTaskID a2a.TaskID
}

// SendResult is what [Engine.Send] did.
type SendResult struct {
	// View is the task right after the command's event, or as it is now
	// for a replayed request.
	View *events.View
	// Seq is the sequence of the appended event; 0 for a replay.
	Seq uint64
	// Replayed reports that the messageId had been seen: nothing was
	// appended and View is the task the first request named.
	Replayed bool
}

// Send creates a task from a message, or adds the message to the task it
// names. Errors: [events.ErrTaskNotFound] for an unknown task,
// [ErrTaskTerminal], [ErrContextMismatch], [events.ErrInvalidTenant].
func (e *Engine) Send(ctx context.Context, cmd SendCommand) (SendResult, error) {
	if !events.ValidTenant(cmd.Tenant) {
		return SendResult{}, events.ErrInvalidTenant
	}
	msg := *cmd.Message
	if msg.TaskID != "" {
		return e.sendInput(ctx, cmd.Tenant, &msg)
	}
	id := cmd.NewTaskID
	if id == "" {
		id = a2a.NewTaskID()
	}
	owner, fresh, err := e.claim(ctx, cmd.Tenant, msg.ID, id)
	if err != nil {
		return SendResult{}, err
	}
	if !fresh {
		v, err := e.load.Load(ctx, cmd.Tenant, owner)
		if err == nil {
			return SendResult{View: v, Replayed: true}, nil
		}
		if !errors.Is(err, events.ErrTaskNotFound) {
			return SendResult{}, err
		}
		// The first request claimed the id and stopped before creating
		// the task: finish its work under the claimed id.
		id = owner
	}
	if msg.ContextID == "" {
		msg.ContextID = a2a.NewContextID()
	}
	msg.TaskID = id
	now := time.Now().UTC()
	task := &a2a.Task{
		ID:        id,
		ContextID: msg.ContextID,
		Status:    a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
		History:   []*a2a.Message{&msg},
	}
	ev := events.Event{
		ID:     "created-" + string(id),
		Type:   events.TypeCreated,
		Tenant: cmd.Tenant,
		TaskID: id,
		Time:   now,
		Body:   &events.Created{Task: task, Dialect: cmd.Dialect},
	}
	seq, err := e.log.Append(ctx, ev, 0, true)
	if errors.Is(err, tasklog.ErrConflict) || errors.Is(err, tasklog.ErrDuplicate) {
		// Created by a concurrent retry of the same request.
		v, lerr := e.load.Load(ctx, cmd.Tenant, id)
		if lerr != nil {
			return SendResult{}, lerr
		}
		return SendResult{View: v, Replayed: true}, nil
	}
	if err != nil {
		return SendResult{}, err
	}
	ev.Seq = seq
	v := &events.View{}
	events.Apply(v, ev)
	return SendResult{View: v, Seq: seq}, nil
}

func (e *Engine) sendInput(ctx context.Context, tenant string, msg *a2a.Message) (SendResult, error) {
	if !events.ValidTaskID(msg.TaskID) {
		return SendResult{}, fmt.Errorf("task %q: %w", msg.TaskID, events.ErrTaskNotFound)
	}
	// A replay is answered from the claim. Checking it read-only first
	// means a refused message writes nothing at all.
	owner, err := e.claimOwner(ctx, tenant, msg.ID)
	if err != nil {
		return SendResult{}, err
	}
	if owner != "" {
		return e.replay(ctx, tenant, owner)
	}
	claimed := false
	for attempt := range e.cfg.MaxConflictRetries {
		v, err := e.load.Load(ctx, tenant, msg.TaskID)
		if err == nil {
			err = decideInput(v, msg)
		}
		if err != nil {
			if claimed {
				// The task changed (ended) after this message was claimed.
				e.release(ctx, tenant, msg.ID)
			}
			return SendResult{View: v}, err
		}
		if !claimed {
			owner, fresh, err := e.claim(ctx, tenant, msg.ID, msg.TaskID)
			if err != nil {
				return SendResult{}, err
			}
			if !fresh {
				return e.replay(ctx, tenant, owner)
			}
			claimed = true
		}
		if msg.ContextID == "" {
			msg.ContextID = v.Task.ContextID
		}
		ev := events.Event{
			ID:     "input-" + uuid.NewString(),
			Type:   events.TypeInput,
			Tenant: tenant,
			TaskID: msg.TaskID,
			Time:   time.Now().UTC(),
			Body:   &events.Input{Message: msg},
		}
		seq, err := e.log.Append(ctx, ev, v.Seq, true)
		if errors.Is(err, tasklog.ErrConflict) {
			if err := backoff(ctx, attempt); err != nil {
				return SendResult{}, err
			}
			continue
		}
		if err != nil && !errors.Is(err, tasklog.ErrDuplicate) {
			return SendResult{}, err
		}
		ev.Seq = seq
		nv := v.Clone()
		events.Apply(nv, ev)
		return SendResult{View: nv, Seq: seq}, nil
	}
	return SendResult{}, ErrTooManyConflicts
}

func (e *Engine) replay(ctx context.Context, tenant string, owner a2a.TaskID) (SendResult, error) {
	v, err := e.load.Load(ctx, tenant, owner)
	if err != nil {
		return SendResult{}, err
	}
	return SendResult{View: v, Replayed: true}, nil
}

// backoff waits a random while, longer with each lost race, so writers
// contending for one task's head spread out.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(min(attempt+1, 8)) * int64(250*time.Microsecond)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Cancel moves a non-terminal task to CANCELED and returns the task after
// the change. The worker running it sees the event and stops; its next
// append fails the head check. Errors: [events.ErrTaskNotFound],
// [ErrTaskNotCancelable] (with the current view).
func (e *Engine) Cancel(ctx context.Context, tenant string, id a2a.TaskID, metadata map[string]any) (*events.View, error) {
	if !events.ValidTenant(tenant) {
		return nil, events.ErrInvalidTenant
	}
	if !events.ValidTaskID(id) {
		return nil, fmt.Errorf("task %q: %w", id, events.ErrTaskNotFound)
	}
	for attempt := range e.cfg.MaxConflictRetries {
		v, err := e.load.Load(ctx, tenant, id)
		if err != nil {
			return nil, err
		}
		if err := decideCancel(v); err != nil {
			return v, err
		}
		now := time.Now().UTC()
		ev := events.Event{
			ID:     "cancel-" + uuid.NewString(),
			Type:   events.TypeStatus,
			Tenant: tenant,
			TaskID: id,
			Time:   now,
			Body: &a2a.TaskStatusUpdateEvent{
				TaskID:    id,
				ContextID: v.Task.ContextID,
				Status:    a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: &now},
				Metadata:  metadata,
			},
		}
		seq, err := e.log.Append(ctx, ev, v.Seq, true)
		if errors.Is(err, tasklog.ErrConflict) {
			if err := backoff(ctx, attempt); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil && !errors.Is(err, tasklog.ErrDuplicate) {
			return nil, err
		}
		ev.Seq = seq
		nv := v.Clone()
		events.Apply(nv, ev)
		return nv, nil
	}
	return nil, ErrTooManyConflicts
}

// decideInput says whether msg may be added to the task v.
func decideInput(v *events.View, msg *a2a.Message) error {
	if v.Terminal() {
		return ErrTaskTerminal
	}
	if msg.ContextID != "" && msg.ContextID != v.Task.ContextID {
		return ErrContextMismatch
	}
	return nil
}

// decideCancel says whether the task v may be canceled.
func decideCancel(v *events.View) error {
	if v.Terminal() {
		return ErrTaskNotCancelable
	}
	return nil
}

// IdemSubject returns the subject of the idempotency claim of a client
// messageId: a2a.idem.<tenant>.<first 128 bits of sha256 in hex>.
func IdemSubject(tenant, messageID string) string {
	h := sha256.Sum256([]byte(tenant + "\x00" + messageID))
	return events.IdemPrefix + tenant + "." + hex.EncodeToString(h[:16])
}

// claim records that messageID belongs to task. It returns the task the id
// belongs to and whether this call made the claim.
func (e *Engine) claim(ctx context.Context, tenant, messageID string, task a2a.TaskID) (a2a.TaskID, bool, error) {
	subj := IdemSubject(tenant, messageID)
	_, err := e.js.Publish(ctx, subj, []byte(task),
		jetstream.WithExpectLastSequencePerSubject(0),
		jetstream.WithMsgTTL(e.cfg.IdempotencyTTL),
		jetstream.WithExpectStream(e.cfg.EventsStream))
	if err == nil {
		return task, true, nil
	}
	if !tasklog.IsWrongLastSequence(err) {
		return "", false, fmt.Errorf("claim message id: %w", err)
	}
	m, _, err := e.log.GetLast(ctx, subj)
	if err != nil {
		return "", false, fmt.Errorf("read message id claim: %w", err)
	}
	return a2a.TaskID(m.Data), false, nil
}

// claimOwner returns the task a messageId was claimed for, or "" if it
// was not. It only reads.
func (e *Engine) claimOwner(ctx context.Context, tenant, messageID string) (a2a.TaskID, error) {
	m, _, err := e.log.GetLast(ctx, IdemSubject(tenant, messageID))
	if errors.Is(err, tasklog.ErrNoMessage) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read message id claim: %w", err)
	}
	return a2a.TaskID(m.Data), nil
}

// release drops a claim whose command was refused, so a corrected retry
// with the same messageId is not mistaken for a replay. Failure to release
// only means the claim lives until its TTL.
func (e *Engine) release(ctx context.Context, tenant, messageID string) {
	if err := e.stream.Purge(ctx, jetstream.WithPurgeSubject(IdemSubject(tenant, messageID))); err != nil {
		e.logger.Warn("release message id claim", "err", err)
	}
}
