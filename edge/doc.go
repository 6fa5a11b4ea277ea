// Package edge is the HTTP edge of a2abus: the A2A JSON-RPC binding, the
// agent card, and the mapping of engine and projection errors to the
// protocol's errors. It holds no task state of its own: commands go to the
// [engine.Engine], reads to the [projections.Views] and [projections.Index],
// and blocking requests wait on the [projections.Feed].
//
// # JSON-RPC
//
// POST / takes one JSON-RPC 2.0 request (no batches) of at most
// [Config.MaxBodyBytes]. Errors are JSON-RPC error objects with HTTP 200:
// -32700 for a body that is not JSON, -32600 for a request that is not a
// JSON-RPC request (wrong "jsonrpc", missing or non-string method, an
// object, array or null id, a batch, an oversized body), -32601 for an
// unknown method, -32602 for bad params, and the A2A codes -32001..-32009
// with a google.rpc.ErrorInfo in data. Params are ProtoJSON: lowerCamelCase
// names, with snake_case names accepted too; unknown fields are ignored.
//
// # Blocking sends
//
// A blocking SendMessage registers a watch on its task before the task's
// event is appended, then folds the events the feed delivers until the task
// is terminal or interrupted. It makes no JetStream request besides the
// idempotency claim and the append, and creates no consumer.
package edge
