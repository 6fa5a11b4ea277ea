// Command a2abus is the a2abus server and its tools.
//
//	a2abus serve [flags]          run an edge (with embedded NATS and the demo agent by default)
//	a2abus keys rotate [flags]    rotate the push signing key
//	a2abus push dlq list|redrive  inspect and resend dead-lettered push deliveries
//
// Every flag of serve can also be set in the environment as A2ABUS_<FLAG>,
// upper case with dashes as underscores (A2ABUS_HTTP, A2ABUS_NATS_URL).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "a2abus:", err)
		os.Exit(1)
	}
}

// Main runs the command line args until ctx ends.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return fmt.Errorf("no command")
	}
	switch args[0] {
	case "serve":
		cfg, err := parseServe(args[1:], getenv, stderr)
		if err != nil {
			return err
		}
		return Serve(ctx, cfg, stderr)
	case "keys":
		return keysMain(ctx, args[1:], getenv, stdout, stderr)
	case "push":
		return pushMain(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help":
		usage(stdout)
		return nil
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprint(w, `a2abus: an A2A server on NATS JetStream

Usage:
  a2abus serve [flags]                  run the server; a2abus serve --help lists the flags
  a2abus keys rotate [flags]            add a new push signing key (published now, signing after --grace)
  a2abus push dlq list [--json]         show push deliveries that failed for good
  a2abus push dlq redrive [--all|SEQ…]  resend them (the task's later statuses follow, in order)

Tool commands reach the deployment at --nats-url (default nats://127.0.0.1:4222, env A2ABUS_NATS_URL).
`)
}
