// Package tasklog is the JetStream adapter of the task log: it appends
// events with the per-task optimistic concurrency check and reads a task's
// events back. The engine, the projections and the workers all write and
// read through it, so the write protocol exists once.
//
// # Write protocol
//
// [Log.Append] publishes an event with Nats-Expected-Last-Subject-Sequence
// set to the caller's head and Nats-Expected-Last-Subject-Sequence-Subject
// set to a2a.evt.<tenant>.<task>.>, so a task has one total order across
// its subjects and a single writer at a time. A head of 0 means the task
// must not exist yet. The PubAck's sequence is the new head. A writer whose
// head is stale gets [ErrConflict] and must read the head again.
//
// # Reads
//
// [Log.Read] fetches a task's events with batched direct gets (no consumer
// is created), so reading a small task costs one request.
package tasklog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
)

// ErrConflict is returned by [Log.Append] when the task's head is not the
// one the caller expected: someone else appended first, or (head 0) the
// task already exists.
var ErrConflict = errors.New("task head moved")

// ErrDuplicate is returned by [Log.Append], with the sequence the event is
// stored at, when an event with the same id was already appended after the
// expected head: a retried publish. Writers for whom a retry is success
// treat it so.
var ErrDuplicate = errors.New("event already appended")

// JetStream error codes for a failed expected-last-sequence check: 10071 on
// single-replica streams, 10164 on replicated ones.
const (
	codeWrongLastSeq     jetstream.ErrorCode = 10071
	codeWrongLastSeqRepl jetstream.ErrorCode = 10164
)

// IsWrongLastSequence reports whether err is JetStream's answer to a failed
// expected-last-sequence check.
func IsWrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == codeWrongLastSeq || apiErr.ErrorCode == codeWrongLastSeqRepl
	}
	return false
}

// Log reads and writes task events in one stream.
type Log struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  string
	replies *replies
}

// New returns a Log on the named stream.
func New(nc *nats.Conn, js jetstream.JetStream, stream string) *Log {
	return &Log{nc: nc, js: js, stream: stream, replies: &replies{nc: nc}}
}

// Stream returns the name of the stream the log lives in.
func (l *Log) Stream() string { return l.stream }

// Append publishes ev if the task's head is head, and returns the new
// head. With dedupe, ev.ID is sent as Nats-Msg-Id so a retried publish of
// the same event is stored once, and a retry that finds the event stored
// after head returns its sequence and [ErrDuplicate]. It returns an error
// wrapping [ErrConflict] if the head moved.
func (l *Log) Append(ctx context.Context, ev events.Event, head uint64, dedupe bool) (uint64, error) {
	m, err := events.Encode(ev)
	if err != nil {
		return 0, err
	}
	m.Header[events.PrevHeader] = []string{strconv.FormatUint(head, 10)}
	opts := []jetstream.PublishOpt{
		jetstream.WithExpectLastSequenceForSubject(head, events.TaskFilter(ev.Tenant, ev.TaskID)),
		jetstream.WithExpectStream(l.stream),
	}
	if dedupe {
		opts = append(opts, jetstream.WithMsgID(ev.ID))
	}
	ack, err := l.js.PublishMsg(ctx, m, opts...)
	if err != nil {
		if IsWrongLastSequence(err) {
			if dedupe {
				// JetStream checks the head before the duplicate window, so
				// a retry of a stored event conflicts: find it.
				if seq, ok := l.find(ctx, ev, head); ok {
					return seq, ErrDuplicate
				}
			}
			return 0, fmt.Errorf("append %s to task %s at %d: %w", ev.Type, ev.TaskID, head, ErrConflict)
		}
		return 0, fmt.Errorf("append %s to task %s: %w", ev.Type, ev.TaskID, err)
	}
	// A duplicate (a retried publish already stored) acks with the
	// sequence it was stored at, which is the head it made.
	return ack.Sequence, nil
}

// find returns the sequence of the event with ev's id stored after head.
func (l *Log) find(ctx context.Context, ev events.Event, head uint64) (uint64, bool) {
	var found uint64
	errFound := errors.New("found")
	_, err := l.Read(ctx, ev.Tenant, ev.TaskID, head, 0, func(e events.Event) error {
		if e.ID == ev.ID {
			found = e.Seq
			return errFound
		}
		return nil
	})
	return found, errors.Is(err, errFound)
}

// Head returns the sequence of the task's last event, or an error wrapping
// [events.ErrTaskNotFound] if the task has none. It costs one direct get.
func (l *Log) Head(ctx context.Context, tenant string, task a2a.TaskID) (uint64, error) {
	_, seq, err := l.GetLast(ctx, events.TaskFilter(tenant, task))
	if errors.Is(err, ErrNoMessage) {
		return 0, fmt.Errorf("head of task %s: %w", task, events.ErrTaskNotFound)
	}
	return seq, err
}

// ErrNoMessage is returned by [Log.GetLast] when no message matches.
var ErrNoMessage = errors.New("no message")

// GetLast returns the last message on subject (which may hold wildcards)
// and its sequence, with one direct get. It returns [ErrNoMessage] if there
// is none.
func (l *Log) GetLast(ctx context.Context, subject string) (*nats.Msg, uint64, error) {
	m, err := l.nc.RequestWithContext(ctx, "$JS.API.DIRECT.GET."+l.stream+"."+subject, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("direct get %s: %w", subject, err)
	}
	if len(m.Data) == 0 {
		switch m.Header.Get("Status") {
		case "404":
			return nil, 0, ErrNoMessage
		case "":
		default:
			return nil, 0, fmt.Errorf("direct get %s: status %s %s", subject, m.Header.Get("Status"), m.Header.Get("Description"))
		}
	}
	seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("direct get %s: bad sequence header: %w", subject, err)
	}
	return m, seq, nil
}

// readBatch is how many events one direct-get request asks for.
const readBatch = 512

// Read calls fn for each event of the task with a sequence above after and
// at most upTo (0: no upper bound), in order. It returns the sequence of the
// last event read, or after if there was none. An error from fn stops the
// read and is returned.
func (l *Log) Read(ctx context.Context, tenant string, task a2a.TaskID, after, upTo uint64, fn func(events.Event) error) (uint64, error) {
	filter := events.TaskFilter(tenant, task)
	last := after
	for {
		req := directBatchRequest{Seq: last + 1, NextBySubj: filter, Batch: readBatch, UpToSeq: upTo}
		n, more, err := l.readBatch(ctx, req, func(ev events.Event) error {
			last = ev.Seq
			return fn(ev)
		})
		if err != nil {
			return last, fmt.Errorf("read task %s: %w", task, err)
		}
		if n == 0 || !more {
			return last, nil
		}
	}
}

type directBatchRequest struct {
	Seq        uint64 `json:"seq"`
	NextBySubj string `json:"next_by_subj"`
	Batch      int    `json:"batch"`
	UpToSeq    uint64 `json:"up_to_seq,omitempty"`
}

// readBatch runs one batched direct get. It returns how many events it
// read and whether more may follow.
func (l *Log) readBatch(ctx context.Context, req directBatchRequest, fn func(events.Event) error) (int, bool, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return 0, false, err
	}
	next, done, err := l.replies.request("$JS.API.DIRECT.GET."+l.stream, body)
	if err != nil {
		return 0, false, err
	}
	defer done()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	n := 0
	for {
		m, err := next(ctx)
		if err != nil {
			return n, false, err
		}
		if len(m.Data) == 0 && m.Header.Get("Status") != "" {
			switch m.Header.Get("Status") {
			case "204": // end of batch
				return n, n == req.Batch, nil
			case "404":
				return n, false, nil
			default:
				return n, false, fmt.Errorf("direct get: status %s %s", m.Header.Get("Status"), m.Header.Get("Description"))
			}
		}
		seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
		if err != nil {
			return n, false, fmt.Errorf("direct get: bad sequence header: %w", err)
		}
		ev, err := events.Decode(m.Header.Get(jetstream.SubjectHeader), m.Header, m.Data, seq)
		if err != nil {
			return n, false, err
		}
		n++
		if err := fn(ev); err != nil {
			return n, false, err
		}
	}
}

// LastPerSubject calls fn with the last message of each subject matching
// filter in another stream of the deployment (a KV bucket's stream, say),
// with one batched direct get; up to max subjects.
func (l *Log) LastPerSubject(ctx context.Context, stream, filter string, max int, fn func(*nats.Msg) error) error {
	body, err := json.Marshal(struct {
		MultiLast []string `json:"multi_last"`
		Batch     int      `json:"batch"`
	}{[]string{filter}, max})
	if err != nil {
		return err
	}
	next, done, err := l.replies.request("$JS.API.DIRECT.GET."+stream, body)
	if err != nil {
		return err
	}
	defer done()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	for {
		m, err := next(ctx)
		if err != nil {
			return fmt.Errorf("last per subject %s: %w", filter, err)
		}
		if len(m.Data) == 0 && m.Header.Get("Status") != "" {
			switch m.Header.Get("Status") {
			case "204", "404":
				return nil
			default:
				return fmt.Errorf("last per subject %s: status %s %s", filter, m.Header.Get("Status"), m.Header.Get("Description"))
			}
		}
		if err := fn(m); err != nil {
			return err
		}
	}
}

// Load folds every event of a task into a new view. It returns an error
// wrapping [events.ErrTaskNotFound] if the task has no events.
func (l *Log) Load(ctx context.Context, tenant string, task a2a.TaskID) (*events.View, error) {
	return l.CatchUp(ctx, &events.View{}, tenant, task)
}

// CatchUp folds the task's events after v.Seq into a clone of v and
// returns it; v itself is not changed.
func (l *Log) CatchUp(ctx context.Context, v *events.View, tenant string, task a2a.TaskID) (*events.View, error) {
	nv := v.Clone()
	_, err := l.Read(ctx, tenant, task, v.Seq, 0, func(ev events.Event) error {
		events.Apply(nv, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if nv.Seq == 0 {
		return nil, fmt.Errorf("load task %s: %w", task, events.ErrTaskNotFound)
	}
	return nv, nil
}
