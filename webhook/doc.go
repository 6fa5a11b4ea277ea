// Package webhook delivers push notifications: it stores push configs,
// turns task status events into deliveries, POSTs them signed with the
// shared key ring, retries with backoff, dead-letters what cannot be
// delivered, and keeps webhooks away from internal addresses ([Guard]).
//
// # Durability and order
//
// Every status event of a task with push configs puts a wake-up for each
// (task, config) on the A2A_PUSH work queue (at most one pending per
// pair). The wake-up carries no payload that matters: the deliverer reads
// the task's status events after the pair's delivery cursor (kept in the
// A2A_PUSHSTATE bucket) and POSTs them one by one, in order, advancing the
// cursor after each success. So every status is delivered, in order,
// exactly once per successful POST, none is coalesced, and a server killed
// at any point resumes from the cursor. The cursor carries a lease, so
// only one deliverer (on any edge) works on a pair at a time, and a
// receiver never gets an older state after a newer one.
//
// # Retries
//
// 5xx, 408, 429, timeouts and connection errors are retried with
// exponential backoff and jitter ([Config.Backoff]); after
// [Config.MaxAttempts] attempts, or at once on another 4xx, a redirect, or
// a refused target, the delivery goes to the A2A_PUSH_DLQ stream and the
// pair stops until it is redriven ([Redrive]); later statuses wait in the
// log, so a redrive delivers them all, still in order.
//
// # What is sent
//
// POST <url> with Content-Type application/json and a v1.0 StreamResponse
// body: {"statusUpdate": …} for each status, and {"task": …} (the whole
// task, with artifacts) for the final one. Authorization carries
// "Bearer <JWT>" (see package jwks); if the config has its own
// authentication, Authorization carries that ("<scheme> <credentials>")
// and the JWT moves to the A2A-Push-Signature header. The config's token
// is sent as X-A2A-Notification-Token and A2A-Notification-Token.
// Redirects are not followed.
package webhook
