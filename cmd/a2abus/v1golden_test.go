package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// Golden files of raw v1.0 requests and responses: every v1.0 JSON-RPC
// method and envelope error (TestV1Golden, testdata/v1), and every v1.0
// HTTP+JSON route (TestRESTGolden, testdata/rest), all with A2A-Version
// 1.0. Each case also states what it must answer (an error code, an HTTP
// status and reason, values of the result, the stream's items), so a
// rewrite cannot bless a wrong answer. Modelled on TestV03Golden and
// TestV03RESTGolden; they share their normaliser.
//
// Regenerate the golden files with
//
//	go test -run 'TestV1Golden|TestRESTGolden' ./cmd/a2abus/ -rewrite-v1 -rewrite-rest

var (
	v1Rewrite   = flag.Bool("rewrite-v1", false, "rewrite the v1.0 JSON-RPC golden files in testdata/v1")
	restRewrite = flag.Bool("rewrite-rest", false, "rewrite the v1.0 HTTP+JSON golden files in testdata/rest")
)

// ---- shared ----

// v1Vars holds the setup values: {{name}} in a case stands for vars[name],
// and the golden files show known[value] in place of the value.
type v1Vars struct {
	vars  map[string]string
	known map[string]string
}

func newV1Vars() *v1Vars { return &v1Vars{vars: map[string]string{}, known: map[string]string{}} }

// task records a setup task (a v1.0 Task as decoded JSON) as {{name}} and
// {{nameCtx}}, shown as <task:name> and <context:name>.
func (v *v1Vars) task(t testing.TB, name string, task any) {
	t.Helper()
	id, ctxID := v03Str(task, "id"), v03Str(task, "contextId")
	if id == "" || ctxID == "" {
		t.Fatalf("setup task %s: %v, want a task with ids", name, task)
	}
	v.vars[name], v.vars[name+"Ctx"] = id, ctxID
	v.known[id] = "<task:" + name + ">"
	if _, ok := v.known[ctxID]; !ok { // a shared context keeps its first name
		v.known[ctxID] = "<context:" + name + ">"
	}
}

// set records a setup value shown as placeholder.
func (v *v1Vars) set(name, value, placeholder string) {
	v.vars[name] = value
	v.known[value] = placeholder
}

var v1Subst = regexp.MustCompile(`\{\{(\w+)\}\}`)

// expand replaces each {{name}} in s.
func (v *v1Vars) expand(t testing.TB, what, s string) string {
	t.Helper()
	return v1Subst.ReplaceAllStringFunc(s, func(m string) string {
		val, ok := v.vars[m[2:len(m)-2]]
		if !ok {
			t.Fatalf("%s: no setup value %s", what, m)
		}
		return val
	})
}

// v1Walk normalises a golden document as pb03Walk does (ids, timestamps,
// ids inside paths), after naming what v1.0 JSON has in other places:
// the ids of flat push configs (an object with a "url") as <config-N>,
// the cursors of ListTasks pages (they hold a time) as <page-token-N>,
// and known values given as query parameters of a path.
func v1Walk(doc any, known map[string]string) any {
	n := newV03Norm(known)
	var pre func(v any) any
	pre = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			if id, ok := t["id"].(string); ok && t["url"] != nil && v03UUID.MatchString(id) {
				n.name("config", id)
			}
			if tok, ok := t["nextPageToken"].(string); ok && tok != "" && t["tasks"] != nil {
				n.name("page-token", tok)
			}
			out := make(map[string]any, len(t))
			for _, k := range slices.Sorted(maps.Keys(t)) {
				out[k] = pre(t[k])
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, c := range t {
				out[i] = pre(c)
			}
			return out
		case string:
			path, query, ok := strings.Cut(t, "?")
			if !ok || strings.HasPrefix(path, "<") {
				return t
			}
			params := strings.Split(query, "&")
			for i, p := range params {
				if k, val, ok := strings.Cut(p, "="); ok {
					if ph, ok := n.names[val]; ok {
						params[i] = k + "=" + ph
					}
				}
			}
			return path + "?" + strings.Join(params, "&")
		}
		return v
	}
	return pb03Walk(n, pre(doc), "", "")
}

// v1Golden compares doc, normalised, with dir/<name>.json.
func v1Golden(t testing.TB, dir, name string, doc map[string]any, known map[string]string, rewrite bool, regenerate string) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v1Walk(doc, known)); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join(dir, name+".json"), buf.Bytes(), rewrite, regenerate)
}

// v1Stale fails on a golden file of dir that no case made, or removes it
// when rewriting.
func v1Stale(t testing.TB, dir string, seen map[string]bool, rewrite bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if seen[strings.TrimSuffix(filepath.Base(f), ".json")] {
			continue
		}
		if rewrite {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: no case of that name (stale golden file)", f)
	}
}

// v1At returns the value at a dotted path in decoded JSON ("task.status.
// state", "tasks.0.id"): a string as it is, anything else as compact JSON,
// "<none>" if there is nothing there.
func v1At(v any, path string) string {
	if path != "" {
		for _, k := range strings.Split(path, ".") {
			switch t := v.(type) {
			case map[string]any:
				c, ok := t[k]
				if !ok {
					return "<none>"
				}
				v = c
			case []any:
				i, err := strconv.Atoi(k)
				if err != nil || i < 0 || i >= len(t) {
					return "<none>"
				}
				v = t[i]
			default:
				return "<none>"
			}
		}
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return string(b)
}

// v1CheckWant checks each path of want (values may hold {{name}}) in v.
func v1CheckWant(t testing.TB, what string, v any, want map[string]string, vars *v1Vars) {
	t.Helper()
	for _, path := range slices.Sorted(maps.Keys(want)) {
		if got, w := v1At(v, path), vars.expand(t, what, want[path]); got != w {
			t.Errorf("%s: %s = %s, want %s", what, path, truncateText(got, 300), w)
		}
	}
}

// v1Describe is a short description of a v1.0 StreamResponse.
func v1Describe(sr any) string {
	m, _ := sr.(map[string]any)
	switch {
	case m["task"] != nil:
		return "task " + v03Str(m, "task", "status", "state")
	case m["message"] != nil:
		return "message " + v03PartsText(v1Get(m, "message", "parts"))
	case m["statusUpdate"] != nil:
		return fmt.Sprintf("status %s %q", v03Str(m, "statusUpdate", "status", "state"), v03PartsText(v1Get(m, "statusUpdate", "status", "message", "parts")))
	case m["artifactUpdate"] != nil:
		a, _ := v1Get(m, "artifactUpdate").(map[string]any)
		return fmt.Sprintf("artifact %s append=%v last=%v %q", v03Str(a, "artifact", "artifactId"), a["append"] == true, a["lastChunk"] == true, v03PartsText(v1Get(a, "artifact", "parts")))
	case m["error"] != nil:
		return fmt.Sprintf("error %s", v1At(m, "error.code"))
	}
	return "unknown " + truncateText(fmt.Sprint(sr), 100)
}

func v1Get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// v1Frame is one SSE frame, raw.
type v1Frame struct {
	id    string
	hasID bool
	data  []byte
}

// v1ReadFrames reads an SSE body to its end, skipping comments.
func v1ReadFrames(p *sseParser) ([]v1Frame, error) {
	return readFrames(func() (v1Frame, error) {
		for {
			it, err := p.next()
			if err != nil {
				return v1Frame{}, err
			}
			if !it.isComment {
				return v1Frame{id: it.id, hasID: it.hasID, data: []byte(it.data)}, nil
			}
		}
	}, -1)
}

// v1CheckFrames checks a stream's frames: every frame but a last error
// has an increasing numeric id; it returns the frames for the golden file
// (ids as <seq-N>) and the StreamResponses (the JSON-RPC result, or the
// REST frame).
func v1CheckFrames(t testing.TB, what string, frames []v1Frame, rpc bool) (doc []any, items []any) {
	t.Helper()
	var last uint64
	doc = []any{}
	for i, f := range frames {
		data := pb03JSON(f.data)
		item := data
		if rpc {
			if v1At(data, "jsonrpc") != "2.0" || v1At(data, "id") != "1" {
				t.Errorf("%s: frame %d %s: not a JSON-RPC 2.0 response to request 1", what, i, truncateText(string(f.data), 200))
			}
			if r := v1Get(data, "result"); r != nil {
				item = r
			} else {
				item = map[string]any{"error": v1Get(data, "error")}
			}
		}
		isErr := v1Get(item, "error") != nil
		fr := map[string]any{"data": data}
		switch {
		case isErr && (i != len(frames)-1 || f.hasID):
			t.Errorf("%s: frame %d: an error frame must be the last and have no id", what, i)
		case !isErr:
			n, err := strconv.ParseUint(f.id, 10, 64)
			if !f.hasID || err != nil || n <= last {
				t.Errorf("%s: frame %d: id %q after %d, want increasing stream sequences", what, i, f.id, last)
			}
			last = n
			fr["id"] = fmt.Sprintf("<seq-%d>", i+1)
			if m, ok := item.(map[string]any); !ok || len(m) != 1 {
				t.Errorf("%s: frame %d: %s, want one StreamResponse member", what, i, truncateText(string(f.data), 200))
			}
		}
		doc = append(doc, fr)
		items = append(items, item)
	}
	return doc, items
}

// v1CheckDescs checks the items of a stream against want.
func v1CheckDescs(t testing.TB, what string, items []any, want []string) {
	t.Helper()
	got := make([]string, len(items))
	for i, it := range items {
		got[i] = v1Describe(it)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: stream items\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// v1StreamDescs are the items of "stream <n> 0" from its start.
func v1StreamDescs(n int) []string {
	out := []string{"task TASK_STATE_SUBMITTED", `status TASK_STATE_WORKING ""`,
		fmt.Sprintf("status TASK_STATE_WORKING %q", fmt.Sprintf("streaming %d chunks every 0 ms", n))}
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("artifact stream append=%v last=%v %q", i > 1, i == n, fmt.Sprintf("chunk %d/%d\n", i, n)))
	}
	return append(out, fmt.Sprintf("status TASK_STATE_COMPLETED %q", fmt.Sprintf("streamed %d chunks", n)))
}

// v1Settle waits until the task get answers (decoded) is terminal or
// waiting for input.
func v1Settle(t testing.TB, what string, get func() any) {
	t.Helper()
	waitFor(t, 30*time.Second, what+" settled", func() (bool, error) {
		switch st := v03Str(get(), "status", "state"); st {
		case "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED",
			"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED":
			return true, nil
		case "":
			return false, errors.New("no task state")
		}
		return false, nil
	})
}

// v1Headers are the request headers: A2A-Version 1.0 and hdr (an empty
// value removes a header).
func v1Headers(hdr map[string]string) map[string]string {
	out := map[string]string{"A2A-Version": "1.0"}
	maps.Copy(out, hdr)
	return out
}

// ---- JSON-RPC ----

// v1Case is one golden JSON-RPC request.
type v1Case struct {
	name   string
	method string
	// params is JSON; raw, if set, is the whole body instead. Both, and
	// the values of hdr, may hold {{name}}.
	params, raw string
	hdr         map[string]string
	stream      bool
	// code is the JSON-RPC error code wanted, 0 for a result.
	code int
	// want are values wanted in the result (v1At paths); frames the
	// items of a stream (v1Describe).
	want   map[string]string
	frames []string
	// settle: wait for the result's task to settle.
	settle bool
	// nullID: the answer's id is null (the request's could not be read).
	nullID bool
}

// v1Post posts body to the JSON-RPC endpoint and returns the answer.
func v1Post(ctx context.Context, t testing.TB, ts *testServer, body []byte, hdr map[string]string, stream bool) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	setHeaders(req, v1Headers(hdr))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", truncateText(string(body), 100), err)
	}
	return resp
}

// v1Call posts one request that must be answered with one JSON-RPC
// response and returns it decoded.
func v1Call(ctx context.Context, t testing.TB, ts *testServer, method string, params any) any {
	t.Helper()
	resp := v1Post(ctx, t, ts, v03Request(t, method, params), nil, false)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %s %s %v", method, resp.Status, truncateText(string(b), 300), err)
	}
	return pb03JSON(b)
}

// v1Result calls and fails on an error.
func v1Result(ctx context.Context, t testing.TB, ts *testServer, method string, params any) any {
	t.Helper()
	r := v1Call(ctx, t, ts, method, params)
	if v1Get(r, "error") != nil || v1Get(r, "result") == nil {
		t.Fatalf("%s: %s, want a result", method, truncateText(v1At(r, ""), 300))
	}
	return v1Get(r, "result")
}

// v1Send sends text with SendMessage (blocking) and returns the task.
func v1Send(ctx context.Context, t testing.TB, ts *testServer, messageID, text, contextID string) any {
	t.Helper()
	return v1Get(v1Result(ctx, t, ts, "SendMessage", map[string]any{"message": v1UserMessage(messageID, text, contextID)}), "task")
}

// v1UserMessage is a v1.0 user message of one text part.
func v1UserMessage(messageID, text, contextID string) map[string]any {
	m := map[string]any{"messageId": messageID, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		m["contextId"] = contextID
	}
	return m
}

// v1Msg is v1UserMessage as JSON, for the cases' params and bodies.
func v1Msg(id, text string) string {
	return `{"messageId":"` + id + `","role":"ROLE_USER","parts":[{"text":"` + text + `"}]}`
}

// Values the golden cases want.
const (
	v1Completed     = "TASK_STATE_COMPLETED"
	v1InputRequired = "TASK_STATE_INPUT_REQUIRED"
	v1NotFound      = "TASK_NOT_FOUND"
	v1InvalidParams = "INVALID_PARAMS"
	v1NoMethod      = "METHOD_NOT_FOUND"
)

// v1SetupTasks makes the tasks both golden tests start from, each through
// its own binding: send makes a task (recording it in v as name), state
// reads the state of the task recorded as name.
func v1SetupTasks(t testing.TB, v *v1Vars, send func(name, text, contextID string), state func(name string) string) {
	t.Helper()
	send("done", "echo done", "")
	send("asking", "ask", "")
	send("asking2", "ask", "")
	send("other", "echo other", "")
	// Two tasks of one context, for ListTasks: list2 is the newer.
	send("list1", "echo list one", "")
	send("list2", "echo list two", v.vars["list1Ctx"])
	if v.vars["list2Ctx"] != v.vars["list1Ctx"] {
		t.Fatalf("setup: list2 in context %s, want list1's %s", v.vars["list2Ctx"], v.vars["list1Ctx"])
	}
	for name, want := range map[string]string{"done": v1Completed, "asking": v1InputRequired, "asking2": v1InputRequired, "list2": v1Completed} {
		if st := state(name); st != want {
			t.Fatalf("setup task %s: %s, want %s", name, st, want)
		}
	}
}

func TestV1Golden(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })
	_, es := streamJS(ctx, t, ts.NATSURL)
	const regenerate = "go test -run TestV1Golden ./cmd/a2abus/ -rewrite-v1"

	// The setup: tasks in known states.
	v := newV1Vars()
	v1SetupTasks(t, v, func(name, text, contextID string) {
		v.task(t, name, v1Send(ctx, t, ts, "setup-"+name, text, contextID))
	}, func(name string) string {
		return v03Str(v1Result(ctx, t, ts, "GetTask", map[string]any{"id": v.vars[name]}), "status", "state")
	})
	page := v1Result(ctx, t, ts, "ListTasks", map[string]any{"contextId": v.vars["list1Ctx"], "pageSize": 1})
	if tok := v03Str(page, "nextPageToken"); tok == "" || v1At(page, "tasks.0.id") != v.vars["list2"] {
		t.Fatalf("setup: ListTasks page 1 %s, want list2 and a next page", v1At(page, ""))
	} else {
		v.set("pageToken", tok, "<page-token:list>")
	}
	s, r := v03Open(ctx, t, ts.URL+"/", "SendStreamingMessage", map[string]any{"message": map[string]any{"messageId": "setup-streamed",
		"role": "ROLE_USER", "parts": []any{map[string]any{"text": "stream 3 0"}}}}, v1Headers(nil))
	if s == nil {
		t.Fatalf("setup stream: %s", r)
	}
	streamed, err := s.read(-1)
	s.close()
	if err != nil || len(streamed) != 7 {
		t.Fatalf("setup stream: %v, %v; want 7 frames", streamed, err)
	}
	v.task(t, "streamed", v1Get(streamed[0].result, "task"))
	v.set("resumeFrom", strconv.FormatUint(streamed[2].seq, 10), "<seq:resume-from>")
	v.set("head", strconv.FormatUint(streamed[len(streamed)-1].seq, 10), "<seq:head>")
	hook := "http://127.0.0.1:9/hook" // configs of finished tasks: nothing is sent

	b64 := base64.StdEncoding.EncodeToString([]byte("hello, file"))
	cases := []v1Case{
		// SendMessage
		{name: "send_message_echo", method: "SendMessage", params: `{"message":` + v1Msg("golden-echo", "echo golden") + `}`,
			want: map[string]string{"task.status.state": v1Completed, "task.artifacts.0.artifactId": "echo", "task.artifacts.0.parts": `[{"text":"echo golden"}]`,
				"task.history.0.messageId": "golden-echo", "task.history.0.role": "ROLE_USER"}},
		{name: "send_message_parts", method: "SendMessage",
			params: `{"message":{"messageId":"golden-parts","role":"ROLE_USER","metadata":{"trace":"t1"},"parts":[` +
				`{"text":"echo parts","metadata":{"lang":"en"}},` +
				`{"raw":"` + b64 + `","mediaType":"text/plain","filename":"hello.txt"},` +
				`{"url":"https://example.com/logo.png","mediaType":"image/png","filename":"logo.png"},` +
				`{"data":{"answer":42,"list":[1,"two"],"nested":{"ok":true}}}]},` +
				`"configuration":{"acceptedOutputModes":["text/plain"]},"metadata":{"req":"r1"}}`,
			want: map[string]string{"task.status.state": v1Completed, "task.artifacts.0.parts.1.raw": b64, "task.artifacts.0.parts.2.url": "https://example.com/logo.png",
				"task.artifacts.0.parts.3.data": `{"answer":42,"list":[1,"two"],"nested":{"ok":true}}`, "task.history.0.metadata": `{"trace":"t1"}`}},
		// The proto field names are accepted too.
		{name: "send_message_snake_case", method: "SendMessage",
			params: `{"message":{"message_id":"golden-snake","role":"ROLE_USER","parts":[{"text":"echo snake"}]},"configuration":{"history_length":1}}`,
			want:   map[string]string{"task.status.state": v1Completed, "task.history.0.messageId": "golden-snake"}},
		{name: "send_message_return_immediately", method: "SendMessage", settle: true,
			params: `{"message":` + v1Msg("golden-immediate", "echo later") + `,"configuration":{"returnImmediately":true}}`,
			want:   map[string]string{"task.status.state": "TASK_STATE_SUBMITTED", "task.artifacts": "<none>"}},
		{name: "send_message_history_length_0", method: "SendMessage",
			params: `{"message":` + v1Msg("golden-h0", "echo h0") + `,"configuration":{"historyLength":0}}`,
			want:   map[string]string{"task.status.state": v1Completed, "task.history": "<none>", "task.artifacts.0.artifactId": "echo"}},
		{name: "send_message_ask", method: "SendMessage", params: `{"message":` + v1Msg("golden-ask", "ask") + `}`,
			want: map[string]string{"task.status.state": v1InputRequired, "task.status.message.role": "ROLE_AGENT", "task.status.message.parts.0.text": "What is your name?"}},
		{name: "send_message_followup", method: "SendMessage",
			params: `{"message":{"messageId":"golden-followup","role":"ROLE_USER","taskId":"{{asking}}","contextId":"{{askingCtx}}","parts":[{"text":"Golden"}]}}`,
			want: map[string]string{"task.id": "{{asking}}", "task.status.state": v1Completed, "task.artifacts.0.artifactId": "answer",
				"task.artifacts.0.parts.0.text": "Hello, Golden!"}},
		{name: "send_message_followup_terminal", method: "SendMessage", code: -32004,
			params: `{"message":{"messageId":"golden-followup-done","role":"ROLE_USER","taskId":"{{done}}","parts":[{"text":"more"}]}}`},
		{name: "send_message_context_mismatch", method: "SendMessage", code: -32602,
			params: `{"message":{"messageId":"golden-ctx","role":"ROLE_USER","taskId":"{{asking2}}","contextId":"{{doneCtx}}","parts":[{"text":"x"}]}}`},
		{name: "send_message_unknown_task", method: "SendMessage", code: -32001,
			params: `{"message":{"messageId":"golden-unknown","role":"ROLE_USER","taskId":"no-such-task","parts":[{"text":"echo"}]}}`},
		{name: "send_message_role_agent", method: "SendMessage", code: -32602,
			params: `{"message":{"messageId":"golden-agent","role":"ROLE_AGENT","parts":[{"text":"echo"}]}}`},
		{name: "send_message_no_parts", method: "SendMessage", code: -32602,
			params: `{"message":{"messageId":"golden-noparts","role":"ROLE_USER","parts":[]}}`},
		{name: "send_message_no_message_id", method: "SendMessage", code: -32602,
			params: `{"message":{"role":"ROLE_USER","parts":[{"text":"echo"}]}}`},
		{name: "send_message_negative_history", method: "SendMessage", code: -32602,
			params: `{"message":` + v1Msg("golden-hneg", "echo") + `,"configuration":{"historyLength":-1}}`},
		// GetTask
		{name: "get_task", method: "GetTask", params: `{"id":"{{done}}"}`,
			want: map[string]string{"id": "{{done}}", "status.state": v1Completed, "artifacts.0.parts.0.text": "echo done", "history.0.messageId": "setup-done"}},
		{name: "get_task_history_length_1", method: "GetTask", params: `{"id":"{{asking}}","historyLength":1}`,
			want: map[string]string{"id": "{{asking}}", "history.1": "<none>", "history.0.role": "ROLE_AGENT"}},
		{name: "get_task_history_length_0", method: "GetTask", params: `{"id":"{{done}}","historyLength":0}`,
			want: map[string]string{"id": "{{done}}", "history": "<none>", "artifacts.0.artifactId": "echo"}},
		{name: "get_task_input_required", method: "GetTask", params: `{"id":"{{asking2}}"}`,
			want: map[string]string{"id": "{{asking2}}", "status.state": v1InputRequired}},
		{name: "get_task_unknown", method: "GetTask", code: -32001, params: `{"id":"no-such-task"}`},
		{name: "get_task_no_id", method: "GetTask", code: -32602, params: `{}`},
		{name: "get_task_negative_history", method: "GetTask", code: -32602, params: `{"id":"{{done}}","historyLength":-1}`},
		{name: "get_task_other_tenant", method: "GetTask", code: -32001, params: `{"tenant":"acme","id":"{{done}}"}`},
		// ListTasks: newest status first.
		{name: "list_tasks_context", method: "ListTasks", params: `{"contextId":"{{list1Ctx}}"}`,
			want: map[string]string{"tasks.0.id": "{{list2}}", "tasks.1.id": "{{list1}}", "tasks.2": "<none>", "totalSize": "2", "pageSize": "50",
				"nextPageToken": "", "tasks.0.artifacts": "<none>"}},
		{name: "list_tasks_page_1", method: "ListTasks", params: `{"contextId":"{{list1Ctx}}","pageSize":1}`,
			want: map[string]string{"tasks.0.id": "{{list2}}", "tasks.1": "<none>", "totalSize": "2", "pageSize": "1", "nextPageToken": "{{pageToken}}"}},
		{name: "list_tasks_page_2", method: "ListTasks", params: `{"contextId":"{{list1Ctx}}","pageSize":1,"pageToken":"{{pageToken}}"}`,
			want: map[string]string{"tasks.0.id": "{{list1}}", "tasks.1": "<none>", "totalSize": "2", "nextPageToken": ""}},
		{name: "list_tasks_filters", method: "ListTasks",
			params: `{"contextId":"{{list1Ctx}}","status":"TASK_STATE_COMPLETED","statusTimestampAfter":"2000-01-01T00:00:00Z","historyLength":1,"includeArtifacts":true}`,
			want: map[string]string{"tasks.0.id": "{{list2}}", "tasks.1.id": "{{list1}}", "totalSize": "2", "tasks.0.artifacts.0.artifactId": "echo",
				"tasks.0.history.1": "<none>"}},
		{name: "list_tasks_status_none", method: "ListTasks", params: `{"contextId":"{{list1Ctx}}","status":"TASK_STATE_WORKING"}`,
			want: map[string]string{"tasks": "[]", "totalSize": "0", "nextPageToken": ""}},
		{name: "list_tasks_after_now", method: "ListTasks", params: `{"contextId":"{{list1Ctx}}","statusTimestampAfter":"2999-01-01T00:00:00Z"}`,
			want: map[string]string{"tasks": "[]", "totalSize": "0"}},
		{name: "list_tasks_bad_page_size", method: "ListTasks", code: -32602, params: `{"pageSize":101}`},
		{name: "list_tasks_bad_status", method: "ListTasks", code: -32602, params: `{"status":"completed"}`},
		{name: "list_tasks_bad_page_token", method: "ListTasks", code: -32602, params: `{"pageToken":"not-a-token"}`},
		// CancelTask
		{name: "cancel_task", method: "CancelTask", params: `{"id":"{{asking2}}","metadata":{"why":"golden"}}`,
			want: map[string]string{"id": "{{asking2}}", "status.state": "TASK_STATE_CANCELED"}},
		{name: "cancel_task_terminal", method: "CancelTask", code: -32002, params: `{"id":"{{done}}"}`},
		{name: "cancel_task_unknown", method: "CancelTask", code: -32001, params: `{"id":"no-such-task"}`},
		// Push notification configs.
		{name: "create_push_config", method: "CreateTaskPushNotificationConfig",
			params: `{"taskId":"{{done}}","id":"cfg-a","url":"` + hook + `/a","token":"tok-a","authentication":{"scheme":"Bearer","credentials":"secret"}}`,
			want:   map[string]string{"taskId": "{{done}}", "id": "cfg-a", "url": hook + "/a"}},
		{name: "create_push_config_second", method: "CreateTaskPushNotificationConfig",
			params: `{"taskId":"{{done}}","id":"cfg-b","url":"` + hook + `/b"}`,
			want:   map[string]string{"taskId": "{{done}}", "id": "cfg-b"}},
		{name: "create_push_config_no_id", method: "CreateTaskPushNotificationConfig",
			params: `{"taskId":"{{other}}","url":"` + hook + `/c"}`,
			want:   map[string]string{"taskId": "{{other}}", "url": hook + "/c"}},
		{name: "create_push_config_unknown_task", method: "CreateTaskPushNotificationConfig", code: -32001,
			params: `{"taskId":"no-such-task","url":"` + hook + `"}`},
		{name: "create_push_config_no_url", method: "CreateTaskPushNotificationConfig", code: -32602,
			params: `{"taskId":"{{done}}","id":"cfg-x"}`},
		{name: "create_push_config_bad_scheme", method: "CreateTaskPushNotificationConfig", code: -32602,
			params: `{"taskId":"{{done}}","url":"ftp://example.com/"}`},
		{name: "get_push_config", method: "GetTaskPushNotificationConfig", params: `{"taskId":"{{done}}","id":"cfg-b"}`,
			want: map[string]string{"taskId": "{{done}}", "id": "cfg-b", "url": hook + "/b"}},
		{name: "get_push_config_unknown", method: "GetTaskPushNotificationConfig", code: -32001, params: `{"taskId":"{{done}}","id":"no-such-config"}`},
		{name: "get_push_config_no_id", method: "GetTaskPushNotificationConfig", code: -32602, params: `{"taskId":"{{done}}"}`},
		{name: "list_push_configs", method: "ListTaskPushNotificationConfigs", params: `{"taskId":"{{done}}"}`,
			want: map[string]string{"configs.0.id": "cfg-a", "configs.1.id": "cfg-b", "configs.2": "<none>"}},
		{name: "list_push_configs_page", method: "ListTaskPushNotificationConfigs", params: `{"taskId":"{{done}}","pageSize":1}`,
			want: map[string]string{"configs.0.id": "cfg-a", "configs.1": "<none>", "nextPageToken": "cfg-a"}},
		{name: "list_push_configs_page_2", method: "ListTaskPushNotificationConfigs", params: `{"taskId":"{{done}}","pageSize":1,"pageToken":"cfg-a"}`,
			want: map[string]string{"configs.0.id": "cfg-b", "configs.1": "<none>"}},
		{name: "list_push_configs_empty", method: "ListTaskPushNotificationConfigs", params: `{"taskId":"{{asking}}"}`,
			want: map[string]string{"configs": "[]"}},
		{name: "list_push_configs_unknown_task", method: "ListTaskPushNotificationConfigs", code: -32001, params: `{"taskId":"no-such-task"}`},
		{name: "delete_push_config", method: "DeleteTaskPushNotificationConfig", params: `{"taskId":"{{done}}","id":"cfg-a"}`,
			want: map[string]string{"": "{}"}},
		// Delete is idempotent (specification-v1.md §3.1.10).
		{name: "delete_push_config_again", method: "DeleteTaskPushNotificationConfig", params: `{"taskId":"{{done}}","id":"cfg-a"}`,
			want: map[string]string{"": "{}"}},
		{name: "get_push_config_deleted", method: "GetTaskPushNotificationConfig", code: -32001, params: `{"taskId":"{{done}}","id":"cfg-a"}`},
		{name: "list_push_configs_after_delete", method: "ListTaskPushNotificationConfigs", params: `{"taskId":"{{done}}"}`,
			want: map[string]string{"configs.0.id": "cfg-b", "configs.1": "<none>"}},
		// GetExtendedAgentCard: the card declares no extended card.
		{name: "get_extended_agent_card", method: "GetExtendedAgentCard", code: -32004, params: `{}`},
		// SendStreamingMessage
		{name: "send_streaming_message_echo", method: "SendStreamingMessage", stream: true,
			params: `{"message":` + v1Msg("golden-stream-echo", "echo streamed") + `}`,
			frames: []string{"task TASK_STATE_SUBMITTED", `status TASK_STATE_WORKING ""`, `artifact echo append=false last=true "echo streamed"`, `status TASK_STATE_COMPLETED ""`}},
		{name: "send_streaming_message_chunks", method: "SendStreamingMessage", stream: true,
			params: `{"message":` + v1Msg("golden-stream-chunks", "stream 2 0") + `}`, frames: v1StreamDescs(2)},
		{name: "send_streaming_message_ask", method: "SendStreamingMessage", stream: true,
			params: `{"message":` + v1Msg("golden-stream-ask", "ask") + `}`,
			frames: []string{"task TASK_STATE_SUBMITTED", `status TASK_STATE_WORKING ""`, `status TASK_STATE_INPUT_REQUIRED "What is your name?"`}},
		{name: "send_streaming_message_role_agent", method: "SendStreamingMessage", stream: true, code: -32602,
			params: `{"message":{"messageId":"golden-stream-agent","role":"ROLE_AGENT","parts":[{"text":"echo"}]}}`},
		{name: "send_streaming_message_unknown_task", method: "SendStreamingMessage", stream: true, code: -32001,
			params: `{"message":{"messageId":"golden-stream-unknown","role":"ROLE_USER","taskId":"no-such-task","parts":[{"text":"echo"}]}}`},
		// SubscribeToTask
		{name: "subscribe_to_task_resume", method: "SubscribeToTask", stream: true, params: `{"id":"{{streamed}}","lastEventId":"{{resumeFrom}}"}`,
			frames: v1StreamDescs(3)[3:]},
		{name: "subscribe_to_task_resume_header", method: "SubscribeToTask", stream: true, params: `{"id":"{{streamed}}"}`,
			hdr: map[string]string{"Last-Event-ID": "{{resumeFrom}}"}, frames: v1StreamDescs(3)[3:]},
		{name: "subscribe_to_task_at_head", method: "SubscribeToTask", stream: true, params: `{"id":"{{streamed}}","lastEventId":"{{head}}"}`,
			frames: []string{}},
		{name: "subscribe_to_task_terminal", method: "SubscribeToTask", stream: true, code: -32004, params: `{"id":"{{done}}"}`},
		{name: "subscribe_to_task_unknown", method: "SubscribeToTask", stream: true, code: -32001, params: `{"id":"no-such-task"}`},
		{name: "subscribe_to_task_bad_last_event_id", method: "SubscribeToTask", stream: true, code: -32602, params: `{"id":"{{streamed}}","lastEventId":"abc"}`},
		// The envelope.
		{name: "error_parse", raw: `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{`, code: -32700, nullID: true},
		{name: "error_invalid_request_version", raw: `{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"{{done}}"}}`, code: -32600},
		{name: "error_invalid_request_no_method", raw: `{"jsonrpc":"2.0","id":1,"params":{"id":"{{done}}"}}`, code: -32600},
		{name: "error_invalid_request_object_id", raw: `{"jsonrpc":"2.0","id":{"x":1},"method":"GetTask","params":{"id":"{{done}}"}}`, code: -32600, nullID: true},
		{name: "error_invalid_request_batch", raw: `[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"{{done}}"}}]`, code: -32600, nullID: true},
		{name: "error_method_not_found", method: "NoSuchMethod", code: -32601, params: `{}`},
		{name: "error_legacy_method", method: "tasks/get", code: -32601, params: `{"id":"{{done}}"}`},
		{name: "error_invalid_params", method: "GetTask", code: -32602, params: `["{{done}}"]`},
		{name: "error_version_not_supported", method: "GetTask", code: -32009, params: `{"id":"{{done}}"}`,
			hdr: map[string]string{"A2A-Version": "9.9"}},
		{name: "version_absent", method: "GetTask", params: `{"id":"{{done}}","historyLength":0}`,
			hdr: map[string]string{"A2A-Version": ""}, want: map[string]string{"id": "{{done}}", "status.state": v1Completed}},
	}

	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("case %s twice", tc.name)
		}
		seen[tc.name] = true
		hdr := map[string]string{}
		for k, val := range tc.hdr {
			hdr[k] = v.expand(t, tc.name, val)
		}
		req := map[string]any{}
		var body []byte
		if tc.raw != "" {
			body = []byte(v.expand(t, tc.name, tc.raw))
			req["body"] = pb03JSON(body)
		} else {
			params := v.expand(t, tc.name, tc.params)
			body = v03Request(t, tc.method, json.RawMessage(params))
			req["method"], req["params"] = tc.method, pb03JSON([]byte(params))
		}
		if len(hdr) > 0 {
			req["headers"] = hdr
		}
		doc := map[string]any{"request": req}
		was := readStreamState(t, es)
		resp := v1Post(ctx, t, ts, body, hdr, tc.stream)
		ct := resp.Header.Get("Content-Type")
		var code int
		var result any
		switch {
		case resp.StatusCode == http.StatusOK && tc.stream && strings.HasPrefix(ct, "text/event-stream"):
			frames, err := v1ReadFrames(newSSEParser(resp.Body))
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			out, items := v1CheckFrames(t, tc.name, frames, true)
			if n := len(items); n > 0 && v1Get(items[n-1], "error") != nil {
				code, _ = strconv.Atoi(v1At(items[n-1], "error.code"))
				items = items[:n-1]
			}
			if tc.code == 0 {
				v1CheckDescs(t, tc.name, items, tc.frames)
			}
			doc["contentType"], doc["frames"] = "text/event-stream", out
		case resp.StatusCode == http.StatusOK && ct == "application/json":
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			r := pb03JSON(b)
			if tc.stream {
				doc["contentType"] = ct
			}
			doc["response"] = r
			m, _ := r.(map[string]any)
			wantID := "1"
			if tc.nullID {
				wantID = "null"
			}
			if v1At(m, "jsonrpc") != "2.0" || v1At(m, "id") != wantID || (m["result"] == nil) == (m["error"] == nil) || len(m) != 3 {
				t.Errorf("%s: %s, want a JSON-RPC 2.0 response with id %s and one of result and error", tc.name, truncateText(string(b), 300), wantID)
			}
			if e := m["error"]; e != nil {
				code, _ = strconv.Atoi(v1At(e, "code"))
				v1CheckErrorData(t, tc.name, e, code)
			}
			result = m["result"]
		default:
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
			resp.Body.Close()
			t.Fatalf("%s: HTTP %s %q %s, want 200 application/json or text/event-stream", tc.name, resp.Status, ct, truncateText(string(b), 300))
		}
		if code != tc.code {
			t.Errorf("%s: error code %d, want %d", tc.name, code, tc.code)
		}
		if tc.code == 0 && !tc.stream {
			if len(tc.want) == 0 {
				t.Fatalf("%s: a result with nothing wanted of it", tc.name)
			}
			v1CheckWant(t, tc.name, result, tc.want, v)
		}
		if tc.settle {
			id := v1At(result, "task.id")
			v1Settle(t, tc.name, func() any { return v1Result(ctx, t, ts, "GetTask", map[string]any{"id": id}) })
		}
		// Errors change nothing.
		if now := readStreamState(t, es); tc.code != 0 && now != was {
			t.Errorf("%s: the event stream changed: %+v, want %+v", tc.name, now, was)
		}
		v1Golden(t, filepath.Join("testdata", "v1"), tc.name, doc, v.known, *v1Rewrite, regenerate)
	}
	v1Stale(t, filepath.Join("testdata", "v1"), seen, *v1Rewrite)
}

// v1ErrorReasons are the ErrorInfo reasons of the JSON-RPC codes
// (DIGEST §5).
var v1ErrorReasons = map[int]string{
	-32700: "PARSE_ERROR", -32600: "INVALID_REQUEST", -32601: "METHOD_NOT_FOUND", -32602: "INVALID_PARAMS",
	-32001: "TASK_NOT_FOUND", -32002: "TASK_NOT_CANCELABLE", -32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
	-32004: "UNSUPPORTED_OPERATION", -32007: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", -32009: "VERSION_NOT_SUPPORTED",
}

// v1CheckErrorData checks a v1.0 JSON-RPC error: a message, and data an
// array with the ErrorInfo of its code.
func v1CheckErrorData(t testing.TB, what string, e any, code int) {
	t.Helper()
	info := v1Get(e, "data")
	arr, ok := info.([]any)
	if v1At(e, "message") == "" || !ok || len(arr) != 1 {
		t.Errorf("%s: error %s, want a message and data [ErrorInfo]", what, truncateText(v1At(e, ""), 300))
		return
	}
	if v1At(arr[0], "@type") != "type.googleapis.com/google.rpc.ErrorInfo" || v1At(arr[0], "domain") != "a2a-protocol.org" || v1At(arr[0], "reason") != v1ErrorReasons[code] {
		t.Errorf("%s: error data %s, want the ErrorInfo of a2a-protocol.org with reason %s", what, v1At(arr, ""), v1ErrorReasons[code])
	}
}

// ---- HTTP+JSON ----

// restGoldenCase is one golden REST request.
type restGoldenCase struct {
	name, method string
	// path, body and the values of hdr may hold {{name}}.
	path, body string
	hdr        map[string]string
	// reason is the ErrorInfo reason of the error wanted ("" for 200);
	// the HTTP status and google.rpc code are the spec's for it.
	reason string
	// stream: a 200 answer is an SSE stream, of the items frames.
	stream bool
	frames []string
	// want are values wanted in a 200 body (v1At paths).
	want map[string]string
	// settle: wait for the answer's task to settle.
	settle bool
	// allow: a known route asked with another method, answered 405 with
	// this Allow header (RFC 9110 §15.5.6).
	allow string
}

// restSpecStatus is the HTTP status and google.rpc code of each error
// reason (specification-v1.md §5.4; DIGEST §5 for the JSON-RPC errors).
var restSpecStatus = map[string]struct {
	code int
	name string
}{
	"TASK_NOT_FOUND":        {404, "NOT_FOUND"},
	"TASK_NOT_CANCELABLE":   {400, "FAILED_PRECONDITION"},
	"UNSUPPORTED_OPERATION": {400, "FAILED_PRECONDITION"},
	"VERSION_NOT_SUPPORTED": {400, "FAILED_PRECONDITION"},
	"PARSE_ERROR":           {400, "INVALID_ARGUMENT"},
	"INVALID_REQUEST":       {400, "INVALID_ARGUMENT"},
	"INVALID_PARAMS":        {400, "INVALID_ARGUMENT"},
	"METHOD_NOT_FOUND":      {404, "UNIMPLEMENTED"},
}

func TestRESTGolden(t *testing.T) {
	t.Parallel()
	ctx := restContext(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })
	_, es := streamJS(ctx, t, ts.NATSURL)
	const regenerate = "go test -run TestRESTGolden ./cmd/a2abus/ -rewrite-rest"

	v := newV1Vars()
	send := func(name, prefix, text, contextID string) {
		t.Helper()
		m := v1UserMessage("setup-"+name, text, contextID)
		r := mustREST(ctx, t, http.MethodPost, ts.URL, prefix+"/message:send", jsonOf(t, map[string]any{"message": m}), nil)
		if r.status != http.StatusOK {
			t.Fatalf("setup %s: %v", name, r)
		}
		v.task(t, name, v1Get(pb03JSON(r.body), "task"))
	}
	get := func(prefix, id string) any {
		t.Helper()
		r := mustREST(ctx, t, http.MethodGet, ts.URL, prefix+"/tasks/"+id, "", nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s/tasks/%s: %v", prefix, id, r)
		}
		return pb03JSON(r.body)
	}
	v1SetupTasks(t, v, func(name, text, contextID string) { send(name, "", text, contextID) },
		func(name string) string { return v03Str(get("", v.vars[name]), "status", "state") })
	send("acme", "/acme", "echo acme", "")
	page := mustREST(ctx, t, http.MethodGet, ts.URL, "/tasks?pageSize=1&contextId="+v.vars["list1Ctx"], "", nil)
	if tok := v1At(pb03JSON(page.body), "nextPageToken"); page.status != http.StatusOK || tok == "" || tok == "<none>" {
		t.Fatalf("setup: GET /tasks page 1: %v, want a next page", page)
	} else {
		v.set("pageToken", tok, "<page-token:list>")
	}
	rs := mustOpenREST(ctx, t, http.MethodPost, ts.URL, "/message:stream", `{"message":{"messageId":"setup-streamed","role":"ROLE_USER","parts":[{"text":"stream 3 0"}]}}`, nil)
	streamed, err := rs.read(-1)
	rs.close()
	if err != nil || len(streamed) != 7 {
		t.Fatalf("setup stream: %v, %v; want 7 frames", streamed, err)
	}
	first, ok := streamed[0].event.(*a2a.Task)
	if !ok {
		t.Fatalf("setup stream: first frame %s, want the task", streamed[0])
	}
	v.task(t, "streamed", map[string]any{"id": string(first.ID), "contextId": first.ContextID})
	v.set("resumeFrom", strconv.FormatUint(streamed[2].seq, 10), "<seq:resume-from>")
	v.set("head", strconv.FormatUint(streamed[len(streamed)-1].seq, 10), "<seq:head>")
	hook := "http://127.0.0.1:9/hook" // configs of finished tasks: nothing is sent

	b64 := base64.StdEncoding.EncodeToString([]byte("hello, file"))
	cases := []restGoldenCase{
		// POST /message:send
		{name: "message_send_echo", method: "POST", path: "/message:send", body: `{"message":` + v1Msg("golden-echo", "echo golden") + `}`,
			want: map[string]string{"task.status.state": v1Completed, "task.artifacts.0.parts": `[{"text":"echo golden"}]`, "task.history.0.messageId": "golden-echo"}},
		{name: "message_send_parts", method: "POST", path: "/message:send",
			body: `{"message":{"messageId":"golden-parts","role":"ROLE_USER","metadata":{"trace":"t1"},"parts":[` +
				`{"text":"echo parts","metadata":{"lang":"en"}},` +
				`{"raw":"` + b64 + `","mediaType":"text/plain","filename":"hello.txt"},` +
				`{"url":"https://example.com/logo.png","mediaType":"image/png","filename":"logo.png"},` +
				`{"data":{"answer":42,"list":[1,"two"],"nested":{"ok":true}}}]},` +
				`"configuration":{"acceptedOutputModes":["text/plain"]},"metadata":{"req":"r1"}}`,
			want: map[string]string{"task.status.state": v1Completed, "task.artifacts.0.parts.1.raw": b64, "task.artifacts.0.parts.3.data.answer": "42"}},
		{name: "message_send_return_immediately", method: "POST", path: "/message:send", settle: true,
			body: `{"message":` + v1Msg("golden-immediate", "echo later") + `,"configuration":{"returnImmediately":true}}`,
			want: map[string]string{"task.status.state": "TASK_STATE_SUBMITTED"}},
		{name: "message_send_history_length_0", method: "POST", path: "/message:send",
			body: `{"message":` + v1Msg("golden-h0", "echo h0") + `,"configuration":{"historyLength":0}}`,
			want: map[string]string{"task.status.state": v1Completed, "task.history": "<none>"}},
		{name: "message_send_ask", method: "POST", path: "/message:send", body: `{"message":` + v1Msg("golden-ask", "ask") + `}`,
			want: map[string]string{"task.status.state": v1InputRequired, "task.status.message.parts.0.text": "What is your name?"}},
		{name: "message_send_followup", method: "POST", path: "/message:send",
			body: `{"message":{"messageId":"golden-followup","role":"ROLE_USER","taskId":"{{asking}}","contextId":"{{askingCtx}}","parts":[{"text":"Golden"}]}}`,
			want: map[string]string{"task.id": "{{asking}}", "task.status.state": v1Completed, "task.artifacts.0.parts.0.text": "Hello, Golden!"}},
		{name: "message_send_followup_terminal", method: "POST", path: "/message:send", reason: "UNSUPPORTED_OPERATION",
			body: `{"message":{"messageId":"golden-followup-done","role":"ROLE_USER","taskId":"{{done}}","parts":[{"text":"more"}]}}`},
		{name: "message_send_unknown_task", method: "POST", path: "/message:send", reason: v1NotFound,
			body: `{"message":{"messageId":"golden-unknown","role":"ROLE_USER","taskId":"no-such-task","parts":[{"text":"echo"}]}}`},
		{name: "message_send_role_agent", method: "POST", path: "/message:send", reason: v1InvalidParams,
			body: `{"message":{"messageId":"golden-agent","role":"ROLE_AGENT","parts":[{"text":"echo"}]}}`},
		{name: "message_send_bad_json", method: "POST", path: "/message:send", reason: "PARSE_ERROR", body: `{"message":`},
		{name: "message_send_empty_body", method: "POST", path: "/message:send", reason: v1InvalidParams},
		{name: "message_send_a2a_json", method: "POST", path: "/message:send", hdr: map[string]string{"Content-Type": "application/a2a+json"},
			body: `{"message":` + v1Msg("golden-a2a-json", "echo a2a+json") + `}`,
			want: map[string]string{"task.status.state": v1Completed, "task.artifacts.0.parts.0.text": "echo a2a+json"}},
		{name: "message_send_version_9_9", method: "POST", path: "/message:send", hdr: map[string]string{"A2A-Version": "9.9"}, reason: "VERSION_NOT_SUPPORTED",
			body: `{"message":` + v1Msg("golden-v99", "echo") + `}`},
		{name: "message_send_version_query", method: "POST", path: "/message:send?A2A-Version=1.0", hdr: map[string]string{"A2A-Version": ""},
			body: `{"message":` + v1Msg("golden-vq", "echo query") + `}`,
			want: map[string]string{"task.status.state": v1Completed}},
		// POST /message:stream
		{name: "message_stream_echo", method: "POST", path: "/message:stream", stream: true, body: `{"message":` + v1Msg("golden-stream-echo", "echo streamed") + `}`,
			frames: []string{"task TASK_STATE_SUBMITTED", `status TASK_STATE_WORKING ""`, `artifact echo append=false last=true "echo streamed"`, `status TASK_STATE_COMPLETED ""`}},
		{name: "message_stream_chunks", method: "POST", path: "/message:stream", stream: true, body: `{"message":` + v1Msg("golden-stream-chunks", "stream 2 0") + `}`,
			frames: v1StreamDescs(2)},
		{name: "message_stream_ask", method: "POST", path: "/message:stream", stream: true, body: `{"message":` + v1Msg("golden-stream-ask", "ask") + `}`,
			frames: []string{"task TASK_STATE_SUBMITTED", `status TASK_STATE_WORKING ""`, `status TASK_STATE_INPUT_REQUIRED "What is your name?"`}},
		{name: "message_stream_role_agent", method: "POST", path: "/message:stream", stream: true, reason: v1InvalidParams,
			body: `{"message":{"messageId":"golden-stream-agent","role":"ROLE_AGENT","parts":[{"text":"echo"}]}}`},
		{name: "message_stream_bad_json", method: "POST", path: "/message:stream", stream: true, reason: "PARSE_ERROR", body: `{`},
		// GET /tasks/{id}
		{name: "tasks_get", method: "GET", path: "/tasks/{{done}}",
			want: map[string]string{"id": "{{done}}", "status.state": v1Completed, "artifacts.0.parts.0.text": "echo done"}},
		{name: "tasks_get_history_length_1", method: "GET", path: "/tasks/{{asking}}?historyLength=1",
			want: map[string]string{"id": "{{asking}}", "history.1": "<none>", "history.0.role": "ROLE_AGENT"}},
		{name: "tasks_get_history_length_0", method: "GET", path: "/tasks/{{done}}?historyLength=0",
			want: map[string]string{"id": "{{done}}", "history": "<none>"}},
		{name: "tasks_get_input_required", method: "GET", path: "/tasks/{{asking2}}",
			want: map[string]string{"id": "{{asking2}}", "status.state": v1InputRequired}},
		{name: "tasks_get_unknown", method: "GET", path: "/tasks/no-such-task", reason: v1NotFound},
		{name: "tasks_get_bad_history", method: "GET", path: "/tasks/{{done}}?historyLength=abc", reason: v1InvalidParams},
		// GET /tasks
		{name: "tasks_list", method: "GET", path: "/tasks?contextId={{list1Ctx}}",
			want: map[string]string{"tasks.0.id": "{{list2}}", "tasks.1.id": "{{list1}}", "tasks.2": "<none>", "totalSize": "2", "pageSize": "50", "nextPageToken": "",
				"tasks.0.artifacts": "<none>"}},
		{name: "tasks_list_page_1", method: "GET", path: "/tasks?contextId={{list1Ctx}}&pageSize=1",
			want: map[string]string{"tasks.0.id": "{{list2}}", "tasks.1": "<none>", "totalSize": "2", "pageSize": "1", "nextPageToken": "{{pageToken}}"}},
		{name: "tasks_list_page_2", method: "GET", path: "/tasks?contextId={{list1Ctx}}&pageSize=1&pageToken={{pageToken}}",
			want: map[string]string{"tasks.0.id": "{{list1}}", "tasks.1": "<none>", "nextPageToken": ""}},
		{name: "tasks_list_filters", method: "GET",
			path: "/tasks?contextId={{list1Ctx}}&status=TASK_STATE_COMPLETED&statusTimestampAfter=2000-01-01T00:00:00Z&historyLength=1&includeArtifacts=true",
			want: map[string]string{"tasks.0.id": "{{list2}}", "tasks.1.id": "{{list1}}", "tasks.0.artifacts.0.artifactId": "echo", "tasks.0.history.1": "<none>"}},
		{name: "tasks_list_status_none", method: "GET", path: "/tasks?contextId={{list1Ctx}}&status=TASK_STATE_WORKING",
			want: map[string]string{"tasks": "[]", "totalSize": "0", "nextPageToken": ""}},
		{name: "tasks_list_bad_status", method: "GET", path: "/tasks?status=completed", reason: v1InvalidParams},
		{name: "tasks_list_bad_page_size", method: "GET", path: "/tasks?pageSize=101", reason: v1InvalidParams},
		// POST /tasks/{id}:cancel
		{name: "tasks_cancel", method: "POST", path: "/tasks/{{asking2}}:cancel", body: `{"metadata":{"why":"golden"}}`,
			want: map[string]string{"id": "{{asking2}}", "status.state": "TASK_STATE_CANCELED"}},
		{name: "tasks_cancel_terminal", method: "POST", path: "/tasks/{{done}}:cancel", reason: "TASK_NOT_CANCELABLE"},
		{name: "tasks_cancel_unknown", method: "POST", path: "/tasks/no-such-task:cancel", reason: v1NotFound},
		// GET and POST /tasks/{id}:subscribe
		{name: "tasks_subscribe_resume", method: "GET", path: "/tasks/{{streamed}}:subscribe", stream: true,
			hdr: map[string]string{"Last-Event-ID": "{{resumeFrom}}"}, frames: v1StreamDescs(3)[3:]},
		{name: "tasks_subscribe_resume_post", method: "POST", path: "/tasks/{{streamed}}:subscribe", stream: true,
			body: `{"lastEventId":"{{resumeFrom}}"}`, frames: v1StreamDescs(3)[3:]},
		{name: "tasks_subscribe_at_head", method: "GET", path: "/tasks/{{streamed}}:subscribe?lastEventId={{head}}", stream: true, frames: []string{}},
		{name: "tasks_subscribe_terminal", method: "GET", path: "/tasks/{{done}}:subscribe", stream: true, reason: "UNSUPPORTED_OPERATION"},
		{name: "tasks_subscribe_terminal_post", method: "POST", path: "/tasks/{{done}}:subscribe", stream: true, reason: "UNSUPPORTED_OPERATION"},
		{name: "tasks_subscribe_unknown", method: "POST", path: "/tasks/no-such-task:subscribe", stream: true, reason: v1NotFound},
		{name: "tasks_subscribe_bad_last_event_id", method: "GET", path: "/tasks/{{streamed}}:subscribe", stream: true, reason: v1InvalidParams,
			hdr: map[string]string{"Last-Event-ID": "abc"}},
		// Push notification configs.
		{name: "push_create", method: "POST", path: "/tasks/{{done}}/pushNotificationConfigs",
			body: `{"id":"cfg-a","url":"` + hook + `/a","token":"tok-a","authentication":{"scheme":"Bearer","credentials":"secret"}}`,
			want: map[string]string{"taskId": "{{done}}", "id": "cfg-a", "url": hook + "/a"}},
		{name: "push_create_second", method: "POST", path: "/tasks/{{done}}/pushNotificationConfigs",
			body: `{"taskId":"{{done}}","id":"cfg-b","url":"` + hook + `/b"}`,
			want: map[string]string{"taskId": "{{done}}", "id": "cfg-b"}},
		{name: "push_create_no_id", method: "POST", path: "/tasks/{{other}}/pushNotificationConfigs", body: `{"url":"` + hook + `/c"}`,
			want: map[string]string{"taskId": "{{other}}", "url": hook + "/c"}},
		{name: "push_create_unknown_task", method: "POST", path: "/tasks/no-such-task/pushNotificationConfigs", body: `{"url":"` + hook + `"}`, reason: v1NotFound},
		{name: "push_create_no_url", method: "POST", path: "/tasks/{{done}}/pushNotificationConfigs", body: `{"id":"cfg-x"}`, reason: v1InvalidParams},
		{name: "push_create_other_task", method: "POST", path: "/tasks/{{done}}/pushNotificationConfigs", body: `{"taskId":"{{other}}","url":"` + hook + `"}`, reason: v1InvalidParams},
		{name: "push_get", method: "GET", path: "/tasks/{{done}}/pushNotificationConfigs/cfg-b",
			want: map[string]string{"taskId": "{{done}}", "id": "cfg-b", "url": hook + "/b"}},
		{name: "push_get_unknown", method: "GET", path: "/tasks/{{done}}/pushNotificationConfigs/no-such-config", reason: v1NotFound},
		{name: "push_list", method: "GET", path: "/tasks/{{done}}/pushNotificationConfigs",
			want: map[string]string{"configs.0.id": "cfg-a", "configs.1.id": "cfg-b", "configs.2": "<none>"}},
		{name: "push_list_page", method: "GET", path: "/tasks/{{done}}/pushNotificationConfigs?pageSize=1",
			want: map[string]string{"configs.0.id": "cfg-a", "configs.1": "<none>", "nextPageToken": "cfg-a"}},
		{name: "push_list_empty", method: "GET", path: "/tasks/{{asking}}/pushNotificationConfigs", want: map[string]string{"configs": "[]"}},
		{name: "push_list_unknown_task", method: "GET", path: "/tasks/no-such-task/pushNotificationConfigs", reason: v1NotFound},
		{name: "push_delete", method: "DELETE", path: "/tasks/{{done}}/pushNotificationConfigs/cfg-a", want: map[string]string{"": "{}"}},
		{name: "push_delete_again", method: "DELETE", path: "/tasks/{{done}}/pushNotificationConfigs/cfg-a", want: map[string]string{"": "{}"}},
		{name: "push_get_deleted", method: "GET", path: "/tasks/{{done}}/pushNotificationConfigs/cfg-a", reason: v1NotFound},
		{name: "push_list_after_delete", method: "GET", path: "/tasks/{{done}}/pushNotificationConfigs",
			want: map[string]string{"configs.0.id": "cfg-b", "configs.1": "<none>"}},
		// GET /extendedAgentCard: the card declares no extended card.
		{name: "extended_agent_card", method: "GET", path: "/extendedAgentCard", reason: "UNSUPPORTED_OPERATION"},
		// /{tenant}
		{name: "tenant_message_send", method: "POST", path: "/acme/message:send", body: `{"message":` + v1Msg("golden-acme", "echo acme golden") + `}`,
			want: map[string]string{"task.status.state": v1Completed, "task.artifacts.0.parts.0.text": "echo acme golden"}},
		{name: "tenant_tasks_get", method: "GET", path: "/acme/tasks/{{acme}}", want: map[string]string{"id": "{{acme}}", "status.state": v1Completed}},
		{name: "tenant_tasks_list", method: "GET", path: "/acme/tasks?contextId={{acmeCtx}}", want: map[string]string{"tasks.0.id": "{{acme}}", "totalSize": "1"}},
		{name: "tenant_task_of_default_tenant", method: "GET", path: "/acme/tasks/{{done}}", reason: v1NotFound},
		{name: "tenant_default_task_of_tenant", method: "GET", path: "/tasks/{{acme}}", reason: v1NotFound},
		// Routes.
		{name: "route_unknown", method: "GET", path: "/nope", reason: v1NoMethod},
		{name: "route_get_message_send", method: "GET", path: "/message:send", reason: v1NoMethod, allow: "POST"},
		{name: "route_delete_task", method: "DELETE", path: "/tasks/{{done}}", reason: v1NoMethod, allow: "GET"},
		{name: "route_get_cancel", method: "GET", path: "/tasks/{{done}}:cancel", reason: v1NoMethod, allow: "POST"},
		{name: "route_put_push_config", method: "PUT", path: "/tasks/{{done}}/pushNotificationConfigs/cfg-b", body: `{}`, reason: v1NoMethod, allow: "GET, DELETE"},
		{name: "route_delete_push_configs", method: "DELETE", path: "/acme/tasks/{{done}}/pushNotificationConfigs", reason: v1NoMethod, allow: "GET, POST"},
		{name: "route_put_subscribe", method: "PUT", path: "/tasks/{{done}}:subscribe", reason: v1NoMethod, allow: "GET, POST"},
	}

	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("case %s twice", tc.name)
		}
		seen[tc.name] = true
		path, body := v.expand(t, tc.name, tc.path), v.expand(t, tc.name, tc.body)
		hdr := map[string]string{}
		for k, val := range tc.hdr {
			hdr[k] = v.expand(t, tc.name, val)
		}
		req := map[string]any{"method": tc.method, "path": path}
		if body != "" {
			req["body"] = pb03JSON([]byte(body))
		}
		if len(hdr) > 0 {
			req["headers"] = hdr
		}
		was := readStreamState(t, es)
		resp := map[string]any{}
		var got any
		if tc.stream && tc.reason == "" {
			s := mustOpenREST(ctx, t, tc.method, ts.URL, path, body, hdr)
			frames, err := v1ReadFrames(s.p)
			s.close()
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			out, items := v1CheckFrames(t, tc.name, frames, false)
			v1CheckDescs(t, tc.name, items, tc.frames)
			resp["status"], resp["contentType"], resp["frames"] = http.StatusOK, "text/event-stream", out
		} else {
			r := mustREST(ctx, t, tc.method, ts.URL, path, body, hdr)
			got = pb03JSON(r.body)
			resp["status"], resp["contentType"], resp["body"] = r.status, r.header.Get("Content-Type"), got
			if allow := r.header.Get("Allow"); allow != "" {
				resp["allow"] = allow
			}
			switch {
			case tc.reason != "":
				st, ok := restSpecStatus[tc.reason]
				if !ok {
					t.Fatalf("%s: no spec status for %s", tc.name, tc.reason)
				}
				if tc.allow != "" {
					st.code = http.StatusMethodNotAllowed
					if got := r.header.Get("Allow"); got != tc.allow {
						t.Errorf("%s: Allow %q, want %q", tc.name, got, tc.allow)
					}
				}
				checkRESTError(t, tc.name, r, st.code, st.name, tc.reason, "")
			case r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json":
				t.Errorf("%s: %v, want 200 application/json", tc.name, r)
			case len(tc.want) == 0:
				t.Fatalf("%s: a 200 body with nothing wanted of it", tc.name)
			default:
				v1CheckWant(t, tc.name, got, tc.want, v)
			}
		}
		if tc.settle {
			id := v1At(got, "task.id")
			v1Settle(t, tc.name, func() any { return get("", id) })
		}
		if now := readStreamState(t, es); tc.reason != "" && now != was {
			t.Errorf("%s: the event stream changed: %+v, want %+v", tc.name, now, was)
		}
		v1Golden(t, filepath.Join("testdata", "rest"), tc.name, map[string]any{"request": req, "response": resp}, v.known, *restRewrite, regenerate)
	}
	v1Stale(t, filepath.Join("testdata", "rest"), seen, *restRewrite)
}
