package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/a2abus/a2abus/workers"
)

// TestTenantCardRoutes: a card registered for a tenant is served under the
// tenant's prefix with the tenant on its interfaces, so the a2a-go client
// built from it sends to that tenant, over JSON-RPC and REST alike.
func TestTenantCardRoutes(t *testing.T) {
	ctx := e2eContext(t)
	ts := startServer(t, nil)
	js := connectJS(t, ts.NATSURL)
	reg := a2a.AgentCard{Name: "Acme agent", Description: "echoes, for acme", Version: "7.1",
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "echoes", Tags: []string{"demo"}}}}
	if err := workers.RegisterCard(ctx, js, "A2A_AGENTS", "acme", reg); err != nil {
		t.Fatal(err)
	}
	waitCard(t, ts.URL+"/acme", "Acme agent")

	card, err := agentcard.NewResolver(&http.Client{Timeout: 10 * time.Second}).Resolve(ctx, ts.URL+"/acme")
	if err != nil {
		t.Fatal(err)
	}
	if card.Version != "7.1" || len(card.Skills) != 1 || card.Skills[0].ID != "echo" || !card.Capabilities.Streaming {
		t.Errorf("tenant card = %+v", card)
	}
	for _, in := range card.SupportedInterfaces {
		if in.Tenant != "acme" {
			t.Errorf("interface %s %s has tenant %q, want acme", in.ProtocolBinding, in.URL, in.Tenant)
		}
	}
	if name := cardName(t, ts.URL); name == "Acme agent" {
		t.Error("the root card is acme's")
	}

	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Destroy() }()
			task, err := sendTask(ctx, c, userText("echo acme"), false)
			if err != nil {
				t.Fatal(err)
			}
			if task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("task %s", task.Status.State)
			}
			// The task is acme's: found under acme, not under the default
			// tenant.
			acme := restGetTask(ctx, t, ts.URL, "/acme", task.ID)
			if acme != http.StatusOK {
				t.Errorf("GET /acme/tasks/%s: %d", task.ID, acme)
			}
			if def := restGetTask(ctx, t, ts.URL, "", task.ID); def != http.StatusNotFound {
				t.Errorf("GET /tasks/%s (default tenant): %d, want 404", task.ID, def)
			}
		})
	}

	// The default tenant's registration describes the root card.
	if err := workers.RegisterCard(ctx, js, "A2A_AGENTS", "default", a2a.AgentCard{Name: "Root agent"}); err != nil {
		t.Fatal(err)
	}
	waitCard(t, ts.URL, "Root agent")
}

// restGetTask returns the HTTP status of GET base+prefix/tasks/id.
func restGetTask(ctx context.Context, t *testing.T, base, prefix string, id a2a.TaskID) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+prefix+"/tasks/"+string(id), nil)
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
