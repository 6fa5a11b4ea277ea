package events

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/")

// goldenEvent is one event in a testdata/fold/<case>/events.json script.
type goldenEvent struct {
	Seq    uint64          `json:"seq"`
	Type   Type            `json:"type"`
	Tenant string          `json:"tenant"`
	TaskID a2a.TaskID      `json:"taskId"`
	Lease  string          `json:"lease,omitempty"`
	Time   time.Time       `json:"time"`
	Body   json.RawMessage `json:"body"`
}

func (g goldenEvent) event(t *testing.T) Event {
	t.Helper()
	ev := Event{ID: "golden", Type: g.Type, Tenant: g.Tenant, TaskID: g.TaskID, Lease: g.Lease, Time: g.Time, Seq: g.Seq}
	var err error
	switch g.Type {
	case TypeCreated:
		var b Created
		err = json.Unmarshal(g.Body, &b)
		ev.Body = &b
	case TypeInput:
		var b Input
		err = json.Unmarshal(g.Body, &b)
		ev.Body = &b
	case TypeStatus:
		var b a2a.TaskStatusUpdateEvent
		err = json.Unmarshal(g.Body, &b)
		ev.Body = &b
	case TypeArtifact:
		var b a2a.TaskArtifactUpdateEvent
		err = json.Unmarshal(g.Body, &b)
		ev.Body = &b
	default:
		ev.Body = g.Body
	}
	if err != nil {
		t.Fatalf("event %d: %v", g.Seq, err)
	}
	return ev
}

// TestApplyGolden folds each testdata/fold/<case>/events.json and compares
// the view with view.json. Run with -rewrite to accept new output.
func TestApplyGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/fold/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, "events.json"))
			if err != nil {
				t.Fatal(err)
			}
			var script []goldenEvent
			if err := json.Unmarshal(raw, &script); err != nil {
				t.Fatal(err)
			}
			v := &View{}
			var history []*View
			for _, g := range script {
				before := v.Clone()
				history = append(history, before)
				Apply(v, g.event(t))
			}
			got, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join(dir, "view.json")
			if *rewrite {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -rewrite)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Apply() view =\n%s\nwant\n%s", got, want)
			}
			// Folding never changes a view it was cloned from.
			for i, h := range history {
				again := &View{}
				for _, g := range script[:i] {
					Apply(again, g.event(t))
				}
				a, _ := json.Marshal(again)
				b, _ := json.Marshal(h)
				if !bytes.Equal(a, b) {
					t.Errorf("view after %d events changed by a later Apply on its clone:\n%s\nwant\n%s", i, b, a)
				}
			}
		})
	}
}

func TestApplyIgnoresOldAndForeignEvents(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	created := Event{Seq: 5, Type: TypeCreated, Tenant: "t", TaskID: "a", Time: now, Body: &Created{Task: &a2a.Task{
		ID: "a", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &now}}}}
	v := &View{}
	if !Apply(v, created) {
		t.Fatal("Apply(created) = false, want true")
	}
	working := Event{Seq: 4, Type: TypeStatus, Tenant: "t", TaskID: "a", Body: &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}
	if Apply(v, working) {
		t.Error("Apply(event at seq 4 after seq 5) = true, want false")
	}
	foreign := Event{Seq: 6, Type: TypeStatus, Tenant: "t", TaskID: "b", Body: &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}}
	if Apply(v, foreign) {
		t.Error("Apply(event of another task) = true, want false")
	}
	if v.Task.Status.State != a2a.TaskStateSubmitted || v.Seq != 5 {
		t.Errorf("view = %v at %d, want SUBMITTED at 5", v.Task.Status.State, v.Seq)
	}
}
