package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/events"
)

// Tests of the v1.0 HTTP+JSON binding (edge/rest.go): the a2a-go client
// over its REST transport, the AIP-193 error bodies, the /{tenant}
// prefix, SSE resume with bare StreamResponse frames, and one engine
// behind both bindings.

// restTimeout bounds each REST test; they run in a few seconds.
const restTimeout = 60 * time.Second

func restContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), restTimeout)
	t.Cleanup(cancel)
	return ctx
}

// ---- raw HTTP ----

// restReply is a raw HTTP answer.
type restReply struct {
	status int
	header http.Header
	body   []byte
}

func (r restReply) String() string {
	return fmt.Sprintf("HTTP %d %q %s", r.status, r.header.Get("Content-Type"), truncateText(string(r.body), 300))
}

// restDo sends one request to base+path. A body gets Content-Type
// application/json, and every request A2A-Version 1.0, unless hdr says
// otherwise. It does not touch t.
func restDo(ctx context.Context, method, base, path, body string, hdr map[string]string) (restReply, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return restReply{}, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("A2A-Version", "1.0")
	setHeaders(req, hdr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return restReply{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return restReply{}, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	return restReply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// setHeaders sets the headers hdr on req; an empty value removes the
// header.
func setHeaders(req *http.Request, hdr map[string]string) {
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
}

func mustREST(ctx context.Context, t testing.TB, method, base, path, body string, hdr map[string]string) restReply {
	t.Helper()
	r, err := restDo(ctx, method, base, path, body, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// restOK sends a request that must succeed (200, application/json) and
// decodes the body into out.
func restOK(ctx context.Context, t testing.TB, method, base, path, body string, out any) {
	t.Helper()
	r := mustREST(ctx, t, method, base, path, body, nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %s: %v, want 200 application/json", method, path, r)
	}
	if out == nil {
		return
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		t.Fatalf("%s %s: decode %s: %v", method, path, truncateText(string(r.body), 300), err)
	}
}

// restSendBody is a SendMessageRequest body for text.
func restSendBody(t testing.TB, text string, immediate bool) string {
	t.Helper()
	req := &a2a.SendMessageRequest{Message: userText(text)}
	if immediate {
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	}
	return jsonOf(t, req)
}

// restSend posts text to base+prefix+"/message:send" and returns the task.
func restSend(ctx context.Context, t testing.TB, base, prefix, text string, immediate bool) *a2a.Task {
	t.Helper()
	var sr a2a.StreamResponse
	restOK(ctx, t, http.MethodPost, base, prefix+"/message:send", restSendBody(t, text, immediate), &sr)
	task, ok := sr.Event.(*a2a.Task)
	if !ok {
		t.Fatalf("POST %s/message:send %q: result %T, want a task", prefix, text, sr.Event)
	}
	return task
}

// restErrorJSON is the AIP-193 error body.
type restErrorJSON struct {
	Error *struct {
		Code    int    `json:"code"`
		Status  string `json:"status"`
		Message string `json:"message"`
		Details []struct {
			Type     string            `json:"@type"`
			Reason   string            `json:"reason"`
			Domain   string            `json:"domain"`
			Metadata map[string]string `json:"metadata"`
		} `json:"details"`
	} `json:"error"`
}

// checkRESTError checks that r is the AIP-193 error with HTTP status
// code, google.rpc code name status and ErrorInfo reason (and, if taskID
// is set, metadata.taskId).
func checkRESTError(t testing.TB, what string, r restReply, code int, status, reason, taskID string) {
	t.Helper()
	if r.status != code {
		t.Errorf("%s: %v, want HTTP %d", what, r, code)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &top); err != nil {
		t.Fatalf("%s: body %s is not a JSON object: %v", what, truncateText(string(r.body), 300), err)
	}
	if len(top) != 1 || top["error"] == nil {
		t.Errorf("%s: body %s, want exactly {\"error\":{…}}", what, truncateText(string(r.body), 300))
	}
	var e restErrorJSON
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == nil {
		t.Fatalf("%s: body %s: %v, want an error object", what, truncateText(string(r.body), 300), err)
	}
	if e.Error.Code != r.status || e.Error.Code != code {
		t.Errorf("%s: error.code %d, want %d (the HTTP status %d)", what, e.Error.Code, code, r.status)
	}
	if e.Error.Status != status {
		t.Errorf("%s: error.status %q, want %q", what, e.Error.Status, status)
	}
	if e.Error.Message == "" {
		t.Errorf("%s: error without a message: %s", what, r.body)
	}
	if len(e.Error.Details) != 1 {
		t.Fatalf("%s: error.details %d entries, want one ErrorInfo: %s", what, len(e.Error.Details), r.body)
	}
	info := e.Error.Details[0]
	if info.Type != "type.googleapis.com/google.rpc.ErrorInfo" || info.Domain != "a2a-protocol.org" || info.Reason != reason {
		t.Errorf("%s: details[0]=%+v, want ErrorInfo, domain a2a-protocol.org, reason %s", what, info, reason)
	}
	if taskID != "" && info.Metadata["taskId"] != taskID {
		t.Errorf("%s: details[0].metadata.taskId=%q, want %q", what, info.Metadata["taskId"], taskID)
	}
}

// ---- REST SSE ----

// restStream is an open REST SSE response: frames carry an id line and a
// bare StreamResponse (or a REST error body), no JSON-RPC envelope.
type restStream struct {
	resp   *http.Response
	p      *sseParser
	cancel context.CancelFunc
}

// openREST sends a streaming request and checks that the answer is an
// SSE stream. It does not touch t.
func openREST(ctx context.Context, method, base, path, body string, hdr map[string]string) (*restStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		cancel()
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	setHeaders(req, hdr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%s %s: HTTP %s, Content-Type %q, body %s; want 200 text/event-stream", method, path, resp.Status, ct, truncateText(string(b), 300))
	}
	return &restStream{resp: resp, p: newSSEParser(resp.Body), cancel: cancel}, nil
}

func mustOpenREST(ctx context.Context, t testing.TB, method, base, path, body string, hdr map[string]string) *restStream {
	t.Helper()
	s, err := openREST(ctx, method, base, path, body, hdr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

// readREST opens a REST stream and reads it to the end.
func readREST(ctx context.Context, t testing.TB, method, base, path, body string, hdr map[string]string) []sseEvent {
	t.Helper()
	s := mustOpenREST(ctx, t, method, base, path, body, hdr)
	defer s.close()
	frames, err := s.read(-1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return frames
}

// decodeRESTFrame decodes one REST frame: a bare StreamResponse, or a
// REST error body (errCode is then its HTTP code).
func decodeRESTFrame(it sseItem) (sseEvent, error) {
	var ev sseEvent
	if seq, has, err := it.sequence(); err != nil {
		return ev, err
	} else {
		ev.seq, ev.hasID = seq, has
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(it.data), &keys); err != nil {
		return ev, fmt.Errorf("frame data %q: %v", truncateText(it.data, 200), err)
	}
	for _, k := range []string{"jsonrpc", "id", "result"} {
		if _, ok := keys[k]; ok {
			return ev, fmt.Errorf("frame data %q has %q: a JSON-RPC envelope, want a bare StreamResponse", truncateText(it.data, 200), k)
		}
	}
	if _, ok := keys["error"]; ok {
		var e restErrorJSON
		if err := json.Unmarshal([]byte(it.data), &e); err != nil || e.Error == nil {
			return ev, fmt.Errorf("error frame %q: %v", truncateText(it.data, 200), err)
		}
		ev.errCode = e.Error.Code
		return ev, nil
	}
	if len(keys) != 1 {
		return ev, fmt.Errorf("frame data %q: %d keys, want one StreamResponse member", truncateText(it.data, 200), len(keys))
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal([]byte(it.data), &sr); err != nil {
		return ev, fmt.Errorf("frame data %q: %v", truncateText(it.data, 200), err)
	}
	ev.event = sr.Event
	return ev, nil
}

// next returns the next frame, skipping comments, or io.EOF at the end.
func (s *restStream) next() (sseEvent, error) {
	for {
		it, err := s.p.next()
		if err != nil {
			return sseEvent{}, err
		}
		if it.isComment {
			continue
		}
		return decodeRESTFrame(it)
	}
}

// read reads n frames (n < 0: to the end of the stream).
func (s *restStream) read(n int) ([]sseEvent, error) {
	var out []sseEvent
	for n < 0 || len(out) < n {
		ev, err := s.next()
		if errors.Is(err, io.EOF) && n < 0 {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("after %d frames: %w", len(out), err)
		}
		out = append(out, ev)
	}
	return out, nil
}

// close drops the connection.
func (s *restStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// ---- the a2a-go client over REST ----

// pathRecorder records the requests an http.Client sends.
type pathRecorder struct {
	mu   sync.Mutex
	reqs []string
}

func (p *pathRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, r.Method+" "+r.URL.Path)
	p.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (p *pathRecorder) all() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reqs)
}

// newRESTClient builds an a2a-go client from the server's card that
// prefers the HTTP+JSON binding; rec sees its requests.
func newRESTClient(ctx context.Context, t testing.TB, ts *testServer) (*a2aclient.Client, *pathRecorder) {
	t.Helper()
	card := resolveCard(ctx, t, ts)
	if !slices.ContainsFunc(card.SupportedInterfaces, func(in *a2a.AgentInterface) bool {
		return in.ProtocolBinding == a2a.TransportProtocolHTTPJSON
	}) {
		t.Fatalf("card interfaces %s list no HTTP+JSON", jsonOf(t, card.SupportedInterfaces))
	}
	rec := &pathRecorder{}
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithRESTTransport(&http.Client{Transport: rec}),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolHTTPJSON}}))
	if err != nil {
		t.Fatalf("NewFromCard()=%v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c, rec
}

// TestRESTA2AClient drives every method through the a2a-go client over
// its HTTP+JSON transport.
func TestRESTA2AClient(t *testing.T) {
	t.Parallel()
	ctx := restContext(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })
	c, rec := newRESTClient(ctx, t, ts)
	_, es := streamJS(ctx, t, ts.NATSURL)

	// slow 1 runs while the rest goes on; it is checked at the end.
	slow := mustSend(ctx, t, c, userText("slow 1"), true)
	if s := slow.Status.State; s != a2a.TaskStateSubmitted && s != a2a.TaskStateWorking {
		t.Errorf("returnImmediately slow 1: state %s, want SUBMITTED or WORKING", s)
	}

	echo := mustSend(ctx, t, c, userText("echo over rest"), false)
	t.Run("SendMessage", func(t *testing.T) {
		if echo.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("echo: state %s, want COMPLETED", echo.Status.State)
		}
		if len(echo.Artifacts) != 1 || echo.Artifacts[0].ID != "echo" || textOf(echo.Artifacts[0].Parts) != "echo over rest" {
			t.Errorf("echo artifacts %s, want one echo artifact with the text", jsonOf(t, echo.Artifacts))
		}
		got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: echo.ID})
		if got.ID != echo.ID || got.ContextID != echo.ContextID || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 {
			t.Errorf("GetTask(echo)=%s, want the completed task", jsonOf(t, got))
		}
	})

	t.Run("GetTask historyLength", func(t *testing.T) {
		task := askRoundTrip(ctx, t, c, "Ada")
		all := []string{"ask", "What is your name?", "Ada", "Hello, Ada!"}
		for _, tc := range []struct {
			length *int
			want   []string
		}{{nil, all}, {ptr(0), nil}, {ptr(1), all[3:]}, {ptr(3), all[1:]}, {ptr(100), all}} {
			got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: tc.length})
			var texts []string
			for _, m := range got.History {
				texts = append(texts, firstText(m))
			}
			if !slices.Equal(texts, tc.want) {
				t.Errorf("GetTask(historyLength %s) history %q, want %q", jsonOf(t, tc.length), texts, tc.want)
			}
		}
		if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: ptr(-1)}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("GetTask(historyLength -1)=%v, want ErrInvalidParams", err)
		}
	})

	t.Run("ListTasks", func(t *testing.T) {
		ctxID := a2a.NewContextID()
		var done []a2a.TaskID
		for i := range 5 {
			m := userText(fmt.Sprintf("echo list %d", i))
			m.ContextID = ctxID
			done = append(done, mustSend(ctx, t, c, m, false).ID)
		}
		m := userText("ask")
		m.ContextID = ctxID
		asking := mustSend(ctx, t, c, m, false)
		if asking.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("ask: %s, want INPUT_REQUIRED", asking.Status.State)
		}
		every := append(slices.Clone(done), asking.ID)

		tasks, total := listAll(ctx, t, c, a2a.ListTasksRequest{ContextID: ctxID, PageSize: 2})
		if total != len(every) || !slices.Equal(sortedIDs(idsOf(tasks)), sortedIDs(every)) {
			t.Errorf("ListTasks(context, pages of 2): total %d, ids %v; want %d tasks %v", total, idsOf(tasks), len(every), sortedIDs(every))
		}
		for _, task := range tasks {
			if len(task.Artifacts) != 0 {
				t.Errorf("ListTasks without includeArtifacts: task %s has %d artifacts", task.ID, len(task.Artifacts))
			}
		}

		tasks, total = listAll(ctx, t, c, a2a.ListTasksRequest{ContextID: ctxID, Status: a2a.TaskStateCompleted, PageSize: 3, IncludeArtifacts: true, HistoryLength: ptr(0)})
		if total != len(done) || !slices.Equal(sortedIDs(idsOf(tasks)), sortedIDs(done)) {
			t.Errorf("ListTasks(context, COMPLETED): total %d, ids %v; want %v", total, idsOf(tasks), sortedIDs(done))
		}
		for _, task := range tasks {
			if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || len(task.History) != 0 {
				t.Errorf("ListTasks(COMPLETED, includeArtifacts, historyLength 0): task %s in %s with %d artifacts and %d history messages, want COMPLETED 1 0",
					task.ID, task.Status.State, len(task.Artifacts), len(task.History))
			}
		}

		resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: ctxID, Status: a2a.TaskStateInputRequired})
		if err != nil || len(resp.Tasks) != 1 || resp.Tasks[0].ID != asking.ID || resp.TotalSize != 1 {
			t.Errorf("ListTasks(context, INPUT_REQUIRED)=%s, %v; want only %s", jsonOf(t, resp), err, asking.ID)
		}
		if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 101}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("ListTasks(pageSize 101)=%v, want ErrInvalidParams", err)
		}
		if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageToken: "not a token"}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("ListTasks(bad pageToken)=%v, want ErrInvalidParams", err)
		}
	})

	t.Run("CancelTask", func(t *testing.T) {
		running := mustSend(ctx, t, c, userText("slow 30"), true)
		got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: running.ID})
		if err != nil || got.ID != running.ID || got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("CancelTask(slow 30)=%s, %v; want it CANCELED", jsonOf(t, got), err)
		}
		if got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: running.ID}); got.Status.State != a2a.TaskStateCanceled {
			t.Errorf("GetTask after cancel: %s, want CANCELED", got.Status.State)
		}
		for _, tc := range []struct {
			name string
			id   a2a.TaskID
			want error
		}{
			{"canceled again", running.ID, a2a.ErrTaskNotCancelable},
			{"completed", echo.ID, a2a.ErrTaskNotCancelable},
			{"unknown", a2a.NewTaskID(), a2a.ErrTaskNotFound},
		} {
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: tc.id}); !errors.Is(err, tc.want) {
				t.Errorf("CancelTask(%s)=%v, want %v", tc.name, err, tc.want)
			}
		}
	})

	t.Run("SendStreamingMessage", func(t *testing.T) {
		got, err := collect(c.SendStreamingMessage(ctx, sendParams("stream 5 20")))
		if err != nil {
			t.Fatalf("SendStreamingMessage(stream 5 20)=%v after %d events", err, len(got))
		}
		if len(got) == 0 {
			t.Fatal("SendStreamingMessage(stream 5 20): no events")
		}
		task, ok := got[0].(*a2a.Task)
		if !ok {
			t.Fatalf("first event %s, want the task", describe(got[0]))
		}
		if task.Status.State != a2a.TaskStateSubmitted {
			t.Errorf("first task in %s, want SUBMITTED", task.Status.State)
		}
		log := taskLog(ctx, t, es, task.ID)
		checkClientStream(t, "SendStreamingMessage(stream 5 20)", got, log, task.ID, 1, a2a.TaskStateCompleted)
		checkChunks(t, "SendStreamingMessage(stream 5 20)", got, 5)

		// A follow-up to a finished task is refused before the stream.
		follow := userText("more")
		follow.TaskID = task.ID
		if evs, err := collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: follow})); !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Errorf("SendStreamingMessage(follow-up to a completed task)=%d events, %v; want ErrUnsupportedOperation", len(evs), err)
		}
	})

	t.Run("SubscribeToTask", func(t *testing.T) {
		running := mustSend(ctx, t, c, userText("stream 20 50"), true)
		sub, err := collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: running.ID}))
		if err != nil {
			t.Fatalf("SubscribeToTask(%s)=%v after %d events", running.ID, err, len(sub))
		}
		log := taskLog(ctx, t, es, running.ID)
		checkClientStream(t, "SubscribeToTask(stream 20 50)", sub, log, running.ID, -1, a2a.TaskStateCompleted)
		checkChunks(t, "SubscribeToTask(stream 20 50)", sub, 20)

		for _, tc := range []struct {
			name string
			id   a2a.TaskID
			want error
		}{
			{"terminal", running.ID, a2a.ErrUnsupportedOperation},
			{"unknown", a2a.NewTaskID(), a2a.ErrTaskNotFound},
		} {
			if evs, err := collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: tc.id})); !errors.Is(err, tc.want) {
				t.Errorf("SubscribeToTask(%s)=%d events, %v; want %v", tc.name, len(evs), err, tc.want)
			}
		}
	})

	t.Run("push configs", func(t *testing.T) {
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		t.Cleanup(hook.Close)
		a, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: echo.ID, ID: "cfg-a", URL: hook.URL + "/a", Token: "ta"})
		if err != nil {
			t.Fatalf("CreateTaskPushConfig(cfg-a)=%v", err)
		}
		if a.ID != "cfg-a" || a.TaskID != echo.ID || a.URL != hook.URL+"/a" || a.Token != "ta" {
			t.Errorf("created %s, want cfg-a as sent", jsonOf(t, a))
		}
		b, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: echo.ID, URL: hook.URL + "/b",
			Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "secret"}})
		if err != nil {
			t.Fatalf("CreateTaskPushConfig(no id)=%v", err)
		}
		if b.ID == "" || b.TaskID != echo.ID || b.Auth == nil || b.Auth.Credentials != "secret" {
			t.Errorf("created without id: %s, want a server-assigned id and the authentication", jsonOf(t, b))
		}
		if got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: echo.ID, ID: "cfg-a"}); err != nil || got.ID != "cfg-a" || got.URL != hook.URL+"/a" || got.TaskID != echo.ID {
			t.Errorf("GetTaskPushConfig(cfg-a)=%s, %v; want cfg-a", jsonOf(t, got), err)
		}
		all, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: echo.ID})
		var ids []string
		for _, cfg := range all {
			ids = append(ids, cfg.ID)
		}
		if want := slices.Sorted(slices.Values([]string{"cfg-a", b.ID})); err != nil || !slices.Equal(ids, want) {
			t.Errorf("ListTaskPushConfigs=%v, %v; want %v", ids, err, want)
		}
		for range 2 { // deleting is idempotent
			if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: echo.ID, ID: "cfg-a"}); err != nil {
				t.Errorf("DeleteTaskPushConfig(cfg-a)=%v", err)
			}
		}
		if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: echo.ID, ID: "cfg-a"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("GetTaskPushConfig(deleted)=%v, want ErrTaskNotFound", err)
		}
		if all, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: echo.ID}); err != nil || len(all) != 1 || all[0].ID != b.ID {
			t.Errorf("ListTaskPushConfigs after delete=%s, %v; want only %s", jsonOf(t, all), err, b.ID)
		}
		for _, tc := range []struct {
			name string
			cfg  a2a.PushConfig
			want error
		}{
			{"unknown task", a2a.PushConfig{TaskID: a2a.NewTaskID(), URL: hook.URL}, a2a.ErrTaskNotFound},
			{"no url", a2a.PushConfig{TaskID: echo.ID}, a2a.ErrInvalidParams},
			{"ftp url", a2a.PushConfig{TaskID: echo.ID, URL: "ftp://93.184.216.34/"}, a2a.ErrInvalidParams},
		} {
			if _, err := c.CreateTaskPushConfig(ctx, &tc.cfg); !errors.Is(err, tc.want) {
				t.Errorf("CreateTaskPushConfig(%s)=%v, want %v", tc.name, err, tc.want)
			}
		}
		if _, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: a2a.NewTaskID()}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("ListTaskPushConfigs(unknown task)=%v, want ErrTaskNotFound", err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.NewTaskID()}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("GetTask(unknown)=%v, want ErrTaskNotFound", err)
		}
		bad := a2a.NewMessage(a2a.MessageRoleAgent, a2a.NewTextPart("echo as agent"))
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: bad}); !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("SendMessage(role agent)=%v, want ErrInvalidParams", err)
		}
		follow := userText("more")
		follow.TaskID = a2a.NewTaskID()
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: follow}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("SendMessage(follow-up to an unknown task)=%v, want ErrTaskNotFound", err)
		}
	})

	t.Run("returnImmediately", func(t *testing.T) {
		done := waitState(ctx, t, c, slow.ID, a2a.TaskStateCompleted, 20*time.Second)
		if len(done.Artifacts) != 1 || textOf(done.Artifacts[0].Parts) != "worked for 1 seconds" {
			t.Errorf("slow 1 artifacts %s, want one with %q", jsonOf(t, done.Artifacts), "worked for 1 seconds")
		}
	})

	// Every call went over HTTP+JSON, none to the JSON-RPC endpoint.
	reqs := rec.all()
	seen := map[string]bool{}
	for _, r := range reqs {
		if r == "POST /" {
			t.Errorf("the client made a JSON-RPC call; requests %v", shortList(reqs))
			break
		}
		method, path, _ := strings.Cut(r, " ")
		last := path[strings.LastIndex(path, "/")+1:]
		switch {
		case strings.Contains(last, ":"):
			_, verb, _ := strings.Cut(last, ":")
			seen[method+" :"+verb] = true
		case strings.Contains(path, "/pushNotificationConfigs"):
			seen[method+" pushNotificationConfigs"] = true
		case strings.HasPrefix(path, "/tasks/"):
			seen[method+" /tasks/{id}"] = true
		default:
			seen[method+" "+path] = true
		}
	}
	for _, want := range []string{"POST :send", "POST :stream", "GET /tasks/{id}", "GET /tasks", "POST :cancel", "POST :subscribe",
		"POST pushNotificationConfigs", "GET pushNotificationConfigs", "DELETE pushNotificationConfigs"} {
		if !seen[want] {
			t.Errorf("no %s request among the client's requests %v", want, slices.Sorted(maps.Keys(seen)))
		}
	}
}

// ---- errors ----

// restCase is one raw REST request and the answer it must get.
type restCase struct {
	name         string
	method, path string
	body         string
	hdr          map[string]string
	// code, status and reason are the expected HTTP status, google.rpc
	// code name and ErrorInfo reason; code 200 means success.
	code           int
	status, reason string
	taskID         string // ErrorInfo metadata.taskId, if set
}

func withHeader(tc restCase, k, v string) restCase {
	tc.hdr = map[string]string{k: v}
	return tc
}

func (tc restCase) check(ctx context.Context, t testing.TB, base string) restReply {
	t.Helper()
	r := mustREST(ctx, t, tc.method, base, tc.path, tc.body, tc.hdr)
	what := tc.method + " " + truncateText(tc.path, 80)
	if tc.code == http.StatusOK {
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %v, want 200 application/json", what, r)
		}
		return r
	}
	checkRESTError(t, what, r, tc.code, tc.status, tc.reason, tc.taskID)
	return r
}

// TestRESTErrors sends bad REST requests to a running server: each gets
// its AIP-193 error with the spec's HTTP status, and none of them appends
// to the event stream. Valid requests in the other accepted forms then
// succeed.
func TestRESTErrors(t *testing.T) {
	t.Parallel()
	ctx := restContext(t)
	ts := startServer(t, nil)
	_, es := streamJS(ctx, t, ts.NATSURL)

	done := restSend(ctx, t, ts.URL, "", "echo done", false)
	asking := restSend(ctx, t, ts.URL, "", "ask", false)
	if done.Status.State != a2a.TaskStateCompleted || asking.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("setup tasks in %s and %s, want COMPLETED and INPUT_REQUIRED", done.Status.State, asking.Status.State)
	}
	d, unknown := string(done.ID), unknownTask
	msg := func(m string) string { return `{"message":` + m + `,"configuration":{"returnImmediately":true}}` }
	const (
		invalid  = "INVALID_ARGUMENT"
		notFound = "NOT_FOUND"
		precond  = "FAILED_PRECONDITION"
	)
	nf := func(name, method, path, id string) restCase {
		return restCase{name: name, method: method, path: path, code: 404, status: notFound, reason: "TASK_NOT_FOUND", taskID: id}
	}
	bad := func(name, method, path, body string) restCase {
		return restCase{name: name, method: method, path: path, body: body, code: 400, status: invalid, reason: "INVALID_PARAMS"}
	}
	route := func(name, method, path string) restCase {
		return restCase{name: name, method: method, path: path, code: 404, status: "UNIMPLEMENTED", reason: "METHOD_NOT_FOUND"}
	}
	// A known route with another method: 405 (with Allow, checked by
	// TestRESTGolden).
	notAllowed := func(name, method, path string) restCase {
		return restCase{name: name, method: method, path: path, code: 405, status: "UNIMPLEMENTED", reason: "METHOD_NOT_FOUND"}
	}
	cases := []restCase{
		// Unknown tasks.
		nf("get unknown task", "GET", "/tasks/"+unknown, unknown),
		nf("cancel unknown task", "POST", "/tasks/"+unknown+":cancel", unknown),
		nf("subscribe to unknown task", "GET", "/tasks/"+unknown+":subscribe", unknown),
		nf("subscribe to unknown task by POST", "POST", "/tasks/"+unknown+":subscribe", unknown),
		nf("get a task in another tenant", "GET", "/other/tasks/"+d, d),
		nf("push configs of unknown task", "GET", "/tasks/"+unknown+"/pushNotificationConfigs", unknown),
		nf("unknown push config", "GET", "/tasks/"+d+"/pushNotificationConfigs/no-such-config", ""),
		{name: "follow-up to unknown task", method: "POST", path: "/message:send", body: msg(`{"messageId":"r1","role":"ROLE_USER","taskId":"` + unknown + `","parts":[{"text":"more"}]}`),
			code: 404, status: notFound, reason: "TASK_NOT_FOUND", taskID: unknown},

		// Task states.
		{name: "cancel a completed task", method: "POST", path: "/tasks/" + d + ":cancel", code: 400, status: precond, reason: "TASK_NOT_CANCELABLE", taskID: d},
		{name: "subscribe to a terminal task", method: "GET", path: "/tasks/" + d + ":subscribe", code: 400, status: precond, reason: "UNSUPPORTED_OPERATION", taskID: d},
		{name: "subscribe to a terminal task by POST", method: "POST", path: "/tasks/" + d + ":subscribe", code: 400, status: precond, reason: "UNSUPPORTED_OPERATION", taskID: d},
		{name: "follow-up to a completed task", method: "POST", path: "/message:send", body: msg(`{"messageId":"r2","role":"ROLE_USER","taskId":"` + d + `","parts":[{"text":"more"}]}`),
			code: 400, status: precond, reason: "UNSUPPORTED_OPERATION", taskID: d},
		{name: "extended agent card", method: "GET", path: "/extendedAgentCard", code: 400, status: precond, reason: "UNSUPPORTED_OPERATION"},

		// Query parameters.
		bad("pageSize 101", "GET", "/tasks?pageSize=101", ""),
		bad("pageSize 0x10", "GET", "/tasks?pageSize=0x10", ""),
		bad("list historyLength abc", "GET", "/tasks?historyLength=abc", ""),
		bad("list historyLength -1", "GET", "/tasks?historyLength=-1", ""),
		bad("get historyLength abc", "GET", "/tasks/"+d+"?historyLength=abc", ""),
		bad("get historyLength -1", "GET", "/tasks/"+d+"?historyLength=-1", ""),
		bad("status BOGUS", "GET", "/tasks?status=BOGUS", ""),
		bad("status v0.3 name", "GET", "/tasks?status=completed", ""),
		bad("statusTimestampAfter yesterday", "GET", "/tasks?statusTimestampAfter=yesterday", ""),
		bad("includeArtifacts maybe", "GET", "/tasks?includeArtifacts=maybe", ""),
		bad("pageToken not issued", "GET", "/tasks?pageToken=not-a-token", ""),
		bad("push configs pageSize abc", "GET", "/tasks/"+d+"/pushNotificationConfigs?pageSize=abc", ""),
		bad("bad tenant", "GET", "/bad!tenant/tasks", ""),

		// Bodies.
		{name: "send invalid JSON", method: "POST", path: "/message:send", body: `{"message":`, code: 400, status: invalid, reason: "PARSE_ERROR"},
		{name: "send trailing garbage", method: "POST", path: "/message:send", body: msg(`{"messageId":"r3","role":"ROLE_USER","parts":[{"text":"echo"}]}`) + " x", code: 400, status: invalid, reason: "PARSE_ERROR"},
		{name: "stream invalid JSON", method: "POST", path: "/message:stream", body: `{`, code: 400, status: invalid, reason: "PARSE_ERROR"},
		{name: "cancel invalid JSON", method: "POST", path: "/tasks/" + string(asking.ID) + ":cancel", body: `{"metadata":`, code: 400, status: invalid, reason: "PARSE_ERROR"},
		{name: "send oversized body", method: "POST", path: "/message:send", body: msg(`{"messageId":"r9","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("x", 2<<20) + `"}]}`),
			code: 400, status: invalid, reason: "INVALID_REQUEST"},
		bad("send empty body", "POST", "/message:send", ""),
		bad("send whitespace body", "POST", "/message:send", " \n"),
		bad("stream empty body", "POST", "/message:stream", ""),
		bad("send array", "POST", "/message:send", `[{"message":{}}]`),
		bad("send null", "POST", "/message:send", `null`),
		bad("send without message", "POST", "/message:send", `{"configuration":{"returnImmediately":true}}`),
		bad("send role agent", "POST", "/message:send", msg(`{"messageId":"r4","role":"ROLE_AGENT","parts":[{"text":"echo"}]}`)),
		bad("send without parts", "POST", "/message:send", msg(`{"messageId":"r5","role":"ROLE_USER","parts":[]}`)),
		bad("send without messageId", "POST", "/message:send", msg(`{"role":"ROLE_USER","parts":[{"text":"echo"}]}`)),
		bad("send a field twice", "POST", "/message:send", msg(`{"messageId":"r6","message_id":"r6","role":"ROLE_USER","parts":[{"text":"echo"}]}`)),
		bad("stream role agent", "POST", "/message:stream", msg(`{"messageId":"r7","role":"ROLE_AGENT","parts":[{"text":"stream 3 0"}]}`)),
		bad("cancel array", "POST", "/tasks/"+string(asking.ID)+":cancel", `[]`),
		bad("push config without url", "POST", "/tasks/"+d+"/pushNotificationConfigs", `{"token":"t"}`),
		bad("push config to loopback", "POST", "/tasks/"+d+"/pushNotificationConfigs", `{"url":"http://127.0.0.1:9/hook"}`),
		bad("push config for another task", "POST", "/tasks/"+d+"/pushNotificationConfigs", `{"taskId":"`+string(asking.ID)+`","url":"https://93.184.216.34/"}`),

		// Resume positions.
		withHeader(bad("Last-Event-ID abc", "GET", "/tasks/"+d+":subscribe", ""), "Last-Event-ID", "abc"),
		withHeader(bad("Last-Event-ID -1", "GET", "/tasks/"+d+":subscribe", ""), "Last-Event-ID", "-1"),
		withHeader(bad("Last-Event-ID 1.5 on a terminal task", "GET", "/tasks/"+d+":subscribe", ""), "Last-Event-ID", "1.5"),
		bad("lastEventId query abc", "GET", "/tasks/"+d+":subscribe?lastEventId=abc", ""),
		bad("lastEventId body abc", "POST", "/tasks/"+d+":subscribe", `{"lastEventId":"abc"}`),
		bad("lastEventId body empty", "POST", "/tasks/"+d+":subscribe", `{"lastEventId":""}`),

		// Routes.
		route("unknown route", "GET", "/nope"),
		route("unknown route under a tenant", "GET", "/acme/nope/at/all"),
		notAllowed("DELETE /message:send", "DELETE", "/message:send"),
		notAllowed("GET /message:send", "GET", "/message:send"),
		notAllowed("PUT /tasks", "PUT", "/tasks"),
		route("unknown task verb", "POST", "/tasks/"+d+":pause"),
		notAllowed("DELETE a task", "DELETE", "/tasks/"+d),
		route("too deep", "GET", "/tasks/"+d+"/pushNotificationConfigs/x/y"),
		route("root GET", "GET", "/"),

		// Versions.
		{name: "A2A-Version 9.9", method: "GET", path: "/tasks", hdr: map[string]string{"A2A-Version": "9.9"}, code: 400, status: precond, reason: "VERSION_NOT_SUPPORTED"},
		{name: "A2A-Version 9.9 on a send", method: "POST", path: "/message:send", body: msg(`{"messageId":"r8","role":"ROLE_USER","parts":[{"text":"echo"}]}`),
			hdr: map[string]string{"A2A-Version": "9.9"}, code: 400, status: precond, reason: "VERSION_NOT_SUPPORTED"},
		{name: "A2A-Version query 2.0", method: "GET", path: "/tasks/" + d + "?A2A-Version=2.0", hdr: map[string]string{"A2A-Version": ""}, code: 400, status: precond, reason: "VERSION_NOT_SUPPORTED"},

		// Requests that succeed without writing.
		{name: "A2A-Version 1.0.3", method: "GET", path: "/tasks/" + d, hdr: map[string]string{"A2A-Version": "1.0.3"}, code: 200},
		{name: "no A2A-Version", method: "GET", path: "/tasks/" + d, hdr: map[string]string{"A2A-Version": ""}, code: 200},
		{name: "list with every filter", method: "GET", path: "/tasks?contextId=" + done.ContextID + "&status=TASK_STATE_COMPLETED&pageSize=5&historyLength=0&includeArtifacts=true&statusTimestampAfter=" +
			url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)), code: 200},
		// ListTasks with status TASK_STATE_UNSPECIFIED (the enum's zero
		// value: no filter) succeeds over JSON-RPC (checked below); the
		// same request over REST must too.
		{name: "status TASK_STATE_UNSPECIFIED", method: "GET", path: "/tasks?status=TASK_STATE_UNSPECIFIED&pageSize=1", code: 200},
	}
	before := readStreamState(t, es)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			was := readStreamState(t, es)
			tc.check(ctx, t, ts.URL)
			if now := readStreamState(t, es); now != was {
				t.Errorf("the request changed the event stream: %+v, want %+v", now, was)
			}
		})
	}
	if after := readStreamState(t, es); after != before {
		t.Errorf("bad requests changed the event stream: %+v, want %+v", after, before)
	}

	t.Run("JSON-RPC status TASK_STATE_UNSPECIFIED", func(t *testing.T) {
		if r := rawCall(ctx, t, ts, "ListTasks", map[string]any{"status": "TASK_STATE_UNSPECIFIED", "pageSize": 1}); r.Error != nil {
			t.Errorf("JSON-RPC ListTasks(status TASK_STATE_UNSPECIFIED)=error %d %s, want a result", r.Error.Code, r.Error.Message)
		}
	})

	// Valid sends in the other accepted forms, after the no-change check.
	writes := []struct {
		name string
		body string
		hdr  map[string]string
	}{
		{"Content-Type application/a2a+json", msg(`{"messageId":"w1","role":"ROLE_USER","parts":[{"text":"echo a2a+json"}]}`), map[string]string{"Content-Type": "application/a2a+json"}},
		{"snake_case body", `{"message":{"message_id":"w2","role":"ROLE_USER","parts":[{"text":"echo snake"}]},"configuration":{"return_immediately":true}}`, nil},
		{"no Content-Type", msg(`{"messageId":"w3","role":"ROLE_USER","parts":[{"text":"echo bare"}]}`), map[string]string{"Content-Type": ""}},
		{"trailing newline", msg(`{"messageId":"w4","role":"ROLE_USER","parts":[{"text":"echo newline"}]}`) + "\n", nil},
		// JSON allows whitespace before the value (RFC 8259 §2), as the
		// JSON-RPC endpoint accepts it; a file posted with curl -d @f may
		// well start with a newline.
		{"leading whitespace", "\n  " + msg(`{"messageId":"w5","role":"ROLE_USER","parts":[{"text":"echo indented"}]}`), nil},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			was := readStreamState(t, es)
			r := mustREST(ctx, t, "POST", ts.URL, "/message:send", w.body, w.hdr)
			if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("POST /message:send: %v, want 200 application/json", r)
			}
			var sr a2a.StreamResponse
			if err := json.Unmarshal(r.body, &sr); err != nil {
				t.Fatalf("result %s: %v", r.body, err)
			}
			if task, ok := sr.Event.(*a2a.Task); !ok || task.ID == "" {
				t.Errorf("result %s, want a task", r.body)
			}
			if now := readStreamState(t, es); now.LastSeq <= was.LastSeq {
				t.Errorf("event stream after a send=%+v, want more than %+v", now, was)
			}
		})
	}
}

// ---- tenants ----

func frameSeqs(frames []sseEvent) []uint64 {
	out := make([]uint64, len(frames))
	for i, f := range frames {
		out[i] = f.seq
	}
	return out
}

// restHasTask reports whether base+path (a ListTasks page) lists id.
func restHasTask(ctx context.Context, t testing.TB, base, path string, id a2a.TaskID) bool {
	t.Helper()
	var resp a2a.ListTasksResponse
	restOK(ctx, t, "GET", base, path, "", &resp)
	if resp.NextPageToken != "" {
		t.Fatalf("GET %s: more than one page", path)
	}
	return slices.Contains(idsOf(resp.Tasks), id)
}

// subjectsOf returns how many messages the events stream holds for the
// task in tenant.
func subjectsOf(ctx context.Context, t testing.TB, s jetstream.Stream, tenant string, id a2a.TaskID) uint64 {
	t.Helper()
	filter := events.TaskFilter(tenant, id)
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		t.Fatalf("stream Info(%s)=%v", filter, err)
	}
	n := uint64(0)
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}

// TestRESTTenantPrefix checks that /{tenant} scopes every route: a task
// made under /acme is seen there, by JSON-RPC with tenant "acme" and by
// an a2a-go client whose interface names the tenant, and nowhere else.
func TestRESTTenantPrefix(t *testing.T) {
	t.Parallel()
	ctx := restContext(t)
	ts := startServer(t, nil)
	_, es := streamJS(ctx, t, ts.NATSURL)

	acme := restSend(ctx, t, ts.URL, "/acme", "echo tenant", false)
	plain := restSend(ctx, t, ts.URL, "", "echo no tenant", false)
	if acme.Status.State != a2a.TaskStateCompleted || plain.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("tasks in %s and %s, want COMPLETED", acme.Status.State, plain.Status.State)
	}
	a := string(acme.ID)

	var got a2a.Task
	restOK(ctx, t, "GET", ts.URL, "/acme/tasks/"+a+"?historyLength=1", "", &got)
	if got.ID != acme.ID || got.Status.State != a2a.TaskStateCompleted || len(got.History) != 1 {
		t.Errorf("GET /acme/tasks/{id}=%s, want the task with one history message", jsonOf(t, got))
	}
	if !restHasTask(ctx, t, ts.URL, "/acme/tasks", acme.ID) {
		t.Errorf("GET /acme/tasks does not list %s", a)
	}
	if restHasTask(ctx, t, ts.URL, "/acme/tasks", plain.ID) {
		t.Errorf("GET /acme/tasks lists the default tenant's task %s", plain.ID)
	}
	if !restHasTask(ctx, t, ts.URL, "/acme/tasks?contextId="+acme.ContextID, acme.ID) {
		t.Errorf("GET /acme/tasks?contextId= does not list %s", a)
	}
	checkRESTError(t, "GET /tasks/{acme task}", mustREST(ctx, t, "GET", ts.URL, "/tasks/"+a, "", nil), 404, "NOT_FOUND", "TASK_NOT_FOUND", a)
	checkRESTError(t, "GET /other/tasks/{acme task}", mustREST(ctx, t, "GET", ts.URL, "/other/tasks/"+a, "", nil), 404, "NOT_FOUND", "TASK_NOT_FOUND", a)
	checkRESTError(t, "GET /acme/tasks/{default task}", mustREST(ctx, t, "GET", ts.URL, "/acme/tasks/"+string(plain.ID), "", nil), 404, "NOT_FOUND", "TASK_NOT_FOUND", string(plain.ID))
	if restHasTask(ctx, t, ts.URL, "/tasks", acme.ID) {
		t.Errorf("GET /tasks lists the acme task %s", a)
	}
	if !restHasTask(ctx, t, ts.URL, "/tasks", plain.ID) {
		t.Errorf("GET /tasks does not list %s", plain.ID)
	}
	// The other routes under the prefix reach the same task.
	checkRESTError(t, "POST /acme/tasks/{id}:cancel", mustREST(ctx, t, "POST", ts.URL, "/acme/tasks/"+a+":cancel", "", nil), 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", a)
	checkRESTError(t, "POST /tasks/{acme task}:cancel", mustREST(ctx, t, "POST", ts.URL, "/tasks/"+a+":cancel", "", nil), 404, "NOT_FOUND", "TASK_NOT_FOUND", a)
	checkRESTError(t, "GET /acme/tasks/{id}:subscribe", mustREST(ctx, t, "GET", ts.URL, "/acme/tasks/"+a+":subscribe", "", nil), 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", a)
	var cfg a2a.PushConfig
	restOK(ctx, t, "POST", ts.URL, "/acme/tasks/"+a+"/pushNotificationConfigs", `{"id":"c1","url":"https://93.184.216.34/hook"}`, &cfg)
	if cfg.ID != "c1" || cfg.TaskID != acme.ID {
		t.Errorf("POST /acme/tasks/{id}/pushNotificationConfigs=%s, want c1 of the task", jsonOf(t, cfg))
	}
	restOK(ctx, t, "GET", ts.URL, "/acme/tasks/"+a+"/pushNotificationConfigs/c1", "", &cfg)
	checkRESTError(t, "GET /tasks/{acme task}/pushNotificationConfigs/c1", mustREST(ctx, t, "GET", ts.URL, "/tasks/"+a+"/pushNotificationConfigs/c1", "", nil), 404, "NOT_FOUND", "TASK_NOT_FOUND", "")
	restOK(ctx, t, "DELETE", ts.URL, "/acme/tasks/"+a+"/pushNotificationConfigs/c1", "", nil)

	// One engine: the events are the acme tenant's, and JSON-RPC sees the
	// task with tenant "acme" only.
	if n := subjectsOf(ctx, t, es, "acme", acme.ID); n == 0 {
		t.Errorf("no events of %s in tenant acme", a)
	}
	if n := subjectsOf(ctx, t, es, events.DefaultTenant, acme.ID); n != 0 {
		t.Errorf("%d events of %s in the default tenant, want none", n, a)
	}
	r := rawCall(ctx, t, ts, "GetTask", map[string]any{"id": a, "tenant": "acme"})
	var rpcTask a2a.Task
	if r.Error != nil || json.Unmarshal(r.Result, &rpcTask) != nil || rpcTask.ID != acme.ID || rpcTask.Status.State != a2a.TaskStateCompleted {
		t.Errorf("JSON-RPC GetTask(tenant acme)=%s %+v, want the completed task", r.Result, r.Error)
	}
	if r := rawCall(ctx, t, ts, "GetTask", map[string]any{"id": a}); r.Error == nil || r.Error.Code != -32001 {
		t.Errorf("JSON-RPC GetTask(no tenant)=%s %+v, want -32001", r.Result, r.Error)
	}

	// A stream under the prefix, and a resume of it.
	frames := readREST(ctx, t, "POST", ts.URL, "/acme/message:stream", restSendBody(t, "stream 3 10", false), nil)
	if len(frames) < 2 {
		t.Fatalf("POST /acme/message:stream: frames %v, want the task and updates", frames)
	}
	st, ok := frames[0].event.(*a2a.Task)
	if !ok || !isFinal(frames[len(frames)-1].event, a2a.TaskStateCompleted) {
		t.Fatalf("POST /acme/message:stream: frames %v, want the task first and COMPLETED last", frames)
	}
	checkChunks(t, "POST /acme/message:stream", eventsOf(frames), 3)
	if n := subjectsOf(ctx, t, es, "acme", st.ID); n == 0 {
		t.Errorf("no events of streamed task %s in tenant acme", st.ID)
	}
	again := readREST(ctx, t, "GET", ts.URL, "/acme/tasks/"+string(st.ID)+":subscribe", "", lastEventHeader(frames[0].seq))
	if !slices.Equal(frameSeqs(again), frameSeqs(frames[1:])) || !slices.Equal(frameDescs(again), frameDescs(frames[1:])) {
		t.Errorf("resumed /acme stream %v, want %v", again, frames[1:])
	}

	// The a2a-go client on an interface with tenant "acme" (it puts the
	// tenant in the path).
	c, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{{URL: ts.URL, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version, Tenant: "acme"}})
	if err != nil {
		t.Fatalf("NewFromEndpoints(acme)=%v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	if got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: acme.ID}); err != nil || got.ID != acme.ID {
		t.Errorf("client(acme).GetTask=%v, %v; want the task", got, err)
	}
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: plain.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("client(acme).GetTask(default tenant task)=%v, want ErrTaskNotFound", err)
	}
	made := mustSend(ctx, t, c, userText("echo from the acme client"), false)
	restOK(ctx, t, "GET", ts.URL, "/acme/tasks/"+string(made.ID), "", &got)
	checkRESTError(t, "GET /tasks/{acme client task}", mustREST(ctx, t, "GET", ts.URL, "/tasks/"+string(made.ID), "", nil), 404, "NOT_FOUND", "TASK_NOT_FOUND", string(made.ID))
}

// ---- resume ----

// TestRESTStreamResume drops a REST message:stream and resumes it with
// :subscribe and the last id seen: together the two streams carry every
// event of the task exactly once, in order, as bare StreamResponse frames
// whose ids are the task's stream sequences.
func TestRESTStreamResume(t *testing.T) {
	t.Parallel()
	ctx := restContext(t)
	ts := startServer(t, nil)
	_, es := streamJS(ctx, t, ts.NATSURL)

	for _, tc := range []struct {
		name   string
		chunks int
		read   int
		// resume returns the subscribe request after the frames head.
		resume func(id a2a.TaskID, head []sseEvent) (method, path, body string, hdr map[string]string)
	}{
		{"Last-Event-ID header", 200, 50, func(id a2a.TaskID, head []sseEvent) (string, string, string, map[string]string) {
			return "GET", "/tasks/" + string(id) + ":subscribe", "", lastEventHeader(head[len(head)-1].seq)
		}},
		{"lastEventId query", 60, 20, func(id a2a.TaskID, head []sseEvent) (string, string, string, map[string]string) {
			return "GET", "/tasks/" + string(id) + ":subscribe?lastEventId=" + strconv.FormatUint(head[len(head)-1].seq, 10), "", nil
		}},
		{"lastEventId body", 60, 20, func(id a2a.TaskID, head []sseEvent) (string, string, string, map[string]string) {
			return "POST", "/tasks/" + string(id) + ":subscribe", `{"lastEventId":"` + strconv.FormatUint(head[len(head)-1].seq, 10) + `"}`, nil
		}},
		{"Last-Event-ID header by POST", 60, 20, func(id a2a.TaskID, head []sseEvent) (string, string, string, map[string]string) {
			return "POST", "/tasks/" + string(id) + ":subscribe", "", lastEventHeader(head[len(head)-1].seq)
		}},
		// An EventSource opened on ?lastEventId=<old> reconnects to the
		// same URL with the Last-Event-ID header of the last frame it
		// saw: the header wins.
		{"header beats query", 60, 20, func(id a2a.TaskID, head []sseEvent) (string, string, string, map[string]string) {
			return "GET", "/tasks/" + string(id) + ":subscribe?lastEventId=" + strconv.FormatUint(head[2].seq, 10), "", lastEventHeader(head[len(head)-1].seq)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text := fmt.Sprintf("stream %d 5", tc.chunks)
			s := mustOpenREST(ctx, t, "POST", ts.URL, "/message:stream", restSendBody(t, text, false), nil)
			head, err := s.read(tc.read)
			if err != nil {
				t.Fatalf("POST /message:stream %q: %v", text, err)
			}
			s.close()
			task, ok := head[0].event.(*a2a.Task)
			if !ok {
				t.Fatalf("first frame %v, want the task", head[0])
			}
			if isFinal(head[len(head)-1].event, a2a.TaskStateCompleted) {
				t.Fatalf("the task completed within the first %d frames", len(head))
			}
			method, path, body, hdr := tc.resume(task.ID, head)
			rest := readREST(ctx, t, method, ts.URL, path, body, hdr)
			if len(rest) == 0 {
				t.Fatalf("%s %s: no frames", method, path)
			}
			if _, isTask := rest[0].event.(*a2a.Task); isTask {
				t.Errorf("resumed stream starts with a task snapshot, want the event after %d", head[len(head)-1].seq)
			}
			log := taskLog(ctx, t, es, task.ID)
			if _, ok := log[0].event.(*a2a.Task); !ok || log[0].seq != head[0].seq {
				t.Errorf("first frame id %d, want the created event %v", head[0].seq, log[0])
			}
			all := append(slices.Clip(head), rest...)
			checkFramesExact(t, "first stream + resumed stream", all, log, 0)
			checkChunks(t, "first stream + resumed stream", eventsOf(all), tc.chunks)
			if f := all[len(all)-1]; !isFinal(f.event, a2a.TaskStateCompleted) {
				t.Errorf("last frame %v, want status COMPLETED", f)
			}
		})
	}
}

// ---- bindings together ----

// TestRESTCrossBinding drives one task through both bindings: made by
// JSON-RPC, read and canceled over REST, seen CANCELED by JSON-RPC; and a
// stream started on one binding resumed on the other with the same ids.
func TestRESTCrossBinding(t *testing.T) {
	t.Parallel()
	ctx := restContext(t)
	ts := startServer(t, nil)
	c := newClient(ctx, t, ts)
	_, es := streamJS(ctx, t, ts.NATSURL)

	t.Run("cancel", func(t *testing.T) {
		task := mustSend(ctx, t, c, userText("slow 30"), true)
		id := string(task.ID)
		var got a2a.Task
		restOK(ctx, t, "GET", ts.URL, "/tasks/"+id, "", &got)
		if got.ID != task.ID || got.ContextID != task.ContextID || got.Status.State.Terminal() {
			t.Fatalf("REST GET /tasks/{id}=%s, want the running task %s", jsonOf(t, got), id)
		}
		var canceled a2a.Task
		restOK(ctx, t, "POST", ts.URL, "/tasks/"+id+":cancel", `{"metadata":{"by":"rest"}}`, &canceled)
		if canceled.ID != task.ID || canceled.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("REST POST /tasks/{id}:cancel=%s, want it CANCELED", jsonOf(t, canceled))
		}
		if got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: task.ID}); got.Status.State != a2a.TaskStateCanceled {
			t.Errorf("JSON-RPC GetTask after the REST cancel: %s, want CANCELED", got.Status.State)
		}
		log := taskLog(ctx, t, es, task.ID)
		last, ok := log[len(log)-1].event.(*a2a.TaskStatusUpdateEvent)
		if !ok || last.Status.State != a2a.TaskStateCanceled || last.Metadata["by"] != "rest" {
			t.Errorf("last event %v (metadata %v), want CANCELED with the cancel body's metadata", log[len(log)-1], jsonOf(t, last))
		}
		if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
			t.Errorf("JSON-RPC CancelTask after the REST cancel=%v, want ErrTaskNotCancelable", err)
		}
	})

	t.Run("JSON-RPC stream resumed over REST", func(t *testing.T) {
		s := mustOpenSSE(ctx, t, ts.URL, "", "SendStreamingMessage", sendParams("stream 40 5"), nil)
		head, err := s.read(10)
		if err != nil {
			t.Fatalf("SendStreamingMessage: %v", err)
		}
		s.close()
		task, ok := head[0].event.(*a2a.Task)
		if !ok {
			t.Fatalf("first frame %v, want the task", head[0])
		}
		rest := readREST(ctx, t, "GET", ts.URL, "/tasks/"+string(task.ID)+":subscribe", "", lastEventHeader(head[len(head)-1].seq))
		log := taskLog(ctx, t, es, task.ID)
		checkFramesExact(t, "JSON-RPC stream + REST resume", append(slices.Clip(head), rest...), log, 0)
	})

	t.Run("REST stream resumed over JSON-RPC", func(t *testing.T) {
		s := mustOpenREST(ctx, t, "POST", ts.URL, "/message:stream", restSendBody(t, "stream 40 5", false), nil)
		head, err := s.read(10)
		if err != nil {
			t.Fatalf("POST /message:stream: %v", err)
		}
		s.close()
		task, ok := head[0].event.(*a2a.Task)
		if !ok {
			t.Fatalf("first frame %v, want the task", head[0])
		}
		rest := readSSE(ctx, t, ts.URL, "", "SubscribeToTask", subscribeParams(task.ID), lastEventHeader(head[len(head)-1].seq))
		log := taskLog(ctx, t, es, task.ID)
		checkFramesExact(t, "REST stream + JSON-RPC resume", append(slices.Clip(head), rest...), log, 0)
	})
}
