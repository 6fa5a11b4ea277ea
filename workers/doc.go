// Package workers is the Go SDK of the a2abus worker protocol, and the
// built-in demo agent written with it.
//
// # Protocol
//
// An agent's work is a durable pull consumer on the in events of its
// tenants (task created, or follow-up input). For each work item a worker:
//
//  1. reads the task from the log; if the task is terminal, or the item is
//     superseded (a later in event exists, or the agent already answered it
//     with an interrupted state), it acks and stops;
//  2. subscribes to the task's status subject, so a cancel or a takeover
//     by another worker reaches it live;
//  3. appends WORKING with a fresh lease (CloudEvents extension a2alease),
//     at the head it read;
//  4. runs the [Handler], whose status and artifact appends chain the head
//     from each PubAck; a head that moved because the client added input is
//     followed, a head that moved because of a cancel or another lease
//     fences the worker ([ErrFenced]) and cancels the handler's context;
//  5. sends +WPI (in progress) every AckWait/2 while the handler runs;
//  6. writes the final or interrupted status and acks.
//
// A worker that dies is redelivered after AckWait to another one, which
// reads the task and continues; the last delivery ([Config.MaxDeliver])
// does not run the handler but fails the task with a reason. A handler
// error or panic fails the task. Stopping a worker naks its work in
// progress so another worker, or this one after a restart, resumes it.
//
// The protocol needs only headers, publish, pull and ack, so any NATS
// client can speak it; docs/worker-protocol.md describes it.
package workers
