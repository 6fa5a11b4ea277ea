// Package natstest runs a real nats-server with JetStream inside a test
// process. Tests use it instead of mocks: acks, redelivery and
// expected-last-sequence checks behave exactly as in production.
package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Options tune [Run]. The zero value starts a fresh server on a random
// loopback port with its store under t.TempDir().
type Options struct {
	// StoreDir is the JetStream store directory. Empty means t.TempDir().
	// Pass the same directory to a second Run to simulate a restart.
	StoreDir string
	// Port is the client port; 0 picks a free one.
	Port int
}

// Run starts an embedded nats-server with JetStream and registers its
// shutdown with t.Cleanup. It fails the test if the server does not become
// ready within ten seconds.
func Run(t testing.TB, opts Options) *server.Server {
	t.Helper()
	dir := opts.StoreDir
	if dir == "" {
		dir = t.TempDir()
	}
	port := opts.Port
	if port == 0 {
		port = -1
	}
	s, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      port,
		JetStream: true,
		StoreDir:  dir,
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		t.Fatalf("natstest: new server: %v", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatalf("natstest: server not ready after 10s")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

// Connect opens a client connection to s and a JetStream context on it,
// both closed by t.Cleanup.
func Connect(t testing.TB, s *server.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatalf("natstest: connect: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("natstest: jetstream: %v", err)
	}
	return nc, js
}
