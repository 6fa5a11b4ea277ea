package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/jwks"
	"github.com/a2abus/a2abus/webhook"
)

// defaultNATSURL is where a2abus serve's embedded NATS listens by default.
const defaultNATSURL = "nats://127.0.0.1:4222"

// connect opens a JetStream connection for a tool command.
func connect(url string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(url, nats.Name("a2abus-tool"), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", redactURL(url), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// toolFlags returns a tool's flag set and its NATS URL: --nats-url, else
// $A2ABUS_NATS_URL, else the admin URL an embedded server wrote to
// <data>/credentials (--data, default ./data), else the default address.
func toolFlags(name string, getenv func(string) string, stderr io.Writer) (*flag.FlagSet, func() string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("nats-url", getenv("A2ABUS_NATS_URL"), "NATS server of the a2abus deployment, with credentials (env A2ABUS_NATS_URL; default: from --data)")
	data := fs.String("data", "./data", "data directory of a2abus serve with embedded NATS, whose admin credentials to use")
	return fs, func() string {
		if *url != "" {
			return *url
		}
		if env, err := readEnvFile(filepath.Join(*data, credentialsDir, adminEnvFile)); err == nil && env[envToolURL] != "" {
			return env[envToolURL]
		}
		return defaultNATSURL
	}
}

// keysMain runs "a2abus keys rotate".
func keysMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprintln(stderr, "usage: a2abus keys rotate [--alg ES256|EdDSA|RS256] [--grace 10m] [--token-ttl 5m] [--nats-url URL]")
		return fmt.Errorf("unknown keys command")
	}
	fs, url := toolFlags("keys rotate", getenv, stderr)
	alg := fs.String("alg", string(jwks.ES256), "algorithm of the new key: ES256, EdDSA or RS256")
	grace := fs.Duration("grace", 10*time.Minute, "how long the new key is published before it signs; longer than receivers cache the JWKS (the edges serve it with max-age 300)")
	ttl := fs.Duration("token-ttl", jwks.DefaultTokenTTL, "lifetime of push tokens (the old key stays published this long after it stops signing); match the servers' --push-token-ttl")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	a, err := jwks.ParseAlg(*alg)
	if err != nil {
		return err
	}
	nc, js, err := connect(url())
	if err != nil {
		return err
	}
	defer nc.Close()
	ring, err := webhook.RotateKeys(ctx, js, a, *grace, *ttl)
	if err != nil {
		return err
	}
	for _, k := range ring.Keys {
		fmt.Fprintln(stdout, k.String())
	}
	return nil
}

// pushMain runs "a2abus push dlq list|redrive".
func pushMain(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	usage := "usage: a2abus push dlq list [--json] | a2abus push dlq redrive [--all | SEQ ...] [--nats-url URL]"
	if len(args) < 2 || args[0] != "dlq" {
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("unknown push command")
	}
	fs, url := toolFlags("push dlq "+args[1], getenv, stderr)
	switch args[1] {
	case "list":
		asJSON := fs.Bool("json", false, "print one JSON object per line")
		if err := fs.Parse(args[2:]); err != nil {
			return err
		}
		nc, js, err := connect(url())
		if err != nil {
			return err
		}
		defer nc.Close()
		dls, err := webhook.ListDeadLetters(ctx, js)
		if err != nil {
			return err
		}
		for _, d := range dls {
			if *asJSON {
				b, err := json.Marshal(struct {
					Seq uint64 `json:"seq"`
					webhook.DeadLetter
				}{d.Seq, d})
				if err != nil {
					return err
				}
				fmt.Fprintln(stdout, string(b))
				continue
			}
			fmt.Fprintf(stdout, "%d\t%s\ttask %s config %s event %d\t%s\tafter %d attempts: %s\n",
				d.Seq, d.At.Format(time.RFC3339), d.TaskID, d.ConfigID, d.EventSeq, d.URL, d.Attempts, d.Error)
		}
		if !*asJSON {
			fmt.Fprintf(stdout, "%d dead letters\n", len(dls))
		}
		return nil
	case "redrive":
		all := fs.Bool("all", false, "redrive every dead letter")
		// Numbers and flags may come in any order.
		var seqs []uint64
		rest := args[2:]
		for {
			if err := fs.Parse(rest); err != nil {
				return err
			}
			if fs.NArg() == 0 {
				break
			}
			a := fs.Arg(0)
			n, err := strconv.ParseUint(a, 10, 64)
			if err != nil {
				return fmt.Errorf("redrive: %q is not a dead letter number (see push dlq list)", a)
			}
			seqs = append(seqs, n)
			rest = fs.Args()[1:]
		}
		if len(seqs) == 0 && !*all {
			fmt.Fprintln(stderr, usage)
			return fmt.Errorf("redrive: name dead letters or pass --all")
		}
		nc, js, err := connect(url())
		if err != nil {
			return err
		}
		defer nc.Close()
		done, err := webhook.Redrive(ctx, js, seqs...)
		for _, d := range done {
			fmt.Fprintf(stdout, "redriven %d: task %s config %s from event %d\n", d.Seq, d.TaskID, d.ConfigID, d.EventSeq)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d redriven\n", len(done))
		return nil
	}
	fmt.Fprintln(stderr, usage)
	return fmt.Errorf("unknown push dlq command %q", args[1])
}
