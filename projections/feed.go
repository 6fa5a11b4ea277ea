package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/tasklog"
)

// writeTimeout bounds background writes (snapshots).
const writeTimeout = 10 * time.Second

// ErrFeedClosed is returned by waits on a closed [Feed].
var ErrFeedClosed = errors.New("feed closed")

// Feed delivers every event appended to the log after it started, in
// stream order, to the watches and the index registered with it. It is
// safe for concurrent use.
type Feed struct {
	log    *tasklog.Log
	index  *Index
	logger *slog.Logger
	cc     jetstream.ConsumeContext

	// mu guards watches, lastSeq, advanced and closed.
	mu       sync.Mutex
	watches  map[viewKey]map[*Watch]struct{}
	lastSeq  uint64
	advanced chan struct{} // closed and replaced when lastSeq grows
	closed   bool
}

// StartFeed starts the edge's feed: one ordered consumer on every event
// subject, from the end of the stream. Events are also applied to index,
// if not nil. Stop it with [Feed.Stop].
func StartFeed(ctx context.Context, js jetstream.JetStream, log *tasklog.Log, index *Index, logger *slog.Logger) (*Feed, error) {
	start := uint64(0)
	_, last, err := log.GetLast(ctx, events.AllEvents)
	switch {
	case err == nil:
		start = last
	case !errors.Is(err, tasklog.ErrNoMessage):
		return nil, fmt.Errorf("start feed: %w", err)
	}
	f := &Feed{
		log:      log,
		index:    index,
		logger:   logger,
		watches:  map[viewKey]map[*Watch]struct{}{},
		lastSeq:  start,
		advanced: make(chan struct{}),
	}
	cons, err := js.OrderedConsumer(ctx, log.Stream(), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.AllEvents},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    start + 1,
	})
	if err != nil {
		return nil, fmt.Errorf("start feed: %w", err)
	}
	f.cc, err = cons.Consume(f.handle)
	if err != nil {
		return nil, fmt.Errorf("start feed: %w", err)
	}
	return f, nil
}

// Stop stops the consumer and wakes every waiter with [ErrFeedClosed].
func (f *Feed) Stop() {
	f.cc.Stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	close(f.advanced)
	for _, ws := range f.watches {
		for w := range ws {
			w.wake()
		}
	}
}

func (f *Feed) handle(msg jetstream.Msg) {
	md, err := msg.Metadata()
	if err != nil {
		f.logger.Error("feed: message without metadata", "subject", msg.Subject(), "err", err)
		return
	}
	seq := md.Sequence.Stream
	tenant, task, kind, err := events.ParseSubject(msg.Subject())
	if err != nil {
		f.advance(seq)
		return
	}
	key := viewKey{tenant, task}
	f.mu.Lock()
	ws := f.watches[key]
	watched := len(ws) > 0
	f.mu.Unlock()
	if watched || (f.index != nil && (kind == events.KindIn || kind == events.KindStatus)) {
		ev, err := events.Decode(msg.Subject(), msg.Headers(), msg.Data(), seq)
		if err != nil {
			f.logger.Error("feed: undecodable event", "seq", seq, "err", err)
		} else {
			if f.index != nil {
				f.index.Apply(ev)
			}
			if watched {
				f.mu.Lock()
				for w := range f.watches[key] {
					w.push(ev)
				}
				f.mu.Unlock()
			}
		}
	}
	f.advance(seq)
}

func (f *Feed) advance(seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq <= f.lastSeq || f.closed {
		return
	}
	f.lastSeq = seq
	close(f.advanced)
	f.advanced = make(chan struct{})
}

// WaitSeq blocks until the feed has delivered the event at seq (or a later
// one), ctx ends, or the feed stops.
func (f *Feed) WaitSeq(ctx context.Context, seq uint64) error {
	for {
		f.mu.Lock()
		last, ch, closed := f.lastSeq, f.advanced, f.closed
		f.mu.Unlock()
		if last >= seq {
			return nil
		}
		if closed {
			return ErrFeedClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Sync waits until the feed has delivered every event appended before the
// call. It costs one direct get.
func (f *Feed) Sync(ctx context.Context) error {
	_, last, err := f.log.GetLast(ctx, events.AllEvents)
	if errors.Is(err, tasklog.ErrNoMessage) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync feed: %w", err)
	}
	return f.WaitSeq(ctx, last)
}

// Watch returns a watch on the events of one task. Close it when done.
func (f *Feed) Watch(tenant string, id a2a.TaskID) *Watch {
	w := &Watch{feed: f, key: viewKey{tenant, id}, notify: make(chan struct{}, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	ws := f.watches[w.key]
	if ws == nil {
		ws = map[*Watch]struct{}{}
		f.watches[w.key] = ws
	}
	ws[w] = struct{}{}
	if f.closed {
		w.wake()
	}
	return w
}

// Watch queues the events of one task as the feed delivers them. Its queue
// is unbounded: it is meant for requests that wait for their own task.
type Watch struct {
	feed   *Feed
	key    viewKey
	notify chan struct{}

	// mu guards queue.
	mu    sync.Mutex
	queue []events.Event
}

func (w *Watch) push(ev events.Event) {
	w.mu.Lock()
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	w.wake()
}

func (w *Watch) wake() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// Next returns the next event of the task, waiting for one until ctx ends
// or the feed stops ([ErrFeedClosed]).
func (w *Watch) Next(ctx context.Context) (events.Event, error) {
	for {
		w.mu.Lock()
		if len(w.queue) > 0 {
			ev := w.queue[0]
			w.queue[0] = events.Event{}
			w.queue = w.queue[1:]
			w.mu.Unlock()
			return ev, nil
		}
		w.mu.Unlock()
		w.feed.mu.Lock()
		closed := w.feed.closed
		w.feed.mu.Unlock()
		if closed {
			return events.Event{}, ErrFeedClosed
		}
		select {
		case <-w.notify:
		case <-ctx.Done():
			return events.Event{}, ctx.Err()
		}
	}
}

// Close unregisters the watch.
func (w *Watch) Close() {
	f := w.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if ws := f.watches[w.key]; ws != nil {
		delete(ws, w)
		if len(ws) == 0 {
			delete(f.watches, w.key)
		}
	}
}
