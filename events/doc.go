// Package events defines the task events that make up the a2abus log, their
// subjects, their CloudEvents envelope on NATS messages, and the pure fold
// that turns a task's events into a task view.
//
// # Events
//
// Every change to a task is one [Event] appended to the A2A_EVENTS stream on
// the subject a2a.evt.<tenant>.<task>.<kind>, where kind is one of
// [KindIn] (task created, or a follow-up input message), [KindStatus] (a
// status transition; agent messages ride in it), [KindArtifact] (an
// artifact or artifact chunk) and [KindControl] (reserved for control
// events). The stream sequence of the message is the event's id, its SSE id
// and the task's version.
//
// Event types carry a version ([TypeCreated] is "a2a.task.created.v1") so
// that stored events stay readable when the wire protocol moves on. Bodies
// are A2A v1.0 JSON, using the a2a-go v2 a2a types.
//
// # Envelope
//
// [Encode] writes an event as a CloudEvents 1.0 binary-mode message: the
// attributes are NATS headers named ce-<attribute> (lowercase, values
// percent-encoded), the body is the data, and content-type is
// application/json. [Decode] reads one back and validates it as the
// CloudEvents SDK does. Both work on the headers directly: going through
// the sdk-go binding package cost three times as much per event. The tests
// use sdk-go as the oracle: every message Encode writes reads back through
// the SDK's binary-mode reader, and every message the SDK writes decodes.
//
// # Fold
//
// [Apply] folds one event into a [View]. It does no I/O and depends only on
// the view and the event, so it is tested with golden files under testdata/.
// Views held by a cache are shared: callers [View.Clone] before applying
// events to one.
package events
