package events

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Type is the versioned CloudEvents type of a task event.
type Type string

// The event types of the task log.
const (
	// TypeCreated starts a task. Body: [Created]. Kind [KindIn].
	TypeCreated Type = "a2a.task.created.v1"
	// TypeInput adds a client message to an existing task. Body: [Input].
	// Kind [KindIn].
	TypeInput Type = "a2a.task.input.v1"
	// TypeStatus is a status transition. Body: a2a.TaskStatusUpdateEvent.
	// Kind [KindStatus].
	TypeStatus Type = "a2a.task.status.v1"
	// TypeArtifact is an artifact or artifact chunk. Body:
	// a2a.TaskArtifactUpdateEvent. Kind [KindArtifact].
	TypeArtifact Type = "a2a.task.artifact.v1"
)

// Kind is the last token of an event subject.
type Kind string

// The subject kinds.
const (
	KindIn       Kind = "in"
	KindStatus   Kind = "st"
	KindArtifact Kind = "art"
	KindControl  Kind = "ctl"
)

// Kind returns the subject kind events of type t are published on, or ""
// for an unknown type.
func (t Type) Kind() Kind {
	switch t {
	case TypeCreated, TypeInput:
		return KindIn
	case TypeStatus:
		return KindStatus
	case TypeArtifact:
		return KindArtifact
	}
	return ""
}

// Created is the body of a [TypeCreated] event.
type Created struct {
	// Task is the task as submitted: id, context id, SUBMITTED status with
	// its timestamp, and the first message as its only history entry.
	Task *a2a.Task `json:"task"`
	// Dialect is the protocol version the client used to create the task
	// ("1.0", "0.3", "0.1"); legacy method names shared by several
	// dialects render in it.
	Dialect string `json:"dialect,omitempty"`
}

// Input is the body of a [TypeInput] event.
type Input struct {
	Message *a2a.Message `json:"message"`
}

// Event is one entry of a task's log.
type Event struct {
	// ID is the CloudEvents id, unique per event. Writers that retry a
	// publish reuse it as the Nats-Msg-Id.
	ID string
	// Type says which body the event carries.
	Type   Type
	Tenant string
	TaskID a2a.TaskID
	// Time is when the event was produced.
	Time time.Time
	// Lease identifies the worker attempt that wrote the event, if a
	// worker wrote it (CloudEvents extension "a2alease").
	Lease string
	// Seq is the stream sequence, set when the event was read from the
	// stream; 0 before it is appended.
	Seq uint64
	// Prev is the sequence of the task's event before this one (the head
	// the writer appended at), when read from the stream; 0 for the first
	// event. A reader that finds Prev above the last event it saw knows
	// events of the task are missing (aged out of the stream).
	Prev uint64
	// Body is *Created, *Input, *a2a.TaskStatusUpdateEvent or
	// *a2a.TaskArtifactUpdateEvent, matching Type.
	Body any
}

// DefaultTenant is the tenant of requests that name none.
const DefaultTenant = "default"

// Errors returned by the subject helpers.
var (
	// ErrInvalidTenant is returned for a tenant that is not a valid
	// subject token.
	ErrInvalidTenant = errors.New("invalid tenant")
	// ErrInvalidTaskID is returned for a task id that the server cannot
	// have made; such a task does not exist.
	ErrInvalidTaskID = errors.New("invalid task id")
)

// ValidTenant reports whether s may be used as a tenant: 1 to 64 of
// [A-Za-z0-9_-].
func ValidTenant(s string) bool { return validToken(s, 64) }

// ValidTaskID reports whether id may name a task: 1 to 64 of [A-Za-z0-9_-].
// Task ids are server-made UUIDs, so anything else names no task.
func ValidTaskID(id a2a.TaskID) bool { return validToken(string(id), 64) }

func validToken(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// Subject prefixes.
const (
	// EventsPrefix starts every event subject.
	EventsPrefix = "a2a.evt."
	// AllEvents matches every event subject.
	AllEvents = "a2a.evt.>"
	// IdemPrefix starts every idempotency claim subject.
	IdemPrefix = "a2a.idem."
)

// Subject returns the subject of an event of kind k on a task.
func Subject(tenant string, task a2a.TaskID, k Kind) string {
	return EventsPrefix + tenant + "." + string(task) + "." + string(k)
}

// TaskFilter returns the wildcard subject matching every event of a task.
func TaskFilter(tenant string, task a2a.TaskID) string {
	return EventsPrefix + tenant + "." + string(task) + ".>"
}

// KindFilter returns the wildcard subject matching events of kind k of
// every task of every tenant.
func KindFilter(k Kind) string { return EventsPrefix + "*.*." + string(k) }

// ParseSubject splits an event subject into tenant, task and kind.
func ParseSubject(subj string) (tenant string, task a2a.TaskID, k Kind, err error) {
	rest, ok := strings.CutPrefix(subj, EventsPrefix)
	if !ok {
		return "", "", "", fmt.Errorf("not an event subject: %q", subj)
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return "", "", "", fmt.Errorf("not an event subject: %q", subj)
	}
	return parts[0], a2a.TaskID(parts[1]), Kind(parts[2]), nil
}

// ErrTaskNotFound is returned when a task has no events in the log (or is
// not visible to the caller).
var ErrTaskNotFound = errors.New("task not found")
