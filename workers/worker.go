package workers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/tasklog"
)

// ErrFenced is returned by [Task] appends when the worker no longer owns
// the task: it was canceled, or another worker took it over. The handler
// should return; its context is canceled too.
var ErrFenced = errors.New("worker fenced: task canceled or taken over")

// Handler does the work of one work item. It reports progress and results
// through t and ends the task with a final or interrupted status. Returning
// an error fails the task with the error's text.
type Handler func(ctx context.Context, t *Task) error

// Config describes a worker's consumer. Use [DefaultConfig].
type Config struct {
	// Stream is the events stream.
	Stream string
	// Consumer is the durable consumer name; workers of one agent share
	// it.
	Consumer string
	// Tenants are the tenants whose tasks this agent works on; "*" for
	// all.
	Tenants []string
	// Except are tenants whose items this worker acks without handling
	// them, because other agents serve them: it lets an agent of "*"
	// leave some tenants to external workers.
	Except []string
	// AckWait is how long a work item may go without an ack or a
	// heartbeat before it is redelivered.
	AckWait time.Duration
	// MaxDeliver is how many times an item is delivered; the last
	// delivery fails the task instead of running the handler.
	MaxDeliver int
	// Concurrency is how many items one worker runs at once.
	Concurrency int
}

// DefaultConfig returns the configuration of the demo agent.
func DefaultConfig() Config {
	return Config{
		Stream:      "A2A_EVENTS",
		Consumer:    "a2abus-demo",
		Tenants:     []string{"*"},
		AckWait:     30 * time.Second,
		MaxDeliver:  5,
		Concurrency: 256,
	}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.Stream == "" || c.Consumer == "":
		return errors.New("worker config: Stream and Consumer are required")
	case len(c.Tenants) == 0:
		return errors.New("worker config: no Tenants")
	case c.AckWait < 100*time.Millisecond:
		return errors.New("worker config: AckWait under 100ms")
	case c.MaxDeliver < 2:
		return errors.New("worker config: MaxDeliver under 2")
	case c.Concurrency < 1:
		return errors.New("worker config: Concurrency under 1")
	}
	for _, t := range c.Tenants {
		if t != "*" && !events.ValidTenant(t) {
			return fmt.Errorf("worker config: invalid tenant %q", t)
		}
	}
	return nil
}

// Worker runs a [Handler] on the work items of a durable consumer.
type Worker struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	log     *tasklog.Log
	cfg     Config
	handler Handler
	logger  *slog.Logger

	cc     jetstream.ConsumeContext
	ctx    context.Context // canceled by Stop
	cancel context.CancelFunc
	slots  chan struct{}
	wg     sync.WaitGroup
}

// New returns a worker; [Worker.Start] starts it.
func New(nc *nats.Conn, js jetstream.JetStream, cfg Config, h Handler, logger *slog.Logger) (*Worker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Worker{
		nc: nc, js: js, log: tasklog.New(nc, js, cfg.Stream), cfg: cfg, handler: h,
		logger: logger, slots: make(chan struct{}, cfg.Concurrency),
	}, nil
}

// Start creates or updates the durable consumer and starts taking work.
func (w *Worker) Start(ctx context.Context) error {
	cons, err := Provision(ctx, w.js, w.cfg)
	if err != nil {
		return err
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.cc, err = cons.Consume(w.dispatch, jetstream.PullMaxMessages(w.cfg.Concurrency))
	if err != nil {
		w.cancel()
		return fmt.Errorf("worker %s: consume: %w", w.cfg.Consumer, err)
	}
	return nil
}

// Stop stops taking work, cancels the handlers running and waits for them.
// Their items are nak'ed, so they are redelivered at once.
func (w *Worker) Stop() {
	if w.cc == nil {
		return
	}
	w.cc.Stop()
	<-w.cc.Closed()
	w.cancel()
	w.wg.Wait()
}

func (w *Worker) dispatch(msg jetstream.Msg) {
	w.slots <- struct{}{} // bounded by PullMaxMessages, never blocks long
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { <-w.slots }()
		w.process(msg)
	}()
}

// process runs one work item to its ack.
func (w *Worker) process(msg jetstream.Msg) {
	ctx := w.ctx
	md, err := msg.Metadata()
	if err != nil {
		w.logger.Error("work item without metadata", "err", err)
		w.settle(msg.Term())
		return
	}
	inSeq := md.Sequence.Stream
	ev, err := events.Decode(msg.Subject(), msg.Headers(), msg.Data(), inSeq)
	if err != nil {
		w.logger.Error("undecodable work item; terminating it", "seq", inSeq, "err", err)
		w.settle(msg.Term())
		return
	}
	if slices.Contains(w.cfg.Except, ev.Tenant) {
		w.settle(msg.Ack())
		return
	}
	logger := w.logger.With("task", ev.TaskID, "seq", inSeq, "attempt", md.NumDelivered)

	// Watch the task's status before reading it, so no cancel or takeover
	// after the read goes unseen.
	fence := make(chan string, 1)
	lease := uuid.NewString()
	sub, err := w.nc.Subscribe(events.Subject(ev.Tenant, ev.TaskID, events.KindStatus), func(m *nats.Msg) {
		if l := m.Header.Get(events.LeaseHeader); l != lease {
			select {
			case fence <- l:
			default:
			}
		}
	})
	if err != nil {
		logger.Error("subscribe to task status", "err", err)
		w.settle(msg.Nak())
		return
	}
	defer func() { _ = sub.Unsubscribe() }()

	t, err := w.claim(ctx, ev, inSeq, lease, int(md.NumDelivered))
	if err != nil {
		if errors.Is(err, errNothingToDo) {
			w.settle(msg.Ack())
			return
		}
		logger.Warn("claim work item", "err", err)
		w.settle(msg.Nak())
		return
	}
	if int(md.NumDelivered) >= w.cfg.MaxDeliver {
		logger.Warn("last delivery: failing the task")
		t.fail(ctx, fmt.Sprintf("the agent gave up after %d attempts", md.NumDelivered-1))
		w.settle(msg.Ack())
		return
	}

	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t.cancel = cancel
	go func() {
		for {
			select {
			case <-fence:
				if t.checkFence(hctx) {
					return
				}
			case <-hctx.Done():
				return
			}
		}
	}()
	stopBeat := w.heartbeat(hctx, msg, logger)
	herr := runHandler(hctx, w.handler, t, logger)
	stopBeat()

	switch {
	case w.ctx.Err() != nil && !t.done():
		// Shutting down: let another worker (or this one after a restart)
		// resume the item.
		w.settle(msg.Nak())
		return
	case errors.Is(herr, ErrFenced) || t.isFenced():
		logger.Info("worker fenced")
	case herr != nil && !t.done():
		t.fail(ctx, herr.Error())
	case !t.done():
		t.fail(ctx, "the agent ended without a final status")
	}
	w.settle(msg.Ack())
}

func (w *Worker) settle(err error) {
	if err != nil {
		w.logger.Warn("ack work item", "err", err)
	}
}

func runHandler(ctx context.Context, h Handler, t *Task, logger *slog.Logger) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("agent panic: %v", r)
			logger.Error("agent panic", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	return h(ctx, t)
}

func (w *Worker) heartbeat(ctx context.Context, msg jetstream.Msg, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(w.cfg.AckWait / 2)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if err := msg.InProgress(); err != nil {
					logger.Warn("heartbeat", "err", err)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

var errNothingToDo = errors.New("nothing to do")

// claim reads the task and, unless the item is settled already, moves it
// to WORKING under lease.
func (w *Worker) claim(ctx context.Context, ev events.Event, inSeq uint64, lease string, attempt int) (*Task, error) {
	for i := range 16 {
		var v *events.View
		if i == 0 && ev.Type == events.TypeCreated {
			// Optimistic: a new task's only event is this one. If anything
			// else was appended, the WORKING append below conflicts and the
			// next round reads the task.
			v = &events.View{}
			events.Apply(v, ev)
		} else {
			var err error
			if v, err = w.log.Load(ctx, ev.Tenant, ev.TaskID); err != nil {
				return nil, err
			}
		}
		if v.Terminal() || v.InSeq > inSeq || (v.Interrupted() && v.StatusSeq > inSeq) {
			return nil, errNothingToDo
		}
		t := &Task{w: w, tenant: ev.Tenant, id: v.Task.ID, contextID: v.Task.ContextID, view: v, head: v.Seq, lease: lease, Attempt: attempt}
		t.Input = t.inputAt(ev)
		err := t.append(ctx, statusEvent(t, a2a.TaskStateWorking, nil), true)
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, tasklog.ErrConflict) {
			return nil, err
		}
	}
	return nil, tasklog.ErrConflict
}
