package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
)

// The streaming benchmarks: SSE replay against a raw JetStream read
// (BenchmarkStreamReplay), live fan-out of one task to many subscribers
// (BenchmarkStreamFanOut) and the memory of many idle streams
// (BenchmarkStreamIdle). They report figures and never judge them: there
// is no timing threshold. Run them once each:
//
//	go test -run '^$' -bench Stream -benchtime 1x -timeout 30m ./cmd/a2abus/
//
// Fan-out and idle run the server as a subprocess (built from this
// package) so that its RSS is its own. Replay runs it in-process, so
// -cpuprofile covers it; A2ABUS_BENCH_INPROC=1 does the same for fan-out
// (for a profile; its RSS is then the whole process's).
// A2ABUS_BENCH_IDLE_TASK sets the idle streams' task (see idleTask).

// Sizes of the streaming benchmarks.
const (
	replayChunks   = 9900 // chunks of the replayed task: ~10,000 events with its status messages
	replayRuns     = 3    // replay measurements; the median is reported
	fanOutSubs     = 1000 // subscribers of the fan-out task
	fanOutChunks   = 2000 // chunks of the fan-out task
	fanOutInterval = 5    // ms between two chunks of the fan-out task
	idleStreams    = 10000
	idleFallback   = 5000 // streams tried if idleStreams runs out of file descriptors
	idleOpenAtOnce = 256  // idle streams being opened at a time
	// idleTask is the task the idle streams watch: one chunk a minute, so
	// the streams really are idle while they are measured. ("slow 600"
	// posts a progress status every second, which wakes every stream once
	// a second.) A2ABUS_BENCH_IDLE_TASK overrides it.
	idleTask = "stream 100 60000"
)

// Deadlines of the streaming benchmarks' waits.
const (
	streamRPCTimeout    = 5 * time.Minute // a blocking SendMessage of the replay task
	replayTimeout       = 2 * time.Minute // one replay, ours or raw
	fanOutTimeout       = 5 * time.Minute // the whole fan-out, from the send to the last COMPLETED
	idleOpenTimeout     = 5 * time.Minute // opening every idle stream
	idleFirstTimeout    = 3 * time.Minute // one idle stream's first frame
	idleCloseTimeout    = time.Minute     // closing every idle stream
	rssSampleEvery      = 100 * time.Millisecond
	idleSettle          = 2 * time.Second // between the last idle stream opening and the RSS reading
	idleCPUWindow       = 5 * time.Second // server CPU is measured over this idle window
	procShutdownTimeout = 15 * time.Second
)

// BenchmarkStreamReplay replays a task of ~10,000 events over SSE
// (SubscribeToTask with Last-Event-ID set to the task's first event) from
// an in-process server, and reads the same events with a raw JetStream
// ordered consumer for a baseline. Each is measured replayRuns times; the
// medians are reported. Profile it with -cpuprofile: the server runs in
// the benchmark's process.
func BenchmarkStreamReplay(b *testing.B) {
	ts := startServer(b, func(c *ServeConfig) { c.LogLevel = "error" })
	client := benchStreamClient(4)
	b.Cleanup(client.CloseIdleConnections)

	ctx, cancel := context.WithTimeout(context.Background(), streamRPCTimeout)
	t0 := time.Now()
	task, err := benchSend(ctx, client, ts.URL, fmt.Sprintf("stream %d 0", replayChunks), false)
	cancel()
	if err != nil {
		b.Fatal(err)
	}
	produced := time.Since(t0)
	if task.Status.State != "TASK_STATE_COMPLETED" {
		b.Fatalf("task %s is %s, want TASK_STATE_COMPLETED", task.ID, task.Status.State)
	}

	js := connectJS(b, ts.NATSURL)
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	all, err := benchTaskEvents(ctx, js, task.ID)
	if err != nil {
		b.Fatal(err)
	}
	first, err := benchFirstEvent(ctx, js, task.ID)
	if err != nil {
		b.Fatal(err)
	}
	if first.Type != events.TypeCreated || first.Seq != all[0].seq {
		b.Fatalf("first event of task %s: %s at %d, want %s at %d", task.ID, first.Type, first.Seq, events.TypeCreated, all[0].seq)
	}
	want := benchStreamedAfter(all, first.Seq)
	lastSeq := all[len(all)-1].seq
	b.Logf("task %s: %d events (seq %d..%d) appended by one blocking SendMessage in %v (%.0f events/s); replaying the %d after %d",
		task.ID, len(all), first.Seq, lastSeq, produced.Round(time.Millisecond), float64(len(all))/produced.Seconds(), len(want), first.Seq)

	var res benchReplayResult
	for range b.N {
		res = benchReplayResult{events: len(want), rawEvents: len(all)}
		for i := range replayRuns {
			ours, err := benchSSEReplay(client, ts.URL, task.ID, first.Seq, want)
			if err != nil {
				b.Fatalf("run %d: SSE replay: %v", i+1, err)
			}
			raw, err := benchRawReplay(js, task.ID, lastSeq, len(all))
			if err != nil {
				b.Fatalf("run %d: raw replay: %v", i+1, err)
			}
			b.Logf("run %d: SSE %v (first byte after %v), raw %v", i+1, ours.total.Round(time.Microsecond), ours.firstByte.Round(time.Microsecond), raw.Round(time.Microsecond))
			res.ours = append(res.ours, ours.total)
			res.firstByte = append(res.firstByte, ours.firstByte)
			res.raw = append(res.raw, raw)
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(res.median(res.ours).Seconds(), "replay-s")
	b.ReportMetric(res.oursRate(), "events/s")
	b.ReportMetric(res.rawRate(), "raw-events/s")
	b.ReportMetric(res.oursRate()/res.rawRate(), "ours/raw")
	res.print(os.Stdout)
}

type benchReplayResult struct {
	events, rawEvents    int
	ours, firstByte, raw []time.Duration
}

func (r benchReplayResult) median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func (r benchReplayResult) oursRate() float64 {
	return float64(r.events) / r.median(r.ours).Seconds()
}

func (r benchReplayResult) rawRate() float64 {
	return float64(r.rawEvents) / r.median(r.raw).Seconds()
}

func (r benchReplayResult) print(w io.Writer) {
	fmt.Fprintf(w, "\nStreamReplay (median of %d runs)\n", len(r.ours))
	fmt.Fprintf(w, "%-28s | %8s | %10s | %12s | %10s\n", "reader", "events", "seconds", "events/s", "first byte")
	fmt.Fprintf(w, "%-28s | %8d | %10.3f | %12.0f | %8.1fms\n", "a2abus SSE (Last-Event-ID)", r.events, r.median(r.ours).Seconds(), r.oursRate(), ms(r.median(r.firstByte)))
	fmt.Fprintf(w, "%-28s | %8d | %10.3f | %12.0f | %10s\n", "raw JetStream ordered cons.", r.rawEvents, r.median(r.raw).Seconds(), r.rawRate(), "-")
	fmt.Fprintf(w, "ratio events/s ours/raw: %.3f\n", r.oursRate()/r.rawRate())
}

type benchSSEReplayResult struct {
	total, firstByte time.Duration
}

// benchSSEReplay subscribes to the task from after, reads the replay to its
// COMPLETED status and checks that it carried exactly the ids in want.
func benchSSEReplay(client *http.Client, url, taskID string, after uint64, want []uint64) (benchSSEReplayResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), replayTimeout)
	defer cancel()
	start := time.Now()
	resp, err := benchSubscribe(ctx, client, url, taskID, strconv.FormatUint(after, 10))
	if err != nil {
		return benchSSEReplayResult{}, err
	}
	defer resp.Body.Close()
	r := newBenchSSEReader(resp.Body, 64<<10)
	var res benchSSEReplayResult
	n := 0
	for {
		f, err := r.next()
		if err != nil {
			return res, fmt.Errorf("after %d of %d events: %w", n, len(want), err)
		}
		if n == 0 {
			res.firstByte = time.Since(start)
		}
		if !f.hasID {
			return res, fmt.Errorf("frame without id: %.300s", f.data)
		}
		if n >= len(want) || f.id != want[n] {
			return res, fmt.Errorf("event %d has id %d, want %v", n, f.id, benchIDAt(want, n))
		}
		n++
		kind, state := benchFrameKind(f.data)
		if kind == "" {
			return res, fmt.Errorf("event %d (id %d) is not a stream response: %.300s", n, f.id, f.data)
		}
		if kind == "statusUpdate" && benchClosingState(state) {
			res.total = time.Since(start)
			if state != "TASK_STATE_COMPLETED" || n != len(want) {
				return res, fmt.Errorf("stream ended with %s after %d of %d events", state, n, len(want))
			}
			return res, nil
		}
	}
}

func benchIDAt(ids []uint64, i int) any {
	if i < len(ids) {
		return ids[i]
	}
	return "none"
}

// benchRawReplay reads the task's events with a JetStream ordered consumer
// (deliver all) until the one at lastSeq, and returns how long that took
// from the consumer's creation.
func benchRawReplay(js jetstream.JetStream, taskID string, lastSeq uint64, want int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), replayTimeout)
	defer cancel()
	start := time.Now()
	cons, err := js.OrderedConsumer(ctx, engine.DefaultConfig().EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.TaskFilter(events.DefaultTenant, a2a.TaskID(taskID))},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return 0, err
	}
	var (
		n       int
		prev    uint64
		failure error
		done    = make(chan struct{})
	)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		if failure != nil || n == want {
			return
		}
		md, err := m.Metadata()
		switch {
		case err != nil:
			failure = err
		case md.Sequence.Stream <= prev:
			failure = fmt.Errorf("sequence %d after %d", md.Sequence.Stream, prev)
		}
		if failure != nil {
			close(done)
			return
		}
		prev = md.Sequence.Stream
		n++
		if prev >= lastSeq {
			if n != want {
				failure = fmt.Errorf("reached %d after %d events, want %d", lastSeq, n, want)
			}
			close(done)
		}
	})
	if err != nil {
		return 0, err
	}
	defer cc.Stop()
	select {
	case <-done:
	case <-ctx.Done():
		return 0, fmt.Errorf("after %d of %d events: %w", n, want, ctx.Err())
	}
	return time.Since(start), failure
}

// BenchmarkStreamFanOut watches one "stream 2000 5" task with 1,000
// SubscribeToTask streams on one edge (a subprocess) and reports the
// events delivered per second to all of them, whether each got every
// event after its snapshot, the edge's RSS, and the CPU the edge and the
// benchmark's clients used. With A2ABUS_BENCH_INPROC=1 the edge runs in
// the benchmark's process instead, so that -cpuprofile covers it (the RSS
// is then the whole process's).
func BenchmarkStreamFanOut(b *testing.B) {
	inproc := os.Getenv("A2ABUS_BENCH_INPROC") != ""
	var bin string
	if !inproc {
		bin = buildBinary(b)
	}
	client := benchStreamClient(fanOutSubs)
	b.Cleanup(client.CloseIdleConnections)
	for range b.N {
		var url, natsURL string
		pid := os.Getpid()
		var p *proc
		if inproc {
			ts := startServer(b, func(c *ServeConfig) { c.LogLevel = "error" })
			url, natsURL = ts.URL, ts.NATSURL
		} else {
			p = startProc(b, "a2abus", bin, b.TempDir())
			url, natsURL, pid = p.URL, p.NATSURL, p.Pid()
		}
		js := connectJS(b, natsURL)
		rssBefore, _, err := procMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		sampler := startRSSSampler(pid)
		serverCPU0, err := procCPU(pid)
		if err != nil {
			b.Fatal(err)
		}
		selfCPU0, err := procCPU(os.Getpid())
		if err != nil {
			b.Fatal(err)
		}

		ctx, cancel := context.WithTimeout(context.Background(), fanOutTimeout)
		task, err := benchSend(ctx, client, url, fmt.Sprintf("stream %d %d", fanOutChunks, fanOutInterval), true)
		if err != nil {
			cancel()
			b.Fatal(err)
		}
		start := time.Now()
		subs := make([]fanOutSub, fanOutSubs)
		var wg sync.WaitGroup
		for i := range subs {
			wg.Go(func() { subs[i].run(ctx, client, url, task.ID) })
		}
		wg.Wait()
		wall := time.Since(start)
		cancel()
		peak := sampler.stop()
		_, hwm, err := procMemory(pid)
		if err != nil {
			b.Fatal(err)
		}
		serverCPU1, err := procCPU(pid)
		if err != nil {
			b.Fatal(err)
		}
		selfCPU1, err := procCPU(os.Getpid())
		if err != nil {
			b.Fatal(err)
		}

		ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
		all, err := benchTaskEvents(ctx, js, task.ID)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		res := fanOutResult{subs: len(subs), rssBefore: rssBefore, rssPeak: peak, hwm: hwm, taskEventCount: len(all),
			inproc: inproc, wall: wall, serverCPU: serverCPU1 - serverCPU0, selfCPU: selfCPU1 - selfCPU0}
		var firstErr error
		for i := range subs {
			s := &subs[i]
			if s.err == nil {
				s.err = s.check(all)
			}
			if s.err != nil {
				res.failed++
				if firstErr == nil {
					firstErr = fmt.Errorf("subscriber %d: %w", i, s.err)
				}
				continue
			}
			res.complete++
			res.frames += s.frames
			if res.first.IsZero() || s.first.Before(res.first) {
				res.first = s.first
			}
			if s.last.After(res.last) {
				res.last = s.last
			}
			if res.firstDone.IsZero() || s.last.Before(res.firstDone) {
				res.firstDone = s.last
			}
			res.snapshotWait = max(res.snapshotWait, s.first.Sub(start))
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(res.rate(), "events/s")
		b.ReportMetric(float64(res.complete), "complete-subs")
		b.ReportMetric(float64(res.rssBefore)/1024, "rss-before-MiB")
		b.ReportMetric(float64(res.rssPeak)/1024, "rss-peak-MiB")
		if !inproc {
			b.ReportMetric(res.cpuPerFrame(), "edge-cpu-us/frame")
		}
		res.print(os.Stdout)
		if firstErr != nil {
			b.Errorf("%d of %d subscribers did not get every event; first: %v", res.failed, len(subs), firstErr)
		}
		if p != nil {
			p.stop()
		}
	}
}

// fanOutSub is one subscriber of the fan-out task.
type fanOutSub struct {
	snapSeq     uint64
	ids         []uint64 // of the events after the snapshot
	frames      int      // the snapshot included
	first, last time.Time
	err         error
}

func (s *fanOutSub) run(ctx context.Context, client *http.Client, url, taskID string) {
	s.err = func() error {
		resp, err := benchSubscribe(ctx, client, url, taskID, "")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		r := newBenchSSEReader(resp.Body, 16<<10)
		s.ids = make([]uint64, 0, fanOutChunks+fanOutChunks/50+4)
		for {
			f, err := r.next()
			if err != nil {
				return fmt.Errorf("after %d frames: %w", s.frames, err)
			}
			s.last = time.Now()
			s.frames++
			if !f.hasID {
				return fmt.Errorf("frame %d without id: %.300s", s.frames, f.data)
			}
			kind, state := benchFrameKind(f.data)
			if s.frames == 1 {
				s.first = s.last
				if kind != "task" {
					return fmt.Errorf("first frame is %q, want the task: %.300s", kind, f.data)
				}
				s.snapSeq = f.id
				continue
			}
			if kind == "" || kind == "task" {
				return fmt.Errorf("frame %d (id %d) is %q: %.300s", s.frames, f.id, kind, f.data)
			}
			if prev := s.snapSeq; len(s.ids) > 0 {
				prev = s.ids[len(s.ids)-1]
				if f.id <= prev {
					return fmt.Errorf("frame %d has id %d after %d", s.frames, f.id, prev)
				}
			} else if f.id <= prev {
				return fmt.Errorf("frame %d has id %d after the snapshot's %d", s.frames, f.id, prev)
			}
			s.ids = append(s.ids, f.id)
			if kind == "statusUpdate" && benchClosingState(state) {
				if state != "TASK_STATE_COMPLETED" {
					return fmt.Errorf("stream ended with %s", state)
				}
				return nil
			}
		}
	}()
}

// check compares the subscriber's ids with the task's stream events after
// its snapshot.
func (s *fanOutSub) check(all []benchEventRef) error {
	want := benchStreamedAfter(all, s.snapSeq)
	if slices.Equal(s.ids, want) {
		return nil
	}
	for i := range min(len(s.ids), len(want)) {
		if s.ids[i] != want[i] {
			return fmt.Errorf("after snapshot %d: event %d has id %d, want %d", s.snapSeq, i, s.ids[i], want[i])
		}
	}
	return fmt.Errorf("after snapshot %d: %d events, want %d", s.snapSeq, len(s.ids), len(want))
}

type fanOutResult struct {
	subs, complete, failed int
	frames                 int
	taskEventCount         int
	first, last, firstDone time.Time
	snapshotWait           time.Duration
	rssBefore, rssPeak     int64 // KiB
	hwm                    int64 // KiB, VmHWM at the end
	inproc                 bool
	wall                   time.Duration // from the first subscribe to the last COMPLETED
	serverCPU, selfCPU     time.Duration // over the fan-out (the same process if inproc)
}

func (r fanOutResult) rate() float64 {
	d := r.last.Sub(r.first)
	if d <= 0 {
		return 0
	}
	return float64(r.frames) / d.Seconds()
}

// cpuPerFrame is the edge's CPU time per frame delivered, in µs.
func (r fanOutResult) cpuPerFrame() float64 {
	if r.frames == 0 {
		return 0
	}
	return float64(r.serverCPU.Microseconds()) / float64(r.frames)
}

func (r fanOutResult) print(w io.Writer) {
	nominal := time.Duration(fanOutChunks*fanOutInterval) * time.Millisecond
	where := "edge subprocess"
	if r.inproc {
		where = "benchmark process (edge in-process)"
	}
	fmt.Fprintf(w, "\nStreamFanOut: one \"stream %d %d\" task (%d events), %d subscribers on one edge\n", fanOutChunks, fanOutInterval, r.taskEventCount, r.subs)
	fmt.Fprintf(w, "%-46s %d of %d\n", "subscribers with every event after snapshot:", r.complete, r.subs)
	fmt.Fprintf(w, "%-46s %d (snapshots included)\n", "frames delivered:", r.frames)
	fmt.Fprintf(w, "%-46s %.3fs (the task's nominal run: %v)\n", "first to last frame:", r.last.Sub(r.first).Seconds(), nominal)
	fmt.Fprintf(w, "%-46s %.0f\n", "delivered events/s:", r.rate())
	fmt.Fprintf(w, "%-46s %.1fms\n", "last snapshot after (from first subscribe):", ms(r.snapshotWait))
	fmt.Fprintf(w, "%-46s %.1fms\n", "COMPLETED spread (first to last subscriber):", ms(r.last.Sub(r.firstDone)))
	fmt.Fprintf(w, "%-46s %.1f MiB\n", "RSS of the "+where+" before:", float64(r.rssBefore)/1024)
	fmt.Fprintf(w, "%-46s %.1f MiB (VmHWM %.1f MiB)\n", "RSS peak (100ms samples):", float64(r.rssPeak)/1024, float64(r.hwm)/1024)
	if r.inproc {
		fmt.Fprintf(w, "%-46s %.1fs (%.0f%% of a core)\n", "CPU of the process (edge + clients):", r.serverCPU.Seconds(), 100*r.serverCPU.Seconds()/r.wall.Seconds())
		return
	}
	fmt.Fprintf(w, "%-46s %.1fs (%.0f%% of a core), %.2f µs a frame\n", "edge CPU:", r.serverCPU.Seconds(), 100*r.serverCPU.Seconds()/r.wall.Seconds(), r.cpuPerFrame())
	fmt.Fprintf(w, "%-46s %.1fs (%.0f%% of a core)\n", "benchmark clients' CPU:", r.selfCPU.Seconds(), 100*r.selfCPU.Seconds()/r.wall.Seconds())
}

// BenchmarkStreamIdle opens 10,000 SubscribeToTask streams on one
// long-running task on one edge (a subprocess started with
// --sse-keepalive 1h), waits until each has its first frame, and reports
// the edge's RSS per open stream. Should the edge or the benchmark run out
// of file descriptors, it reports so and tries 5,000 streams.
func BenchmarkStreamIdle(b *testing.B) {
	bin := buildBinary(b)
	text := idleTask
	if s := os.Getenv("A2ABUS_BENCH_IDLE_TASK"); s != "" {
		text = s
	}
	for range b.N {
		res, err := runIdle(b, bin, text, idleStreams)
		if err != nil && errors.Is(err, errBenchTooManyFiles) {
			b.Logf("%d streams: %v; trying %d", idleStreams, err, idleFallback)
			res, err = runIdle(b, bin, text, idleFallback)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(res.streams), "streams")
		b.ReportMetric(float64(res.rssBefore)/1024, "rss-before-MiB")
		b.ReportMetric(float64(res.rssOpen)/1024, "rss-open-MiB")
		b.ReportMetric(res.perStream(), "KiB/stream")
		res.print(os.Stdout)
	}
}

// errBenchTooManyFiles marks a run that ran out of file descriptors.
var errBenchTooManyFiles = errors.New("too many open files")

type idleResult struct {
	task               string
	streams            int
	openTime           time.Duration
	rssBefore, rssOpen int64 // KiB
	hwm                int64 // KiB
	rssClosed          int64 // KiB, after every stream closed
	cpu                time.Duration
	idleFrames         int64 // frames received after the first ones, while open
}

func (r idleResult) perStream() float64 {
	return float64(r.rssOpen-r.rssBefore) / float64(r.streams)
}

func (r idleResult) print(w io.Writer) {
	task := r.task
	if len(task) > 60 {
		task = task[:60] + "..."
	}
	fmt.Fprintf(w, "\nStreamIdle: %d idle SubscribeToTask streams on one %q task, one edge\n", r.streams, task)
	fmt.Fprintf(w, "%-40s %.3fs\n", "opened (all first frames) in:", r.openTime.Seconds())
	fmt.Fprintf(w, "%-40s %.1f MiB\n", "edge RSS before:", float64(r.rssBefore)/1024)
	fmt.Fprintf(w, "%-40s %.1f MiB (VmHWM %.1f MiB)\n", "edge RSS with the streams open:", float64(r.rssOpen)/1024, float64(r.hwm)/1024)
	fmt.Fprintf(w, "%-40s %.1f KiB\n", "per stream:", r.perStream())
	fmt.Fprintf(w, "%-40s %.1f%% of a core over %v\n", "edge CPU while idle:", 100*r.cpu.Seconds()/idleCPUWindow.Seconds(), idleCPUWindow)
	fmt.Fprintf(w, "%-40s %d\n", "frames received while idle:", r.idleFrames)
	fmt.Fprintf(w, "%-40s %.1f MiB\n", "edge RSS after closing them:", float64(r.rssClosed)/1024)
}

// runIdle runs one idle measurement on a fresh edge with n streams.
func runIdle(b *testing.B, bin, text string, n int) (idleResult, error) {
	p := startProc(b, "a2abus", bin, b.TempDir(), "--sse-keepalive", "1h")
	defer p.stop()
	res := idleResult{task: text, streams: n}
	client := benchStreamClient(64)
	defer client.CloseIdleConnections()

	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	task, err := benchSend(ctx, client, p.URL, text, true)
	cancel()
	if err != nil {
		return res, err
	}
	// Let the worker start the task before the baseline is read. A fixed
	// pause: RSS settles over time and no event says when it has.
	time.Sleep(time.Second)
	if res.rssBefore, _, err = procMemory(p.Pid()); err != nil {
		return res, err
	}

	root, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()
	var (
		opened, closed sync.WaitGroup
		mu             sync.Mutex
		openErrs       int
		firstErr       error
		idleFrames     atomic.Int64
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		openErrs++
		if firstErr == nil {
			firstErr = err
		}
	}
	sem := make(chan struct{}, idleOpenAtOnce)
	start := time.Now()
	launched := 0
	for range n {
		launched++
		opened.Add(1)
		sem <- struct{}{}
		closed.Go(func() {
			ready := false
			defer func() {
				if !ready {
					<-sem
					opened.Done()
				}
			}()
			ctx, cancel := context.WithCancel(root)
			defer cancel()
			firstFrame := time.AfterFunc(idleFirstTimeout, cancel)
			resp, err := benchSubscribe(ctx, client, p.URL, task.ID, "")
			if err != nil {
				firstFrame.Stop()
				fail(err)
				return
			}
			defer resp.Body.Close()
			r := newBenchSSEReader(resp.Body, 4<<10)
			f, err := r.next()
			firstFrame.Stop()
			if err != nil {
				fail(fmt.Errorf("first frame: %w", err))
				return
			}
			if kind, _ := benchFrameKind(f.data); kind != "task" {
				fail(fmt.Errorf("first frame is %q, want the task: %.300s", kind, f.data))
				return
			}
			ready = true
			<-sem
			opened.Done()
			// Sit on the stream, reading what comes, until it is closed.
			for {
				if _, err := r.next(); err != nil {
					return
				}
				idleFrames.Add(1)
			}
		})
		if time.Since(start) > idleOpenTimeout {
			break // the wait below fails
		}
	}
	if !benchWaitWithin(&opened, idleOpenTimeout) {
		cancelAll()
		return res, fmt.Errorf("%d streams not open after %v", n, idleOpenTimeout)
	}
	res.openTime = time.Since(start)
	if launched < n {
		cancelAll()
		benchWaitWithin(&closed, idleCloseTimeout)
		return res, fmt.Errorf("only %d of %d streams started within %v", launched, n, idleOpenTimeout)
	}
	if openErrs > 0 {
		cancelAll()
		benchWaitWithin(&closed, idleCloseTimeout)
		err := fmt.Errorf("%d of %d streams failed to open; first: %w", openErrs, n, firstErr)
		if strings.Contains(err.Error(), "too many open files") || strings.Contains(p.log(), "too many open files") {
			err = fmt.Errorf("%w: %w", errBenchTooManyFiles, err)
		}
		return res, err
	}

	// Fixed pauses below are measurement windows (RSS settling, CPU used
	// over idleCPUWindow), not waits for an event.
	time.Sleep(idleSettle)
	idleFrames.Store(0)
	cpu0, err := procCPU(p.Pid())
	if err != nil {
		return res, err
	}
	time.Sleep(idleCPUWindow)
	cpu1, err := procCPU(p.Pid())
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	if res.rssOpen, res.hwm, err = procMemory(p.Pid()); err != nil {
		return res, err
	}
	res.idleFrames = idleFrames.Load()

	cancelAll()
	if !benchWaitWithin(&closed, idleCloseTimeout) {
		return res, fmt.Errorf("streams not closed within %v", idleCloseTimeout)
	}
	time.Sleep(idleSettle)
	if res.rssClosed, _, err = procMemory(p.Pid()); err != nil {
		return res, err
	}
	return res, nil
}

func benchWaitWithin(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// benchStreamClient returns an HTTP client for conns concurrent long-lived
// streams: no limit on connections per host, and no overall timeout
// (requests carry their own deadlines).
func benchStreamClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxConnsPerHost:     0,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}}
}

// benchTask is the part of a task the streaming benchmarks look at.
type benchTask struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
}

// benchSend sends a demo-skill message and returns the task of the
// SendMessage result.
func benchSend(ctx context.Context, client *http.Client, url, text string, returnImmediately bool) (benchTask, error) {
	n := messageSeq.Add(1)
	params := map[string]any{"message": userMessage(fmt.Sprintf("bench-stream-%d-%d", time.Now().UnixNano(), n), text)}
	if returnImmediately {
		params["configuration"] = map[string]any{"returnImmediately": true}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": params})
	if err != nil {
		return benchTask{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/", bytes.NewReader(body))
	if err != nil {
		return benchTask{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return benchTask{}, fmt.Errorf("SendMessage %q: %w", text, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return benchTask{}, fmt.Errorf("SendMessage %q: %w", text, err)
	}
	var r struct {
		Result *struct {
			Task *benchTask `json:"task"`
		} `json:"result"`
		Error *rpcError `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return benchTask{}, fmt.Errorf("SendMessage %q: HTTP %d: %w: %.300s", text, resp.StatusCode, err, raw)
	}
	switch {
	case r.Error != nil:
		return benchTask{}, fmt.Errorf("SendMessage %q: %w", text, r.Error)
	case r.Result == nil || r.Result.Task == nil || r.Result.Task.ID == "":
		return benchTask{}, fmt.Errorf("SendMessage %q: result is not a task: %.300s", text, raw)
	}
	return *r.Result.Task, nil
}

// benchSubscribe posts SubscribeToTask for taskID, with a Last-Event-ID
// header unless lastEventID is empty, and returns the SSE response. A
// JSON-RPC error answer is returned as an error.
func benchSubscribe(ctx context.Context, client *http.Client, url, taskID, lastEventID string) (*http.Response, error) {
	n := messageSeq.Add(1)
	body := `{"jsonrpc":"2.0","id":` + strconv.FormatUint(n, 10) + `,"method":"SubscribeToTask","params":{"id":"` + taskID + `"}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("SubscribeToTask: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("SubscribeToTask: HTTP %d %s: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	return resp, nil
}

// benchSSEReader reads SSE frames.
type benchSSEReader struct {
	r    *bufio.Reader
	data []byte
	long []byte
}

// benchSSEFrame is one SSE event. data is valid until the next read.
type benchSSEFrame struct {
	id    uint64
	hasID bool
	data  []byte
}

func newBenchSSEReader(r io.Reader, size int) *benchSSEReader {
	return &benchSSEReader{r: bufio.NewReaderSize(r, size)}
}

// next returns the next frame with an id or data; comments are skipped.
func (s *benchSSEReader) next() (benchSSEFrame, error) {
	var f benchSSEFrame
	s.data = s.data[:0]
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return f, err
		}
		switch {
		case len(line) == 0:
			if f.hasID || hasData {
				f.data = s.data
				return f, nil
			}
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("id:")):
			v := bytes.TrimSpace(line[3:])
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return f, fmt.Errorf("bad SSE id %q", v)
			}
			f.id, f.hasID = n, true
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(line[5:], []byte(" "))
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, v...)
			hasData = true
		}
	}
}

// readLine returns the next line without its end of line.
func (s *benchSSEReader) readLine() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.long = append(s.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

var (
	benchResultKey = []byte(`"result":{"`)
	benchStateKey  = []byte(`"state":"`)
)

// benchFrameKind returns the kind of a SubscribeToTask frame's result
// ("task", "statusUpdate", "artifactUpdate"; "" for an error or anything
// else) and, for a task or status update, its state. It looks at bytes
// only, so the benchmark's client costs little next to the server.
func benchFrameKind(data []byte) (kind, state string) {
	i := bytes.Index(data, benchResultKey)
	if i < 0 {
		return "", ""
	}
	rest := data[i+len(benchResultKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", ""
	}
	kind = string(rest[:j])
	if kind == "task" || kind == "statusUpdate" {
		if k := bytes.Index(rest, benchStateKey); k >= 0 {
			v := rest[k+len(benchStateKey):]
			if e := bytes.IndexByte(v, '"'); e >= 0 {
				state = string(v[:e])
			}
		}
	}
	return kind, state
}

// benchClosingState reports whether a stream ends after a status in state s
// (the server's defaults).
func benchClosingState(s string) bool {
	switch s {
	case "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED",
		"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED":
		return true
	}
	return false
}

// benchFirstEvent reads the task's first event with a direct get (the first
// message at or after sequence 1 on the task's subjects).
func benchFirstEvent(ctx context.Context, js jetstream.JetStream, taskID string) (events.Event, error) {
	s, err := js.Stream(ctx, engine.DefaultConfig().EventsStream)
	if err != nil {
		return events.Event{}, err
	}
	m, err := s.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(events.TaskFilter(events.DefaultTenant, a2a.TaskID(taskID))))
	if err != nil {
		return events.Event{}, fmt.Errorf("first event of task %s: %w", taskID, err)
	}
	return events.Decode(m.Subject, m.Header, m.Data, m.Sequence)
}

// benchEventRef is one event of a task in the stream.
type benchEventRef struct {
	seq  uint64
	kind events.Kind
}

// benchTaskEvents lists every event of a finished task, in order, with an
// ordered consumer, up to the task's last event at the time of the call.
func benchTaskEvents(ctx context.Context, js jetstream.JetStream, taskID string) ([]benchEventRef, error) {
	filter := events.TaskFilter(events.DefaultTenant, a2a.TaskID(taskID))
	s, err := js.Stream(ctx, engine.DefaultConfig().EventsStream)
	if err != nil {
		return nil, err
	}
	last, err := s.GetLastMsgForSubject(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("last event of task %s: %w", taskID, err)
	}
	cons, err := js.OrderedConsumer(ctx, engine.DefaultConfig().EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter},
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
	var refs []benchEventRef
	for {
		m, err := it.Next()
		if err != nil {
			return refs, fmt.Errorf("events of task %s: %w (ctx: %v)", taskID, err, ctx.Err())
		}
		md, err := m.Metadata()
		if err != nil {
			return refs, err
		}
		_, _, kind, err := events.ParseSubject(m.Subject())
		if err != nil {
			return refs, err
		}
		refs = append(refs, benchEventRef{seq: md.Sequence.Stream, kind: kind})
		if md.Sequence.Stream >= last.Sequence {
			return refs, nil
		}
	}
}

// benchStreamedAfter returns the sequences of the events after seq that a
// stream carries (status and artifact events).
func benchStreamedAfter(all []benchEventRef, seq uint64) []uint64 {
	var ids []uint64
	for _, e := range all {
		if e.seq > seq && (e.kind == events.KindStatus || e.kind == events.KindArtifact) {
			ids = append(ids, e.seq)
		}
	}
	return ids
}

// procMemory returns VmRSS and VmHWM of process pid, in KiB.
func procMemory(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/status %s: %q", pid, k, v)
		}
		if k == "VmRSS" {
			rss = n
		} else {
			hwm = n
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
	}
	return rss, hwm, nil
}

// procCPU returns the user and system CPU time of process pid.
func procCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command (which may hold spaces), from field 3 on.
	i := bytes.LastIndexByte(data, ')')
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	const clockTicks = 100 // USER_HZ on Linux
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// rssSampler samples a process's VmRSS every rssSampleEvery.
type rssSampler struct {
	quit chan struct{}
	done chan struct{}
	peak int64
}

func startRSSSampler(pid int) *rssSampler {
	s := &rssSampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(rssSampleEvery)
		defer t.Stop()
		for {
			if rss, _, err := procMemory(pid); err == nil {
				s.peak = max(s.peak, rss)
			}
			select {
			case <-t.C:
			case <-s.quit:
				return
			}
		}
	}()
	return s
}

// stop ends the sampling and returns the peak VmRSS in KiB.
func (s *rssSampler) stop() int64 {
	close(s.quit)
	<-s.done
	return s.peak
}
