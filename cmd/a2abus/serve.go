package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/edge"
	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/jwks"
	"github.com/a2abus/a2abus/projections"
	"github.com/a2abus/a2abus/tasklog"
	"github.com/a2abus/a2abus/webhook"
	"github.com/a2abus/a2abus/workers"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// ServeConfig is the configuration of a2abus serve.
type ServeConfig struct {
	Data          string
	HTTP          string
	NATSListen    string
	NATSURL       string
	NoDemo        bool
	PublicURL     string
	LogLevel      string
	WorkerAckWait time.Duration
	WorkerMaxDel  int
	WorkerTenants []string
	MaxBody       int64
	ViewCache     int
	MaxAge        time.Duration
	Replicas      int
	SSEKeepAlive  time.Duration
	SSEBuffer     int
	SSEAuthOpen   bool
	NoPush        bool
	PushPrivate   bool
	PushAttempts  int
	PushBackoff   time.Duration
	PushBackoffMx time.Duration
	PushTimeout   time.Duration
	PushAlg       string
	PushTokenTTL  time.Duration

	// OnReady, if set, is called once the server accepts requests, with
	// the HTTP address and the NATS client URL. Tests use it; there is no
	// flag for it.
	OnReady func(httpAddr, natsURL string)
}

func parseServe(args []string, getenv func(string) string, stderr io.Writer) (ServeConfig, error) {
	var c ServeConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Data, "data", "./data", "directory of the embedded JetStream store")
	fs.StringVar(&c.HTTP, "http", "127.0.0.1:8080", "HTTP listen address of the A2A API")
	fs.StringVar(&c.NATSListen, "nats-listen", "127.0.0.1:4222", "client listen address of the embedded NATS server, for external workers")
	fs.StringVar(&c.NATSURL, "nats-url", "", "connect to this NATS/JetStream instead of embedding one")
	fs.BoolVar(&c.NoDemo, "no-demo", false, "do not run the built-in demo agent")
	fs.StringVar(&c.PublicURL, "public-url", "", "URL clients reach the API at, for the agent card (default: from each request's Host)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.WorkerAckWait, "worker-ack-wait", 30*time.Second, "how long a work item may go without an ack or a heartbeat before it is redelivered")
	fs.IntVar(&c.WorkerMaxDel, "worker-max-deliver", workers.DefaultConfig().MaxDeliver, "deliveries of a work item before its task fails")
	fs.Func("worker-tenants", "comma-separated tenants served by external workers: each gets a work queue (consumer agent-<tenant>) and, on the embedded NATS, a user whose credentials are written to <data>/credentials/<tenant>.env; the demo agent leaves them alone", func(v string) error {
		c.WorkerTenants = nil
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			if !events.ValidTenant(t) {
				return fmt.Errorf("invalid tenant %q: 1 to 64 of [A-Za-z0-9_-]", t)
			}
			if !slices.Contains(c.WorkerTenants, t) {
				c.WorkerTenants = append(c.WorkerTenants, t)
			}
		}
		return nil
	})
	fs.Int64Var(&c.MaxBody, "max-body", edge.DefaultMaxBodyBytes, "maximum request body in bytes")
	fs.IntVar(&c.ViewCache, "view-cache", 10000, "task views cached per edge")
	fs.DurationVar(&c.MaxAge, "max-age", 0, "how long events are kept (0: forever)")
	fs.IntVar(&c.Replicas, "replicas", 1, "stream replicas (3 on a NATS cluster)")
	fs.DurationVar(&c.SSEKeepAlive, "sse-keepalive", edge.DefaultKeepAlive, "how often an idle SSE stream gets a keep-alive comment")
	fs.IntVar(&c.SSEBuffer, "sse-buffer", edge.DefaultStreamBuffer, "events an SSE stream may fall behind before it is cut off (the client resumes with Last-Event-ID)")
	fs.BoolVar(&c.SSEAuthOpen, "sse-keep-open-on-auth-required", false, "keep streams open through AUTH_REQUIRED instead of closing them")
	dp := webhook.DefaultConfig()
	fs.BoolVar(&c.NoPush, "no-push", false, "turn push notifications off")
	fs.BoolVar(&c.PushPrivate, "push-allow-private", false, "let webhooks target loopback, private and link-local addresses (local development and tests only)")
	fs.IntVar(&c.PushAttempts, "push-max-attempts", dp.MaxAttempts, "attempts per push delivery before it is dead-lettered")
	fs.DurationVar(&c.PushBackoff, "push-backoff-base", dp.BackoffBase, "wait after the first failed push attempt; doubles each attempt")
	fs.DurationVar(&c.PushBackoffMx, "push-backoff-max", dp.BackoffMax, "longest wait between push attempts")
	fs.DurationVar(&c.PushTimeout, "push-timeout", dp.Timeout, "timeout of one push POST")
	fs.StringVar(&c.PushAlg, "push-alg", string(jwks.ES256), "algorithm of the first signing key: ES256, EdDSA or RS256")
	fs.DurationVar(&c.PushTokenTTL, "push-token-ttl", jwks.DefaultTokenTTL, "lifetime of push JWTs")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: a2abus serve [flags]\n\nEvery flag can also be set as A2ABUS_<FLAG> in the environment\n(upper case, dashes as underscores: A2ABUS_HTTP, A2ABUS_NATS_URL).\nFlags on the command line win.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	envErrs := map[string]error{}
	fs.VisitAll(func(f *flag.Flag) {
		name := "A2ABUS_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" {
			if err := f.Value.Set(v); err != nil {
				envErrs[f.Name] = fmt.Errorf("%s=%q: %w", name, v, err)
			}
		}
	})
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	// A bad environment value only matters if the command line did not
	// set the flag.
	fs.Visit(func(f *flag.Flag) { delete(envErrs, f.Name) })
	if len(envErrs) > 0 {
		return c, envErrs[slices.Min(slices.Collect(maps.Keys(envErrs)))]
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	return c, nil
}

// Serve runs the server until ctx ends, then shuts down in order: HTTP,
// push deliveries and the key ring watch, the demo worker, the feed, the
// snapshot writer, the NATS connection (drained), and last the embedded
// NATS server. (The deferred calls below run in that order.)
func Serve(ctx context.Context, c ServeConfig, logw io.Writer) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: level}))

	var ns *server.Server
	var nc *nats.Conn
	var err error
	closed := make(chan struct{})
	onClosed := nats.ClosedHandler(func(*nats.Conn) { close(closed) })
	ecfg := engine.DefaultConfig()
	ecfg.MaxAge = c.MaxAge
	ecfg.Replicas = c.Replicas
	var creds *credentials
	if c.NATSURL == "" {
		if creds, err = loadCredentials(c.Data, c.WorkerTenants); err != nil {
			return err
		}
		ns, err = startNATS(c, creds.users(ecfg.EventsStream, ecfg.AgentsBucket), logger)
		if err != nil {
			return err
		}
		defer func() {
			ns.Shutdown()
			ns.WaitForShutdown()
			logger.Info("nats server stopped")
		}()
		if err := creds.write(ns.ClientURL(), ecfg.EventsStream); err != nil {
			return err
		}
		nc, err = nats.Connect(ns.ClientURL(), nats.InProcessServer(ns), nats.Name("a2abus-edge"),
			nats.UserInfo(adminUser, creds.adminPassword), onClosed)
	} else {
		nc, err = nats.Connect(c.NATSURL, nats.Name("a2abus-edge"), nats.MaxReconnects(-1), onClosed)
	}
	if err != nil {
		return fmt.Errorf("connect to nats: %w", err)
	}
	defer func() {
		if err := nc.Drain(); err != nil {
			logger.Warn("drain nats connection", "err", err)
		}
		<-closed
	}()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if err := engine.Provision(ctx, js, ecfg); err != nil {
		return err
	}
	for _, t := range c.WorkerTenants {
		acfg := workers.AgentConfig(ecfg.EventsStream, t)
		acfg.AckWait, acfg.MaxDeliver = c.WorkerAckWait, c.WorkerMaxDel
		if _, err := workers.Provision(ctx, js, acfg); err != nil {
			return err
		}
	}
	exhausted, err := workers.WatchExhausted(ctx, nc, js, ecfg.EventsStream, logger.With("component", "exhausted"))
	if err != nil {
		return err
	}
	defer exhausted.Stop()
	agents, err := projections.WatchAgents(ctx, js, ecfg.AgentsBucket, logger.With("component", "agents"))
	if err != nil {
		return err
	}
	defer agents.Stop()
	log := tasklog.New(nc, js, ecfg.EventsStream)
	kv, err := js.KeyValue(ctx, ecfg.SnapshotBucket)
	if err != nil {
		return err
	}
	views := projections.NewViews(log, kv, c.ViewCache, logger.With("component", "views"))
	defer views.Close()
	index := projections.NewIndex()
	feed, err := projections.StartFeed(ctx, js, log, index, logger.With("component", "feed"))
	if err != nil {
		return err
	}
	defer feed.Stop()
	if err := index.Load(ctx, js, ecfg.EventsStream); err != nil {
		return err
	}
	eng, err := engine.New(ctx, js, log, views, ecfg, logger.With("component", "engine"))
	if err != nil {
		return err
	}
	if !c.NoDemo {
		wcfg := workers.DefaultConfig()
		wcfg.Stream = ecfg.EventsStream
		wcfg.AckWait, wcfg.MaxDeliver = c.WorkerAckWait, c.WorkerMaxDel
		wcfg.Except = c.WorkerTenants
		w, err := workers.New(nc, js, wcfg, workers.Demo, logger.With("component", "demo-agent"))
		if err != nil {
			return err
		}
		if err := w.Start(ctx); err != nil {
			return err
		}
		defer w.Stop()
	}

	ln, err := net.Listen("tcp", c.HTTP)
	if err != nil {
		return fmt.Errorf("listen http: %w", err)
	}
	var push *edge.Push
	if !c.NoPush {
		issuer := c.PublicURL
		if issuer == "" {
			issuer = "http://" + ln.Addr().String() + "/"
		}
		stop, p, err := startPush(ctx, c, js, log, issuer, logger)
		if err != nil {
			ln.Close()
			return err
		}
		defer stop()
		push = p
	}
	card := demoCard(c.PublicURL, !c.NoDemo)
	card.Capabilities.PushNotifications = push != nil
	h := edge.New(edge.Config{
		Card:                   card,
		Agents:                 agents,
		MaxBodyBytes:           c.MaxBody,
		Logger:                 logger.With("component", "edge"),
		KeepAlive:              c.SSEKeepAlive,
		StreamBuffer:           c.SSEBuffer,
		KeepOpenOnAuthRequired: c.SSEAuthOpen,
	}, eng, views, feed, index, push)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	logger.Info("http listening", "addr", ln.Addr().String(), "version", Version)
	natsURL, clientURL := c.NATSURL, c.NATSURL
	if ns != nil {
		natsURL, clientURL = ns.ClientURL(), creds.adminURL(ns.ClientURL())
		logger.Info("nats credentials", "dir", creds.dir, "worker_tenants", strings.Join(c.WorkerTenants, ","))
	}
	logger.Info("ready", "nats", redactURL(natsURL))
	if c.OnReady != nil {
		c.OnReady(ln.Addr().String(), clientURL)
	}

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("http shutdown", "err", err)
	}
	return nil
}

// startPush provisions the push streams, loads the key ring and starts the
// pusher. stop undoes it in order: pusher, then the ring watch.
func startPush(ctx context.Context, c ServeConfig, js jetstream.JetStream, log *tasklog.Log, issuer string, logger *slog.Logger) (stop func(), p *edge.Push, err error) {
	alg, err := jwks.ParseAlg(c.PushAlg)
	if err != nil {
		return nil, nil, fmt.Errorf("--push-alg: %w", err)
	}
	if err := webhook.Provision(ctx, js, c.Replicas); err != nil {
		return nil, nil, err
	}
	signer := jwks.NewSigner(issuer, c.PushTokenTTL)
	keys, err := webhook.OpenKeys(ctx, js, signer, alg, logger.With("component", "keys"))
	if err != nil {
		return nil, nil, err
	}
	guard := webhook.Guard{AllowPrivate: c.PushPrivate}
	store, err := webhook.NewStore(ctx, js, log, guard)
	if err != nil {
		keys.Close()
		return nil, nil, err
	}
	pcfg := webhook.DefaultConfig()
	pcfg.MaxAttempts, pcfg.BackoffBase, pcfg.BackoffMax, pcfg.Timeout = c.PushAttempts, c.PushBackoff, c.PushBackoffMx, c.PushTimeout
	pcfg.Body = edge.PushBody
	pcfg.Lease = max(pcfg.Lease, 3*c.PushTimeout)
	pusher, err := webhook.NewPusher(ctx, js, log, store, signer, guard, pcfg, logger.With("component", "push"))
	if err == nil {
		err = pusher.Start(ctx)
	}
	if err != nil {
		keys.Close()
		return nil, nil, err
	}
	return func() { pusher.Stop(); keys.Close() }, &edge.Push{Store: store, Signer: signer}, nil
}

// redactURL hides a URL's password, for logs.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return s
}

func startNATS(c ServeConfig, users []*server.User, logger *slog.Logger) (*server.Server, error) {
	host, portStr, err := net.SplitHostPort(c.NATSListen)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen: %w", err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen: %w", err)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	if err := os.MkdirAll(c.Data, 0o755); err != nil {
		return nil, fmt.Errorf("--data: %w", err)
	}
	ns, err := server.NewServer(&server.Options{
		ServerName: "a2abus",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   filepath.Join(c.Data, "jetstream"),
		NoSigs:     true,
		Users:      users,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("embedded nats: not ready after 30s")
	}
	logger.Info("nats listening", "url", ns.ClientURL(), "store", filepath.Join(c.Data, "jetstream"))
	return ns, nil
}

func demoCard(publicURL string, demo bool) a2a.AgentCard {
	card := a2a.AgentCard{
		Name:        "a2abus",
		Description: "A durable A2A server on NATS JetStream.",
		Version:     Version,
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: publicURL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
			{URL: publicURL, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version},
		},
		Provider:           &a2a.AgentProvider{Org: "a2abus", URL: "https://github.com/a2abus/a2abus"},
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{},
	}
	if demo {
		card.Name = "a2abus demo agent"
		card.Description = "The a2abus demo agent: echo, ask (multi-turn) and slow (durable long-running) skills on a durable A2A server on NATS JetStream."
		card.Skills = workers.DemoSkills()
	}
	return card
}
