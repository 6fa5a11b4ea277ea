package events

import (
	"maps"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// View is a task folded from its events.
//
// Its JSON form is the snapshot stored in the A2A_SNAP bucket and the
// golden files of the fold tests.
type View struct {
	Tenant string `json:"tenant"`
	// Task is the A2A view of the task: status, full history and artifacts.
	Task a2a.Task `json:"task"`
	// Seq is the stream sequence of the last event folded in: the task's
	// head and version. 0 means no event has been folded.
	Seq uint64 `json:"seq"`
	// Lease is the lease of the worker attempt that last moved the task
	// to WORKING; a worker whose lease differs has been superseded.
	Lease string `json:"lease,omitempty"`
	// Dialect is the protocol version the task was created with.
	Dialect string `json:"dialect,omitempty"`
	// StatusSeq is the sequence of the last status event (or of the
	// created event, before any status event).
	StatusSeq uint64 `json:"statusSeq"`
	// InSeq is the sequence of the last in event (created or input).
	InSeq uint64 `json:"inSeq"`
	// Events counts the events folded into the view.
	Events int `json:"events"`
}

// Terminal reports whether the task is in a terminal state.
func (v *View) Terminal() bool { return v.Task.Status.State.Terminal() }

// Interrupted reports whether the task waits for the client
// (INPUT_REQUIRED or AUTH_REQUIRED).
func (v *View) Interrupted() bool { return Interrupted(v.Task.Status.State) }

// Interrupted reports whether s is INPUT_REQUIRED or AUTH_REQUIRED.
func Interrupted(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// Clone returns a copy of v that [Apply] may change without changing v.
// Messages and parts are immutable and shared; slices and artifacts are
// copied.
func (v *View) Clone() *View {
	c := *v
	c.Task.History = slices.Clip(v.Task.History)
	if v.Task.Artifacts != nil {
		c.Task.Artifacts = make([]*a2a.Artifact, len(v.Task.Artifacts))
		for i, a := range v.Task.Artifacts {
			ac := *a
			ac.Parts = slices.Clip(a.Parts)
			c.Task.Artifacts[i] = &ac
		}
	}
	return &c
}

// Apply folds ev into v. Events of another task, and events at or below
// v.Seq (already folded), leave v unchanged; Apply reports whether it
// changed v. It does no I/O.
//
// The rules:
//   - created: the task as submitted becomes the view;
//   - input: the message joins the history;
//   - status: the status replaces the current one, and its message, if
//     any, joins the history; a WORKING status records the writer's lease;
//   - artifact: append=true adds the parts (and any new name, description
//     or metadata) to the artifact with the same id, or starts it; otherwise
//     the artifact replaces the one with the same id, or is added.
func Apply(v *View, ev Event) bool {
	if ev.Seq != 0 && ev.Seq <= v.Seq {
		return false
	}
	if v.Seq != 0 && ev.TaskID != v.Task.ID {
		return false
	}
	if v.Seq == 0 && ev.Type != TypeCreated {
		// The task's first events have aged out of the stream: start from
		// what the event tells.
		v.Tenant, v.Task.ID = ev.Tenant, ev.TaskID
		// Only a working task's worker writes artifacts; a client adds
		// input only to a task that has not ended.
		switch b := ev.Body.(type) {
		case *a2a.TaskStatusUpdateEvent:
			v.Task.ContextID = b.ContextID
		case *a2a.TaskArtifactUpdateEvent:
			v.Task.ContextID = b.ContextID
			v.Task.Status = a2a.TaskStatus{State: a2a.TaskStateWorking}
		case *Input:
			v.Task.ContextID = b.Message.ContextID
			v.Task.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted}
		}
	}
	switch b := ev.Body.(type) {
	case *Created:
		v.Tenant = ev.Tenant
		v.Task = *b.Task
		v.Task.History = slices.Clip(b.Task.History)
		v.Task.Artifacts = nil
		v.Dialect = b.Dialect
		v.StatusSeq = ev.Seq
		v.InSeq = ev.Seq
	case *Input:
		v.Task.History = append(v.Task.History, b.Message)
		v.InSeq = ev.Seq
	case *a2a.TaskStatusUpdateEvent:
		v.Task.Status = b.Status
		if b.Status.Message != nil {
			v.Task.History = append(v.Task.History, b.Status.Message)
		}
		if b.Status.State == a2a.TaskStateWorking && ev.Lease != "" {
			v.Lease = ev.Lease
		}
		v.StatusSeq = ev.Seq
	case *a2a.TaskArtifactUpdateEvent:
		applyArtifact(v, b)
	default:
		return false
	}
	v.Seq = ev.Seq
	v.Events++
	return true
}

func applyArtifact(v *View, e *a2a.TaskArtifactUpdateEvent) {
	i := slices.IndexFunc(v.Task.Artifacts, func(a *a2a.Artifact) bool { return a.ID == e.Artifact.ID })
	if i < 0 {
		a := *e.Artifact
		a.Parts = slices.Clip(e.Artifact.Parts)
		v.Task.Artifacts = append(v.Task.Artifacts, &a)
		return
	}
	if !e.Append {
		a := *e.Artifact
		a.Parts = slices.Clip(e.Artifact.Parts)
		v.Task.Artifacts[i] = &a
		return
	}
	a := v.Task.Artifacts[i]
	a.Parts = append(a.Parts, e.Artifact.Parts...)
	if e.Artifact.Name != "" {
		a.Name = e.Artifact.Name
	}
	if e.Artifact.Description != "" {
		a.Description = e.Artifact.Description
	}
	if len(e.Artifact.Metadata) > 0 {
		// The map may be shared with the view this one was cloned from.
		m := maps.Clone(a.Metadata)
		if m == nil {
			m = map[string]any{}
		}
		maps.Copy(m, e.Artifact.Metadata)
		a.Metadata = m
	}
}
