package tasklog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/internal/natstest"
	"github.com/a2abus/a2abus/tasklog"
)

// benchLog is a task log on a fresh embedded JetStream, provisioned as
// the server provisions it.
type benchLog struct {
	log    *tasklog.Log
	js     jetstream.JetStream
	stream string
}

func newBenchLog(b *testing.B) benchLog {
	b.Helper()
	s := natstest.Run(b, natstest.Options{})
	nc, js := natstest.Connect(b, s)
	cfg := engine.DefaultConfig()
	if err := engine.Provision(context.Background(), js, cfg); err != nil {
		b.Fatal(err)
	}
	return benchLog{log: tasklog.New(nc, js, cfg.EventsStream), js: js, stream: cfg.EventsStream}
}

func benchCreated(id a2a.TaskID) events.Event {
	now := time.Now().UTC()
	return events.Event{ID: "c-" + string(id), Type: events.TypeCreated, Tenant: events.DefaultTenant, TaskID: id, Time: now,
		Body: &events.Created{Task: &a2a.Task{ID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
			History: []*a2a.Message{{ID: "m", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("echo hi")}}}}, Dialect: "1.0"}}
}

// benchChunk is the n-th chunk of a streamed artifact, as a worker
// writes it (appended without Nats-Msg-Id).
func benchChunk(id a2a.TaskID, n int) events.Event {
	return events.Event{ID: fmt.Sprintf("a-%s-%d", id, n), Type: events.TypeArtifact, Tenant: events.DefaultTenant, TaskID: id,
		Time: time.Now().UTC(), Lease: "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f25",
		Body: &a2a.TaskArtifactUpdateEvent{TaskID: id, ContextID: "ctx", Append: n > 0,
			Artifact: &a2a.Artifact{ID: "out", Parts: a2a.ContentParts{a2a.NewTextPart("a chunk of streamed output")}}}}
}

// BenchmarkAppendFold appends b.N artifact chunks to one task, each
// chaining the head returned by the previous append (Log.Append with
// OCC), then Log.Load folds the task back; ns/op covers both, appends/s
// the appends alone. Baselines in the same run publish b.N messages to
// the same stream without the OCC headers: "encoded" encodes each event
// (CloudEvents headers and JSON body) as Append does, "headers" publishes
// one pre-encoded message (same headers and body) over and over, and "raw"
// publishes the same body bytes with no headers. tasklog/raw is the cost
// of OCC and CloudEvents on the write path; tasklog/encoded the cost of
// OCC alone.
func BenchmarkAppendFold(b *testing.B) {
	l := newBenchLog(b)
	ctx := context.Background()
	rates := map[string]float64{}
	task := 0
	newTask := func() a2a.TaskID {
		task++
		return a2a.TaskID(fmt.Sprintf("bench-%d", task))
	}

	b.Run("tasklog", func(b *testing.B) {
		id := newTask()
		head, err := l.log.Append(ctx, benchCreated(id), 0, true)
		if err != nil {
			b.Fatal(err)
		}
		chunks := make([]events.Event, b.N)
		for i := range chunks {
			chunks[i] = benchChunk(id, i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			if head, err = l.log.Append(ctx, chunks[i], head, false); err != nil {
				b.Fatal(err)
			}
		}
		appending := time.Since(start)
		v, err := l.log.Load(ctx, events.DefaultTenant, id)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if v.Seq != head || len(v.Task.Artifacts) != 1 || len(v.Task.Artifacts[0].Parts) != b.N {
			b.Fatalf("loaded view at %d with %d artifacts, want head %d and one artifact of %d parts", v.Seq, len(v.Task.Artifacts), head, b.N)
		}
		rates["tasklog"] = float64(b.N) / appending.Seconds()
		b.ReportMetric(rates["tasklog"], "appends/s")
	})

	b.Run("encoded", func(b *testing.B) {
		id := newTask()
		chunks := make([]events.Event, b.N)
		for i := range chunks {
			chunks[i] = benchChunk(id, i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			m, err := events.Encode(chunks[i])
			if err != nil {
				b.Fatal(err)
			}
			if _, err := l.js.PublishMsg(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		rates["encoded"] = float64(b.N) / time.Since(start).Seconds()
		b.ReportMetric(rates["encoded"], "appends/s")
	})

	b.Run("headers", func(b *testing.B) {
		m, err := events.Encode(benchChunk(newTask(), 1))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			if _, err := l.js.PublishMsg(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		rates["headers"] = float64(b.N) / time.Since(start).Seconds()
		b.ReportMetric(rates["headers"], "appends/s")
	})

	b.Run("raw", func(b *testing.B) {
		m, err := events.Encode(benchChunk(newTask(), 1))
		if err != nil {
			b.Fatal(err)
		}
		subject, data := m.Subject, m.Data
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			if _, err := l.js.Publish(ctx, subject, data); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		rates["raw"] = float64(b.N) / time.Since(start).Seconds()
		b.ReportMetric(rates["raw"], "appends/s")
	})

	if rates["tasklog"] > 0 && rates["raw"] > 0 && rates["encoded"] > 0 && rates["headers"] > 0 {
		fmt.Printf("AppendFold appends/s: tasklog %.0f, encoded %.0f, headers %.0f, raw %.0f; tasklog/raw = %.2f, tasklog/encoded = %.2f\n",
			rates["tasklog"], rates["encoded"], rates["headers"], rates["raw"],
			rates["tasklog"]/rates["raw"], rates["tasklog"]/rates["encoded"])
	}
}

// loadEvents is the size of the task BenchmarkLoad reads.
const loadEvents = 1000

// BenchmarkLoad reads a task of 1000 events back: "tasklog" with Log.Load
// (batched direct gets, decode and fold), "ordered-consumer" with a raw
// replay of the same 1000 messages through a new ordered consumer (no
// decode). Deleting the consumer afterwards is not timed.
func BenchmarkLoad(b *testing.B) {
	l := newBenchLog(b)
	ctx := context.Background()
	id := a2a.TaskID("bench-load")
	head, err := l.log.Append(ctx, benchCreated(id), 0, true)
	if err != nil {
		b.Fatal(err)
	}
	for i := range loadEvents - 1 {
		if head, err = l.log.Append(ctx, benchChunk(id, i), head, false); err != nil {
			b.Fatal(err)
		}
	}
	rates := map[string]float64{}

	b.Run("tasklog", func(b *testing.B) {
		b.ReportAllocs()
		start := time.Now()
		for b.Loop() {
			v, err := l.log.Load(ctx, events.DefaultTenant, id)
			if err != nil {
				b.Fatal(err)
			}
			if v.Seq != head {
				b.Fatalf("loaded view at %d, want %d", v.Seq, head)
			}
		}
		rates["tasklog"] = float64(b.N*loadEvents) / time.Since(start).Seconds()
		b.ReportMetric(rates["tasklog"], "events/s")
	})

	b.Run("ordered-consumer", func(b *testing.B) {
		b.ReportAllocs()
		var elapsed time.Duration
		for b.Loop() {
			start := time.Now()
			cons, err := l.js.OrderedConsumer(ctx, l.stream, jetstream.OrderedConsumerConfig{
				FilterSubjects: []string{events.TaskFilter(events.DefaultTenant, id)},
			})
			if err != nil {
				b.Fatal(err)
			}
			it, err := cons.Messages()
			if err != nil {
				b.Fatal(err)
			}
			var last uint64
			for range loadEvents {
				m, err := it.Next()
				if err != nil {
					b.Fatal(err)
				}
				md, err := m.Metadata()
				if err != nil {
					b.Fatal(err)
				}
				last = md.Sequence.Stream
			}
			it.Stop()
			elapsed += time.Since(start)
			if last != head {
				b.Fatalf("replayed up to %d, want %d", last, head)
			}
			b.StopTimer()
			if err := l.js.DeleteConsumer(ctx, l.stream, cons.CachedInfo().Name); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		rates["ordered-consumer"] = float64(b.N*loadEvents) / elapsed.Seconds()
		b.ReportMetric(rates["ordered-consumer"], "events/s")
	})

	if rates["tasklog"] > 0 && rates["ordered-consumer"] > 0 {
		fmt.Printf("Load events/s: Log.Load %.0f, ordered consumer %.0f; Log.Load/ordered consumer = %.2f\n",
			rates["tasklog"], rates["ordered-consumer"], rates["tasklog"]/rates["ordered-consumer"])
	}
}
