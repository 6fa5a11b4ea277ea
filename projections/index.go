package projections

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
)

// ErrInvalidPageToken is returned by [Index.Query] for a page token it did
// not make.
var ErrInvalidPageToken = errors.New("invalid page token")

// Index answers ListTasks queries from memory. It is safe for concurrent
// use.
type Index struct {
	// mu guards tenants.
	mu      sync.RWMutex
	tenants map[string]map[a2a.TaskID]*indexEntry
	ready   chan struct{}
}

type indexEntry struct {
	id        a2a.TaskID
	contextID string
	state     a2a.TaskState
	at        time.Time // status timestamp
	statusSeq uint64    // sequence the state comes from; 0 = from an in event
}

// NewIndex returns an empty index. It answers queries once [Index.Load]
// has returned.
func NewIndex() *Index {
	return &Index{tenants: map[string]map[a2a.TaskID]*indexEntry{}, ready: make(chan struct{})}
}

// Load reads the last in and st event of every task with a temporary
// last-per-subject consumer, then marks the index ready. Start the [Feed]
// feeding the index before calling Load, so no event falls between the two.
func (x *Index) Load(ctx context.Context, js jetstream.JetStream, stream string) error {
	cons, err := js.CreateConsumer(ctx, stream, jetstream.ConsumerConfig{
		FilterSubjects:    []string{events.KindFilter(events.KindIn), events.KindFilter(events.KindStatus)},
		DeliverPolicy:     jetstream.DeliverLastPerSubjectPolicy,
		AckPolicy:         jetstream.AckNonePolicy,
		InactiveThreshold: time.Minute,
		MemoryStorage:     true,
	})
	if err != nil {
		return fmt.Errorf("load index: %w", err)
	}
	// The consumer is deleted when Load returns; if that fails, its
	// InactiveThreshold removes it a minute later, so the error is moot.
	defer js.DeleteConsumer(context.WithoutCancel(ctx), stream, cons.CachedInfo().Name) //nolint:errcheck
	pending := cons.CachedInfo().NumPending
	for pending > 0 {
		batch, err := cons.Fetch(int(min(pending, 1000)), jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			return fmt.Errorf("load index: %w", err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			md, err := msg.Metadata()
			if err != nil {
				continue
			}
			ev, err := events.Decode(msg.Subject(), msg.Headers(), msg.Data(), md.Sequence.Stream)
			if err == nil {
				x.Apply(ev)
			}
			pending = md.NumPending
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("load index: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("load index: no progress with %d pending", pending)
		}
	}
	close(x.ready)
	return nil
}

// Apply records an in or st event. Events may arrive in any order (the
// loader and the feed overlap): a state comes from the status event with
// the highest sequence.
func (x *Index) Apply(ev events.Event) {
	x.mu.Lock()
	defer x.mu.Unlock()
	tasks := x.tenants[ev.Tenant]
	if tasks == nil {
		tasks = map[a2a.TaskID]*indexEntry{}
		x.tenants[ev.Tenant] = tasks
	}
	e := tasks[ev.TaskID]
	if e == nil {
		e = &indexEntry{id: ev.TaskID, state: a2a.TaskStateSubmitted, at: ev.Time}
		tasks[ev.TaskID] = e
	}
	switch b := ev.Body.(type) {
	case *events.Created:
		e.contextID = b.Task.ContextID
		if e.statusSeq == 0 && b.Task.Status.Timestamp != nil {
			e.at = *b.Task.Status.Timestamp
		}
	case *events.Input:
		if e.contextID == "" {
			e.contextID = b.Message.ContextID
		}
	case *a2a.TaskStatusUpdateEvent:
		if ev.Seq > e.statusSeq {
			e.statusSeq = ev.Seq
			e.state = b.Status.State
			e.at = ev.Time
			if b.Status.Timestamp != nil {
				e.at = *b.Status.Timestamp
			}
			if e.contextID == "" {
				e.contextID = b.ContextID
			}
		}
	}
}

// Query selects tasks for ListTasks.
type Query struct {
	Tenant    string
	ContextID string        // "" matches all
	State     a2a.TaskState // unspecified matches all
	After     *time.Time    // status time at or after; nil matches all
	PageSize  int           // 1..100
	PageToken string        // from a previous Page
}

// Page is one page of task ids, newest status first.
type Page struct {
	IDs       []a2a.TaskID
	TotalSize int
	// NextPageToken is "" on the last page.
	NextPageToken string
}

// Query returns the page of matching task ids that follows q.PageToken. It
// waits until the index is loaded (or ctx ends). It returns
// [ErrInvalidPageToken] for a token it did not make.
func (x *Index) Query(ctx context.Context, q Query) (Page, error) {
	select {
	case <-x.ready:
	case <-ctx.Done():
		return Page{}, ctx.Err()
	}
	var cur *cursor
	if q.PageToken != "" {
		c, err := parseCursor(q.PageToken)
		if err != nil {
			return Page{}, err
		}
		cur = &c
	}
	x.mu.RLock()
	matched := make([]indexEntry, 0, 64)
	for _, e := range x.tenants[q.Tenant] {
		if q.ContextID != "" && e.contextID != q.ContextID {
			continue
		}
		if q.State != a2a.TaskStateUnspecified && e.state != q.State {
			continue
		}
		if q.After != nil && e.at.Before(*q.After) {
			continue
		}
		matched = append(matched, *e)
	}
	x.mu.RUnlock()
	slices.SortFunc(matched, compareEntries)
	start := 0
	if cur != nil {
		start, _ = slices.BinarySearchFunc(matched, *cur, func(e indexEntry, c cursor) int {
			return compareEntries(e, indexEntry{id: c.id, at: c.at})
		})
		if start < len(matched) && matched[start].id == cur.id {
			start++
		}
	}
	end := min(start+q.PageSize, len(matched))
	p := Page{TotalSize: len(matched), IDs: make([]a2a.TaskID, 0, end-start)}
	for _, e := range matched[start:end] {
		p.IDs = append(p.IDs, e.id)
	}
	if end < len(matched) {
		last := matched[end-1]
		p.NextPageToken = cursor{at: last.at, id: last.id}.String()
	}
	return p, nil
}

// compareEntries orders newest status first, then by id descending.
func compareEntries(a, b indexEntry) int {
	if c := b.at.Compare(a.at); c != 0 {
		return c
	}
	return cmp.Compare(b.id, a.id)
}

// cursor is the position after which the next page starts.
type cursor struct {
	at time.Time
	id a2a.TaskID
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.at.UnixNano(), 10) + ":" + string(c.id)))
}

func parseCursor(s string) (cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, ErrInvalidPageToken
	}
	ns, id, ok := strings.Cut(string(b), ":")
	if !ok || !events.ValidTaskID(a2a.TaskID(id)) {
		return cursor{}, ErrInvalidPageToken
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return cursor{}, ErrInvalidPageToken
	}
	return cursor{at: time.Unix(0, n), id: a2a.TaskID(id)}, nil
}
