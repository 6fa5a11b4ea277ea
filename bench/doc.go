// Package bench holds the end-to-end benchmarks of a2abus: blocking
// SendMessage load against a2abus (embedded JetStream, demo agent, JSON-RPC
// edge) and, in the same run, against the a2a-go v2 in-memory server with an
// echo executor. Run them with make bench; the code is in the _test.go files.
package bench
