package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
)

// workerConn connects as the worker user of tenant with the credentials
// file serve wrote. Permission errors the server reports arrive on errs.
func workerConn(t *testing.T, data, tenant string) (*nats.Conn, map[string]string, <-chan error) {
	t.Helper()
	env, err := readEnvFile(filepath.Join(data, credentialsDir, tenant+".env"))
	if err != nil {
		t.Fatalf("credentials of %s: %v", tenant, err)
	}
	errs := make(chan error, 64)
	nc, err := nats.Connect(env[envWorkerURL], nats.UserInfo(env[envWorkerUser], env[envWorkerPassword]),
		nats.CustomInboxPrefix(env[envWorkerInbox]),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case errs <- err:
			default:
			}
		}))
	if err != nil {
		t.Fatalf("connect as worker of %s: %v", tenant, err)
	}
	t.Cleanup(nc.Close)
	return nc, env, errs
}

// wantViolation waits for the server's permission error naming subject.
func wantViolation(t *testing.T, errs <-chan error, subject string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case err := <-errs:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), subject) {
				return
			}
		case <-deadline:
			t.Fatalf("no permissions violation for %s", subject)
		}
	}
}

// TestWorkerCredentials checks the embedded server's users: no anonymous
// or wrong-password connections, and a worker kept to its tenant's work.
func TestWorkerCredentials(t *testing.T) {
	ts := startServer(t, func(c *ServeConfig) { c.WorkerTenants = []string{"acme", "beta"} })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	natsAddr := strings.TrimPrefix(ts.NATSURL[strings.LastIndex(ts.NATSURL, "@")+1:], "nats://")

	if nc, err := nats.Connect("nats://" + natsAddr); err == nil {
		nc.Close()
		t.Fatal("anonymous connection accepted")
	}
	if nc, err := nats.Connect("nats://"+natsAddr, nats.UserInfo(workerUser("acme"), "wrong")); err == nil {
		nc.Close()
		t.Fatal("wrong password accepted")
	}

	// One task in each tenant, served by nobody yet.
	acmeTask := restSend(ctx, t, ts.URL, "/acme", "echo acme", true).ID
	betaTask := restSend(ctx, t, ts.URL, "/beta", "echo beta", true).ID
	admin := connectJS(t, ts.NATSURL)
	betaSubj := events.Subject("beta", betaTask, events.KindStatus)
	before := streamMsgs(ctx, t, admin)

	nc, env, errs := workerConn(t, ts.Data, "acme")
	if env[envWorkerConsumer] != "agent-acme" || env[envWorkerTenant] != "acme" || env[envWorkerStream] != "A2A_EVENTS" {
		t.Fatalf("credentials file = %v", env)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("own work", func(t *testing.T) {
		cons, err := js.Consumer(ctx, "A2A_EVENTS", "agent-acme")
		if err != nil {
			t.Fatalf("bind agent-acme: %v", err)
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for m := range batch.Messages() {
			got = append(got, m.Subject())
			if err := m.Ack(); err != nil {
				t.Fatalf("ack: %v", err)
			}
		}
		if want := events.Subject("acme", acmeTask, events.KindIn); len(got) != 1 || got[0] != want {
			t.Fatalf("fetched %v, want [%s]", got, want)
		}
		last, err := nc.Request("$JS.API.DIRECT.GET.A2A_EVENTS."+events.EventsPrefix+"acme."+string(acmeTask)+".>", nil, 5*time.Second)
		if err != nil || last.Header.Get(jetstream.SequenceHeader) == "" {
			t.Fatalf("direct get of own task: %v %v", err, last)
		}
		sub, err := nc.SubscribeSync(events.Subject("acme", acmeTask, events.KindStatus))
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		card, _ := json.Marshal(a2a.AgentCard{Name: "acme agent", Skills: []a2a.AgentSkill{{ID: "x", Name: "X"}}})
		if _, err := js.Publish(ctx, "$KV.A2A_AGENTS.acme", card); err != nil {
			t.Fatalf("register card: %v", err)
		}
	})

	t.Run("other tenant", func(t *testing.T) {
		// Denied requests get no answer: a short deadline each.
		short := func() context.Context {
			c, cancel := context.WithTimeout(ctx, time.Second)
			t.Cleanup(cancel)
			return c
		}
		if _, err := js.Consumer(short(), "A2A_EVENTS", "agent-beta"); err == nil {
			t.Error("bound agent-beta")
		}
		wantViolation(t, errs, "$JS.API.CONSUMER.INFO.A2A_EVENTS.agent-beta")
		if _, err := js.CreateOrUpdateConsumer(short(), "A2A_EVENTS", jetstream.ConsumerConfig{
			Name: "snoop", FilterSubject: events.EventsPrefix + "beta.>"}); err == nil {
			t.Error("created a consumer on beta's events")
		}
		if _, err := js.CreateOrUpdateConsumer(short(), "A2A_EVENTS", jetstream.ConsumerConfig{
			Name: "snoop2", FilterSubject: events.EventsPrefix + "acme.>"}); err == nil {
			t.Error("created a consumer (its filter could have named any tenant)")
		}
		if m, err := nc.Request("$JS.API.DIRECT.GET.A2A_EVENTS."+events.EventsPrefix+"beta.>", nil, time.Second); err == nil {
			t.Errorf("direct get of beta's events answered: %q", m.Data)
		}
		if m, err := nc.Request("$JS.API.DIRECT.GET.A2A_EVENTS", []byte(`{"seq":1}`), time.Second); err == nil {
			t.Errorf("direct get by sequence answered: %q", m.Data)
		}
		if m, err := nc.Request("$JS.API.DIRECT.GET.A2A_EVENTS."+events.EventsPrefix+"acme.>", []byte(`{"seq":1}`), time.Second); err == nil && len(m.Data) > 0 && m.Header.Get("Status") == "" {
			if strings.Contains(m.Header.Get(jetstream.SubjectHeader), "beta") {
				t.Errorf("direct get with a body read %s", m.Header.Get(jetstream.SubjectHeader))
			}
		}
		if _, err := js.Publish(short(), betaSubj, []byte(`{}`)); err == nil {
			t.Error("published to beta's status subject")
		}
		wantViolation(t, errs, betaSubj)
		if _, err := js.Publish(short(), events.Subject("acme", acmeTask, events.KindIn), []byte(`{}`)); err == nil {
			t.Error("published task input")
		}
		if _, err := js.Publish(short(), "$KV.A2A_AGENTS.beta", []byte(`{"name":"evil"}`)); err == nil {
			t.Error("registered beta's card")
		}
		for _, subj := range []string{events.EventsPrefix + "beta.>", events.EventsPrefix + "acme.*.in", "_INBOX.>", "$JS.EVENT.>"} {
			if _, err := nc.SubscribeSync(subj); err != nil {
				t.Fatal(err)
			}
			wantViolation(t, errs, subj)
		}
	})

	if after := streamMsgs(ctx, t, admin); after != before {
		t.Errorf("events stream went from %d to %d messages; the worker wrote nothing", before, after)
	}

	// The card the acme worker registered is served for acme only.
	waitCard(t, ts.URL+"/acme", "acme agent")
	if name := cardName(t, ts.URL+"/beta"); name == "acme agent" {
		t.Error("beta serves acme's card")
	}
}

// streamMsgs returns the number of messages in the events stream.
func streamMsgs(ctx context.Context, t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	st, err := js.Stream(ctx, "A2A_EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// cardName returns the name of the agent card served under base.
func cardName(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var card a2a.AgentCard
	if err := json.NewDecoder(resp.Body).Decode(&card); err != nil || resp.StatusCode != 200 {
		t.Fatalf("card of %s: status %d, %v", base, resp.StatusCode, err)
	}
	return card.Name
}

// waitCard waits until base serves the card named name.
func waitCard(t *testing.T, base, name string) {
	t.Helper()
	waitFor(t, 10*time.Second, base+" serves the card "+name, func() (bool, error) {
		return cardName(t, base) == name, nil
	})
}
