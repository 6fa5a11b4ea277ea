package projections

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/tasklog"
)

// Snapshot policy: a task is snapshotted when it becomes interrupted or
// terminal if it has at least SnapshotMin events (below that, reading the
// events costs no more than reading a snapshot), and every SnapshotEvery
// events while it runs.
const (
	SnapshotMin   = 64
	SnapshotEvery = 1000
)

// Views loads task views through a cache. It is safe for concurrent use.
type Views struct {
	log    *tasklog.Log
	kv     jetstream.KeyValue
	logger *slog.Logger

	// mu guards lru, items and snapSeq.
	mu      sync.Mutex
	lru     *list.List // of *cached, most recent first
	items   map[viewKey]*list.Element
	maxSize int

	snaps chan *events.View
	stop  chan struct{}
	done  chan struct{}
}

type viewKey struct {
	tenant string
	id     a2a.TaskID
}

type cached struct {
	key viewKey
	v   *events.View
	// snapEvents is the event count of the last snapshot this edge wrote
	// or read.
	snapEvents int
}

// NewViews returns a view loader keeping up to size views in memory, with
// snapshots in kv (nil: no snapshots). Call [Views.Close] to stop its
// snapshot writer.
func NewViews(log *tasklog.Log, kv jetstream.KeyValue, size int, logger *slog.Logger) *Views {
	if size < 1 {
		size = 1
	}
	v := &Views{
		log:     log,
		kv:      kv,
		logger:  logger,
		lru:     list.New(),
		items:   map[viewKey]*list.Element{},
		maxSize: size,
		snaps:   make(chan *events.View, 1024),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go v.writeSnapshots()
	return v
}

// Close stops the snapshot writer after it has written what is queued.
func (vs *Views) Close() {
	select {
	case <-vs.stop:
	default:
		close(vs.stop)
	}
	<-vs.done
}

// Load returns the task's current view. It returns an error wrapping
// [events.ErrTaskNotFound] if the task does not exist.
func (vs *Views) Load(ctx context.Context, tenant string, id a2a.TaskID) (*events.View, error) {
	if !events.ValidTaskID(id) || !events.ValidTenant(tenant) {
		return nil, fmt.Errorf("task %q: %w", id, events.ErrTaskNotFound)
	}
	head, err := vs.log.Head(ctx, tenant, id)
	if err != nil {
		return nil, err
	}
	key := viewKey{tenant, id}
	base, snapEvents := vs.get(key)
	if base != nil && base.Seq >= head {
		return base, nil
	}
	if base == nil {
		base = vs.snapshot(ctx, key)
		if base.Seq > head {
			base = &events.View{} // a snapshot from a log that was reset
		}
		snapEvents = base.Events
	}
	v, err := vs.log.CatchUp(ctx, base, tenant, id)
	if err != nil {
		return nil, err
	}
	vs.put(v, snapEvents)
	return v, nil
}

// Events calls fn for each event of the task after sequence after, in
// order, reading the log with batched direct gets; it returns the sequence
// of the last event read. An error from fn stops the read and is returned.
func (vs *Views) Events(ctx context.Context, tenant string, id a2a.TaskID, after uint64, fn func(events.Event) error) (uint64, error) {
	if !events.ValidTaskID(id) || !events.ValidTenant(tenant) {
		return after, fmt.Errorf("task %q: %w", id, events.ErrTaskNotFound)
	}
	return vs.log.Read(ctx, tenant, id, after, 0, fn)
}

// Put offers a view folded elsewhere (by a request that watched its task)
// to the cache. An older view than the cached one is ignored.
func (vs *Views) Put(v *events.View) {
	vs.put(v, 0)
}

func (vs *Views) get(key viewKey) (*events.View, int) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	el, ok := vs.items[key]
	if !ok {
		return nil, 0
	}
	vs.lru.MoveToFront(el)
	c := el.Value.(*cached)
	return c.v, c.snapEvents
}

func (vs *Views) put(v *events.View, snapEvents int) {
	key := viewKey{v.Tenant, v.Task.ID}
	vs.mu.Lock()
	el, ok := vs.items[key]
	if ok {
		c := el.Value.(*cached)
		vs.lru.MoveToFront(el)
		if c.v.Seq >= v.Seq {
			vs.mu.Unlock()
			return
		}
		c.v = v
		snapEvents = max(snapEvents, c.snapEvents)
	} else {
		el = vs.lru.PushFront(&cached{key: key, v: v, snapEvents: snapEvents})
		vs.items[key] = el
		for vs.lru.Len() > vs.maxSize {
			old := vs.lru.Back()
			vs.lru.Remove(old)
			delete(vs.items, old.Value.(*cached).key)
		}
	}
	c := el.Value.(*cached)
	settled := v.Terminal() || v.Interrupted()
	want := vs.kv != nil && v.Events > snapEvents &&
		(settled && v.Events >= SnapshotMin || v.Events-snapEvents >= SnapshotEvery)
	if want {
		c.snapEvents = v.Events
	} else {
		c.snapEvents = snapEvents
	}
	vs.mu.Unlock()
	if want {
		select {
		case vs.snaps <- v:
		default:
			// The writer is behind; this snapshot is an optimisation.
		}
	}
}

func snapKey(key viewKey) string { return key.tenant + "." + string(key.id) }

// snapshot returns the stored snapshot of the task, or an empty view.
func (vs *Views) snapshot(ctx context.Context, key viewKey) *events.View {
	if vs.kv == nil {
		return &events.View{}
	}
	e, err := vs.kv.Get(ctx, snapKey(key))
	if err != nil {
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			vs.logger.Warn("read snapshot", "task", key.id, "err", err)
		}
		return &events.View{}
	}
	var v events.View
	if err := json.Unmarshal(e.Value(), &v); err != nil || v.Task.ID != key.id {
		vs.logger.Warn("ignoring bad snapshot", "task", key.id, "err", err)
		return &events.View{}
	}
	return &v
}

func (vs *Views) writeSnapshots() {
	defer close(vs.done)
	write := func(v *events.View) {
		b, err := json.Marshal(v)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
			_, err = vs.kv.Put(ctx, snapKey(viewKey{v.Tenant, v.Task.ID}), b)
			cancel()
		}
		if err != nil {
			vs.logger.Warn("write snapshot", "task", v.Task.ID, "seq", v.Seq, "err", err)
		}
	}
	for {
		select {
		case v := <-vs.snaps:
			write(v)
		case <-vs.stop:
			for {
				select {
				case v := <-vs.snaps:
					write(v)
				default:
					return
				}
			}
		}
	}
}
