package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// concurrencies are the client counts of BenchmarkSendMessage.
var concurrencies = []int{1, 16, 64}

// defaultDuration is how long each measured point lasts, unless
// A2ABUS_BENCH_DURATION says otherwise.
const defaultDuration = 5 * time.Second

// warmup runs before each measured point and is not counted.
const warmup = 500 * time.Millisecond

// BenchmarkSendMessage drives blocking JSON-RPC SendMessage requests (the
// demo echo skill) at a2abus and, in the same run and from the same
// process, at the a2a-go v2 in-memory server with an equivalent echo
// executor, for each client count in concurrencies. Each point runs for
// A2ABUS_BENCH_DURATION (default 5s) after a 0.5s warm-up. It reports
// tasks/s, p50 and p99 per point and prints a comparison table.
//
// Run it once per point (make bench uses -benchtime 1x). Select one
// server or client count with a sub-benchmark pattern, e.g.
// -bench 'SendMessage/clients=64/a2abus' (for a CPU profile of a2abus
// alone).
func BenchmarkSendMessage(b *testing.B) {
	dur := defaultDuration
	if s := os.Getenv("A2ABUS_BENCH_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			b.Fatalf("A2ABUS_BENCH_DURATION=%q: want a positive duration", s)
		}
		dur = d
	}
	client := &http.Client{
		Transport: &http.Transport{
			MaxIdleConns:        2 * slices.Max(concurrencies),
			MaxIdleConnsPerHost: slices.Max(concurrencies),
			IdleConnTimeout:     time.Minute,
		},
		Timeout: time.Minute,
	}
	b.Cleanup(client.CloseIdleConnections)

	// Each point gets a fresh server, started in the sub-benchmark and
	// stopped (then a GC) before the next, so neither server's heap (a2a-go
	// keeps every task in memory) taxes the other's measurement.
	servers := []struct {
		name  string
		start func(testing.TB) string
	}{
		{name: "a2abus", start: func(tb testing.TB) string { return startA2abus(tb) + "/" }},
		{name: "a2a-go", start: startA2aGo},
	}
	results := map[string]map[int]loadResult{}
	for _, c := range concurrencies {
		for i := range servers {
			s := &servers[i]
			b.Run(fmt.Sprintf("clients=%d/%s", c, s.name), func(b *testing.B) {
				url := s.start(b)
				defer runtime.GC()
				for range b.N {
					if w := run(context.Background(), client, url, c, warmup); w.errors > 0 {
						b.Fatalf("%s clients=%d: warm-up: %d of %d requests failed; first: %v", s.name, c, w.errors, w.errors+w.ok, w.firstErr)
					}
					b.ResetTimer()
					r := run(context.Background(), client, url, c, dur)
					b.StopTimer()
					if results[s.name] == nil {
						results[s.name] = map[int]loadResult{}
					}
					results[s.name][c] = r
					b.ReportMetric(0, "ns/op")
					b.ReportMetric(r.tasksPerSec(), "tasks/s")
					b.ReportMetric(ms(r.percentile(0.50)), "p50-ms")
					b.ReportMetric(ms(r.percentile(0.99)), "p99-ms")
					b.Logf("%s clients=%d: %d tasks in %v: %.0f tasks/s, p50 %.2fms, p99 %.2fms",
						s.name, c, r.ok, r.elapsed.Round(time.Millisecond), r.tasksPerSec(),
						ms(r.percentile(0.50)), ms(r.percentile(0.99)))
					if r.errors > 0 {
						b.Errorf("%s clients=%d: %d of %d requests failed; first: %v", s.name, c, r.errors, r.errors+r.ok, r.firstErr)
					}
				}
			})
		}
	}
	printTable(os.Stdout, results)
}

// printTable prints one line per client count; servers or points that
// did not run (filtered out) show as "-".
func printTable(w io.Writer, results map[string]map[int]loadResult) {
	if len(results) == 0 {
		return
	}
	cell := func(name string, c int, f func(loadResult) float64, format string) string {
		r, ok := results[name][c]
		if !ok {
			return "-"
		}
		return fmt.Sprintf(format, f(r))
	}
	ratio := func(c int, f func(loadResult) float64) string {
		ours, ok1 := results["a2abus"][c]
		theirs, ok2 := results["a2a-go"][c]
		if !ok1 || !ok2 || f(theirs) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", f(ours)/f(theirs))
	}
	tps := func(r loadResult) float64 { return r.tasksPerSec() }
	p50 := func(r loadResult) float64 { return ms(r.percentile(0.50)) }
	p99 := func(r loadResult) float64 { return ms(r.percentile(0.99)) }
	fmt.Fprintf(w, "\n%-7s | %14s | %8s | %8s | %14s | %8s | %8s | %13s | %9s\n",
		"clients", "a2abus tasks/s", "p50 ms", "p99 ms", "a2a-go tasks/s", "p50 ms", "p99 ms", "ratio tasks/s", "ratio p99")
	for _, c := range concurrencies {
		fmt.Fprintf(w, "%-7d | %14s | %8s | %8s | %14s | %8s | %8s | %13s | %9s\n", c,
			cell("a2abus", c, tps, "%.0f"), cell("a2abus", c, p50, "%.2f"), cell("a2abus", c, p99, "%.2f"),
			cell("a2a-go", c, tps, "%.0f"), cell("a2a-go", c, p50, "%.2f"), cell("a2a-go", c, p99, "%.2f"),
			ratio(c, tps), ratio(c, p99))
	}
	fmt.Fprintln(w, "(ratio = a2abus / a2a-go: tasks/s above 1 and p99 below 1 favour a2abus)")
}

// loadResult is the outcome of one load run.
type loadResult struct {
	ok        int
	errors    int
	firstErr  error
	elapsed   time.Duration
	latencies []time.Duration // of successful requests, sorted
}

func (r loadResult) tasksPerSec() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ok) / r.elapsed.Seconds()
}

// percentile returns the q-quantile (0..1) of the successful requests'
// latencies, nearest rank.
func (r loadResult) percentile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(q*float64(len(r.latencies))+0.5) - 1
	i = max(0, min(i, len(r.latencies)-1))
	return r.latencies[i]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// messageSeq makes message ids unique across every run of the process.
var messageSeq atomic.Uint64

// run has clients goroutines each send blocking SendMessage requests back
// to back until dur has passed, and waits for the requests in flight. The
// elapsed time runs until the last of them has returned.
func run(ctx context.Context, client *http.Client, url string, clients int, dur time.Duration) loadResult {
	start := time.Now()
	deadline := start.Add(dur)
	var (
		mu  sync.Mutex
		res loadResult
		wg  sync.WaitGroup
	)
	for range clients {
		wg.Go(func() {
			var lat []time.Duration
			var errs int
			var firstErr error
			var body bytes.Buffer
			for time.Now().Before(deadline) {
				n := messageSeq.Add(1)
				body.Reset()
				writeRequest(&body, n)
				t0 := time.Now()
				err := sendMessage(ctx, client, url, body.Bytes())
				d := time.Since(t0)
				if err != nil {
					errs++
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				lat = append(lat, d)
			}
			mu.Lock()
			defer mu.Unlock()
			res.ok += len(lat)
			res.errors += errs
			if res.firstErr == nil {
				res.firstErr = firstErr
			}
			res.latencies = append(res.latencies, lat...)
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(res.latencies)
	return res
}

// writeRequest writes the SendMessage request with JSON-RPC id n and a
// message id made from n. Both servers get the same bytes but for the ids.
func writeRequest(w *bytes.Buffer, n uint64) {
	id := strconv.FormatUint(n, 10)
	w.WriteString(`{"jsonrpc":"2.0","id":`)
	w.WriteString(id)
	w.WriteString(`,"method":"SendMessage","params":{"message":{"messageId":"bench-`)
	w.WriteString(id)
	w.WriteString(`","role":"ROLE_USER","parts":[{"text":"echo hi"}]}}}`)
}

// sendResponse is the part of a SendMessage response the benchmark checks.
type sendResponse struct {
	Result *struct {
		Task *struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
			Artifacts []json.RawMessage `json:"artifacts"`
		} `json:"task"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// sendMessage posts one request and checks that the answer is a COMPLETED
// task with an artifact.
func sendMessage(ctx context.Context, client *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, data)
	}
	var r sendResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("decode response: %v: %.200s", err, data)
	}
	switch {
	case r.Error != nil:
		return fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	case r.Result == nil || r.Result.Task == nil:
		return fmt.Errorf("result is not a task: %.200s", data)
	case r.Result.Task.Status.State != "TASK_STATE_COMPLETED":
		return fmt.Errorf("task %s is %s, want TASK_STATE_COMPLETED", r.Result.Task.ID, r.Result.Task.Status.State)
	case len(r.Result.Task.Artifacts) != 1:
		return fmt.Errorf("task %s has %d artifacts, want 1", r.Result.Task.ID, len(r.Result.Task.Artifacts))
	}
	return nil
}
