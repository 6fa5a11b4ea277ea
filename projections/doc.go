// Package projections builds read models from the task log: task views
// with a per-edge cache and KV snapshots ([Views]), the live feed of every
// event that wakes waiting requests ([Feed]), and the ListTasks index
// ([Index]). Everything here can be rebuilt from the stream.
//
// # Views
//
// [Views.Load] costs one direct get when the cached view is current: the
// last message on a2a.evt.<tenant>.<task>.> tells the head, and a cached
// view at that head is returned as is. Otherwise the view is caught up from
// the cache, or from the task's snapshot, or from the start, by batched
// direct gets. Views returned are shared and must not be changed: Clone
// before applying events.
//
// Snapshots are written in the background when a task of at least
// [SnapshotMin] events reaches an interrupted or terminal state, and every
// [SnapshotEvery] events; a lost or stale snapshot only costs a longer
// catch-up.
//
// # Feed
//
// One ordered consumer per edge delivers every event appended after the
// edge started, in stream order, on one goroutine. A [Watch] receives the
// events of one task; register it before reading the task's head, and no
// event can slip between the read and the watch. [Feed.Sync] waits until
// the feed has delivered everything appended before the call, which gives
// ListTasks read-your-writes.
//
// # Index
//
// The [Index] keeps, per tenant, each task's context id, state and status
// time. It is loaded at start-up with a last-per-subject consumer over the
// in and st subjects and then fed by the [Feed].
package projections
