package events_test

import (
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2abus/a2abus/events"
)

// benchTask is the task of the benchmark events: ids shaped like the
// server's (UUIDs), one user message, as the demo echo skill sees it.
const benchTask a2a.TaskID = "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21"

const benchContext = "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f22"

func benchMessage() *a2a.Message {
	return &a2a.Message{
		ID:        "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f23",
		Role:      a2a.MessageRoleUser,
		ContextID: benchContext,
		TaskID:    benchTask,
		Parts:     a2a.ContentParts{a2a.NewTextPart("echo hi")},
	}
}

// benchEvents returns a created, a WORKING status and an artifact chunk
// (append) event of one task, as the engine and the demo agent write them.
func benchEvents() (created, status, chunk events.Event) {
	now := time.Now().UTC()
	created = events.Event{
		ID: "created-" + string(benchTask), Type: events.TypeCreated, Tenant: events.DefaultTenant, TaskID: benchTask, Time: now, Seq: 1,
		Body: &events.Created{Task: &a2a.Task{
			ID: benchTask, ContextID: benchContext,
			Status:  a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now},
			History: []*a2a.Message{benchMessage()},
		}, Dialect: "1.0"},
	}
	status = events.Event{
		ID: "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f24", Type: events.TypeStatus, Tenant: events.DefaultTenant, TaskID: benchTask, Time: now,
		Lease: "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f25",
		Body: &a2a.TaskStatusUpdateEvent{
			TaskID: benchTask, ContextID: benchContext,
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now},
		},
	}
	chunk = events.Event{
		ID: "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f26", Type: events.TypeArtifact, Tenant: events.DefaultTenant, TaskID: benchTask, Time: now,
		Lease: "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f25",
		Body: &a2a.TaskArtifactUpdateEvent{
			TaskID: benchTask, ContextID: benchContext, Append: true,
			Artifact: &a2a.Artifact{ID: "echo", Name: "echo", Parts: a2a.ContentParts{a2a.NewTextPart("echo hi")}},
		},
	}
	return created, status, chunk
}

// BenchmarkApply folds one event into a view: a status transition, and an
// artifact chunk appended to a growing artifact (reset every 1024 chunks,
// so the parts slice grows as a streamed artifact's does).
func BenchmarkApply(b *testing.B) {
	created, status, chunk := benchEvents()
	newView := func(b *testing.B) *events.View {
		v := &events.View{}
		if !events.Apply(v, created) {
			b.Fatal("created event not applied")
		}
		return v
	}
	b.Run("status", func(b *testing.B) {
		v := newView(b)
		ev := status
		b.ReportAllocs()
		for b.Loop() {
			ev.Seq = v.Seq + 1
			if !events.Apply(v, ev) {
				b.Fatal("not applied")
			}
		}
	})
	b.Run("artifact-append", func(b *testing.B) {
		v := newView(b)
		ev := chunk
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i%1024 == 0 {
				v.Task.Artifacts = nil
			}
			i++
			ev.Seq = v.Seq + 1
			if !events.Apply(v, ev) {
				b.Fatal("not applied")
			}
		}
	})
}

// BenchmarkEncode encodes events into NATS messages (CloudEvents binary
// mode: ce-* headers and a JSON body).
func BenchmarkEncode(b *testing.B) {
	created, status, chunk := benchEvents()
	for _, tc := range []struct {
		name string
		ev   events.Event
	}{{"created", created}, {"status", status}, {"artifact", chunk}} {
		b.Run(tc.name, func(b *testing.B) {
			m, err := events.Encode(tc.ev)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(m.Data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := events.Encode(tc.ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode decodes the messages BenchmarkEncode makes.
func BenchmarkDecode(b *testing.B) {
	created, status, chunk := benchEvents()
	for _, tc := range []struct {
		name string
		ev   events.Event
	}{{"created", created}, {"status", status}, {"artifact", chunk}} {
		b.Run(tc.name, func(b *testing.B) {
			m, err := events.Encode(tc.ev)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(m.Data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := events.Decode(m.Subject, m.Header, m.Data, 7); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
