package tasklog

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// replies routes the answers of multi-message requests (batched direct
// gets) to their callers through one wildcard subscription per
// connection, instead of a subscription per request. Lock order:
// replies.mu before reply.mu.
type replies struct {
	nc     *nats.Conn
	prefix string
	once   sync.Once
	err    error
	next   atomic.Uint64

	// mu guards waiting.
	mu      sync.Mutex
	waiting map[string]*reply
}

// reply queues the messages of one request. The queue is unbounded so one
// slow reader never holds up the shared subscription.
type reply struct {
	notify chan struct{}
	// mu guards msgs.
	mu   sync.Mutex
	msgs []*nats.Msg
}

func (r *replies) start() error {
	r.once.Do(func() {
		r.prefix = r.nc.NewInbox() + "."
		r.waiting = map[string]*reply{}
		sub, err := r.nc.Subscribe(r.prefix+"*", r.route)
		if err == nil {
			err = sub.SetPendingLimits(-1, -1)
		}
		r.err = err
	})
	return r.err
}

func (r *replies) route(m *nats.Msg) {
	r.mu.Lock()
	w := r.waiting[m.Subject]
	r.mu.Unlock()
	if w == nil {
		return // the caller gave up
	}
	w.mu.Lock()
	w.msgs = append(w.msgs, m)
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// request publishes body to subj and returns a function that yields the
// answers in order, and one that ends the request.
func (r *replies) request(subj string, body []byte) (next func(context.Context) (*nats.Msg, error), done func(), err error) {
	if err := r.start(); err != nil {
		return nil, nil, err
	}
	inbox := r.prefix + strconv.FormatUint(r.next.Add(1), 36)
	w := &reply{notify: make(chan struct{}, 1)}
	r.mu.Lock()
	r.waiting[inbox] = w
	r.mu.Unlock()
	done = func() {
		r.mu.Lock()
		delete(r.waiting, inbox)
		r.mu.Unlock()
	}
	if err := r.nc.PublishRequest(subj, inbox, body); err != nil {
		done()
		return nil, nil, err
	}
	next = func(ctx context.Context) (*nats.Msg, error) {
		for {
			w.mu.Lock()
			if len(w.msgs) > 0 {
				m := w.msgs[0]
				w.msgs[0] = nil
				w.msgs = w.msgs[1:]
				w.mu.Unlock()
				return m, nil
			}
			w.mu.Unlock()
			select {
			case <-w.notify:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return next, done, nil
}
