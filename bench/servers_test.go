package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/edge"
	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/projections"
	"github.com/a2abus/a2abus/tasklog"
	"github.com/a2abus/a2abus/workers"
)

// startA2abus runs the a2abus stack as cmd/a2abus Serve wires it (embedded
// JetStream in a temporary directory, in-process NATS connection, engine,
// projections, demo agent, JSON-RPC edge) and serves it on 127.0.0.1:0.
// It returns the base URL and a stop function that shuts everything down
// in the order Serve does and removes the data directory.
//
// This duplicates the wiring of cmd/a2abus/serve.go, which package bench
// cannot import (it is package main).
func startA2abus() (url string, stop func(), err error) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stops []func()
	stop = func() {
		cancel()
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
			err = fmt.Errorf("start a2abus: %w", err)
		}
	}()

	dir, err := os.MkdirTemp("", "a2abus-bench-")
	if err != nil {
		return "", nil, err
	}
	stops = append(stops, func() { _ = os.RemoveAll(dir) })
	ns, err := server.NewServer(&server.Options{
		ServerName: "a2abus-bench",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		return "", nil, err
	}
	ns.Start()
	stops = append(stops, func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(30 * time.Second) {
		return "", nil, errors.New("embedded nats not ready after 30s")
	}
	closed := make(chan struct{})
	nc, err := nats.Connect(ns.ClientURL(), nats.InProcessServer(ns), nats.Name("a2abus-edge"),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		return "", nil, err
	}
	stops = append(stops, func() {
		if err := nc.Drain(); err == nil {
			<-closed
		}
	})
	js, err := jetstream.New(nc)
	if err != nil {
		return "", nil, err
	}
	ecfg := engine.DefaultConfig()
	if err := engine.Provision(ctx, js, ecfg); err != nil {
		return "", nil, err
	}
	log := tasklog.New(nc, js, ecfg.EventsStream)
	kv, err := js.KeyValue(ctx, ecfg.SnapshotBucket)
	if err != nil {
		return "", nil, err
	}
	views := projections.NewViews(log, kv, 10000, logger.With("component", "views"))
	stops = append(stops, views.Close)
	index := projections.NewIndex()
	feed, err := projections.StartFeed(ctx, js, log, index, logger.With("component", "feed"))
	if err != nil {
		return "", nil, err
	}
	stops = append(stops, feed.Stop)
	if err := index.Load(ctx, js, ecfg.EventsStream); err != nil {
		return "", nil, err
	}
	eng, err := engine.New(ctx, js, log, views, ecfg, logger.With("component", "engine"))
	if err != nil {
		return "", nil, err
	}
	wcfg := workers.DefaultConfig()
	wcfg.Stream = ecfg.EventsStream
	w, err := workers.New(nc, js, wcfg, workers.Demo, logger.With("component", "demo-agent"))
	if err != nil {
		return "", nil, err
	}
	if err := w.Start(ctx); err != nil {
		return "", nil, err
	}
	stops = append(stops, w.Stop)

	card := a2a.AgentCard{
		Name:                "a2abus bench",
		Version:             "bench",
		SupportedInterfaces: []*a2a.AgentInterface{{ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              workers.DemoSkills(),
	}
	h := edge.New(edge.Config{Card: card, Logger: logger.With("component", "edge")}, eng, views, feed, index)
	url, err = serveHTTP(h, &stops)
	if err != nil {
		return "", nil, err
	}
	return url, stop, nil
}

// startA2aGo runs the a2a-go v2 JSON-RPC server with its default in-memory
// task store and [echoExecutor] on 127.0.0.1:0 and returns its base URL
// and a stop function.
func startA2aGo() (string, func(), error) {
	var stops []func()
	url, err := serveHTTP(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(echoExecutor{})), &stops)
	if err != nil {
		return "", nil, fmt.Errorf("start a2a-go: %w", err)
	}
	return url, stops[0], nil
}

// serveHTTP serves h on 127.0.0.1:0 and appends its shutdown to stops.
func serveHTTP(h http.Handler, stops *[]func()) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	*stops = append(*stops, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String() + "/", nil
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
