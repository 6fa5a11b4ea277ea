package main

import (
	"context"
	"iter"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// startA2abus runs a2abus serve (embedded JetStream, demo agent) in this
// process, as the tests do, and returns its URL; it stops at tb's cleanup.
func startA2abus(tb testing.TB) string {
	return startServer(tb, func(c *ServeConfig) { c.LogLevel = "error" }).URL
}

// startA2aGo runs the a2a-go v2 JSON-RPC server with its default in-memory
// task store and [echoExecutor] on 127.0.0.1:0 and returns its base URL; it
// stops at tb's cleanup.
func startA2aGo(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	h := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echoExecutor{}))
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at cleanup
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			tb.Errorf("a2a-go server shutdown: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/"
}

// echoExecutor is the a2a-go counterpart of the a2abus demo echo skill: it
// produces the same four events (the submitted task, WORKING, one artifact
// holding the input's parts, COMPLETED), so both servers return a
// COMPLETED task with one artifact.
type echoExecutor struct{}

func (echoExecutor) Execute(_ context.Context, execCtx *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if execCtx.StoredTask == nil {
			if !yield(a2a.NewSubmittedTask(execCtx, execCtx.Message), nil) {
				return
			}
		}
		if !yield(a2a.NewStatusUpdateEvent(execCtx, a2a.TaskStateWorking, nil), nil) {
			return
		}
		art := a2a.NewArtifactEvent(execCtx, execCtx.Message.Parts...)
		art.Artifact.ID = "echo"
		art.Artifact.Name = "echo"
		art.LastChunk = true
		if !yield(art, nil) {
			return
		}
		yield(a2a.NewStatusUpdateEvent(execCtx, a2a.TaskStateCompleted, nil), nil)
	}
}

func (echoExecutor) Cancel(_ context.Context, execCtx *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(execCtx, a2a.TaskStateCanceled, nil), nil)
	}
}
