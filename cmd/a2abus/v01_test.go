package main

// Tests of the v0.1 JSON-RPC dialect of the original articles
// (a2a-v0.1.schema.json; DIGEST.md §1, §8; docs/dialects.md): tasks/send
// with client task ids and sessionId, tasks/sendSubscribe, the shared
// tasks/get, tasks/cancel and tasks/resubscribe answering in the task's
// dialect, tasks/pushNotification/set|get, and /.well-known/agent.json.
//
// Requests go out as a v0.1 client sends them: raw JSON, no A2A-Version
// header. Shapes are checked against the v0.1 schema by hand
// (v01Checker). Golden files are regenerated with
//
//	go test ./cmd/a2abus/ -run TestV01Golden -rewrite-v01

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
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
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/jwks"
	"github.com/a2abus/a2abus/workers"
)

var v01Rewrite = flag.Bool("rewrite-v01", false, "rewrite the v0.1 golden files in testdata/v01/golden")

const v01Timeout = 60 * time.Second

func v01Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), v01Timeout)
	t.Cleanup(cancel)
	return ctx
}

// ---- requests ----

// v01Fixture reads testdata/v01/<name>.json, replacing each "{{key}}"
// of repl (key, value, key, value, ...).
func v01Fixture(t testing.TB, name string, repl ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "v01", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(repl); i += 2 {
		b = bytes.ReplaceAll(b, []byte("{{"+repl[i]+"}}"), []byte(repl[i+1]))
	}
	if !json.Valid(b) {
		t.Fatalf("fixture %s is not JSON: %s", name, b)
	}
	return bytes.TrimSpace(b)
}

// v01Request is a JSON-RPC request with id 1.
func v01Request(t testing.TB, method string, params any) []byte {
	t.Helper()
	return []byte(jsonOf(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
}

// v01RequestID returns the id of a request body.
func v01RequestID(t testing.TB, body []byte) json.RawMessage {
	t.Helper()
	var r struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.ID) == 0 {
		t.Fatalf("request %s: no id (%v)", body, err)
	}
	return r.ID
}

func v01Method(body []byte) string {
	var r struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &r)
	return r.Method
}

// v01Post posts body to the JSON-RPC endpoint as a v0.1 client does: no
// A2A-Version header. It does not touch t.
func v01Post(ctx context.Context, base string, body []byte, hdr map[string]string) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/", bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	setHeaders(req, hdr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// v01Err is a JSON-RPC error; Data stays raw to check its shape.
type v01Err struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// v01Resp is a JSON-RPC response.
type v01Resp struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *v01Err         `json:"error"`
	raw     []byte
}

// v01Decode decodes a JSON-RPC response and checks its envelope against
// the request id.
func v01Decode(raw []byte, id json.RawMessage) (v01Resp, error) {
	var r v01Resp
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("response %s: %v", truncateText(string(raw), 300), err)
	}
	r.raw = raw
	switch {
	case r.JSONRPC != "2.0" || !bytes.Equal(r.ID, id):
		return r, fmt.Errorf("response %s: jsonrpc %q id %s, want \"2.0\" and %s", truncateText(string(raw), 300), r.JSONRPC, r.ID, id)
	case (r.Error == nil) == (len(r.Result) == 0):
		return r, fmt.Errorf("response %s: want exactly one of result and error", truncateText(string(raw), 300))
	}
	return r, nil
}

// v01Call posts one request that answers with one JSON response.
func v01Call(ctx context.Context, t testing.TB, ts *testServer, body []byte) v01Resp {
	t.Helper()
	return v01CallHdr(ctx, t, ts, body, nil)
}

func v01CallHdr(ctx context.Context, t testing.TB, ts *testServer, body []byte, hdr map[string]string) v01Resp {
	t.Helper()
	method := v01Method(body)
	resp, cancel, err := v01Post(ctx, ts.URL, body, hdr)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer cancel()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: read: %v", method, err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/json" {
		t.Fatalf("%s: HTTP %s %q %s, want 200 application/json", method, resp.Status, ct, truncateText(string(raw), 300))
	}
	r, err := v01Decode(raw, v01RequestID(t, body))
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return r
}

// v01Result calls method and returns its result, which must be a def of
// the v0.1 schema (see v01Checker).
func v01Result(ctx context.Context, t testing.TB, ts *testServer, def string, body []byte) map[string]any {
	t.Helper()
	r := v01Call(ctx, t, ts, body)
	if r.Error != nil {
		t.Fatalf("%s: error %d %s %s", v01Method(body), r.Error.Code, r.Error.Message, r.Error.Data)
	}
	v := v01JSON(t, r.Result)
	v01MustShape(t, v01Method(body)+" result", def, v)
	m, _ := v.(map[string]any)
	return m
}

// v01JSON decodes JSON keeping numbers as json.Number.
func v01JSON(t testing.TB, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", truncateText(string(raw), 300), err)
	}
	return v
}

// ---- v0.1 SSE ----

// v01Frame is one frame of a v0.1 stream: the JSON-RPC response's result
// (a status or artifact event) or error, and the frame's id line.
type v01Frame struct {
	seq    uint64
	hasID  bool
	result map[string]any
	err    *v01Err
	data   string
}

func (f v01Frame) String() string {
	return fmt.Sprintf("[%d] %s", f.seq, truncateText(f.data, 300))
}

// isStatus reports whether the frame is a status event.
func (f v01Frame) isStatus() bool { _, ok := f.result["status"]; return ok }

// v01SSE is an open v0.1 stream.
type v01SSE struct {
	resp   *http.Response
	p      *sseParser
	cancel context.CancelFunc
	id     json.RawMessage
}

// v01Open posts a streaming request that must answer with SSE. It does
// not touch t.
func v01Open(ctx context.Context, base string, body []byte, id json.RawMessage) (*v01SSE, error) {
	resp, cancel, err := v01Post(ctx, base, body, map[string]string{"Accept": "text/event-stream"})
	if err != nil {
		return nil, err
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("HTTP %s, Content-Type %q, body %s; want 200 text/event-stream", resp.Status, ct, truncateText(string(b), 300))
	}
	return &v01SSE{resp: resp, p: newSSEParser(resp.Body), cancel: cancel, id: id}, nil
}

func v01MustOpen(ctx context.Context, t testing.TB, ts *testServer, body []byte) *v01SSE {
	t.Helper()
	s, err := v01Open(ctx, ts.URL, body, v01RequestID(t, body))
	if err != nil {
		t.Fatalf("%s: %v", v01Method(body), err)
	}
	t.Cleanup(s.close)
	return s
}

// next returns the next frame, skipping comments, or io.EOF at the end.
func (s *v01SSE) next() (v01Frame, error) {
	for {
		it, err := s.p.next()
		if err != nil {
			return v01Frame{}, err
		}
		if it.isComment {
			continue
		}
		f := v01Frame{data: it.data}
		if seq, has, err := it.sequence(); err != nil {
			return f, err
		} else {
			f.seq, f.hasID = seq, has
		}
		r, err := v01Decode([]byte(it.data), s.id)
		if err != nil {
			return f, err
		}
		f.err = r.Error
		if r.Error == nil {
			d := json.NewDecoder(bytes.NewReader(r.Result))
			d.UseNumber()
			if err := d.Decode(&f.result); err != nil {
				return f, fmt.Errorf("frame %s: result is not an object: %v", truncateText(it.data, 300), err)
			}
		}
		return f, nil
	}
}

// read reads n frames (n < 0: to the end of the stream).
func (s *v01SSE) read(n int) ([]v01Frame, error) { return readFrames(s.next, n) }

func (s *v01SSE) close() {
	s.cancel()
	s.resp.Body.Close()
}

// v01ReadAll opens a stream and reads it to its end.
func v01ReadAll(ctx context.Context, t testing.TB, ts *testServer, body []byte) []v01Frame {
	t.Helper()
	s := v01MustOpen(ctx, t, ts, body)
	defer s.close()
	frames, err := s.read(-1)
	if err != nil {
		t.Fatalf("%s: %v", v01Method(body), err)
	}
	return frames
}

// v01CheckStream checks a whole v0.1 stream of task id: every frame is a
// status or an artifact event of the task in the v0.1 shape, with an
// increasing id line; the last frame is a status event with final:true
// in state last, and no other frame has final:true.
func v01CheckStream(t testing.TB, what string, frames []v01Frame, id, last string) {
	t.Helper()
	if len(frames) == 0 {
		t.Fatalf("%s: no frames", what)
	}
	var prev uint64
	for i, f := range frames {
		if f.err != nil {
			t.Fatalf("%s: frame %d is error %d %s", what, i, f.err.Code, f.err.Message)
		}
		if !f.hasID || f.seq <= prev {
			t.Errorf("%s: frame %d id %d (has %v) after %d, want increasing id lines", what, i, f.seq, f.hasID, prev)
		}
		prev = f.seq
		def := "ArtifactEvent"
		if f.isStatus() {
			def = "StatusEvent"
		}
		v01MustShape(t, fmt.Sprintf("%s: frame %d", what, i), def, any(f.result))
		if f.result["id"] != id {
			t.Errorf("%s: frame %d id %v, want task %s", what, i, f.result["id"], id)
		}
		final := f.result["final"] == true
		if i == len(frames)-1 {
			if !f.isStatus() || !final || v01State(f.result) != last {
				t.Errorf("%s: last frame %s, want a status event %s with final:true", what, f, last)
			}
		} else if final {
			t.Errorf("%s: frame %d %s has final:true before the last frame", what, i, f)
		}
	}
}

// v01State returns the state of a task or status event.
func v01State(m map[string]any) string {
	s, _ := m["status"].(map[string]any)
	st, _ := s["state"].(string)
	return st
}

// v01Text returns the text of a message or an artifact.
func v01Text(m map[string]any) string {
	var b strings.Builder
	parts, _ := m["parts"].([]any)
	for _, p := range parts {
		if pm, ok := p.(map[string]any); ok {
			s, _ := pm["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

func v01Objects(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, 0, len(l))
	for _, e := range l {
		m, _ := e.(map[string]any)
		out = append(out, m)
	}
	return out
}

// ---- the v0.1 schema, by hand ----

// v01Checker checks JSON values against definitions of
// a2a-v0.1.schema.json: allowed and required keys, enums, and the types
// of the fields that matter. A key the schema does not have ("kind",
// "contextId", "messageId", "artifactId", "taskId") is an error.
type v01Checker struct{ errs []string }

func (c *v01Checker) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// object checks that v is an object with only allowed keys and all
// required ones.
func (c *v01Checker) object(path string, v any, allowed, required string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		c.errorf("%s: %T, want an object", path, v)
		return nil
	}
	ks := strings.Fields(allowed)
	for k := range m {
		if !slices.Contains(ks, k) {
			c.errorf("%s: key %q is not in the v0.1 schema (%s)", path, k, allowed)
		}
	}
	for _, k := range strings.Fields(required) {
		if _, ok := m[k]; !ok {
			c.errorf("%s: required key %q missing", path, k)
		}
	}
	return m
}

func (c *v01Checker) typed(path string, m map[string]any, key, typ string) {
	v, ok := m[key]
	if !ok {
		return
	}
	good := false
	switch typ {
	case "string":
		_, good = v.(string)
	case "bool":
		_, good = v.(bool)
	case "object":
		_, good = v.(map[string]any)
	case "array":
		_, good = v.([]any)
	case "int":
		n, isNum := v.(json.Number)
		_, err := strconv.Atoi(string(n))
		good = isNum && err == nil
	}
	if !good {
		c.errorf("%s.%s: %v (%T), want %s", path, key, v, v, typ)
	}
}

func (c *v01Checker) list(path string, m map[string]any, key, def string) {
	v, ok := m[key]
	if !ok {
		return
	}
	l, isList := v.([]any)
	if !isList {
		c.errorf("%s.%s: %T, want an array", path, key, v)
		return
	}
	for i, e := range l {
		c.check(fmt.Sprintf("%s.%s[%d]", path, key, i), def, e)
	}
}

func (c *v01Checker) enum(path string, m map[string]any, key string, values ...string) {
	if s, ok := m[key].(string); ok && !slices.Contains(values, s) {
		c.errorf("%s.%s: %q, want one of %v", path, key, s, values)
	}
}

func (c *v01Checker) check(path, def string, v any) {
	switch def {
	case "Task":
		m := c.object(path, v, "id sessionId status artifacts history metadata", "id status")
		c.typed(path, m, "id", "string")
		c.typed(path, m, "sessionId", "string")
		c.typed(path, m, "metadata", "object")
		c.check(path+".status", "TaskStatus", m["status"])
		c.list(path, m, "artifacts", "Artifact")
		c.list(path, m, "history", "Message")
	case "TaskStatus":
		m := c.object(path, v, "state message timestamp", "state")
		c.typed(path, m, "state", "string")
		c.enum(path, m, "state", "submitted", "working", "input-required", "completed", "canceled", "failed", "unknown")
		c.typed(path, m, "timestamp", "string")
		if ts, ok := m["timestamp"].(string); ok {
			if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
				c.errorf("%s.timestamp: %v", path, err)
			}
		}
		if msg, ok := m["message"]; ok {
			c.check(path+".message", "Message", msg)
		}
	case "Message":
		m := c.object(path, v, "role parts metadata", "role parts")
		c.enum(path, m, "role", "user", "agent")
		c.typed(path, m, "metadata", "object")
		c.list(path, m, "parts", "Part")
	case "Part":
		m, _ := v.(map[string]any)
		switch m["type"] {
		case "text":
			m = c.object(path, v, "type text metadata", "type text")
			c.typed(path, m, "text", "string")
		case "file":
			m = c.object(path, v, "type file metadata", "type file")
			f := c.object(path+".file", m["file"], "name mimeType bytes uri", "")
			_, hasBytes := f["bytes"]
			_, hasURI := f["uri"]
			if hasBytes == hasURI {
				c.errorf("%s.file: want exactly one of bytes and uri", path)
			}
		case "data":
			m = c.object(path, v, "type data metadata", "type data")
			c.typed(path, m, "data", "object")
		default:
			c.errorf("%s: part %v, want type text, file or data", path, v)
		}
		c.typed(path, m, "metadata", "object")
	case "Artifact":
		// index is optional in the schema (default 0); this server always
		// sends it.
		m := c.object(path, v, "name description parts index append lastChunk metadata", "parts index")
		c.typed(path, m, "name", "string")
		c.typed(path, m, "index", "int")
		c.typed(path, m, "append", "bool")
		c.typed(path, m, "lastChunk", "bool")
		c.list(path, m, "parts", "Part")
	case "StatusEvent":
		// final is optional in the schema (default false); this server
		// always sends it.
		m := c.object(path, v, "id status final metadata", "id status final")
		c.typed(path, m, "id", "string")
		c.typed(path, m, "final", "bool")
		c.check(path+".status", "TaskStatus", m["status"])
	case "ArtifactEvent":
		m := c.object(path, v, "id artifact metadata", "id artifact")
		c.typed(path, m, "id", "string")
		c.check(path+".artifact", "Artifact", m["artifact"])
	case "TaskPushNotificationConfig":
		m := c.object(path, v, "id pushNotificationConfig", "id pushNotificationConfig")
		p := c.object(path+".pushNotificationConfig", m["pushNotificationConfig"], "url token authentication", "url")
		if a, ok := p["authentication"]; ok {
			am := c.object(path+".pushNotificationConfig.authentication", a, "schemes credentials", "schemes")
			c.typed(path+".pushNotificationConfig.authentication", am, "schemes", "array")
		}
	case "Error":
		// v0.x: data is a free-form object (JSONRPCError.data).
		m := c.object(path, v, "code message data", "code message")
		c.typed(path, m, "code", "int")
		c.typed(path, m, "message", "string")
		c.typed(path, m, "data", "object")
	case "AgentCard":
		m := c.object(path, v, "name description url provider version documentationUrl capabilities authentication defaultInputModes defaultOutputModes skills",
			"name url version capabilities skills")
		for _, k := range []string{"name", "url", "version"} {
			c.typed(path, m, k, "string")
		}
		if p, ok := m["provider"]; ok {
			c.object(path+".provider", p, "organization url", "organization")
		}
		caps := c.object(path+".capabilities", m["capabilities"], "streaming pushNotifications stateTransitionHistory", "")
		for k := range caps {
			c.typed(path+".capabilities", caps, k, "bool")
		}
		c.typed(path, m, "defaultInputModes", "array")
		c.typed(path, m, "defaultOutputModes", "array")
		c.list(path, m, "skills", "AgentSkill")
	case "AgentSkill":
		m := c.object(path, v, "id name description tags examples inputModes outputModes", "id name")
		c.typed(path, m, "id", "string")
		c.typed(path, m, "name", "string")
	default:
		c.errorf("%s: no definition %q", path, def)
	}
}

// v01Shape returns how v differs from definition def of the v0.1 schema.
func v01Shape(def string, v any) []string {
	var c v01Checker
	c.check("$", def, v)
	return c.errs
}

func v01MustShape(t testing.TB, what, def string, v any) {
	t.Helper()
	if errs := v01Shape(def, v); len(errs) > 0 {
		b, _ := json.Marshal(v)
		t.Errorf("%s is not a v0.1 %s:\n  %s\nin %s", what, def, strings.Join(errs, "\n  "), truncateText(string(b), 1500))
	}
}

// v01MustError checks that r is a v0.x error with code and an object
// data (an ErrorInfo with reason).
func v01MustError(t testing.TB, what string, r v01Resp, code int, reason string) {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("%s: result %s, want error %d", what, truncateText(string(r.Result), 300), code)
	}
	v01MustErr(t, what, r.Error, code, reason)
}

func v01MustErr(t testing.TB, what string, e *v01Err, code int, reason string) {
	t.Helper()
	if e.Code != code {
		t.Errorf("%s: error %d %q, want %d", what, e.Code, e.Message, code)
	}
	b, _ := json.Marshal(e)
	v01MustShape(t, what+" error", "Error", v01JSON(t, b))
	var info struct {
		Reason string `json:"reason"`
	}
	if json.Unmarshal(e.Data, &info) == nil && info.Reason != reason {
		t.Errorf("%s: error data %s, want reason %s", what, e.Data, reason)
	}
}

// ---- tests ----

func TestV01ArticleExamples(t *testing.T) {
	t.Parallel()
	ctx := v01Context(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })

	t.Run("tasks/send joke", func(t *testing.T) {
		task := v01Result(ctx, t, ts, "Task", v01Fixture(t, "send_joke"))
		const id = "de38c76d-d54c-436c-8b9f-4c2703648d64"
		if task["id"] != id || v01State(task) != "completed" {
			t.Fatalf("task %v in %q, want %s completed (the demo echoes unknown skills)", task["id"], v01State(task), id)
		}
		if s, _ := task["sessionId"].(string); s == "" {
			t.Errorf("task has no sessionId: the server makes one when the client sends none")
		}
		arts := v01Objects(task["artifacts"])
		if len(arts) != 1 || arts[0]["index"] != json.Number("0") || v01Text(arts[0]) != "tell me a joke" {
			t.Errorf("artifacts %s, want one with index 0 echoing the text", jsonOf(t, task["artifacts"]))
		}
		if _, ok := task["history"]; ok {
			t.Errorf("tasks/send without historyLength has history %s, want none", jsonOf(t, task["history"]))
		}
		for _, tc := range []struct {
			name    string
			history any
			want    int
		}{{"no historyLength", nil, 0}, {"historyLength 0", 0, 0}, {"historyLength 1", 1, 1}, {"historyLength 5", 5, 1}} {
			params := map[string]any{"id": id}
			if tc.history != nil {
				params["historyLength"] = tc.history
			}
			got := v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/get", params))
			h := v01Objects(got["history"])
			if len(h) != tc.want {
				t.Errorf("tasks/get %s: %d history entries, want %d", tc.name, len(h), tc.want)
			}
			if len(h) > 0 && (h[0]["role"] != "user" || v01Text(h[0]) != "tell me a joke") {
				t.Errorf("tasks/get %s: history %s, want the user's message", tc.name, jsonOf(t, h))
			}
		}
	})

	t.Run("multi-turn phone order", func(t *testing.T) {
		const id, session = "4a1f0b7e-3c52-4d8e-9a61-7f2c5e8b9d03", "c295ea44-7543-4f78-b524-7a38915ad6e4"
		first := v01Result(ctx, t, ts, "Task", v01Fixture(t, "send_phone_1"))
		if first["id"] != id || first["sessionId"] != session || v01State(first) != "input-required" {
			t.Fatalf("first turn: task %v session %v state %q, want %s %s input-required", first["id"], first["sessionId"], v01State(first), id, session)
		}
		q, _ := first["status"].(map[string]any)["message"].(map[string]any)
		if q["role"] != "agent" || v01Text(q) == "" {
			t.Errorf("first turn: status message %s, want the agent's question", jsonOf(t, q))
		}
		second := v01Result(ctx, t, ts, "Task", v01Fixture(t, "send_phone_2"))
		if second["id"] != id || second["sessionId"] != session || v01State(second) != "completed" {
			t.Fatalf("second turn: task %v session %v state %q, want %s %s completed", second["id"], second["sessionId"], v01State(second), id, session)
		}
		arts := v01Objects(second["artifacts"])
		if len(arts) != 1 || !strings.Contains(v01Text(arts[0]), "iPhone") || arts[0]["index"] != json.Number("0") {
			t.Errorf("second turn: artifacts %s, want one (index 0) with the answer", jsonOf(t, second["artifacts"]))
		}
		// The whole conversation is one task: user, agent, user, agent.
		got := v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/get", map[string]any{"id": id, "historyLength": 10}))
		var roles []string
		for _, m := range v01Objects(got["history"]) {
			roles = append(roles, m["role"].(string))
		}
		if !slices.Equal(roles, []string{"user", "agent", "user", "agent"}) {
			t.Errorf("history roles %v, want [user agent user agent]", roles)
		}

		// Without a sessionId the server makes one, and a follow-up
		// without one keeps it.
		a := v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/send", map[string]any{"id": "phone-no-session",
			"message": map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "ask which phone?"}}}}))
		b := v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/send", map[string]any{"id": "phone-no-session",
			"message": map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "Samsung"}}}}))
		if s, _ := a["sessionId"].(string); s == "" || b["sessionId"] != s || v01State(a) != "input-required" || v01State(b) != "completed" {
			t.Errorf("without sessionId: %v %s then %v %s, want one server-made session, input-required then completed", a["sessionId"], v01State(a), b["sessionId"], v01State(b))
		}
	})

	t.Run("tasks/sendSubscribe file data", func(t *testing.T) {
		// The articles put a file's base64 in "data" where the schema says
		// "bytes"; the answer uses "bytes".
		const id = "7c9e2b51-0d4a-4f3e-8b26-1e5a9c7d4f80"
		frames := v01ReadAll(ctx, t, ts, v01Fixture(t, "sendsubscribe_file_data"))
		v01CheckStream(t, "sendSubscribe", frames, id, "completed")
		if len(frames) > 0 && (!frames[0].isStatus() || v01State(frames[0].result) != "submitted") {
			t.Errorf("first frame %s, want the submitted status", frames[0])
		}
		var arts []map[string]any
		for _, f := range frames {
			if a, ok := f.result["artifact"].(map[string]any); ok {
				arts = append(arts, a)
			}
		}
		if len(arts) != 1 {
			t.Fatalf("%d artifact events, want 1: %v", len(arts), frames)
		}
		parts := v01Objects(arts[0]["parts"])
		if len(parts) != 2 || parts[1]["type"] != "file" {
			t.Fatalf("artifact %s, want the echoed text and file parts", jsonOf(t, arts[0]))
		}
		want := map[string]any{"name": "picture.png", "mimeType": "image/png",
			"bytes": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="}
		if got := jsonOf(t, parts[1]["file"]); got != jsonOf(t, want) {
			t.Errorf("echoed file %s, want %s", got, jsonOf(t, want))
		}
		if arts[0]["index"] != json.Number("0") || arts[0]["lastChunk"] != true {
			t.Errorf("artifact index %v lastChunk %v, want 0 and true", arts[0]["index"], arts[0]["lastChunk"])
		}
	})

	t.Run("tasks/sendSubscribe message data", func(t *testing.T) {
		// The articles put a message's parts in "data" where the schema
		// says "parts": "stream 3 20" must reach the demo's stream skill.
		const id = "b3d84f6a-95c1-4e27-a0f8-2c6e71d5b9a4"
		frames := v01ReadAll(ctx, t, ts, v01Fixture(t, "sendsubscribe_message_data"))
		v01CheckStream(t, "sendSubscribe", frames, id, "completed")
		var chunks []string
		for _, f := range frames {
			a, ok := f.result["artifact"].(map[string]any)
			if !ok {
				continue
			}
			i := len(chunks) + 1
			chunks = append(chunks, v01Text(a))
			wantAppend, wantLast := i > 1, i == 3
			if a["index"] != json.Number("0") || (a["append"] == true) != wantAppend || (a["lastChunk"] == true) != wantLast {
				t.Errorf("chunk %d: index %v append %v lastChunk %v, want 0 %v %v", i, a["index"], a["append"], a["lastChunk"], wantAppend, wantLast)
			}
		}
		if want := []string{"chunk 1/3\n", "chunk 2/3\n", "chunk 3/3\n"}; !slices.Equal(chunks, want) {
			t.Errorf("chunks %q, want %q", chunks, want)
		}
		got := v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/get", map[string]any{"id": id, "historyLength": 1}))
		arts := v01Objects(got["artifacts"])
		if len(arts) != 1 || v01Text(arts[0]) != "chunk 1/3\nchunk 2/3\nchunk 3/3\n" || arts[0]["append"] != nil || arts[0]["lastChunk"] != nil {
			t.Errorf("tasks/get artifacts %s, want the three chunks in one artifact, without append or lastChunk", jsonOf(t, got["artifacts"]))
		}
	})

	t.Run("tasks/pushNotification set and get", func(t *testing.T) {
		rc := newHookReceiver(t, nil)
		hook := rc.URL("/v01-callback")
		const id = "push-phone"
		first := v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/send", map[string]any{"id": id,
			"message": map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "ask I'd like to order a new phone"}}}}))
		if v01State(first) != "input-required" {
			t.Fatalf("state %s, want input-required", v01State(first))
		}
		want := map[string]any{"id": id, "pushNotificationConfig": map[string]any{"url": hook, "authentication": map[string]any{"schemes": []any{"jwt"}}}}
		set := v01Result(ctx, t, ts, "TaskPushNotificationConfig", v01Fixture(t, "pushnotification_set", "task", id, "webhook", hook))
		if jsonOf(t, set) != jsonOf(t, want) {
			t.Errorf("set: %s, want %s", jsonOf(t, set), jsonOf(t, want))
		}
		get := v01Result(ctx, t, ts, "TaskPushNotificationConfig", v01Fixture(t, "pushnotification_get", "task", id))
		if jsonOf(t, get) != jsonOf(t, want) {
			t.Errorf("get: %s, want %s", jsonOf(t, get), jsonOf(t, want))
		}

		// The answer completes the task, and the webhook hears of it with
		// a JWT it can check against the server's JWKS.
		done := v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/send", map[string]any{"id": id,
			"message": map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "iPhone"}}}}))
		if v01State(done) != "completed" {
			t.Fatalf("state %s, want completed", v01State(done))
		}
		reqs := hooksFor(waitLegacyFinal(t, rc, id), id)
		for _, r := range hooksOK(reqs) {
			var b legacyPushTask
			if err := json.Unmarshal(r.Body, &b); err != nil || b.ID != id || b.Kind != "" {
				t.Errorf("push body %s: want the whole v0.1 task %s, without kind (%v)", r.Body, id, err)
			}
		}
		v := hookVerifier(ctx, t, ts.URL, hook, ts.URL+"/")
		for i, r := range reqs {
			if r.Path != "/v01-callback" {
				t.Errorf("push %d to %s, want /v01-callback", i, r.Path)
			}
			if claims, err := v.Verify(ctx, r.request(), r.Body); err != nil || claims.TaskID != id {
				t.Errorf("push %d: Verify=%v, %v; want the task's signed push", i, claims, err)
			}
		}
	})

	t.Run("tasks/resubscribe", func(t *testing.T) {
		const id = "5e0c7a92-6f1b-4d38-b4e5-9a2d8c1f7e63"
		// tasks/send blocks to the end: start the task with
		// tasks/sendSubscribe and drop it after the first frame.
		s := v01MustOpen(ctx, t, ts, v01Fixture(t, "sendsubscribe_stream"))
		first, err := s.read(1)
		if err != nil {
			t.Fatalf("sendSubscribe: %v", err)
		}
		s.close()
		frames := v01ReadAll(ctx, t, ts, v01Fixture(t, "resubscribe"))
		v01CheckStream(t, "resubscribe", frames, id, "completed")
		// The first frame is the task's status now: the one sendSubscribe
		// began with, or a later one.
		if frames[0].seq < first[0].seq || !frames[0].isStatus() || frames[0].result["final"] != false {
			t.Errorf("first resubscribe frame %s, want the task's status (final:false), not older than %s", frames[0], first[0])
		}
		// Chunks continue to the last one, in order, all of artifact 0.
		var nums []int
		for _, f := range frames {
			a, ok := f.result["artifact"].(map[string]any)
			if !ok {
				continue
			}
			var n, of int
			if _, err := fmt.Sscanf(v01Text(a), "chunk %d/%d\n", &n, &of); err != nil || of != 20 {
				t.Fatalf("artifact event %s: not a chunk of 20", f)
			}
			if a["index"] != json.Number("0") || (a["append"] == true) != (n > 1) || (a["lastChunk"] == true) != (n == 20) {
				t.Errorf("chunk %d: index %v append %v lastChunk %v", n, a["index"], a["append"], a["lastChunk"])
			}
			nums = append(nums, n)
		}
		if len(nums) == 0 || nums[len(nums)-1] != 20 {
			t.Fatalf("chunks %v, want them to run to 20", nums)
		}
		for i := 1; i < len(nums); i++ {
			if nums[i] != nums[i-1]+1 {
				t.Errorf("chunks %v, want consecutive", nums)
				break
			}
		}
	})
}

// ---- golden ----

// v01UUIDRE matches the session ids the server makes.
var v01UUIDRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// v01Normalize replaces what differs between runs: timestamps and
// server-made session ids (UUIDs; the golden cases' own ids are not).
func v01Normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch s, _ := e.(string); {
			case k == "timestamp" && s != "":
				x[k] = "<timestamp>"
			case k == "sessionId" && v01UUIDRE.MatchString(s):
				x[k] = "<server-made sessionId>"
			default:
				x[k] = v01Normalize(e)
			}
		}
	case []any:
		for i := range x {
			x[i] = v01Normalize(x[i])
		}
	}
	return v
}

// v01Golden compares the normalised response of request with
// testdata/v01/golden/<name>.json, or writes it there with -rewrite-v01.
func v01Golden(t testing.TB, name string, request []byte, response any) {
	t.Helper()
	doc := map[string]any{"request": v01JSON(t, request), "response": v01Normalize(response)}
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "v01", "golden", name+".json")
	if *v01Rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v (run with -rewrite-v01 to create it)", name, err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: response differs from %s (rerun with -rewrite-v01 if the change is intended)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

// v01GoldenCall calls request and compares the whole response.
func v01GoldenCall(ctx context.Context, t testing.TB, ts *testServer, name string, request []byte) v01Resp {
	t.Helper()
	r := v01Call(ctx, t, ts, request)
	if r.Error != nil {
		v01MustShape(t, name, "Error", v01JSON(t, v01Marshal(t, r.Error)))
	}
	v01Golden(t, name, request, v01JSON(t, r.raw))
	return r
}

// v01GoldenFrames compares a stream's frames; the id lines must increase
// and are replaced by their order.
func v01GoldenFrames(t testing.TB, name string, request []byte, frames []v01Frame) {
	t.Helper()
	out := make([]any, 0, len(frames))
	var prev uint64
	for i, f := range frames {
		if f.seq <= prev {
			t.Errorf("%s: frame %d id %d after %d", name, i, f.seq, prev)
		}
		prev = f.seq
		out = append(out, map[string]any{"id": fmt.Sprintf("<seq %d>", i+1), "data": v01JSON(t, []byte(f.data))})
	}
	v01Golden(t, name, request, out)
}

func v01Marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func v01TextMessage(role, text string) map[string]any {
	return map[string]any{"role": role, "parts": []any{map[string]any{"type": "text", "text": text}}}
}

func TestV01Golden(t *testing.T) {
	t.Parallel()
	ctx := v01Context(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })
	send := func(id, session, text string, extra ...any) []byte {
		p := map[string]any{"id": id, "message": v01TextMessage("user", text)}
		if session != "" {
			p["sessionId"] = session
		}
		for i := 0; i+1 < len(extra); i += 2 {
			p[extra[i].(string)] = extra[i+1]
		}
		return v01Request(t, "tasks/send", p)
	}

	// tasks/send and tasks/get.
	v01GoldenCall(ctx, t, ts, "send_completed", send("g-echo", "g-session", "echo golden"))
	v01GoldenCall(ctx, t, ts, "send_history", send("g-echo-2", "g-session", "echo with history", "historyLength", 2, "metadata", map[string]any{"from": "golden"}))
	v01GoldenCall(ctx, t, ts, "get", v01Request(t, "tasks/get", map[string]any{"id": "g-echo"}))
	v01GoldenCall(ctx, t, ts, "get_history_0", v01Request(t, "tasks/get", map[string]any{"id": "g-echo", "historyLength": 0}))
	v01GoldenCall(ctx, t, ts, "get_history_1", v01Request(t, "tasks/get", map[string]any{"id": "g-echo", "historyLength": 1}))
	v01GoldenCall(ctx, t, ts, "send_server_session", send("g-no-session", "", "echo no session"))
	v01GoldenCall(ctx, t, ts, "send_input_required", send("g-ask", "g-session", "ask golden"))
	v01GoldenCall(ctx, t, ts, "send_followup", send("g-ask", "g-session", "Ada", "historyLength", 4))
	v01GoldenCall(ctx, t, ts, "send_data_quirks", v01Request(t, "tasks/send", map[string]any{"id": "g-quirks", "message": map[string]any{
		"role": "user", "data": []any{
			map[string]any{"type": "text", "text": "echo quirks"},
			map[string]any{"type": "file", "file": map[string]any{"name": "a.txt", "mimeType": "text/plain", "data": "aGVsbG8="}},
			map[string]any{"type": "file", "file": map[string]any{"name": "b.txt", "uri": "https://example.com/b.txt"}},
			map[string]any{"type": "data", "data": map[string]any{"n": 1}, "metadata": map[string]any{"m": "x"}},
		}}}))

	// tasks/sendSubscribe.
	req := v01Request(t, "tasks/sendSubscribe", map[string]any{"id": "g-stream", "sessionId": "g-session", "message": v01TextMessage("user", "stream 3 0")})
	v01GoldenFrames(t, "sendsubscribe_chunks", req, v01ReadAll(ctx, t, ts, req))
	req = v01Request(t, "tasks/sendSubscribe", map[string]any{"id": "g-stream-ask", "sessionId": "g-session", "message": v01TextMessage("user", "ask streamed")})
	v01GoldenFrames(t, "sendsubscribe_input_required", req, v01ReadAll(ctx, t, ts, req))

	// tasks/resubscribe of a waiting task: its status first, then what
	// the follow-up makes, to the final status.
	v01Call(ctx, t, ts, send("g-resub", "g-session", "ask resubscribe"))
	req = v01Request(t, "tasks/resubscribe", map[string]any{"id": "g-resub"})
	s := v01MustOpen(ctx, t, ts, req)
	frames, err := s.read(1)
	if err != nil {
		t.Fatalf("resubscribe: %v", err)
	}
	v01Call(ctx, t, ts, send("g-resub", "g-session", "Grace"))
	rest, err := s.read(-1)
	if err != nil {
		t.Fatalf("resubscribe: %v", err)
	}
	v01GoldenFrames(t, "resubscribe", req, append(frames, rest...))

	// tasks/cancel of a running task answers in v0.1.
	s = v01MustOpen(ctx, t, ts, v01Request(t, "tasks/sendSubscribe", map[string]any{"id": "g-slow", "sessionId": "g-session", "message": v01TextMessage("user", "slow 30")}))
	if _, err := s.read(1); err != nil {
		t.Fatalf("sendSubscribe slow 30: %v", err)
	}
	s.close()
	v01GoldenCall(ctx, t, ts, "cancel", v01Request(t, "tasks/cancel", map[string]any{"id": "g-slow"}))
	v01GoldenCall(ctx, t, ts, "cancel_terminal", v01Request(t, "tasks/cancel", map[string]any{"id": "g-slow"}))

	// Push notification config (to a port nobody listens on: the task is
	// terminal, so nothing is pushed).
	v01GoldenCall(ctx, t, ts, "pushnotification_get_none", v01Request(t, "tasks/pushNotification/get", map[string]any{"id": "g-echo"}))
	v01GoldenCall(ctx, t, ts, "pushnotification_set", v01Request(t, "tasks/pushNotification/set", map[string]any{"id": "g-echo",
		"pushNotificationConfig": map[string]any{"url": "http://127.0.0.1:9/callback", "token": "tok-1", "authentication": map[string]any{"schemes": []any{"Bearer"}, "credentials": "c2VjcmV0"}}}))
	v01GoldenCall(ctx, t, ts, "pushnotification_get", v01Request(t, "tasks/pushNotification/get", map[string]any{"id": "g-echo"}))
	v01GoldenCall(ctx, t, ts, "pushnotification_set_replaces", v01Request(t, "tasks/pushNotification/set", map[string]any{"id": "g-echo",
		"pushNotificationConfig": map[string]any{"url": "http://127.0.0.1:9/other"}}))
	v01GoldenCall(ctx, t, ts, "pushnotification_set_unknown_task", v01Request(t, "tasks/pushNotification/set", map[string]any{"id": "g-nope",
		"pushNotificationConfig": map[string]any{"url": "http://127.0.0.1:9/callback"}}))

	// Errors.
	v01Call(ctx, t, ts, send("g-wait", "g-session", "ask and wait"))
	for _, tc := range []struct {
		name   string
		body   []byte
		code   int
		reason string
	}{
		{"error_missing_id", v01Request(t, "tasks/send", map[string]any{"message": v01TextMessage("user", "echo")}), -32602, "INVALID_PARAMS"},
		{"error_id_with_dots", send("a.b", "", "echo"), -32602, "INVALID_PARAMS"},
		{"error_role_agent", v01Request(t, "tasks/send", map[string]any{"id": "g-agent", "message": v01TextMessage("agent", "echo")}), -32602, "INVALID_PARAMS"},
		{"error_part_video", v01Request(t, "tasks/send", map[string]any{"id": "g-video", "message": map[string]any{"role": "user",
			"parts": []any{map[string]any{"type": "video", "url": "https://example.com/v.mp4"}}}}), -32602, "INVALID_PARAMS"},
		{"error_no_parts", v01Request(t, "tasks/send", map[string]any{"id": "g-empty", "message": map[string]any{"role": "user", "parts": []any{}}}), -32602, "INVALID_PARAMS"},
		{"error_no_message", v01Request(t, "tasks/send", map[string]any{"id": "g-nomsg"}), -32602, "INVALID_PARAMS"},
		{"error_file_bytes_and_uri", v01Request(t, "tasks/send", map[string]any{"id": "g-file", "message": map[string]any{"role": "user",
			"parts": []any{map[string]any{"type": "file", "file": map[string]any{"bytes": "aGVsbG8=", "uri": "https://example.com/a"}}}}}), -32602, "INVALID_PARAMS"},
		{"error_send_terminal", send("g-echo", "g-session", "echo again"), -32004, "UNSUPPORTED_OPERATION"},
		{"error_session_mismatch", send("g-wait", "other-session", "echo"), -32602, "INVALID_PARAMS"},
		{"error_get_unknown", v01Request(t, "tasks/get", map[string]any{"id": "g-unknown"}), -32001, "TASK_NOT_FOUND"},
		{"error_get_id_with_dots", v01Request(t, "tasks/get", map[string]any{"id": "a.b"}), -32001, "TASK_NOT_FOUND"},
		{"error_cancel_unknown", v01Request(t, "tasks/cancel", map[string]any{"id": "g-unknown"}), -32001, "TASK_NOT_FOUND"},
		{"error_pushnotification_get_unknown", v01Request(t, "tasks/pushNotification/get", map[string]any{"id": "g-unknown"}), -32001, "TASK_NOT_FOUND"},
	} {
		r := v01GoldenCall(ctx, t, ts, tc.name, tc.body)
		v01MustError(t, tc.name, r, tc.code, tc.reason)
	}
}

// ---- across dialects ----

func TestV01CrossDialect(t *testing.T) {
	t.Parallel()
	ctx := v01Context(t)
	ts := startServer(t, nil)
	const id, session = "x-slow", "x-session"

	// A running v0.1 task: tasks/send blocks to the end, so start it with
	// tasks/sendSubscribe and drop the stream after the first frame.
	// (slow 30, not 3: the cancel below must come while it runs, however
	// slow the machine.)
	s := v01MustOpen(ctx, t, ts, v01Request(t, "tasks/sendSubscribe", map[string]any{"id": id, "sessionId": session, "message": v01TextMessage("user", "slow 30")}))
	if _, err := s.read(1); err != nil {
		t.Fatalf("sendSubscribe: %v", err)
	}
	s.close()

	// v1.0 REST subscribe: bare v1.0 StreamResponse frames, the task
	// first, with the v0.1 sessionId as its contextId.
	rs := mustOpenREST(ctx, t, http.MethodGet, ts.URL, "/tasks/"+id+":subscribe", "", nil)
	first, err := rs.read(1)
	if err != nil {
		t.Fatalf("REST subscribe: %v", err)
	}
	if task, ok := first[0].event.(*a2a.Task); !ok || task.ID != id || task.ContextID != session || task.Status.State.Terminal() {
		t.Fatalf("REST subscribe first frame %v, want the running task %s in context %s", first[0], id, session)
	}

	// v1.0 JSON-RPC CancelTask answers in v1.0.
	r := rawCall(ctx, t, ts, "CancelTask", map[string]any{"id": id})
	if r.Error != nil {
		t.Fatalf("CancelTask: error %d %s", r.Error.Code, r.Error.Message)
	}
	var canceled map[string]any
	if err := json.Unmarshal(r.Result, &canceled); err != nil {
		t.Fatal(err)
	}
	if canceled["id"] != id || canceled["contextId"] != session || v01State(canceled) != "TASK_STATE_CANCELED" ||
		canceled["kind"] != nil || canceled["sessionId"] != nil {
		t.Errorf("CancelTask result %s, want a v1.0 task (contextId, TASK_STATE_CANCELED, no kind or sessionId)", r.Result)
	}

	// The REST stream ends with the canceled status, in v1.0.
	rest, err := rs.read(-1)
	if err != nil {
		t.Fatalf("REST subscribe: %v", err)
	}
	if len(rest) == 0 {
		t.Fatal("REST subscribe: no frame after the task")
	}
	last, ok := rest[len(rest)-1].event.(*a2a.TaskStatusUpdateEvent)
	if !ok || last.Status.State != a2a.TaskStateCanceled || last.TaskID != id {
		t.Errorf("REST subscribe last frame %v, want the canceled status update", rest[len(rest)-1])
	}

	// The shared tasks/get answers in v0.1, the task's dialect, with or
	// without A2A-Version 0.3.
	for _, hdr := range []map[string]string{nil, {"A2A-Version": "0.3"}} {
		r := v01CallHdr(ctx, t, ts, v01Request(t, "tasks/get", map[string]any{"id": id}), hdr)
		if r.Error != nil {
			t.Fatalf("tasks/get %v: error %d %s", hdr, r.Error.Code, r.Error.Message)
		}
		got := v01JSON(t, r.Result)
		v01MustShape(t, fmt.Sprintf("tasks/get %v", hdr), "Task", got)
		if m, _ := got.(map[string]any); v01State(m) != "canceled" || m["sessionId"] != session {
			t.Errorf("tasks/get %v: %s, want canceled in session %s", hdr, r.Result, session)
		}
	}
	// tasks/cancel too, and its error is a v0.x one (data an object).
	r01 := v01Call(ctx, t, ts, v01Request(t, "tasks/cancel", map[string]any{"id": id}))
	v01MustError(t, "tasks/cancel of a canceled task", r01, -32002, "TASK_NOT_CANCELABLE")
	// A2A-Version 1.0 with a v0.1 name is refused.
	r10 := v01CallHdr(ctx, t, ts, v01Request(t, "tasks/get", map[string]any{"id": id}), map[string]string{"A2A-Version": "1.0"})
	if r10.Error == nil || r10.Error.Code != -32601 {
		t.Errorf("tasks/get with A2A-Version 1.0: %s, want -32601", r10.raw)
	}
	// v1.0 GetTask of the v0.1 task answers in v1.0.
	r = rawCall(ctx, t, ts, "GetTask", map[string]any{"id": id})
	if r.Error != nil || !bytes.Contains(r.Result, []byte(`"TASK_STATE_CANCELED"`)) || !bytes.Contains(r.Result, []byte(`"contextId":"`+session+`"`)) {
		t.Errorf("GetTask: %s %v, want the v1.0 task", r.Result, r.Error)
	}

	// A task made in v1.0: the shared names answer in v0.3 (kind "task"),
	// since there is no v0.1 get of its own.
	r = rawCall(ctx, t, ts, "SendMessage", map[string]any{"message": map[string]any{"messageId": "x-v1-msg", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "echo from v1.0"}}}})
	var sent struct {
		Task struct {
			ID        string `json:"id"`
			ContextID string `json:"contextId"`
		} `json:"task"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &sent) != nil || sent.Task.ID == "" {
		t.Fatalf("SendMessage: %s %v", r.Result, r.Error)
	}
	r03 := v01Call(ctx, t, ts, v01Request(t, "tasks/get", map[string]any{"id": sent.Task.ID}))
	var task03 map[string]any
	if r03.Error != nil || json.Unmarshal(r03.Result, &task03) != nil {
		t.Fatalf("tasks/get of a v1.0 task: %s", r03.raw)
	}
	if task03["kind"] != "task" || task03["contextId"] != sent.Task.ContextID || task03["sessionId"] != nil || v01State(task03) != "completed" {
		t.Errorf("tasks/get of a v1.0 task: %s, want the v0.3 task (kind task, contextId, completed)", r03.Result)
	}
	if errs := v01Shape("Task", v01JSON(t, r03.Result)); len(errs) == 0 {
		t.Errorf("tasks/get of a v1.0 task passes as a v0.1 task: %s", r03.Result)
	}
}

// ---- card ----

func TestV01Card(t *testing.T) {
	t.Parallel()
	ctx := v01Context(t)
	ts := startServer(t, nil)
	get := func(t *testing.T, ts *testServer, hdr map[string]string) map[string]any {
		t.Helper()
		r := mustREST(ctx, t, http.MethodGet, ts.URL, "/.well-known/agent.json", "", hdr)
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET /.well-known/agent.json: %v, want 200 application/json", r)
		}
		if got := r.header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Errorf("Access-Control-Allow-Origin %q, want *", got)
		}
		v := v01JSON(t, r.body)
		v01MustShape(t, "agent.json", "AgentCard", v)
		return v.(map[string]any)
	}
	card := get(t, ts, nil)
	if card["name"] == "" || card["version"] == "" {
		t.Errorf("card name %q version %q, want both", card["name"], card["version"])
	}
	if card["url"] != ts.URL+"/" {
		t.Errorf("card url %v, want %s/", card["url"], ts.URL)
	}
	wantCaps := map[string]any{"streaming": true, "pushNotifications": true, "stateTransitionHistory": false}
	if jsonOf(t, card["capabilities"]) != jsonOf(t, wantCaps) {
		t.Errorf("capabilities %s, want %s", jsonOf(t, card["capabilities"]), jsonOf(t, wantCaps))
	}
	for _, k := range []string{"defaultInputModes", "defaultOutputModes"} {
		if l, _ := card[k].([]any); len(l) == 0 || l[0] != "text/plain" {
			t.Errorf("%s %v, want [text/plain]", k, card[k])
		}
	}
	var skills []string
	for _, s := range v01Objects(card["skills"]) {
		if s["name"] == "" {
			t.Errorf("skill %v has no name", s)
		}
		skills = append(skills, s["id"].(string))
	}
	if want := []string{"echo", "ask", "stream", "slow"}; !slices.Equal(skills, want) {
		t.Errorf("skills %v, want %v", skills, want)
	}

	t.Run("forwarded https", func(t *testing.T) {
		c := get(t, ts, map[string]string{"X-Forwarded-Proto": "https"})
		if want := "https://" + strings.TrimPrefix(ts.URL, "http://") + "/"; c["url"] != want {
			t.Errorf("url %v, want %s", c["url"], want)
		}
	})
	t.Run("public url, no push, no demo", func(t *testing.T) {
		ts := startServer(t, func(c *ServeConfig) {
			c.PublicURL = "https://agents.example.com/a2a/"
			c.NoPush = true
			c.NoDemo = true
		})
		c := get(t, ts, nil)
		if c["url"] != "https://agents.example.com/a2a/" {
			t.Errorf("url %v, want the public URL", c["url"])
		}
		if caps, _ := c["capabilities"].(map[string]any); caps["pushNotifications"] != false {
			t.Errorf("capabilities %v, want pushNotifications false", c["capabilities"])
		}
		if l, _ := c["skills"].([]any); l == nil || len(l) != 0 {
			t.Errorf("skills %v, want []", c["skills"])
		}
	})
}

// ---- product bugs ----

// TestV01StreamErrorsHaveObjectData: errors of the v0.1 streaming methods
// must be v0.x errors, whose data is an object (docs/dialects.md, DIGEST
// §5), as tasks/send's are; they come as a stream of one error event
// without id, as v0.3's do.
func TestV01StreamErrorsHaveObjectData(t *testing.T) {
	t.Parallel()
	ctx := v01Context(t)
	ts := startServer(t, nil)
	v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/send", map[string]any{"id": "done", "message": v01TextMessage("user", "echo")}))
	for _, tc := range []struct {
		name   string
		body   []byte
		code   int
		reason string
	}{
		{"sendSubscribe id with dots", v01Request(t, "tasks/sendSubscribe", map[string]any{"id": "a.b", "message": v01TextMessage("user", "echo")}), -32602, "INVALID_PARAMS"},
		{"sendSubscribe role agent", v01Request(t, "tasks/sendSubscribe", map[string]any{"id": "s-agent", "message": v01TextMessage("agent", "echo")}), -32602, "INVALID_PARAMS"},
		{"sendSubscribe to a completed task", v01Request(t, "tasks/sendSubscribe", map[string]any{"id": "done", "message": v01TextMessage("user", "echo")}), -32004, "UNSUPPORTED_OPERATION"},
		{"resubscribe to a completed task", v01Request(t, "tasks/resubscribe", map[string]any{"id": "done"}), -32004, "UNSUPPORTED_OPERATION"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames := v01ReadAll(ctx, t, ts, tc.body)
			if len(frames) != 1 || frames[0].err == nil || frames[0].hasID {
				t.Fatalf("%s: frames %v, want one error event without id", tc.name, frames)
			}
			v01MustErr(t, tc.name, frames[0].err, tc.code, tc.reason)
		})
	}
}

// TestV01StreamArtifactIndex: a v0.1 artifact's index is its place in
// the task (v01TaskOf numbers task.artifacts 0, 1, ...), and a streamed
// artifact event must carry the same index, or a client that applies the
// event to its copy of the task appends to the wrong artifact. The demo
// agent makes one artifact per task, so an agent of the test's own makes
// one per turn.
func TestV01StreamArtifactIndex(t *testing.T) {
	t.Parallel()
	ctx := v01Context(t)
	ts := startServer(t, func(c *ServeConfig) { c.NoDemo = true })
	nc, err := nats.Connect(ts.NATSURL, nats.Name("a2abus-v01-test-agent"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := workers.DefaultConfig()
	cfg.Stream, cfg.Consumer = engine.DefaultConfig().EventsStream, "v01-test-agent"
	// One artifact per turn; input-required after the first.
	w, err := workers.New(nc, js, cfg, func(ctx context.Context, task *workers.Task) error {
		n := len(task.View().Task.Artifacts) + 1
		art := &a2a.Artifact{ID: a2a.ArtifactID(fmt.Sprintf("turn-%d", n)), Name: fmt.Sprintf("turn %d", n),
			Parts: a2a.ContentParts{a2a.NewTextPart(fmt.Sprintf("answer %d", n))}}
		if err := task.Artifact(ctx, art, false, true); err != nil {
			return err
		}
		if n == 1 {
			return task.Status(ctx, a2a.TaskStateInputRequired, workers.AgentMessage(a2a.NewTextPart("and then?")))
		}
		return task.Status(ctx, a2a.TaskStateCompleted, nil)
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	const id = "two-turns"
	first := v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/send", map[string]any{"id": id, "message": v01TextMessage("user", "first")}))
	if v01State(first) != "input-required" {
		t.Fatalf("first turn: %s, want input-required", jsonOf(t, first))
	}
	frames := v01ReadAll(ctx, t, ts, v01Request(t, "tasks/sendSubscribe", map[string]any{"id": id, "message": v01TextMessage("user", "second")}))
	v01CheckStream(t, "sendSubscribe", frames, id, "completed")
	task := v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/get", map[string]any{"id": id}))
	index := map[string]any{}
	for _, a := range v01Objects(task["artifacts"]) {
		index[a["name"].(string)] = a["index"]
	}
	if index["turn 1"] != json.Number("0") || index["turn 2"] != json.Number("1") {
		t.Fatalf("tasks/get artifacts %s, want turn 1 at index 0 and turn 2 at 1", jsonOf(t, task["artifacts"]))
	}
	for _, f := range frames {
		if a, ok := f.result["artifact"].(map[string]any); ok && a["index"] != index[a["name"].(string)] {
			t.Errorf("streamed artifact %q has index %v, but tasks/get has it at index %v", a["name"], a["index"], index[a["name"].(string)])
		}
	}
}

// TestV01PushJWTScheme: the articles' v0.1 push config names the schemes
// the webhook accepts, without credentials: {"schemes":["jwt"]} (or
// ["bearer"] in the v0.1 samples, whose receiver reads "Authorization:
// Bearer <JWT>" and checks it against the agent's JWKS). The server has no
// credentials to send in that scheme, so Authorization must carry its
// JWT, not "<scheme> " with nothing after it.
func TestV01PushJWTScheme(t *testing.T) {
	t.Parallel()
	ctx := v01Context(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })
	rc := newHookReceiver(t, nil)
	for _, scheme := range []string{"jwt", "bearer"} {
		t.Run(scheme, func(t *testing.T) {
			id, hook := "push-"+scheme, rc.URL("/"+scheme)
			v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/send", map[string]any{"id": id, "message": v01TextMessage("user", "ask push")}))
			v01Result(ctx, t, ts, "TaskPushNotificationConfig", v01Request(t, "tasks/pushNotification/set", map[string]any{"id": id,
				"pushNotificationConfig": map[string]any{"url": hook, "authentication": map[string]any{"schemes": []any{scheme}}}}))
			v01Result(ctx, t, ts, "Task", v01Request(t, "tasks/send", map[string]any{"id": id, "message": v01TextMessage("user", "Ada")}))
			reqs := hooksFor(waitLegacyFinal(t, rc, a2a.TaskID(id)), a2a.TaskID(id))
			checkLegacyPushBodies(t, reqs, id, []string{"working", "input-required", "working", "completed"}, "")
			for i, r := range reqs {
				if got := r.Header.Get("Authorization"); !strings.HasPrefix(got, "Bearer ey") {
					t.Errorf("push %d: Authorization %q (%s %q), want \"Bearer <JWT>\"", i, got, jwks.SignatureHeader, truncateText(r.Header.Get(jwks.SignatureHeader), 20))
				}
			}
		})
	}
}
