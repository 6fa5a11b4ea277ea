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

	// mu guards watches, lastSeq, advanced and closed. Lock order: Feed.mu
	// before Watch.mu.
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

// Watch returns a watch on the events of one task with an unbounded
// queue, for requests that wait for their own task. Close it when done.
func (f *Feed) Watch(tenant string, id a2a.TaskID) *Watch {
	return f.WatchBounded(tenant, id, 0)
}

// WatchBounded returns a watch whose queue holds at most limit events (0:
// no limit). A watch whose reader falls that far behind is cut off: its
// queue is dropped and [Watch.Next] returns [ErrWatchOverflow]; the feed
// and the other watches never wait for it.
func (f *Feed) WatchBounded(tenant string, id a2a.TaskID, limit int) *Watch {
	w := &Watch{feed: f, key: viewKey{tenant, id}, notify: make(chan struct{}, 1), limit: limit}
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

// ErrWatchOverflow is returned by [Watch.Next] after the watch's reader
// fell more than its limit behind.
var ErrWatchOverflow = errors.New("watch fell too far behind")

// Watch queues the events of one task as the feed delivers them.
type Watch struct {
	feed   *Feed
	key    viewKey
	notify chan struct{}
	limit  int

	// mu guards queue and overflow.
	mu       sync.Mutex
	queue    []events.Event
	overflow bool
}

func (w *Watch) push(ev events.Event) {
	w.mu.Lock()
	switch {
	case w.overflow:
	case w.limit > 0 && len(w.queue) >= w.limit:
		w.overflow = true
		w.queue = nil
	default:
		w.queue = append(w.queue, ev)
	}
	w.mu.Unlock()
	w.wake()
}

func (w *Watch) wake() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// Ready returns a channel that receives a value when events may be
// waiting; [Watch.Poll] then takes them.
func (w *Watch) Ready() <-chan struct{} { return w.notify }

// Poll returns the next queued event without waiting. ok is false when
// none is queued. It returns [ErrWatchOverflow] or [ErrFeedClosed] once
// the watch can deliver no more.
func (w *Watch) Poll() (ev events.Event, ok bool, err error) {
	w.mu.Lock()
	if w.overflow {
		w.mu.Unlock()
		return events.Event{}, false, ErrWatchOverflow
	}
	if len(w.queue) > 0 {
		ev := w.queue[0]
		w.queue[0] = events.Event{}
		w.queue = w.queue[1:]
		w.mu.Unlock()
		return ev, true, nil
	}
	w.mu.Unlock()
	w.feed.mu.Lock()
	closed := w.feed.closed
	w.feed.mu.Unlock()
	if closed {
		return events.Event{}, false, ErrFeedClosed
	}
	return events.Event{}, false, nil
}

// Next returns the next event of the task, waiting for one until ctx ends,
// the feed stops ([ErrFeedClosed]) or the watch overflows
// ([ErrWatchOverflow]).
func (w *Watch) Next(ctx context.Context) (events.Event, error) {
	for {
		ev, ok, err := w.Poll()
		if err != nil || ok {
			return ev, err
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
