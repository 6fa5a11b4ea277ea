package projections

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2abus/a2abus/events"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func createdEv(tenant string, id a2a.TaskID, ctxID string, seq uint64, at time.Time) events.Event {
	return events.Event{Type: events.TypeCreated, Tenant: tenant, TaskID: id, Seq: seq, Time: at,
		Body: &events.Created{Task: &a2a.Task{ID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: &at}}}}
}

func statusEv(tenant string, id a2a.TaskID, state a2a.TaskState, seq uint64, at time.Time) events.Event {
	return events.Event{Type: events.TypeStatus, Tenant: tenant, TaskID: id, Seq: seq, Time: at,
		Body: &a2a.TaskStatusUpdateEvent{TaskID: id, Status: a2a.TaskStatus{State: state, Timestamp: &at}}}
}

func readyIndex() *Index {
	x := NewIndex()
	close(x.ready)
	return x
}

// buildIndex makes 30 tasks in tenant "t": task i has status time t0+i
// minutes, context "c<i%3>", and is COMPLETED when i is even, WORKING when
// odd. A second tenant holds one task.
func buildIndex() *Index {
	x := readyIndex()
	seq := uint64(0)
	for i := range 30 {
		id := a2a.TaskID(fmt.Sprintf("task-%02d", i))
		seq++
		x.Apply(createdEv("t", id, fmt.Sprint("c", i%3), seq, t0))
		state := a2a.TaskStateWorking
		if i%2 == 0 {
			state = a2a.TaskStateCompleted
		}
		seq++
		x.Apply(statusEv("t", id, state, seq, t0.Add(time.Duration(i)*time.Minute)))
	}
	x.Apply(createdEv("other", "foreign", "c0", 1000, t0))
	return x
}

func TestIndexQueryFilters(t *testing.T) {
	x := buildIndex()
	after := t0.Add(20 * time.Minute)
	tests := []struct {
		name      string
		q         Query
		wantTotal int
		wantFirst a2a.TaskID
	}{
		{name: "all", q: Query{Tenant: "t", PageSize: 50}, wantTotal: 30, wantFirst: "task-29"},
		{name: "context", q: Query{Tenant: "t", ContextID: "c1", PageSize: 50}, wantTotal: 10, wantFirst: "task-28"},
		{name: "state", q: Query{Tenant: "t", State: a2a.TaskStateCompleted, PageSize: 50}, wantTotal: 15, wantFirst: "task-28"},
		{name: "after is inclusive", q: Query{Tenant: "t", After: &after, PageSize: 50}, wantTotal: 10, wantFirst: "task-29"},
		{name: "all filters", q: Query{Tenant: "t", ContextID: "c2", State: a2a.TaskStateWorking, After: &after, PageSize: 50}, wantTotal: 2, wantFirst: "task-29"},
		{name: "other tenant", q: Query{Tenant: "other", PageSize: 50}, wantTotal: 1, wantFirst: "foreign"},
		{name: "unknown tenant", q: Query{Tenant: "nobody", PageSize: 50}, wantTotal: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := x.Query(context.Background(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if p.TotalSize != tt.wantTotal || len(p.IDs) != tt.wantTotal {
				t.Fatalf("Query() total=%d ids=%d, want %d", p.TotalSize, len(p.IDs), tt.wantTotal)
			}
			if tt.wantTotal > 0 && p.IDs[0] != tt.wantFirst {
				t.Errorf("first = %s, want %s", p.IDs[0], tt.wantFirst)
			}
			if p.NextPageToken != "" {
				t.Errorf("NextPageToken = %q on the only page, want \"\"", p.NextPageToken)
			}
		})
	}
}

func TestIndexPagination(t *testing.T) {
	x := buildIndex()
	for _, size := range []int{1, 7, 29, 30, 100} {
		t.Run(fmt.Sprint("size", size), func(t *testing.T) {
			seen := map[a2a.TaskID]bool{}
			var prev a2a.TaskID = "task-99"
			token := ""
			pages := 0
			for {
				p, err := x.Query(context.Background(), Query{Tenant: "t", PageSize: size, PageToken: token})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if p.TotalSize != 30 {
					t.Fatalf("TotalSize = %d, want 30", p.TotalSize)
				}
				for _, id := range p.IDs {
					if seen[id] {
						t.Fatalf("%s returned twice", id)
					}
					if id >= prev {
						t.Fatalf("%s after %s: not newest first", id, prev)
					}
					seen[id], prev = true, id
				}
				if p.NextPageToken == "" {
					break
				}
				token = p.NextPageToken
			}
			if len(seen) != 30 || pages != (30+size-1)/size {
				t.Errorf("walked %d tasks in %d pages, want 30 in %d", len(seen), pages, (30+size-1)/size)
			}
		})
	}
	// A task updated while paging moves to the front; the walk still ends.
	p, _ := x.Query(context.Background(), Query{Tenant: "t", PageSize: 10})
	x.Apply(statusEv("t", "task-00", a2a.TaskStateFailed, 5000, t0.Add(time.Hour)))
	p2, err := x.Query(context.Background(), Query{Tenant: "t", PageSize: 10, PageToken: p.NextPageToken})
	if err != nil || len(p2.IDs) != 10 || p2.IDs[0] != "task-19" {
		t.Errorf("page after concurrent update = %v, %v; want 10 ids from task-19", p2.IDs, err)
	}
}

func TestIndexBadToken(t *testing.T) {
	x := buildIndex()
	for _, tok := range []string{"garbage!!", "Zm9v", "MTIzOmEuYg"} {
		if _, err := x.Query(context.Background(), Query{Tenant: "t", PageSize: 5, PageToken: tok}); !errors.Is(err, ErrInvalidPageToken) {
			t.Errorf("Query(token %q) err = %v, want ErrInvalidPageToken", tok, err)
		}
	}
}

func TestIndexApplyOrderDoesNotMatter(t *testing.T) {
	evs := []events.Event{
		createdEv("t", "a", "c", 1, t0),
		statusEv("t", "a", a2a.TaskStateWorking, 2, t0.Add(time.Second)),
		statusEv("t", "a", a2a.TaskStateCompleted, 3, t0.Add(2*time.Second)),
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}} {
		x := readyIndex()
		for _, i := range order {
			x.Apply(evs[i])
		}
		p, err := x.Query(context.Background(), Query{Tenant: "t", State: a2a.TaskStateCompleted, ContextID: "c", PageSize: 5})
		if err != nil || p.TotalSize != 1 {
			t.Errorf("order %v: COMPLETED in c = %d (%v), want 1", order, p.TotalSize, err)
		}
	}
}

func TestIndexWaitsUntilLoaded(t *testing.T) {
	x := NewIndex()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := x.Query(ctx, Query{Tenant: "t", PageSize: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("Query before Load: err = %v, want context.Canceled", err)
	}
}
