// Package engine turns A2A commands into task events: it creates tasks,
// adds client input to them and cancels them, with messageId idempotency,
// and provisions the streams and buckets everything else uses.
//
// # Decide, then append
//
// Each command loads the task's view (through a [Loader]), decides with a
// pure function whether the command is allowed and which event it makes,
// and appends that event at the head it read. If another writer got there
// first ([tasklog.ErrConflict]), it waits a random moment (longer after each
// lost race), loads the view again and decides again, up to
// [Config.MaxConflictRetries] times.
//
// # Idempotency
//
// A client messageId is claimed on a2a.idem.<tenant>.<sha256> in the events
// stream, with a per-message TTL ([Config.IdempotencyTTL]) and an
// expected-last-subject-sequence of 0, before the event is appended. A
// retried request finds the claim and gets the task it named; nothing new
// is written. A claim whose task was never created (a crash between the two
// publishes) is completed by the retry. A follow-up is checked against its
// task before it is claimed, so a refused message writes nothing.
package engine
