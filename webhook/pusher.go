package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/jwks"
	"github.com/a2abus/a2abus/tasklog"
)

// Config tunes delivery. Use [DefaultConfig].
type Config struct {
	// MaxAttempts is how many times one status is tried before it is
	// dead-lettered.
	MaxAttempts int
	// BackoffBase and BackoffMax shape the retry schedule: attempt n waits
	// BackoffBase·2^(n-1), at most BackoffMax, ±10% jitter.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// Timeout bounds one POST.
	Timeout time.Duration
	// Concurrency is how many (task, config) pairs one edge delivers to at
	// once.
	Concurrency int
	// Lease is how long a deliverer owns a pair without renewing.
	Lease time.Duration
	// Body renders the POST body of status st, given the task as of st
	// (view). Nil means [V1Body]. The edge supplies one that answers in
	// the dialect the task was created in.
	Body func(view *events.View, st *a2a.TaskStatusUpdateEvent) ([]byte, error)
}

// V1Body is the v1.0 push body: a StreamResponse holding the status
// update, or the whole task for a terminal status.
func V1Body(view *events.View, st *a2a.TaskStatusUpdateEvent) ([]byte, error) {
	if st.Status.State.Terminal() {
		return json.Marshal(a2a.StreamResponse{Event: &view.Task})
	}
	return json.Marshal(a2a.StreamResponse{Event: st})
}

// DefaultConfig returns the default schedule: 40 attempts, 1 s doubling to
// 1 h, which spans about 28 hours.
func DefaultConfig() Config {
	return Config{MaxAttempts: 40, BackoffBase: time.Second, BackoffMax: time.Hour, Timeout: 10 * time.Second, Concurrency: 64, Lease: 30 * time.Second}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.MaxAttempts < 1:
		return errors.New("push config: MaxAttempts under 1")
	case c.BackoffBase <= 0 || c.BackoffMax < c.BackoffBase:
		return errors.New("push config: need 0 < BackoffBase <= BackoffMax")
	case c.Timeout <= 0 || c.Lease < 2*c.Timeout:
		return errors.New("push config: need Timeout > 0 and Lease >= 2*Timeout")
	case c.Concurrency < 1:
		return errors.New("push config: Concurrency under 1")
	}
	return nil
}

// Backoff returns the wait before attempt n+1 after n failed attempts.
func (c Config) Backoff(n int) time.Duration {
	d := c.BackoffBase
	for i := 1; i < n && d < c.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, c.BackoffMax)
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}

// Pusher runs the fan-out of status events to wake-ups and the delivery of
// wake-ups, on every edge (the consumers are shared, so the work spreads).
type Pusher struct {
	js     jetstream.JetStream
	log    *tasklog.Log
	store  *Store
	signer *jwks.Signer
	cfg    Config
	client *http.Client
	state  jetstream.KeyValue
	logger *slog.Logger
	id     string

	ctx      context.Context
	cancel   context.CancelFunc
	fanCC    jetstream.ConsumeContext
	delCC    jetstream.ConsumeContext
	slots    chan struct{} // deliveries in flight
	fanSlots chan struct{} // fan-outs in flight
	wg       sync.WaitGroup
}

// NewPusher returns a pusher; [Pusher.Start] starts it.
func NewPusher(ctx context.Context, js jetstream.JetStream, log *tasklog.Log, store *Store, signer *jwks.Signer, guard Guard, cfg Config, logger *slog.Logger) (*Pusher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Body == nil {
		cfg.Body = V1Body
	}
	state, err := js.KeyValue(ctx, StateBucket)
	if err != nil {
		return nil, fmt.Errorf("pusher: %w", err)
	}
	tr := &http.Transport{
		DialContext:           guard.Dialer(cfg.Timeout).DialContext,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.Timeout,
		ResponseHeaderTimeout: cfg.Timeout,
	}
	client := &http.Client{
		Transport:     tr,
		Timeout:       cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Pusher{js: js, log: log, store: store, signer: signer, cfg: cfg, client: client, state: state,
		logger: logger, id: uuid.NewString(), slots: make(chan struct{}, cfg.Concurrency),
		fanSlots: make(chan struct{}, cfg.Concurrency)}, nil
}

// Start creates the two durable consumers (idempotently) and starts them.
func (p *Pusher) Start(ctx context.Context) error {
	p.ctx, p.cancel = context.WithCancel(context.Background())
	fan, err := p.js.CreateOrUpdateConsumer(ctx, p.log.Stream(), jetstream.ConsumerConfig{
		Durable:       "a2abus-push-fanout",
		Description:   "a2abus: status events to push wake-ups",
		FilterSubject: events.KindFilter(events.KindStatus),
		DeliverPolicy: jetstream.DeliverNewPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		MaxAckPending: 1000,
	})
	if err != nil {
		return fmt.Errorf("pusher: fan-out consumer: %w", err)
	}
	del, err := p.js.CreateOrUpdateConsumer(ctx, QueueStream, jetstream.ConsumerConfig{
		Durable:       "a2abus-push-deliver",
		Description:   "a2abus: push deliveries",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       p.cfg.Lease,
		MaxAckPending: 10000,
	})
	if err != nil {
		return fmt.Errorf("pusher: delivery consumer: %w", err)
	}
	if p.fanCC, err = fan.Consume(p.dispatchFanout, jetstream.PullMaxMessages(p.cfg.Concurrency)); err != nil {
		return fmt.Errorf("pusher: %w", err)
	}
	if p.delCC, err = del.Consume(p.dispatch, jetstream.PullMaxMessages(p.cfg.Concurrency)); err != nil {
		p.fanCC.Stop()
		return fmt.Errorf("pusher: %w", err)
	}
	return nil
}

// Stop stops both consumers and waits for deliveries in flight; their
// wake-ups are redelivered to another edge or after a restart.
func (p *Pusher) Stop() {
	if p.fanCC == nil {
		return
	}
	p.fanCC.Stop()
	p.delCC.Stop()
	<-p.fanCC.Closed()
	<-p.delCC.Closed()
	p.cancel()
	p.wg.Wait()
}

// fanout turns one status event into a wake-up per push config of its
// task.
func (p *Pusher) fanout(msg jetstream.Msg) {
	tenant, task, _, err := events.ParseSubject(msg.Subject())
	if err != nil {
		p.settle(msg.Term())
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	cfgs, err := p.store.List(ctx, tenant, task)
	if err != nil {
		p.logger.Warn("push fan-out: list configs", "task", task, "err", err)
		p.settle(msg.NakWithDelay(time.Second))
		return
	}
	for _, c := range cfgs {
		if err := p.wake(ctx, tenant, task, c.ID); err != nil {
			p.logger.Warn("push fan-out: enqueue", "task", task, "config", c.ID, "err", err)
			p.settle(msg.NakWithDelay(time.Second))
			return
		}
	}
	p.settle(msg.Ack())
}

func (p *Pusher) wake(ctx context.Context, tenant string, task a2a.TaskID, cfgID string) error {
	_, err := p.js.Publish(ctx, queuePrefix+configKey(tenant, task, cfgID), nil, jetstream.WithExpectStream(QueueStream))
	return err
}

func (p *Pusher) settle(err error) {
	if err != nil && !errors.Is(err, nats.ErrMsgNotFound) {
		p.logger.Debug("push: ack", "err", err)
	}
}

// dispatchFanout runs fan-outs concurrently: their order does not matter,
// because a delivery reads the task's statuses from its cursor.
func (p *Pusher) dispatchFanout(msg jetstream.Msg) {
	p.fanSlots <- struct{}{}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() { <-p.fanSlots }()
		p.fanout(msg)
	}()
}

func (p *Pusher) dispatch(msg jetstream.Msg) {
	p.slots <- struct{}{}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() { <-p.slots }()
		p.deliver(msg)
	}()
}

// cursor is the delivery state of one (task, config) pair.
type cursor struct {
	// Delivered is the sequence of the last status delivered.
	Delivered uint64 `json:"delivered"`
	// Attempts counts failed attempts at the next status.
	Attempts  int    `json:"attempts,omitempty"`
	LastError string `json:"lastError,omitempty"`
	// NextAttempt is when the next attempt may start, after a failure;
	// a wake-up before then waits, so new statuses do not cut the
	// backoff short.
	NextAttempt time.Time `json:"nextAttempt,omitzero"`
	// Dead stops the pair until a redrive.
	Dead       bool      `json:"dead,omitempty"`
	LeaseOwner string    `json:"leaseOwner,omitempty"`
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`
}

func (p *Pusher) loadCursor(ctx context.Context, key string) (cursor, uint64, error) {
	return loadCursor(ctx, p.state, key)
}

func loadCursor(ctx context.Context, kv jetstream.KeyValue, key string) (cursor, uint64, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return cursor{}, 0, nil
	}
	if err != nil {
		return cursor{}, 0, err
	}
	var c cursor
	if err := json.Unmarshal(e.Value(), &c); err != nil {
		return cursor{}, 0, err
	}
	return c, e.Revision(), nil
}

// saveCursor writes c if the pair's revision is still rev; it returns the
// new revision.
func saveCursor(ctx context.Context, kv jetstream.KeyValue, key string, c cursor, rev uint64) (uint64, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return 0, err
	}
	if rev == 0 {
		return kv.Create(ctx, key, b)
	}
	return kv.Update(ctx, key, b, rev)
}

// leaseRetry is how soon a wake-up that found its pair busy looks again.
const leaseRetry = 50 * time.Millisecond

// outcome of one POST.
type outcome int

const (
	delivered outcome = iota
	transient
	permanent
)

// deliver handles one wake-up: it takes the pair's lease and POSTs every
// status after the cursor, in order.
func (p *Pusher) deliver(msg jetstream.Msg) {
	key := strings.TrimPrefix(msg.Subject(), queuePrefix)
	tenant, taskStr, cfgID, ok := splitKey(key)
	if !ok {
		p.settle(msg.Term())
		return
	}
	task := a2a.TaskID(taskStr)
	ctx := p.ctx
	logger := p.logger.With("task", task, "config", cfgID)
	cfg, err := p.store.Get(ctx, tenant, task, cfgID)
	if errors.Is(err, ErrConfigNotFound) {
		p.settle(msg.Ack()) // deleted since
		return
	}
	if err != nil {
		logger.Warn("push: read config", "err", err)
		p.settle(msg.NakWithDelay(time.Second))
		return
	}
	cur, rev, err := p.loadCursor(ctx, key)
	if err != nil {
		logger.Warn("push: read cursor", "err", err)
		p.settle(msg.NakWithDelay(time.Second))
		return
	}
	now := time.Now()
	if cur.Dead {
		p.settle(msg.Ack())
		return
	}
	if now.Before(cur.NextAttempt) {
		p.settle(msg.NakWithDelay(cur.NextAttempt.Sub(now)))
		return
	}
	if cur.LeaseOwner != "" && now.Before(cur.LeaseUntil) {
		// Another delivery of this pair (here or on another edge) is in
		// flight: wait for it.
		p.settle(msg.NakWithDelay(min(cur.LeaseUntil.Sub(now), leaseRetry)))
		return
	}
	cur.LeaseOwner, cur.LeaseUntil = p.id+"/"+uuid.NewString(), now.Add(p.cfg.Lease)
	if rev, err = saveCursor(ctx, p.state, key, cur, rev); err != nil {
		p.settle(msg.NakWithDelay(100 * time.Millisecond)) // another deliverer won the lease
		return
	}
	release := func() {
		cur.LeaseOwner, cur.LeaseUntil = "", time.Time{}
		if _, err := saveCursor(context.WithoutCancel(ctx), p.state, key, cur, rev); err != nil {
			logger.Warn("push: release cursor", "err", err)
		}
	}

	// The task's statuses not yet delivered, each rendered with the task
	// as of that status.
	type pendingPush struct {
		seq  uint64
		body []byte
	}
	view := &events.View{}
	var pending []pendingPush
	var renderErr error
	_, err = p.log.Read(ctx, tenant, task, 0, 0, func(ev events.Event) error {
		events.Apply(view, ev)
		if ev.Type == events.TypeStatus && ev.Seq > cur.Delivered && renderErr == nil {
			body, err := p.cfg.Body(view, ev.Body.(*a2a.TaskStatusUpdateEvent))
			renderErr = err
			pending = append(pending, pendingPush{ev.Seq, body})
		}
		return nil
	})
	if err != nil {
		logger.Warn("push: read task", "err", err)
		release()
		p.settle(msg.NakWithDelay(time.Second))
		return
	}
	if renderErr != nil {
		logger.Error("push: encode", "err", renderErr)
		release()
		p.settle(msg.Term())
		return
	}
	for _, pp := range pending {
		res, status, perr := p.post(ctx, cfg, tenant, task, pp.seq, pp.body)
		if ctx.Err() != nil {
			release()
			p.settle(msg.Nak()) // shutting down
			return
		}
		switch res {
		case delivered:
			cur.Delivered, cur.Attempts, cur.LastError, cur.NextAttempt = pp.seq, 0, "", time.Time{}
			cur.LeaseUntil = time.Now().Add(p.cfg.Lease)
			if rev, err = saveCursor(ctx, p.state, key, cur, rev); err != nil {
				logger.Warn("push: lost the pair's lease", "err", err)
				p.settle(msg.Nak())
				return
			}
			p.settle(msg.InProgress())
			continue
		case transient:
			cur.Attempts++
			cur.LastError = perr.Error()
			if cur.Attempts < p.cfg.MaxAttempts {
				d := p.cfg.Backoff(cur.Attempts)
				cur.NextAttempt = time.Now().Add(d)
				release()
				logger.Info("push: will retry", "seq", pp.seq, "attempt", cur.Attempts, "in", d, "err", perr)
				p.settle(msg.NakWithDelay(d))
				return
			}
		case permanent:
			cur.Attempts++
			cur.LastError = perr.Error()
		}
		// Dead letter: the pair stops here until a redrive.
		if err := p.deadLetter(ctx, tenant, task, cfg, pp.seq, status, cur); err != nil {
			logger.Error("push: dead-letter", "err", err)
			release()
			p.settle(msg.NakWithDelay(time.Second))
			return
		}
		logger.Warn("push: dead-lettered", "seq", pp.seq, "attempts", cur.Attempts, "err", perr)
		cur.Dead = true
		release()
		p.settle(msg.Ack())
		return
	}
	release()
	p.settle(msg.Ack())
}

func splitKey(key string) (tenant, task, cfg string, ok bool) {
	parts := strings.Split(key, ".")
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// post sends one push and classifies the result.
func (p *Pusher) post(ctx context.Context, cfg a2a.PushConfig, tenant string, task a2a.TaskID, seq uint64, body []byte) (outcome, int, error) {
	jti := tenant + "." + string(task) + "." + cfg.ID + "." + strconv.FormatUint(seq, 10)
	tok, _, err := p.signer.Sign(time.Now(), jwks.Token{Audience: cfg.URL, ID: jti, Tenant: tenant, TaskID: string(task), Seq: seq, Body: body})
	if err != nil {
		return transient, 0, fmt.Errorf("sign: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, cfg.URL, bytes.NewReader(body))
	if err != nil {
		return permanent, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "a2abus-push/1")
	if cfg.Auth != nil && cfg.Auth.Credentials != "" {
		req.Header.Set("Authorization", cfg.Auth.Scheme+" "+cfg.Auth.Credentials)
		req.Header.Set(jwks.SignatureHeader, tok)
	} else {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if cfg.Token != "" {
		req.Header.Set("X-A2A-Notification-Token", cfg.Token)
		req.Header.Set("A2A-Notification-Token", cfg.Token)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrForbiddenTarget) {
			return permanent, 0, err
		}
		var nerr net.Error
		if errors.As(err, &nerr) || errors.Is(err, context.DeadlineExceeded) {
			return transient, 0, err
		}
		return transient, 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return delivered, c, nil
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return transient, c, fmt.Errorf("HTTP %d", c)
	case c >= 300 && c < 400:
		return permanent, c, fmt.Errorf("HTTP %d: redirects are not followed", c)
	default:
		return permanent, c, fmt.Errorf("HTTP %d", c)
	}
}
