package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/jwks"
)

// Defaults of BenchmarkPushDelivery, overridden by A2ABUS_BENCH_PUSH_TASKS
// and A2ABUS_BENCH_PUSH_SENDERS.
const (
	pushBenchTasks   = 300
	pushBenchSenders = 16
)

// pushBenchToken is the notification token of the benchmark's configs.
const pushBenchToken = "bench-token"

// BenchmarkPushDelivery measures push notification delivery end to end: an
// a2abus server (embedded JetStream, demo agent, push on, private targets
// allowed) and a local webhook receiver in this process. Senders submit
// A2ABUS_BENCH_PUSH_TASKS (default 300) echo tasks from
// A2ABUS_BENCH_PUSH_SENDERS (default 16) goroutines, each SendMessage
// returning at once and carrying a push config to the receiver
// (configuration.taskPushNotificationConfig): the way a client that wants
// pushes sends. Each echo task has two status events, WORKING and
// COMPLETED, so two POSTs.
//
// The receiver records when each POST arrives, keyed by (task, event
// sequence) from the token's claims (read without verifying: the jwks
// benchmarks cost verification). After the run the benchmark reads every
// status event of the run's tasks from the stream, with its append time
// (the stream timestamp), checks that each was delivered exactly once and
// that each task's POSTs came in log order, and reports
//
//   - deliveries/s: POSTs accepted / (last receipt − first status append);
//   - p50-ms, p99-ms: receipt − append of each status.
//
// Run it once (-benchtime 1x); it prints a summary line. Everything (HTTP
// clients, server, NATS, receiver) shares this process's CPUs.
func BenchmarkPushDelivery(b *testing.B) {
	tasks := pushBenchEnvInt(b, "A2ABUS_BENCH_PUSH_TASKS", pushBenchTasks)
	senders := pushBenchEnvInt(b, "A2ABUS_BENCH_PUSH_SENDERS", pushBenchSenders)
	ts := startServer(b, func(c *ServeConfig) {
		c.LogLevel = "error"
		c.PushPrivate = true
	})
	recv := newPushBenchReceiver()
	hook := httptest.NewServer(recv)
	b.Cleanup(hook.Close)
	hookURL := hook.URL + "/a2a/push"

	nc, err := nats.Connect(ts.NATSURL, nats.Name("a2abus-push-bench"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: senders, IdleConnTimeout: time.Minute},
		Timeout:   time.Minute,
	}
	b.Cleanup(client.CloseIdleConnections)

	for range b.N {
		b.ResetTimer()
		ids, err := pushBenchSendAll(context.Background(), client, ts.URL+"/", hookURL, tasks, senders)
		if err != nil {
			b.Fatal(err)
		}
		wait := 2*time.Minute + time.Duration(tasks)*50*time.Millisecond
		if err := recv.waitTerminal(ids, wait); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		// Let a stray duplicate (a redelivered wake-up) arrive before the
		// exactly-once check. A fixed pause is right here: it proves an
		// absence, which no event can signal.
		time.Sleep(500 * time.Millisecond)

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		r, err := pushBenchCollect(ctx, js, recv, ids)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		if len(r.problems) > 0 {
			b.Fatalf("push delivery not exactly once / in order (%d problems); first ones:\n%s",
				len(r.problems), strings.Join(r.problems[:min(10, len(r.problems))], "\n"))
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(r.rate(), "deliveries/s")
		b.ReportMetric(ms(r.percentile(0.50)), "p50-ms")
		b.ReportMetric(ms(r.percentile(0.99)), "p99-ms")
		fmt.Fprintln(os.Stdout, r.summary(tasks, senders))
	}
}

func pushBenchEnvInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// pushBenchSendAll sends n echo tasks with a push config to hookURL from
// senders goroutines and returns their task ids.
func pushBenchSendAll(ctx context.Context, client *http.Client, url, hookURL string, n, senders int) ([]string, error) {
	var (
		mu       sync.Mutex
		ids      []string
		firstErr error
		wg       sync.WaitGroup
		next     = make(chan int)
	)
	for range senders {
		wg.Go(func() {
			for range next {
				id, err := pushBenchSend(ctx, client, url, hookURL)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					ids = append(ids, id)
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("%d of %d sends failed; first: %w", n-len(ids), n, firstErr)
	}
	return ids, nil
}

// pushBenchSend sends one echo message that returns at once, with a push
// config, and returns the task id.
func pushBenchSend(ctx context.Context, client *http.Client, url, hookURL string) (string, error) {
	n := messageSeq.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": map[string]any{
		"message": userMessage(fmt.Sprintf("bench-push-%d-%d", time.Now().UnixNano(), n), "echo hi"),
		"configuration": map[string]any{
			"returnImmediately":          true,
			"taskPushNotificationConfig": map[string]any{"url": hookURL, "token": pushBenchToken},
		},
	}})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return "", err
	}
	var r struct {
		Result *struct {
			Task *struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", fmt.Errorf("SendMessage: HTTP %d: %w: %.300s", resp.StatusCode, err, raw)
	}
	switch {
	case r.Error != nil:
		return "", fmt.Errorf("SendMessage: %w", r.Error)
	case r.Result == nil || r.Result.Task == nil || r.Result.Task.ID == "":
		return "", fmt.Errorf("SendMessage: result is not a task: %.300s", raw)
	}
	return r.Result.Task.ID, nil
}

// pushBenchKey names one status event of one task.
type pushBenchKey struct {
	task string
	seq  uint64
}

// pushBenchReceipt is one POST the receiver accepted.
type pushBenchReceipt struct {
	key      pushBenchKey
	at       time.Time
	terminal bool // the body is the final task, not a status update
}

// pushBenchReceiver is the webhook: it answers 200 to every POST and records
// it. Malformed pushes are recorded as problems.
type pushBenchReceiver struct {
	mu       sync.Mutex
	receipts []pushBenchReceipt
	terminal map[string]int // task → terminal pushes received
	problems []string
}

func newPushBenchReceiver() *pushBenchReceiver {
	return &pushBenchReceiver{terminal: map[string]int{}}
}

var pushBenchJWTParser = jwt.NewParser()

func (p *pushBenchReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		p.problem("read body: %v", err)
		return
	}
	w.WriteHeader(http.StatusOK)
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		p.problem("no bearer token")
		return
	}
	var claims jwks.PushClaims
	if _, _, err := pushBenchJWTParser.ParseUnverified(raw, &claims); err != nil {
		p.problem("parse token: %v", err)
		return
	}
	var msg struct {
		StatusUpdate *struct {
			TaskID string `json:"taskId"`
		} `json:"statusUpdate"`
		Task *struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		p.problem("decode body: %v: %.200s", err, body)
		return
	}
	var bodyTask string
	switch {
	case msg.StatusUpdate != nil:
		bodyTask = msg.StatusUpdate.TaskID
	case msg.Task != nil:
		bodyTask = msg.Task.ID
	}
	switch {
	case bodyTask != claims.TaskID:
		p.problem("body is about task %q, token about %q", bodyTask, claims.TaskID)
		return
	case claims.BodySHA256 != jwks.BodyHash(body):
		p.problem("task %s seq %d: bodySha256 does not match the body", claims.TaskID, claims.Seq)
		return
	case r.Header.Get("A2A-Notification-Token") != pushBenchToken:
		p.problem("task %s seq %d: notification token %q", claims.TaskID, claims.Seq, r.Header.Get("A2A-Notification-Token"))
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.receipts = append(p.receipts, pushBenchReceipt{key: pushBenchKey{claims.TaskID, claims.Seq}, at: at, terminal: msg.Task != nil})
	if msg.Task != nil {
		p.terminal[claims.TaskID]++
	}
}

func (p *pushBenchReceiver) problem(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, "receiver: "+fmt.Sprintf(format, args...))
}

// waitTerminal waits until every task in ids has had its final push.
func (p *pushBenchReceiver) waitTerminal(ids []string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		missing := 0
		p.mu.Lock()
		for _, id := range ids {
			if p.terminal[id] == 0 {
				missing++
			}
		}
		p.mu.Unlock()
		if missing == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d tasks had no final push after %v", missing, len(ids), d)
		}
		// Bounded polling of the receiver's record (outside the measured
		// interval), the last resort STYLE.md allows.
		time.Sleep(5 * time.Millisecond)
	}
}

// pushBenchResult is the outcome of one run.
type pushBenchResult struct {
	deliveries  int
	statuses    int
	firstAppend time.Time
	lastAppend  time.Time
	lastReceipt time.Time
	latencies   []time.Duration // receipt − append, sorted
	problems    []string
}

func (r pushBenchResult) wall() time.Duration { return r.lastReceipt.Sub(r.firstAppend) }

func (r pushBenchResult) rate() float64 {
	if r.wall() <= 0 {
		return 0
	}
	return float64(r.deliveries) / r.wall().Seconds()
}

// percentile returns the q-quantile (0..1) of the latencies, nearest rank.
func (r pushBenchResult) percentile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(q*float64(len(r.latencies))+0.5) - 1
	return r.latencies[max(0, min(i, len(r.latencies)-1))]
}

func (r pushBenchResult) summary(tasks, senders int) string {
	over := func(d time.Duration) int {
		return len(r.latencies) - pushBenchSearch(r.latencies, d)
	}
	appendSpan := r.lastAppend.Sub(r.firstAppend)
	return fmt.Sprintf("push: %d echo tasks from %d senders, %d status events appended in %v (%.0f/s): "+
		"%d deliveries in %v (first append → last receipt) = %.0f deliveries/s; "+
		"append → receipt p50 %.1fms p90 %.1fms p99 %.1fms max %.1fms (%d over 500ms); each status delivered exactly once, in order",
		tasks, senders, r.statuses, appendSpan.Round(time.Millisecond), float64(r.statuses)/max(appendSpan.Seconds(), 1e-9),
		r.deliveries, r.wall().Round(time.Millisecond), r.rate(),
		ms(r.percentile(0.50)), ms(r.percentile(0.90)), ms(r.percentile(0.99)), ms(r.percentile(1)), over(500*time.Millisecond))
}

// pushBenchSearch returns the index of the first element of sorted ds that
// is above d.
func pushBenchSearch(ds []time.Duration, d time.Duration) int {
	i, _ := slices.BinarySearchFunc(ds, d, func(e, t time.Duration) int {
		if e <= t {
			return -1
		}
		return 1
	})
	return i
}

// pushBenchCollect reads every status event of the tasks in ids from the
// stream, matches them to the receiver's receipts, and reads the append
// time of each delivered event (GetMsg → the stream timestamp).
func pushBenchCollect(ctx context.Context, js jetstream.JetStream, recv *pushBenchReceiver, ids []string) (pushBenchResult, error) {
	var r pushBenchResult
	stream := engine.DefaultConfig().EventsStream
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return r, err
	}
	run := make(map[string]bool, len(ids))
	for _, id := range ids {
		run[id] = true
	}
	want, err := pushBenchStatuses(ctx, js, stream, run)
	if err != nil {
		return r, err
	}
	r.statuses = len(want)

	recv.mu.Lock()
	receipts := slices.Clone(recv.receipts)
	r.problems = slices.Clone(recv.problems)
	recv.mu.Unlock()
	got := map[pushBenchKey][]pushBenchReceipt{}
	byTask := map[string][]pushBenchReceipt{}
	for _, rc := range receipts {
		if !run[rc.key.task] {
			continue // an earlier run's task
		}
		got[rc.key] = append(got[rc.key], rc)
		byTask[rc.key.task] = append(byTask[rc.key.task], rc)
	}
	for k := range want {
		if n := len(got[k]); n != 1 {
			r.problems = append(r.problems, fmt.Sprintf("task %s status seq %d delivered %d times", k.task, k.seq, n))
		}
	}
	for k, rcs := range got {
		if !want[k] {
			r.problems = append(r.problems, fmt.Sprintf("task %s seq %d delivered %d times but is not a status event of the task", k.task, k.seq, len(rcs)))
		}
	}
	for task, rcs := range byTask {
		// Receipts are appended in arrival order; a pair's POSTs are
		// sequential, so arrival order is delivery order.
		for i := 1; i < len(rcs); i++ {
			if rcs[i].key.seq <= rcs[i-1].key.seq {
				r.problems = append(r.problems, fmt.Sprintf("task %s: seq %d pushed after seq %d", task, rcs[i].key.seq, rcs[i-1].key.seq))
			}
		}
		if last := rcs[len(rcs)-1]; !last.terminal {
			r.problems = append(r.problems, fmt.Sprintf("task %s: the last push (seq %d) is not the final task", task, last.key.seq))
		}
	}

	for k, rcs := range got {
		if !want[k] {
			continue
		}
		m, err := s.GetMsg(ctx, k.seq)
		if err != nil {
			return r, fmt.Errorf("get event %d: %w", k.seq, err)
		}
		if _, task, _, err := events.ParseSubject(m.Subject); err != nil || string(task) != k.task {
			return r, fmt.Errorf("event %d is on %q, not task %s", k.seq, m.Subject, k.task)
		}
		if r.firstAppend.IsZero() || m.Time.Before(r.firstAppend) {
			r.firstAppend = m.Time
		}
		if m.Time.After(r.lastAppend) {
			r.lastAppend = m.Time
		}
		for _, rc := range rcs {
			r.deliveries++
			r.latencies = append(r.latencies, rc.at.Sub(m.Time))
			if rc.at.After(r.lastReceipt) {
				r.lastReceipt = rc.at
			}
		}
	}
	slices.Sort(r.latencies)
	if r.deliveries == 0 {
		return r, errors.New("no deliveries")
	}
	return r, nil
}

// pushBenchStatuses lists the status events of the tasks in run, with an
// ordered consumer over every status event of the stream.
func pushBenchStatuses(ctx context.Context, js jetstream.JetStream, stream string, run map[string]bool) (map[pushBenchKey]bool, error) {
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.KindFilter(events.KindStatus)},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, err
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, err
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	want := map[pushBenchKey]bool{}
	for {
		m, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("status events: %w (ctx: %v)", err, ctx.Err())
		}
		md, err := m.Metadata()
		if err != nil {
			return nil, err
		}
		_, task, _, err := events.ParseSubject(m.Subject())
		if err != nil {
			return nil, err
		}
		if run[string(task)] {
			want[pushBenchKey{string(task), md.Sequence.Stream}] = true
		}
		if md.NumPending == 0 {
			return want, nil
		}
	}
}
