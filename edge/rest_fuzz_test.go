package edge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// restSeeds are REST requests: method, path with query, body.
var restSeeds = []struct{ method, target, body string }{
	{"POST", "/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}`},
	{"POST", "/acme/message:send", `{"message":{"message_id":"m2","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"return_immediately":true}}`},
	{"POST", "/message:send", `{"message":`},
	{"POST", "/message:send", ``},
	{"GET", "/tasks?pageSize=7&status=TASK_STATE_WORKING&includeArtifacts=true&historyLength=0", ``},
	{"GET", "/tasks?pageSize=abc&statusTimestampAfter=yesterday", ``},
	{"GET", "/t1/tasks/0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21?historyLength=2", ``},
	{"GET", "/tasks/a.b.%3E", ``},
	{"POST", "/tasks/0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21:cancel", `{"metadata":{"k":1}}`},
	{"GET", "/tasks/0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21:subscribe?lastEventId=x", ``},
	{"POST", "/tasks/x/pushNotificationConfigs", `{"url":"http://127.0.0.1/"}`},
	{"DELETE", "/tasks/x/pushNotificationConfigs/y", ``},
	{"GET", "/extendedAgentCard", ``},
	{"PUT", "/a/b/c/d/e", `[]`},
}

// FuzzREST sends arbitrary REST requests to the edge. Every answer is
// either a JSON success, an SSE stream, or an AIP-193 error body whose
// code equals the HTTP status; nothing panics.
func FuzzREST(f *testing.F) {
	for _, s := range restSeeds {
		f.Add(s.method, s.target, s.body)
	}
	h := newFuzzHandler(f)
	f.Fuzz(func(t *testing.T, method, target, body string) {
		switch method {
		case "GET", "POST", "DELETE", "PUT":
		default:
			return
		}
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \r\n\t#") || len(target) > 2000 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzRequestTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, "http://edge"+target, strings.NewReader(body))
		if err != nil || req.URL.Path == "/" {
			return // not a REST route (the root is JSON-RPC)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkRESTResponse(t, rec)
	})
}

func checkRESTResponse(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 300 && rec.Code < 400 && rec.Header().Get("Location") != "" {
		return // net/http cleaning the path ("/a/./b"): not our answer
	}
	ct := rec.Header().Get("Content-Type")
	if ct == "text/event-stream" {
		if rec.Code != http.StatusOK {
			t.Fatalf("SSE with status %d", rec.Code)
		}
		return
	}
	if ct != "application/json" {
		t.Fatalf("Content-Type=%q, want application/json; status %d body %q", ct, rec.Code, rec.Body.String())
	}
	if rec.Code == http.StatusOK {
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("200 with invalid JSON: %q", rec.Body.String())
		}
		return
	}
	var e struct {
		Error *struct {
			Code    int    `json:"code"`
			Status  string `json:"status"`
			Message string `json:"message"`
			Details []struct {
				Type   string `json:"@type"`
				Reason string `json:"reason"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == nil {
		t.Fatalf("status %d with a body that is not an error: %q", rec.Code, rec.Body.String())
	}
	if e.Error.Code != rec.Code || e.Error.Status == "" || e.Error.Message == "" ||
		len(e.Error.Details) == 0 || e.Error.Details[0].Type != "type.googleapis.com/google.rpc.ErrorInfo" || e.Error.Details[0].Reason == "" {
		t.Fatalf("bad error body for status %d: %s", rec.Code, rec.Body.String())
	}
}

func TestRESTSeeds(t *testing.T) {
	h := newFuzzHandler(t)
	want := []int{200, 200, 400, 400, 200, 400, 404, 404, 404, 400, 400, 400, 400, 404}
	for i, s := range restSeeds {
		ctx, cancel := context.WithTimeout(context.Background(), fuzzRequestTimeout)
		req := httptest.NewRequestWithContext(ctx, s.method, s.target, strings.NewReader(s.body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		cancel()
		checkRESTResponse(t, rec)
		if rec.Code != want[i] {
			t.Errorf("%s %s: status %d, want %d; %s", s.method, s.target, rec.Code, want[i], rec.Body.String())
		}
	}
}
