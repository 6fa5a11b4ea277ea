package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"
)

// DeadLetter is a delivery that failed for good: its (task, config) pair
// waits for a redrive.
type DeadLetter struct {
	// Seq is the DLQ stream sequence, the handle for a redrive.
	Seq      uint64     `json:"-"`
	Tenant   string     `json:"tenant"`
	TaskID   a2a.TaskID `json:"taskId"`
	ConfigID string     `json:"configId"`
	URL      string     `json:"url"`
	// EventSeq is the sequence of the status that could not be delivered.
	EventSeq uint64    `json:"eventSeq"`
	Status   int       `json:"httpStatus,omitempty"`
	Error    string    `json:"error"`
	Attempts int       `json:"attempts"`
	At       time.Time `json:"at"`
}

func (p *Pusher) deadLetter(ctx context.Context, tenant string, task a2a.TaskID, cfg a2a.PushConfig, seq uint64, status int, cur cursor) error {
	d := DeadLetter{Tenant: tenant, TaskID: task, ConfigID: cfg.ID, URL: cfg.URL, EventSeq: seq, Status: status,
		Error: cur.LastError, Attempts: cur.Attempts, At: time.Now().UTC()}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = p.js.Publish(ctx, dlqPrefix+configKey(tenant, task, cfg.ID), b, jetstream.WithExpectStream(DLQStream))
	return err
}

// ListDeadLetters returns the dead letters, oldest first.
func ListDeadLetters(ctx context.Context, js jetstream.JetStream) ([]DeadLetter, error) {
	st, err := js.Stream(ctx, DLQStream)
	if err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	var out []DeadLetter
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // redriven
		}
		if err != nil {
			return nil, fmt.Errorf("dead letter %d: %w", seq, err)
		}
		var d DeadLetter
		if err := json.Unmarshal(m.Data, &d); err != nil {
			return nil, fmt.Errorf("dead letter %d: %w", seq, err)
		}
		d.Seq = seq
		out = append(out, d)
	}
	return out, nil
}

// Redrive resends dead letters: for each selected one (all if seqs is
// empty) it reopens the (task, config) pair and queues a wake-up, then
// removes the dead letter. The pair resumes at the status that failed and
// delivers it and every later status, in order. It returns the redriven
// dead letters.
func Redrive(ctx context.Context, js jetstream.JetStream, seqs ...uint64) ([]DeadLetter, error) {
	all, err := ListDeadLetters(ctx, js)
	if err != nil {
		return nil, err
	}
	state, err := js.KeyValue(ctx, StateBucket)
	if err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, DLQStream)
	if err != nil {
		return nil, err
	}
	want := map[uint64]bool{}
	for _, s := range seqs {
		want[s] = true
	}
	var done []DeadLetter
	for _, d := range all {
		if len(want) > 0 && !want[d.Seq] {
			continue
		}
		key := configKey(d.Tenant, d.TaskID, d.ConfigID)
		if err := reopen(ctx, state, key); err != nil {
			return done, fmt.Errorf("redrive %d: %w", d.Seq, err)
		}
		if _, err := js.Publish(ctx, queuePrefix+key, nil, jetstream.WithExpectStream(QueueStream)); err != nil {
			return done, fmt.Errorf("redrive %d: %w", d.Seq, err)
		}
		if err := st.DeleteMsg(ctx, d.Seq); err != nil {
			return done, fmt.Errorf("redrive %d: remove dead letter: %w", d.Seq, err)
		}
		done = append(done, d)
	}
	return done, nil
}

// reopen clears the dead mark and the attempt count of a pair.
func reopen(ctx context.Context, kv jetstream.KeyValue, key string) error {
	for range 10 {
		c, rev, err := loadCursor(ctx, kv, key)
		if err != nil {
			return err
		}
		c.Dead, c.Attempts, c.LastError, c.NextAttempt = false, 0, "", time.Time{}
		if _, err := saveCursor(ctx, kv, key, c, rev); err == nil {
			return nil
		}
	}
	return errors.New("cursor changing too fast")
}
