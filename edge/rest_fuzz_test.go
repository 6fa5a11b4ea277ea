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
	// The v0.3 binding under /v1/.
	{"POST", "/v1/message:send", `{"message":{"messageId":"m3","role":"ROLE_USER","content":[{"text":"hi"}]},"configuration":{}}`},
	{"POST", "/v1/message:send", `{"request":{"message_id":"m4","role":1,"parts":[{"file":{"file_with_bytes":"aGk","mime_type":"text/plain"}},{"data":{"data":{"k":[1]}}}]},"configuration":{"blocking":false}}`},
	{"POST", "/v1/message:stream", `{"message":`},
	{"GET", "/v1/tasks/0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21?historyLength=2", ``},
	{"GET", "/v1/tasks?status=TASK_STATE_CANCELLED&pageSize=3&lastUpdatedTime=2025-01-01T00:00:00Z", ``},
	{"POST", "/v1/tasks/x:cancel", `{"name":"tasks/y"}`},
	{"GET", "/v1/tasks/x:subscribe?lastEventId=x", ``},
	{"POST", "/v1/tasks/x/pushNotificationConfigs", `{"parent":"tasks/x","config":{"pushNotificationConfig":{"url":"http://127.0.0.1/"}}}`},
	{"DELETE", "/v1/tasks/x/pushNotificationConfigs/y", ``},
	{"GET", "/v1/card", ``},
	{"PUT", "/v1/tasks/x", `{}`},
	{"GET", "/v1/tasks/%2E%2E/x", ``},
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
		checkV03RESTResponse(t, req, rec)
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

// checkV03RESTResponse checks what the v0.3 binding adds to an error of
// a /v1/ path: a2a-python 0.3's "message", the same as error.message.
func checkV03RESTResponse(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/v1/") || rec.Code < 400 {
		return
	}
	var e struct {
		Message *string `json:"message"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Message == nil || *e.Message != e.Error.Message {
		t.Fatalf("v0.3 error body for status %d: %s, want \"message\" equal to error.message", rec.Code, rec.Body.String())
	}
}

func TestRESTSeeds(t *testing.T) {
	h := newFuzzHandler(t)
	want := []int{200, 200, 400, 400, 200, 400, 404, 404, 404, 400, 400, 400, 400, 404,
		200, 200, 400, 404, 200, 422, 422, 501, 501, 200, 405, 404}
	for i, s := range restSeeds {
		ctx, cancel := context.WithTimeout(context.Background(), fuzzRequestTimeout)
		req := httptest.NewRequestWithContext(ctx, s.method, s.target, strings.NewReader(s.body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		cancel()
		checkRESTResponse(t, rec)
		checkV03RESTResponse(t, req, rec)
		if rec.Code != want[i] {
			t.Errorf("%s %s: status %d, want %d; %s", s.method, s.target, rec.Code, want[i], rec.Body.String())
		}
	}
}
