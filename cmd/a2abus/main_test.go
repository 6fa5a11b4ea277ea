package main

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testServer is a running a2abus serve for a test.
type testServer struct {
	URL     string // http://127.0.0.1:port
	NATSURL string
	Data    string
	stop    func()
}

// Stop shuts the server down and waits until it has.
func (s *testServer) Stop() { s.stop() }

// startServer runs Serve on random ports with a temporary data directory
// (or cfg.Data if set) and waits until it is ready. Extra configuration
// comes from edit. The server stops at test cleanup.
func startServer(t testing.TB, edit func(*ServeConfig)) *testServer {
	t.Helper()
	cfg, err := parseServe(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Data = t.TempDir()
	cfg.HTTP = "127.0.0.1:0"
	cfg.NATSListen = "127.0.0.1:0"
	cfg.LogLevel = "warn"
	if edit != nil {
		edit(&cfg)
	}
	type addrs struct{ http, nats string }
	ready := make(chan addrs, 1)
	cfg.OnReady = func(h, n string) { ready <- addrs{h, n} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logw io.Writer = io.Discard
	if testing.Verbose() {
		logw = os.Stderr
	}
	go func() { done <- Serve(ctx, cfg, logw) }()
	var a addrs
	select {
	case a = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("serve exited before ready: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("serve not ready after 30s")
	}
	stopped := false
	s := &testServer{URL: "http://" + a.http, NATSURL: a.nats, Data: cfg.Data}
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop within 30s")
		}
	}
	t.Cleanup(s.Stop)
	return s
}

// connectJS connects to a server's NATS and returns its JetStream
// context; the connection closes at cleanup.
func connectJS(t testing.TB, natsURL string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(natsURL, nats.Name("a2abus-test"))
	if err != nil {
		t.Fatalf("nats.Connect(%s): %v", natsURL, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
