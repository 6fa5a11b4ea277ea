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
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2a"
)

// v0.3 JSON-RPC dialect tests: the legacy official Go client
// (github.com/a2aproject/a2a-go v0.3.15, not /v2: a2a-go/v2 v2.4.0 requires
// v0.3.15, so minimal version selection cannot pick an older v0.3) end to
// end, golden files of raw requests and responses for every v0.3 method,
// tasks shared with the v1.0 JSON-RPC and HTTP+JSON bindings, and
// A2A-Version routing. The TestV03Bug* tests show product bugs: they fail
// until those are fixed.
//
// Regenerate the golden files with
//
//	go test -run TestV03Golden ./cmd/a2abus/ -rewrite-v03

var v03Rewrite = flag.Bool("rewrite-v03", false, "rewrite the v0.3 golden files in testdata/v03")

// v03Timeout bounds each test; the file runs in a few seconds.
const v03Timeout = 60 * time.Second

func v03Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), v03Timeout)
	t.Cleanup(cancel)
	return ctx
}

// ---- raw v0.3 JSON-RPC ----

// v03Err is a JSON-RPC error object.
type v03Err struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// v03Reply is a raw JSON-RPC response, with its bytes.
type v03Reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *v03Err         `json:"error"`
	raw     []byte
}

func (r v03Reply) String() string { return truncateText(string(r.raw), 400) }

// v03Request is a JSON-RPC request with id 1; params is any JSON value
// (a json.RawMessage is sent as it is).
func v03Request(t testing.TB, method string, params any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// v03Post posts body to url as a v0.3 client does: no A2A-Version header
// unless hdr has one. It does not touch t.
func v03Post(ctx context.Context, url string, body []byte, hdr map[string]string, stream bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return http.DefaultClient.Do(req)
}

// v03CallURL posts one request that must be answered with one JSON
// response (HTTP 200, application/json).
func v03CallURL(ctx context.Context, t testing.TB, url, method string, params any, hdr map[string]string) v03Reply {
	t.Helper()
	resp, err := v03Post(ctx, url, v03Request(t, method, params), hdr, false)
	if err != nil {
		t.Fatalf("POST %s: %v", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: read: %v", method, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("POST %s: HTTP %s %q %s, want 200 application/json", method, resp.Status, resp.Header.Get("Content-Type"), truncateText(string(b), 300))
	}
	return v03DecodeReply(t, method, b)
}

func v03DecodeReply(t testing.TB, what string, b []byte) v03Reply {
	t.Helper()
	var r v03Reply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: decode %s: %v", what, truncateText(string(b), 300), err)
	}
	r.raw = b
	if r.JSONRPC != "2.0" || string(r.ID) != "1" {
		t.Fatalf("%s: %s: not a JSON-RPC 2.0 response to request 1", what, r)
	}
	if (r.Error == nil) == (r.Result == nil) {
		t.Fatalf("%s: %s: want exactly one of result and error", what, r)
	}
	return r
}

// v03Call posts a v0.3 request (no A2A-Version header) to the server.
func v03Call(ctx context.Context, t testing.TB, ts *testServer, method string, params any) v03Reply {
	t.Helper()
	return v03CallURL(ctx, t, ts.URL+"/", method, params, nil)
}

// v03MustResult calls and fails on a JSON-RPC error.
func v03MustResult(ctx context.Context, t testing.TB, ts *testServer, method string, params any) map[string]any {
	t.Helper()
	r := v03Call(ctx, t, ts, method, params)
	if r.Error != nil {
		t.Fatalf("%s: %s", method, r)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatalf("%s: result %s: %v", method, truncateText(string(r.Result), 300), err)
	}
	return m
}

// v03Message is a v0.3 user message with one text part.
func v03Message(id, text string) map[string]any {
	return map[string]any{"kind": "message", "messageId": id, "role": "user",
		"parts": []any{map[string]any{"kind": "text", "text": text}}}
}

// v03Send sends text with message/send and returns the task.
func v03Send(ctx context.Context, t testing.TB, ts *testServer, id, text string, blocking bool) map[string]any {
	t.Helper()
	return v03MustResult(ctx, t, ts, "message/send", map[string]any{"message": v03Message(id, text),
		"configuration": map[string]any{"blocking": blocking}})
}

// v03Str returns the string at path in a decoded JSON value ("" if none).
func v03Str(v any, path ...string) string {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// ---- v0.3 SSE ----

// v03Frame is one frame of a v0.3 stream.
type v03Frame struct {
	seq   uint64
	hasID bool
	reply v03Reply
	// result is the decoded result; nil for an error frame.
	result map[string]any
}

func (f v03Frame) kind() string { return v03Str(f.result, "kind") }

func (f v03Frame) String() string {
	if f.reply.Error != nil {
		return fmt.Sprintf("[%d] error %d", f.seq, f.reply.Error.Code)
	}
	return fmt.Sprintf("[%d] %s", f.seq, v03Describe(f.result))
}

// v03Describe is a short description of a v0.3 task, event or message.
func v03Describe(m map[string]any) string {
	switch v03Str(m, "kind") {
	case "task":
		return "task " + v03Str(m, "status", "state")
	case "status-update":
		st, _ := m["status"].(map[string]any)
		msg, _ := st["message"].(map[string]any)
		return fmt.Sprintf("status %s final=%v %q", v03Str(m, "status", "state"), m["final"], v03PartsText(msg["parts"]))
	case "artifact-update":
		art, _ := m["artifact"].(map[string]any)
		return fmt.Sprintf("artifact %s append=%v last=%v %q", v03Str(art, "artifactId"), m["append"] == true, m["lastChunk"] == true, v03PartsText(art["parts"]))
	case "message":
		return "message " + v03PartsText(m["parts"])
	}
	return "unknown " + truncateText(fmt.Sprint(m), 100)
}

func v03PartsText(parts any) string {
	ps, _ := parts.([]any)
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(v03Str(p, "text"))
	}
	return b.String()
}

// v03Stream is an open v0.3 SSE response.
type v03Stream struct {
	resp   *http.Response
	p      *sseParser
	cancel context.CancelFunc
}

// v03Open posts a streaming request. If the server answers with a plain
// JSON response (an error before the stream starts), it returns that
// reply and a nil stream. It does not touch t but through t.Fatal on
// transport errors.
func v03Open(ctx context.Context, t testing.TB, url, method string, params any, hdr map[string]string) (*v03Stream, *v03Reply) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	resp, err := v03Post(ctx, url, v03Request(t, method, params), hdr, true)
	if err != nil {
		cancel()
		t.Fatalf("POST %s: %v", method, err)
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case resp.StatusCode == http.StatusOK && strings.HasPrefix(ct, "text/event-stream"):
		s := &v03Stream{resp: resp, p: newSSEParser(resp.Body), cancel: cancel}
		t.Cleanup(s.close)
		return s, nil
	case resp.StatusCode == http.StatusOK && strings.HasPrefix(ct, "application/json"):
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			t.Fatalf("POST %s: read: %v", method, err)
		}
		r := v03DecodeReply(t, method, b)
		return nil, &r
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
	resp.Body.Close()
	cancel()
	t.Fatalf("POST %s: HTTP %s %q %s; want 200 text/event-stream or application/json", method, resp.Status, ct, truncateText(string(b), 300))
	return nil, nil
}

// next returns the next frame, skipping comments, or io.EOF at the end.
func (s *v03Stream) next() (v03Frame, error) {
	for {
		it, err := s.p.next()
		if err != nil {
			return v03Frame{}, err
		}
		if it.isComment {
			continue
		}
		var f v03Frame
		if seq, has, err := it.sequence(); err != nil {
			return f, err
		} else {
			f.seq, f.hasID = seq, has
		}
		if err := json.Unmarshal([]byte(it.data), &f.reply); err != nil {
			return f, fmt.Errorf("frame data %q: %v", truncateText(it.data, 200), err)
		}
		f.reply.raw = []byte(it.data)
		if f.reply.JSONRPC != "2.0" || string(f.reply.ID) != "1" {
			return f, fmt.Errorf("frame data %q: not a JSON-RPC 2.0 response to request 1", truncateText(it.data, 200))
		}
		if f.reply.Error == nil {
			if err := json.Unmarshal(f.reply.Result, &f.result); err != nil {
				return f, fmt.Errorf("frame result %q: %v", truncateText(string(f.reply.Result), 200), err)
			}
		}
		return f, nil
	}
}

// read reads n frames (n < 0: to the end of the stream).
func (s *v03Stream) read(n int) ([]v03Frame, error) { return readFrames(s.next, n) }

func (s *v03Stream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// v03ReadStream opens a stream that must start and reads it to the end.
func v03ReadStream(ctx context.Context, t testing.TB, ts *testServer, method string, params any, hdr map[string]string) []v03Frame {
	t.Helper()
	s, r := v03Open(ctx, t, ts.URL+"/", method, params, hdr)
	if s == nil {
		t.Fatalf("%s: %s, want a stream", method, r)
	}
	defer s.close()
	frames, err := s.read(-1)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return frames
}

func v03Descs(frames []v03Frame) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = v03Describe(f.result)
		if f.reply.Error != nil {
			out[i] = fmt.Sprintf("error %d", f.reply.Error.Code)
		}
	}
	return out
}

// ---- the v0.3 schema, checked by hand ----

// v03States are the TaskState values of a2a-v0.3.schema.json.
var v03States = []string{"submitted", "working", "input-required", "completed", "canceled", "failed", "rejected", "auth-required", "unknown"}

// v03Shape collects violations of the v0.3 schema's shapes.
type v03Shape struct{ errs []string }

func (s *v03Shape) bad(path, format string, args ...any) {
	s.errs = append(s.errs, path+": "+fmt.Sprintf(format, args...))
}

func (s *v03Shape) obj(path string, v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		s.bad(path, "is %T, want an object", v)
	}
	return m
}

// str checks that m[key] is a string (non-empty if required).
func (s *v03Shape) str(path string, m map[string]any, key string, required bool) string {
	v, ok := m[key]
	if !ok {
		if required {
			s.bad(path, "has no %q", key)
		}
		return ""
	}
	str, isStr := v.(string)
	switch {
	case !isStr:
		s.bad(path+"."+key, "is %T, want a string", v)
	case required && str == "":
		s.bad(path+"."+key, "is empty")
	}
	return str
}

func (s *v03Shape) kind(path string, m map[string]any, want string) {
	if k := v03Str(m, "kind"); k != want {
		s.bad(path, "kind %q, want %q", k, want)
	}
}

func (s *v03Shape) task(path string, v any) {
	m := s.obj(path, v)
	if m == nil {
		return
	}
	s.kind(path, m, "task")
	s.str(path, m, "id", true)
	s.str(path, m, "contextId", true)
	s.status(path+".status", m["status"])
	if arts, ok := m["artifacts"]; ok {
		as, isArr := arts.([]any)
		if !isArr {
			s.bad(path+".artifacts", "is %T, want an array", arts)
		}
		for i, a := range as {
			s.artifact(fmt.Sprintf("%s.artifacts[%d]", path, i), a)
		}
	}
	if hist, ok := m["history"]; ok {
		hs, isArr := hist.([]any)
		if !isArr {
			s.bad(path+".history", "is %T, want an array", hist)
		}
		for i, h := range hs {
			s.message(fmt.Sprintf("%s.history[%d]", path, i), h)
		}
	}
}

func (s *v03Shape) status(path string, v any) {
	m := s.obj(path, v)
	if m == nil {
		return
	}
	if st := s.str(path, m, "state", true); !slices.Contains(v03States, st) {
		s.bad(path+".state", "%q is not a v0.3 TaskState", st)
	}
	if msg, ok := m["message"]; ok {
		s.message(path+".message", msg)
	}
	if ts := s.str(path, m, "timestamp", false); ts != "" {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			s.bad(path+".timestamp", "%q is not an ISO 8601 time: %v", ts, err)
		}
	}
}

func (s *v03Shape) message(path string, v any) {
	m := s.obj(path, v)
	if m == nil {
		return
	}
	s.kind(path, m, "message")
	s.str(path, m, "messageId", true)
	if r := s.str(path, m, "role", true); r != "user" && r != "agent" {
		s.bad(path+".role", "%q, want user or agent", r)
	}
	s.parts(path+".parts", m["parts"])
}

func (s *v03Shape) artifact(path string, v any) {
	m := s.obj(path, v)
	if m == nil {
		return
	}
	s.str(path, m, "artifactId", true)
	s.parts(path+".parts", m["parts"])
}

func (s *v03Shape) parts(path string, v any) {
	ps, ok := v.([]any)
	if !ok {
		s.bad(path, "is %T, want an array", v)
		return
	}
	for i, p := range ps {
		pp := fmt.Sprintf("%s[%d]", path, i)
		m := s.obj(pp, p)
		if m == nil {
			continue
		}
		switch k := v03Str(m, "kind"); k {
		case "text":
			if _, ok := m["text"].(string); !ok {
				s.bad(pp, "text part without a string text")
			}
		case "file":
			f := s.obj(pp+".file", m["file"])
			_, hasBytes := f["bytes"].(string)
			_, hasURI := f["uri"].(string)
			if hasBytes == hasURI {
				s.bad(pp+".file", "want exactly one of bytes and uri: %v", f)
			}
		case "data":
			if _, ok := m["data"].(map[string]any); !ok {
				s.bad(pp+".data", "is %T, want an object", m["data"])
			}
		default:
			s.bad(pp, "kind %q is not text, file or data", k)
		}
	}
}

func (s *v03Shape) statusEvent(path string, m map[string]any) {
	s.str(path, m, "taskId", true)
	s.str(path, m, "contextId", true)
	s.status(path+".status", m["status"])
	if _, ok := m["final"].(bool); !ok {
		s.bad(path, "final is %T, want a bool (required)", m["final"])
	}
}

func (s *v03Shape) artifactEvent(path string, m map[string]any) {
	s.str(path, m, "taskId", true)
	s.str(path, m, "contextId", true)
	s.artifact(path+".artifact", m["artifact"])
	for _, k := range []string{"append", "lastChunk"} {
		if v, ok := m[k]; ok {
			if _, isBool := v.(bool); !isBool {
				s.bad(path+"."+k, "is %T, want a bool", v)
			}
		}
	}
}

// event checks a message/send result or a stream item: a task, a
// message, or an event.
func (s *v03Shape) event(path string, v any) {
	m := s.obj(path, v)
	if m == nil {
		return
	}
	switch k := v03Str(m, "kind"); k {
	case "task":
		s.task(path, m)
	case "message":
		s.message(path, m)
	case "status-update":
		s.statusEvent(path, m)
	case "artifact-update":
		s.artifactEvent(path, m)
	default:
		s.bad(path, "kind %q is not task, message, status-update or artifact-update", k)
	}
}

func (s *v03Shape) pushConfig(path string, v any) {
	m := s.obj(path, v)
	if m == nil {
		return
	}
	s.str(path, m, "taskId", true)
	c := s.obj(path+".pushNotificationConfig", m["pushNotificationConfig"])
	if c == nil {
		return
	}
	s.str(path+".pushNotificationConfig", c, "url", true)
	if a, ok := c["authentication"]; ok {
		am := s.obj(path+".pushNotificationConfig.authentication", a)
		if _, ok := am["schemes"].([]any); !ok {
			s.bad(path+".pushNotificationConfig.authentication", "schemes is %T, want an array", am["schemes"])
		}
	}
}

// errorObj checks a v0.x JSON-RPC error: data is one ErrorInfo object.
func (s *v03Shape) errorObj(path string, e *v03Err) {
	if e.Code == 0 || e.Message == "" {
		s.bad(path, "code %d message %q, want both", e.Code, e.Message)
	}
	var data any
	if err := json.Unmarshal(e.Data, &data); err != nil {
		s.bad(path+".data", "%s: %v", e.Data, err)
		return
	}
	m, ok := data.(map[string]any)
	if !ok {
		s.bad(path+".data", "is %T (%s), want an ErrorInfo object (v0.x)", data, truncateText(string(e.Data), 100))
		return
	}
	if m["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || v03Str(m, "reason") == "" || m["domain"] != "a2a-protocol.org" {
		s.bad(path+".data", "%v, want an ErrorInfo with @type, reason and domain", m)
	}
}

// noV1 reports v1.0 spellings anywhere in a v0.3 value.
func (s *v03Shape) noV1(path string, v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if k == "statusUpdate" || k == "artifactUpdate" || k == "protocolBinding" {
				s.bad(path, "has the v1.0 key %q", k)
			}
			s.noV1(path+"."+k, c)
		}
	case []any:
		for i, c := range t {
			s.noV1(fmt.Sprintf("%s[%d]", path, i), c)
		}
	case string:
		if strings.HasPrefix(t, "TASK_STATE_") || strings.HasPrefix(t, "ROLE_") {
			s.bad(path, "%q is a v1.0 enum", t)
		}
	}
}

func (s *v03Shape) report(t testing.TB, what string) {
	t.Helper()
	for _, e := range s.errs {
		t.Errorf("%s: v0.3 schema: %s", what, e)
	}
}

// v03CheckReply checks a response to method against the v0.3 schema.
func v03CheckReply(t testing.TB, what, method string, r v03Reply) {
	t.Helper()
	var s v03Shape
	if r.Error != nil {
		s.errorObj("error", r.Error)
		s.report(t, what)
		return
	}
	var res any
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("%s: result: %v", what, err)
	}
	s.noV1("result", res)
	switch method {
	case "message/send":
		s.event("result", res)
		if k := v03Str(res, "kind"); k != "task" && k != "message" {
			s.bad("result", "kind %q, want task or message", k)
		}
	case "tasks/get", "tasks/cancel":
		s.task("result", res)
	case "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get":
		s.pushConfig("result", res)
	case "tasks/pushNotificationConfig/list":
		arr, ok := res.([]any)
		if !ok {
			s.bad("result", "is %T, want an array", res)
		}
		for i, c := range arr {
			s.pushConfig(fmt.Sprintf("result[%d]", i), c)
		}
	case "tasks/pushNotificationConfig/delete":
		if res != nil {
			s.bad("result", "is %v, want null", res)
		}
	default:
		t.Fatalf("%s: no shape for %s", what, method)
	}
	s.report(t, what)
}

// v03CheckFrames checks a v0.3 stream: ids increase, every item has the
// v0.3 shape, a task comes first (message/stream), and only the last
// status event is final.
func v03CheckFrames(t testing.TB, what string, frames []v03Frame, taskFirst bool) {
	t.Helper()
	var s v03Shape
	var last uint64
	for i, f := range frames {
		path := fmt.Sprintf("frame[%d]", i)
		if f.reply.Error != nil {
			if i != len(frames)-1 || f.hasID {
				s.bad(path, "an error frame must be the last and have no id")
			}
			s.errorObj(path+".error", f.reply.Error)
			continue
		}
		if !f.hasID || f.seq <= last {
			s.bad(path, "id %d (has id %v) after %d, want increasing stream sequences", f.seq, f.hasID, last)
		}
		last = f.seq
		s.event(path, f.result)
		s.noV1(path, f.result)
		if final, _ := f.result["final"].(bool); final != (f.kind() == "status-update" && i == len(frames)-1) {
			s.bad(path, "final=%v; want final only on the last status event", final)
		}
	}
	if taskFirst && len(frames) > 0 && frames[0].reply.Error == nil && frames[0].kind() != "task" {
		s.bad("frame[0]", "kind %q, want task first", frames[0].kind())
	}
	s.report(t, what)
}

// ---- the legacy client ----

// v03LegacyClient is the a2a-go v0.3 client for the server's JSON-RPC
// endpoint.
func v03LegacyClient(ctx context.Context, t testing.TB, ts *testServer, cfg a2aclient03.Config) *a2aclient03.Client {
	t.Helper()
	c, err := a2aclient03.NewFromEndpoints(ctx,
		[]a2a03.AgentInterface{{URL: ts.URL + "/", Transport: a2a03.TransportProtocolJSONRPC}},
		a2aclient03.WithConfig(cfg),
		a2aclient03.WithJSONRPCTransport(&http.Client{Timeout: 30 * time.Second}))
	if err != nil {
		t.Fatalf("a2aclient.NewFromEndpoints()=%v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func v03LegacyText(text string) *a2a03.Message {
	return a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.TextPart{Text: text})
}

func v03LegacyPartsText(ps a2a03.ContentParts) string {
	var b strings.Builder
	for _, p := range ps {
		if tp, ok := p.(a2a03.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

func v03LegacyMsgText(m *a2a03.Message) string {
	if m == nil {
		return ""
	}
	return v03LegacyPartsText(m.Parts)
}

// v03LegacyDescribe describes a legacy client event like v03Describe.
func v03LegacyDescribe(e a2a03.Event) string {
	switch v := e.(type) {
	case *a2a03.Task:
		return "task " + string(v.Status.State)
	case *a2a03.TaskStatusUpdateEvent:
		return fmt.Sprintf("status %s final=%v %q", v.Status.State, v.Final, v03LegacyMsgText(v.Status.Message))
	case *a2a03.TaskArtifactUpdateEvent:
		return fmt.Sprintf("artifact %s append=%v last=%v %q", v.Artifact.ID, v.Append, v.LastChunk, v03LegacyPartsText(v.Artifact.Parts))
	case *a2a03.Message:
		return "message " + v03LegacyMsgText(v)
	}
	return fmt.Sprintf("%T", e)
}

// v03LegacyCollect drains a legacy client stream.
func v03LegacyCollect(seq func(func(a2a03.Event, error) bool)) ([]a2a03.Event, error) {
	var out []a2a03.Event
	for ev, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

func v03LegacySendTask(ctx context.Context, t testing.TB, c *a2aclient03.Client, msg *a2a03.Message) *a2a03.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: msg})
	if err != nil {
		t.Fatalf("SendMessage(%q)=%v", v03LegacyMsgText(msg), err)
	}
	task, ok := res.(*a2a03.Task)
	if !ok {
		t.Fatalf("SendMessage(%q)=%T, want *a2a.Task", v03LegacyMsgText(msg), res)
	}
	return task
}

// v03StreamDescs are the events of "stream <n> <ms>" from its start.
func v03StreamDescs(n, ms int) []string {
	out := []string{
		"task submitted",
		`status working final=false ""`,
		fmt.Sprintf("status working final=false %q", fmt.Sprintf("streaming %d chunks every %d ms", n, ms)),
	}
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprintf("artifact stream append=%v last=%v %q", i > 1, i == n, fmt.Sprintf("chunk %d/%d\n", i, n)))
	}
	return append(out, fmt.Sprintf("status completed final=true %q", fmt.Sprintf("streamed %d chunks", n)))
}

func TestV03LegacyClient(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })
	c := v03LegacyClient(ctx, t, ts, a2aclient03.Config{})
	polling := v03LegacyClient(ctx, t, ts, a2aclient03.Config{Polling: true})

	t.Run("card", func(t *testing.T) {
		// The union card carries the v0.3 fields, so the legacy resolver and
		// NewFromCard work too.
		card, err := agentcard03.DefaultResolver.Resolve(ctx, ts.URL)
		if err != nil {
			t.Fatalf("legacy Resolve(%s)=%v", ts.URL, err)
		}
		if card.URL != ts.URL+"/" || card.PreferredTransport != a2a03.TransportProtocolJSONRPC || card.ProtocolVersion != "0.3" {
			t.Errorf("legacy card url %q transport %q version %q, want %s/ JSONRPC 0.3", card.URL, card.PreferredTransport, card.ProtocolVersion, ts.URL)
		}
		// Both v0.3 bindings are listed; the HTTP+JSON routes are under /v1/
		// of the listed URL, where TestV03RESTCompatClient reaches them.
		wantIfaces := []a2a03.AgentInterface{{URL: ts.URL + "/", Transport: a2a03.TransportProtocolJSONRPC}, {URL: ts.URL + "/", Transport: a2a03.TransportProtocolHTTPJSON}}
		if !slices.Equal(card.AdditionalInterfaces, wantIfaces) {
			t.Errorf("legacy card additionalInterfaces %+v, want %+v", card.AdditionalInterfaces, wantIfaces)
		}
		cc, err := a2aclient03.NewFromCard(ctx, card)
		if err != nil {
			t.Fatalf("legacy NewFromCard()=%v", err)
		}
		defer cc.Destroy()
		task := v03LegacySendTask(ctx, t, cc, v03LegacyText("echo card"))
		if task.Status.State != a2a03.TaskStateCompleted {
			t.Errorf("task from the card's client: %s, want completed", task.Status.State)
		}
		if _, err := cc.GetAgentCard(ctx); err != nil {
			t.Errorf("GetAgentCard (supportsAuthenticatedExtendedCard false: the resolved card)=%v", err)
		}
	})

	t.Run("send echo", func(t *testing.T) {
		msg := v03LegacyText("echo hi")
		task := v03LegacySendTask(ctx, t, c, msg)
		if task.ID == "" || task.ContextID == "" || task.Status.State != a2a03.TaskStateCompleted || task.Status.Timestamp == nil {
			t.Fatalf("task %+v, want completed with ids and a timestamp", task)
		}
		if len(task.Artifacts) != 1 || task.Artifacts[0].ID != "echo" || v03LegacyPartsText(task.Artifacts[0].Parts) != "echo hi" {
			t.Errorf("artifacts %s, want echo \"echo hi\"", jsonOf(t, task.Artifacts))
		}
		if len(task.History) == 0 || task.History[0].ID != msg.ID || task.History[0].Role != a2a03.MessageRoleUser ||
			task.History[0].TaskID != task.ID || task.History[0].ContextID != task.ContextID {
			t.Errorf("history %s, want the user message first, with the task's ids", jsonOf(t, task.History))
		}
		got, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: task.ID, HistoryLength: ptr(0)})
		if err != nil || got.Status.State != a2a03.TaskStateCompleted || len(got.History) != 0 || len(got.Artifacts) != 1 {
			t.Errorf("GetTask(historyLength 0)=%+v, %v; want completed, no history, the artifact", got, err)
		}
	})

	t.Run("non-blocking then get", func(t *testing.T) {
		res, err := polling.SendMessage(ctx, &a2a03.MessageSendParams{Message: v03LegacyText("slow 1")})
		if err != nil {
			t.Fatalf("SendMessage(blocking false)=%v", err)
		}
		task, ok := res.(*a2a03.Task)
		if !ok || task.Status.State.Terminal() {
			t.Fatalf("SendMessage(blocking false)=%+v, want a task not yet terminal", res)
		}
		var last *a2a03.Task
		waitFor(t, 20*time.Second, "slow 1 completed", func() (bool, error) {
			got, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: task.ID})
			if err != nil {
				return false, err
			}
			last = got
			if got.Status.State.Terminal() && got.Status.State != a2a03.TaskStateCompleted {
				return false, fmt.Errorf("task ended %s", got.Status.State)
			}
			return got.Status.State == a2a03.TaskStateCompleted, nil
		})
		if len(last.Artifacts) != 1 || v03LegacyPartsText(last.Artifacts[0].Parts) != "worked for 1 seconds" {
			t.Errorf("artifacts %s, want the result", jsonOf(t, last.Artifacts))
		}
		var progress []string
		for _, m := range last.History {
			if m.Role == a2a03.MessageRoleAgent {
				progress = append(progress, v03LegacyMsgText(m))
			}
		}
		if !slices.Equal(progress, []string{"progress 1/1"}) {
			t.Errorf("agent history %q, want [progress 1/1]", progress)
		}
	})

	t.Run("stream", func(t *testing.T) {
		evs, err := v03LegacyCollect(c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: v03LegacyText("stream 5 20")}))
		if err != nil {
			t.Fatalf("SendStreamingMessage: %v (after %d events)", err, len(evs))
		}
		got := make([]string, len(evs))
		for i, e := range evs {
			got[i] = v03LegacyDescribe(e)
		}
		if want := v03StreamDescs(5, 20); !slices.Equal(got, want) {
			t.Fatalf("stream events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		task := evs[0].(*a2a03.Task)
		for _, e := range evs[1:] {
			if info := e.(a2a03.TaskInfoProvider).TaskInfo(); info.TaskID != task.ID || info.ContextID != task.ContextID {
				t.Errorf("event %s: task %s context %s, want %s %s", v03LegacyDescribe(e), info.TaskID, info.ContextID, task.ID, task.ContextID)
			}
		}
		final, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: task.ID})
		if err != nil || final.Status.State != a2a03.TaskStateCompleted || len(final.Artifacts) != 1 || len(final.Artifacts[0].Parts) != 5 {
			t.Errorf("GetTask after the stream=%s, %v; want completed with one artifact of 5 parts", jsonOf(t, final), err)
		}
	})

	t.Run("ask round trip", func(t *testing.T) {
		task := v03LegacySendTask(ctx, t, c, v03LegacyText("ask"))
		if task.Status.State != a2a03.TaskStateInputRequired || task.Status.Message == nil ||
			task.Status.Message.Role != a2a03.MessageRoleAgent || v03LegacyMsgText(task.Status.Message) != "What is your name?" {
			t.Fatalf("ask: %s, want input-required with the agent's question", jsonOf(t, task))
		}
		done := v03LegacySendTask(ctx, t, c, a2a03.NewMessageForTask(a2a03.MessageRoleUser, task, a2a03.TextPart{Text: "Ada"}))
		if done.ID != task.ID || done.Status.State != a2a03.TaskStateCompleted {
			t.Fatalf("follow-up: task %s %s, want %s completed", done.ID, done.Status.State, task.ID)
		}
		if len(done.Artifacts) != 1 || v03LegacyPartsText(done.Artifacts[0].Parts) != "Hello, Ada!" {
			t.Errorf("follow-up artifacts %s, want Hello, Ada!", jsonOf(t, done.Artifacts))
		}
		var users []string
		for _, m := range done.History {
			if m.Role == a2a03.MessageRoleUser {
				users = append(users, v03LegacyMsgText(m))
			}
		}
		if !slices.Equal(users, []string{"ask", "Ada"}) {
			t.Errorf("user history %q, want [ask Ada]", users)
		}
		// A terminal task takes no more messages.
		_, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: a2a03.NewMessageForTask(a2a03.MessageRoleUser, task, a2a03.TextPart{Text: "again"})})
		if !errors.Is(err, a2a03.ErrUnsupportedOperation) {
			t.Errorf("follow-up to a completed task: %v, want ErrUnsupportedOperation", err)
		}

		// Streamed, ask ends its stream at input-required, final:true.
		evs, err := v03LegacyCollect(c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: v03LegacyText("ask")}))
		if err != nil || len(evs) == 0 {
			t.Fatalf("stream ask: %d events, %v", len(evs), err)
		}
		last, ok := evs[len(evs)-1].(*a2a03.TaskStatusUpdateEvent)
		if !ok || last.Status.State != a2a03.TaskStateInputRequired || !last.Final {
			t.Errorf("stream ask ends with %s, want status input-required final=true", v03LegacyDescribe(evs[len(evs)-1]))
		}
	})

	t.Run("cancel", func(t *testing.T) {
		res, err := polling.SendMessage(ctx, &a2a03.MessageSendParams{Message: v03LegacyText("slow 30")})
		if err != nil {
			t.Fatalf("SendMessage(slow 30)=%v", err)
		}
		task := res.(*a2a03.Task)
		canceled, err := c.CancelTask(ctx, &a2a03.TaskIDParams{ID: task.ID})
		if err != nil || canceled.ID != task.ID || canceled.Status.State != a2a03.TaskStateCanceled {
			t.Fatalf("CancelTask=%+v, %v; want canceled", canceled, err)
		}
		got, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: task.ID})
		if err != nil || got.Status.State != a2a03.TaskStateCanceled {
			t.Errorf("GetTask after cancel=%+v, %v; want canceled", got, err)
		}
		if _, err := c.CancelTask(ctx, &a2a03.TaskIDParams{ID: task.ID}); !errors.Is(err, a2a03.ErrTaskNotCancelable) {
			t.Errorf("CancelTask(canceled)=%v, want ErrTaskNotCancelable", err)
		}
	})

	t.Run("resubscribe", func(t *testing.T) {
		res, err := polling.SendMessage(ctx, &a2a03.MessageSendParams{Message: v03LegacyText("stream 5 200")})
		if err != nil {
			t.Fatalf("SendMessage(stream 5 200)=%v", err)
		}
		task := res.(*a2a03.Task)
		evs, err := v03LegacyCollect(c.ResubscribeToTask(ctx, &a2a03.TaskIDParams{ID: task.ID}))
		if err != nil || len(evs) < 2 {
			t.Fatalf("ResubscribeToTask: %d events, %v", len(evs), err)
		}
		snap, ok := evs[0].(*a2a03.Task)
		if !ok || snap.ID != task.ID {
			t.Fatalf("first event %s, want the task", v03LegacyDescribe(evs[0]))
		}
		// The snapshot's chunks and the later chunk events are the 5
		// chunks, each once, in order.
		var chunks []string
		for _, a := range snap.Artifacts {
			for _, p := range a.Parts {
				chunks = append(chunks, v03LegacyPartsText(a2a03.ContentParts{p}))
			}
		}
		var descs []string
		for _, e := range evs[1:] {
			descs = append(descs, v03LegacyDescribe(e))
			if a, ok := e.(*a2a03.TaskArtifactUpdateEvent); ok {
				chunks = append(chunks, v03LegacyPartsText(a.Artifact.Parts))
			}
			if s, ok := e.(*a2a03.TaskStatusUpdateEvent); ok && s.Final != (e == evs[len(evs)-1]) {
				t.Errorf("status %s: final=%v, want final only last", s.Status.State, s.Final)
			}
		}
		if want := []string{"chunk 1/5\n", "chunk 2/5\n", "chunk 3/5\n", "chunk 4/5\n", "chunk 5/5\n"}; !slices.Equal(chunks, want) {
			t.Errorf("chunks %q (snapshot then events %q), want %q", chunks, descs, want)
		}
		if last := descs[len(descs)-1]; last != `status completed final=true "streamed 5 chunks"` {
			t.Errorf("last event %s, want the completed status", last)
		}
	})

	t.Run("push config", func(t *testing.T) {
		rc := newHookReceiver(t, nil)
		task := v03LegacySendTask(ctx, t, c, v03LegacyText("echo push configs"))
		a := a2a03.TaskPushConfig{TaskID: task.ID, Config: a2a03.PushConfig{ID: "cfg-a", URL: rc.URL("/a"), Token: "tok-a",
			Auth: &a2a03.PushAuthInfo{Schemes: []string{"Bearer"}, Credentials: "secret"}}}
		got, err := c.SetTaskPushConfig(ctx, &a)
		if err != nil || !v03SamePushConfig(got, &a) {
			t.Fatalf("SetTaskPushConfig(cfg-a)=%s, %v; want it as sent", jsonOf(t, got), err)
		}
		b, err := c.SetTaskPushConfig(ctx, &a2a03.TaskPushConfig{TaskID: task.ID, Config: a2a03.PushConfig{URL: rc.URL("/b")}})
		if err != nil || b.Config.ID == "" || b.TaskID != task.ID || b.Config.URL != rc.URL("/b") {
			t.Fatalf("SetTaskPushConfig(no id)=%s, %v; want a server-made id", jsonOf(t, b), err)
		}
		if got, err := c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "cfg-a"}); err != nil || !v03SamePushConfig(got, &a) {
			t.Errorf("GetTaskPushConfig(cfg-a)=%s, %v; want %s", jsonOf(t, got), err, jsonOf(t, a))
		}
		if got, err := c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: b.Config.ID}); err != nil || got.Config.URL != rc.URL("/b") {
			t.Errorf("GetTaskPushConfig(%s)=%s, %v; want /b", b.Config.ID, jsonOf(t, got), err)
		}
		// Without a config id, get answers the first config by id.
		first := min("cfg-a", b.Config.ID)
		if got, err := c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: task.ID}); err != nil || got.Config.ID != first {
			t.Errorf("GetTaskPushConfig(no config id)=%s, %v; want %s", jsonOf(t, got), err, first)
		}
		list, err := c.ListTaskPushConfig(ctx, &a2a03.ListTaskPushConfigParams{TaskID: task.ID})
		var ids []string
		for _, cfg := range list {
			ids = append(ids, cfg.Config.ID)
			if cfg.TaskID != task.ID {
				t.Errorf("listed config %s has task %s, want %s", cfg.Config.ID, cfg.TaskID, task.ID)
			}
		}
		if want := slices.Sorted(slices.Values([]string{"cfg-a", b.Config.ID})); err != nil || !slices.Equal(ids, want) {
			t.Errorf("ListTaskPushConfig=%v, %v; want %v", ids, err, want)
		}
		if err := c.DeleteTaskPushConfig(ctx, &a2a03.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: "cfg-a"}); err != nil {
			t.Errorf("DeleteTaskPushConfig(cfg-a)=%v", err)
		}
		if _, err := c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: "cfg-a"}); !errors.Is(err, a2a03.ErrTaskNotFound) {
			t.Errorf("GetTaskPushConfig(deleted)=%v, want ErrTaskNotFound", err)
		}
		if list, err := c.ListTaskPushConfig(ctx, &a2a03.ListTaskPushConfigParams{TaskID: task.ID}); err != nil || len(list) != 1 || list[0].Config.ID != b.Config.ID {
			t.Errorf("ListTaskPushConfig after delete=%s, %v; want only %s", jsonOf(t, list), err, b.Config.ID)
		}
		if _, err := c.SetTaskPushConfig(ctx, &a2a03.TaskPushConfig{TaskID: task.ID, Config: a2a03.PushConfig{URL: "ftp://example.com/"}}); !errors.Is(err, a2a03.ErrInvalidParams) {
			t.Errorf("SetTaskPushConfig(ftp)=%v, want ErrInvalidParams", err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		if _, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: "no-such-task"}); !errors.Is(err, a2a03.ErrTaskNotFound) {
			t.Errorf("GetTask(unknown)=%v, want ErrTaskNotFound", err)
		}
		if _, err := c.CancelTask(ctx, &a2a03.TaskIDParams{ID: "no-such-task"}); !errors.Is(err, a2a03.ErrTaskNotFound) {
			t.Errorf("CancelTask(unknown)=%v, want ErrTaskNotFound", err)
		}
		msg := v03LegacyText("echo lost")
		msg.TaskID = "no-such-task"
		if _, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: msg}); !errors.Is(err, a2a03.ErrTaskNotFound) {
			t.Errorf("SendMessage(unknown taskId)=%v, want ErrTaskNotFound", err)
		}
		if _, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: a2a03.NewMessage(a2a03.MessageRoleAgent, a2a03.TextPart{Text: "echo"})}); !errors.Is(err, a2a03.ErrInvalidParams) {
			t.Errorf("SendMessage(role agent)=%v, want ErrInvalidParams", err)
		}
		if _, err := c.ListTaskPushConfig(ctx, &a2a03.ListTaskPushConfigParams{TaskID: "no-such-task"}); !errors.Is(err, a2a03.ErrTaskNotFound) {
			t.Errorf("ListTaskPushConfig(unknown)=%v, want ErrTaskNotFound", err)
		}
		if _, err := c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: "no-such-task"}); !errors.Is(err, a2a03.ErrTaskNotFound) {
			t.Errorf("GetTaskPushConfig(unknown)=%v, want ErrTaskNotFound", err)
		}
		// Errors of the streaming methods come as the stream's one event,
		// which is where the legacy client reads them.
		if evs, err := v03LegacyCollect(c.ResubscribeToTask(ctx, &a2a03.TaskIDParams{ID: "no-such-task"})); !errors.Is(err, a2a03.ErrTaskNotFound) || len(evs) != 0 {
			t.Errorf("ResubscribeToTask(unknown)=%d events, %v; want ErrTaskNotFound", len(evs), err)
		}
		if evs, err := v03LegacyCollect(c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: msg})); !errors.Is(err, a2a03.ErrTaskNotFound) || len(evs) != 0 {
			t.Errorf("SendStreamingMessage(unknown taskId)=%d events, %v; want ErrTaskNotFound", len(evs), err)
		}
		// The endpoint client has no card, so it asks for the extended card.
		if _, err := c.GetAgentCard(ctx); !errors.Is(err, a2a03.ErrAuthenticatedExtendedCardNotConfigured) {
			t.Errorf("GetAgentCard (agent/getAuthenticatedExtendedCard)=%v, want ErrAuthenticatedExtendedCardNotConfigured", err)
		}
	})
}

func v03SamePushConfig(got, want *a2a03.TaskPushConfig) bool {
	if got == nil || got.TaskID != want.TaskID || got.Config.ID != want.Config.ID || got.Config.URL != want.Config.URL || got.Config.Token != want.Config.Token {
		return false
	}
	if (got.Config.Auth == nil) != (want.Config.Auth == nil) {
		return false
	}
	return got.Config.Auth == nil || (slices.Equal(got.Config.Auth.Schemes, want.Config.Auth.Schemes) && got.Config.Auth.Credentials == want.Config.Auth.Credentials)
}

// ---- golden files ----

var v03UUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// v03Norm replaces what the server makes (ids, timestamps, stream
// sequences) with placeholders, numbered in document order so equal ids
// stay equal.
type v03Norm struct {
	names map[string]string
	count map[string]int
}

func newV03Norm(known map[string]string) *v03Norm {
	n := &v03Norm{names: map[string]string{}, count: map[string]int{}}
	for k, v := range known {
		n.names[k] = v
	}
	return n
}

func (n *v03Norm) name(label, value string) string {
	if p, ok := n.names[value]; ok {
		return p
	}
	n.count[label]++
	p := fmt.Sprintf("<%s-%d>", label, n.count[label])
	n.names[value] = p
	return p
}

func (n *v03Norm) walk(v any, key, parent string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = n.walk(t[k], k, key)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, c := range t {
			out[i] = n.walk(c, key, parent)
		}
		return out
	case string:
		if p, ok := n.names[t]; ok {
			return p
		}
		if key == "timestamp" {
			return "<timestamp>"
		}
		if v03UUID.MatchString(t) {
			label := "id"
			switch {
			case parent == "pushNotificationConfig":
				label = "config"
			case key == "id" || key == "taskId" || key == "referenceTaskIds":
				label = "task"
			case key == "contextId":
				label = "context"
			case key == "messageId":
				label = "message"
			}
			return n.name(label, t)
		}
	}
	return v
}

func v03Decode(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", truncateText(string(b), 200), err)
	}
	return v
}

// v03Golden compares doc, normalised, with testdata/v03/<name>.json.
func v03Golden(t testing.TB, name string, doc map[string]any, known map[string]string) {
	t.Helper()
	n := newV03Norm(known)
	norm := n.walk(doc, "", "")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(norm); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "v03", name+".json"), buf.Bytes(), *v03Rewrite, "go test -run TestV03Golden ./cmd/a2abus/ -rewrite-v03")
}

// checkGolden compares got with the golden file path, or writes it there
// if rewrite is set; regenerate names the command that rewrites it.
func checkGolden(t testing.TB, path string, got []byte, rewrite bool, regenerate string) {
	t.Helper()
	if rewrite {
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
		t.Fatalf("%v (run %s)", err, regenerate)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run %s if the change is intended):\n--- got\n%s\n--- want\n%s", path, regenerate, got, want)
	}
}

// v03Case is one golden request.
type v03Case struct {
	name   string
	method string
	// params is JSON; {{name}} stands for a value made in the setup.
	params string
	stream bool
	// code is the JSON-RPC error code wanted, 0 for a result.
	code int
}

func TestV03Golden(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })

	// The setup: tasks in known states, named in requests as {{name}} and
	// in the golden files as <name>.
	vars := map[string]string{}
	known := map[string]string{}
	addTask := func(name string, task map[string]any) {
		vars[name], vars[name+"Ctx"] = v03Str(task, "id"), v03Str(task, "contextId")
		known[vars[name]], known[vars[name+"Ctx"]] = "<task:"+name+">", "<context:"+name+">"
	}
	addTask("done", v03Send(ctx, t, ts, "setup-done", "echo done", true))
	addTask("asking", v03Send(ctx, t, ts, "setup-asking", "ask", true))
	addTask("asking2", v03Send(ctx, t, ts, "setup-asking2", "ask", true))
	addTask("other", v03Send(ctx, t, ts, "setup-other", "echo other", true))
	for _, n := range []string{"asking", "asking2"} {
		if st := v03Str(v03MustResult(ctx, t, ts, "tasks/get", map[string]any{"id": vars[n]}), "status", "state"); st != "input-required" {
			t.Fatalf("setup task %s: %s, want input-required", n, st)
		}
	}
	streamed := v03ReadStream(ctx, t, ts, "message/stream", map[string]any{"message": v03Message("setup-streamed", "stream 3 0")}, nil)
	if len(streamed) != 7 {
		t.Fatalf("setup stream: %v, want 7 frames", streamed)
	}
	addTask("streamed", streamed[0].result)
	vars["resumeFrom"] = strconv.FormatUint(streamed[2].seq, 10)
	vars["head"] = strconv.FormatUint(streamed[len(streamed)-1].seq, 10)
	known[vars["resumeFrom"]], known[vars["head"]] = "<seq:resume-from>", "<seq:head>"
	hook := "http://127.0.0.1:9/hook" // configs of finished tasks: nothing is sent

	b64 := base64.StdEncoding.EncodeToString([]byte("hello, file"))
	cases := []v03Case{
		{name: "message_send_echo", method: "message/send",
			params: `{"message":{"kind":"message","messageId":"golden-echo","role":"user","parts":[{"kind":"text","text":"echo golden"}]}}`},
		{name: "message_send_parts", method: "message/send",
			params: `{"message":{"kind":"message","messageId":"golden-parts","role":"user","metadata":{"trace":"t1"},"parts":[` +
				`{"kind":"text","text":"echo parts","metadata":{"lang":"en"}},` +
				`{"kind":"file","file":{"name":"hello.txt","mimeType":"text/plain","bytes":"` + b64 + `"}},` +
				`{"kind":"file","file":{"name":"logo.png","mimeType":"image/png","uri":"https://example.com/logo.png"}},` +
				`{"kind":"data","data":{"answer":42,"list":[1,"two"],"nested":{"ok":true}}}]}}`},
		{name: "message_send_nonblocking", method: "message/send",
			params: `{"message":{"kind":"message","messageId":"golden-nonblocking","role":"user","parts":[{"kind":"text","text":"echo later"}]},"configuration":{"blocking":false}}`},
		{name: "message_send_history_length_0", method: "message/send",
			params: `{"message":{"kind":"message","messageId":"golden-h0","role":"user","parts":[{"kind":"text","text":"echo h0"}]},"configuration":{"historyLength":0,"acceptedOutputModes":["text/plain"]}}`},
		{name: "message_send_ask", method: "message/send",
			params: `{"message":{"kind":"message","messageId":"golden-ask","role":"user","parts":[{"kind":"text","text":"ask"}]}}`},
		{name: "message_send_followup", method: "message/send",
			params: `{"message":{"kind":"message","messageId":"golden-followup","role":"user","taskId":"{{asking}}","contextId":"{{askingCtx}}","parts":[{"kind":"text","text":"Golden"}]}}`},
		{name: "message_send_followup_terminal", method: "message/send", code: -32004,
			params: `{"message":{"kind":"message","messageId":"golden-followup-done","role":"user","taskId":"{{done}}","parts":[{"kind":"text","text":"more"}]}}`},
		{name: "message_send_context_mismatch", method: "message/send", code: -32602,
			params: `{"message":{"kind":"message","messageId":"golden-ctx","role":"user","taskId":"{{asking2}}","contextId":"{{doneCtx}}","parts":[{"kind":"text","text":"x"}]}}`},
		{name: "message_send_unknown_task", method: "message/send", code: -32001,
			params: `{"message":{"kind":"message","messageId":"golden-unknown","role":"user","taskId":"no-such-task","parts":[{"kind":"text","text":"echo"}]}}`},
		{name: "message_send_role_agent", method: "message/send", code: -32602,
			params: `{"message":{"kind":"message","messageId":"golden-agent","role":"agent","parts":[{"kind":"text","text":"echo"}]}}`},
		{name: "message_send_file_bytes_and_uri", method: "message/send", code: -32602,
			params: `{"message":{"kind":"message","messageId":"golden-both","role":"user","parts":[{"kind":"file","file":{"bytes":"` + b64 + `","uri":"https://example.com/f"}}]}}`},
		{name: "message_send_file_neither", method: "message/send", code: -32602,
			params: `{"message":{"kind":"message","messageId":"golden-neither","role":"user","parts":[{"kind":"file","file":{"name":"f"}}]}}`},
		{name: "message_send_bad_base64", method: "message/send", code: -32602,
			params: `{"message":{"kind":"message","messageId":"golden-b64","role":"user","parts":[{"kind":"file","file":{"bytes":"not base64!"}}]}}`},
		{name: "message_send_kind_video", method: "message/send", code: -32602,
			params: `{"message":{"kind":"message","messageId":"golden-video","role":"user","parts":[{"kind":"video","video":{"uri":"https://example.com/v"}}]}}`},
		{name: "message_send_text_without_text", method: "message/send", code: -32602,
			params: `{"message":{"kind":"message","messageId":"golden-notext","role":"user","parts":[{"kind":"text"}]}}`},
		{name: "message_send_no_parts", method: "message/send", code: -32602,
			params: `{"message":{"kind":"message","messageId":"golden-noparts","role":"user","parts":[]}}`},
		{name: "message_send_no_message_id", method: "message/send", code: -32602,
			params: `{"message":{"kind":"message","role":"user","parts":[{"kind":"text","text":"echo"}]}}`},
		{name: "message_send_no_message", method: "message/send", code: -32602, params: `{}`},
		{name: "message_send_params_array", method: "message/send", code: -32602, params: `[]`},
		{name: "tasks_get", method: "tasks/get", params: `{"id":"{{done}}"}`},
		{name: "tasks_get_history_length_1", method: "tasks/get", params: `{"id":"{{asking}}","historyLength":1}`},
		{name: "tasks_get_input_required", method: "tasks/get", params: `{"id":"{{asking2}}"}`},
		{name: "tasks_get_unknown", method: "tasks/get", code: -32001, params: `{"id":"no-such-task"}`},
		{name: "tasks_get_no_id", method: "tasks/get", code: -32602, params: `{}`},
		{name: "tasks_get_negative_history", method: "tasks/get", code: -32602, params: `{"id":"{{done}}","historyLength":-1}`},
		{name: "tasks_cancel", method: "tasks/cancel", params: `{"id":"{{asking2}}"}`},
		{name: "tasks_cancel_terminal", method: "tasks/cancel", code: -32002, params: `{"id":"{{done}}"}`},
		{name: "tasks_cancel_unknown", method: "tasks/cancel", code: -32001, params: `{"id":"no-such-task"}`},
		{name: "push_set", method: "tasks/pushNotificationConfig/set",
			params: `{"taskId":"{{done}}","pushNotificationConfig":{"id":"cfg-a","url":"` + hook + `/a","token":"tok-a","authentication":{"schemes":["Bearer"],"credentials":"secret"}}}`},
		{name: "push_set_second", method: "tasks/pushNotificationConfig/set",
			params: `{"taskId":"{{done}}","pushNotificationConfig":{"id":"cfg-b","url":"` + hook + `/b"}}`},
		{name: "push_set_no_id", method: "tasks/pushNotificationConfig/set",
			params: `{"taskId":"{{other}}","pushNotificationConfig":{"url":"` + hook + `/c"}}`},
		{name: "push_set_unknown_task", method: "tasks/pushNotificationConfig/set", code: -32001,
			params: `{"taskId":"no-such-task","pushNotificationConfig":{"url":"` + hook + `"}}`},
		{name: "push_set_no_url", method: "tasks/pushNotificationConfig/set", code: -32602,
			params: `{"taskId":"{{done}}","pushNotificationConfig":{"id":"cfg-x"}}`},
		{name: "push_set_bad_scheme", method: "tasks/pushNotificationConfig/set", code: -32602,
			params: `{"taskId":"{{done}}","pushNotificationConfig":{"url":"ftp://example.com/"}}`},
		{name: "push_get", method: "tasks/pushNotificationConfig/get", params: `{"id":"{{done}}","pushNotificationConfigId":"cfg-b"}`},
		{name: "push_get_first", method: "tasks/pushNotificationConfig/get", params: `{"id":"{{done}}"}`},
		{name: "push_get_none", method: "tasks/pushNotificationConfig/get", code: -32001, params: `{"id":"{{asking}}"}`},
		{name: "push_list", method: "tasks/pushNotificationConfig/list", params: `{"id":"{{done}}"}`},
		{name: "push_list_empty", method: "tasks/pushNotificationConfig/list", params: `{"id":"{{asking}}"}`},
		{name: "push_list_unknown_task", method: "tasks/pushNotificationConfig/list", code: -32001, params: `{"id":"no-such-task"}`},
		{name: "push_delete", method: "tasks/pushNotificationConfig/delete", params: `{"id":"{{done}}","pushNotificationConfigId":"cfg-a"}`},
		{name: "push_get_deleted", method: "tasks/pushNotificationConfig/get", code: -32001, params: `{"id":"{{done}}","pushNotificationConfigId":"cfg-a"}`},
		{name: "push_list_after_delete", method: "tasks/pushNotificationConfig/list", params: `{"id":"{{done}}"}`},
		{name: "push_delete_no_config_id", method: "tasks/pushNotificationConfig/delete", code: -32602, params: `{"id":"{{done}}"}`},
		{name: "extended_card", method: "agent/getAuthenticatedExtendedCard", code: -32007, params: `{}`},
		{name: "message_stream_echo", method: "message/stream", stream: true,
			params: `{"message":{"kind":"message","messageId":"golden-stream-echo","role":"user","parts":[{"kind":"text","text":"echo streamed"}]}}`},
		{name: "message_stream_ask", method: "message/stream", stream: true,
			params: `{"message":{"kind":"message","messageId":"golden-stream-ask","role":"user","parts":[{"kind":"text","text":"ask"}]}}`},
		{name: "message_stream_role_agent", method: "message/stream", stream: true, code: -32602,
			params: `{"message":{"kind":"message","messageId":"golden-stream-agent","role":"agent","parts":[{"kind":"text","text":"echo"}]}}`},
		{name: "tasks_resubscribe_resume", method: "tasks/resubscribe", stream: true,
			params: `{"id":"{{streamed}}","lastEventId":"{{resumeFrom}}"}`},
		{name: "tasks_resubscribe_at_head", method: "tasks/resubscribe", stream: true,
			params: `{"id":"{{streamed}}","lastEventId":"{{head}}"}`},
		{name: "tasks_resubscribe_terminal", method: "tasks/resubscribe", stream: true, code: -32004, params: `{"id":"{{done}}"}`},
		{name: "tasks_resubscribe_unknown", method: "tasks/resubscribe", stream: true, code: -32001, params: `{"id":"no-such-task"}`},
		{name: "tasks_resubscribe_bad_last_event_id", method: "tasks/resubscribe", stream: true, code: -32602,
			params: `{"id":"{{streamed}}","lastEventId":"abc"}`},
	}
	subst := regexp.MustCompile(`\{\{(\w+)\}\}`)
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("case %s twice", tc.name)
		}
		seen[tc.name] = true
		params := subst.ReplaceAllStringFunc(tc.params, func(m string) string {
			v, ok := vars[m[2:len(m)-2]]
			if !ok {
				t.Fatalf("%s: no setup value %s", tc.name, m)
			}
			return v
		})
		doc := map[string]any{"request": map[string]any{"method": tc.method, "params": v03Decode(t, []byte(params))}}
		var code int
		if !tc.stream {
			r := v03Call(ctx, t, ts, tc.method, json.RawMessage(params))
			v03CheckReply(t, tc.name, tc.method, r)
			doc["response"] = v03Decode(t, r.raw)
			if r.Error != nil {
				code = r.Error.Code
			}
		} else {
			s, r := v03Open(ctx, t, ts.URL+"/", tc.method, json.RawMessage(params), nil)
			if r != nil {
				v03CheckReply(t, tc.name, tc.method, *r)
				doc["contentType"] = "application/json"
				doc["response"] = v03Decode(t, r.raw)
				if r.Error != nil {
					code = r.Error.Code
				}
			} else {
				frames, err := s.read(-1)
				s.close()
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				v03CheckFrames(t, tc.name, frames, tc.method == "message/stream")
				if n := len(frames); n > 0 && frames[n-1].reply.Error != nil {
					code = frames[n-1].reply.Error.Code
				}
				doc["contentType"] = "text/event-stream"
				out := []any{}
				for i, f := range frames {
					fr := map[string]any{"data": v03Decode(t, f.reply.raw)}
					if f.hasID {
						fr["id"] = fmt.Sprintf("<seq-%d>", i+1)
					}
					out = append(out, fr)
				}
				doc["frames"] = out
			}
		}
		if code != tc.code {
			t.Errorf("%s: error code %d, want %d", tc.name, code, tc.code)
		}
		v03Golden(t, tc.name, doc, known)
	}

	// The golden directory holds exactly the cases.
	if !*v03Rewrite {
		files, err := filepath.Glob(filepath.Join("testdata", "v03", "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if name := strings.TrimSuffix(filepath.Base(f), ".json"); !seen[name] {
				t.Errorf("%s: no case of that name (stale golden file)", f)
			}
		}
	}

	// Resuming with the Last-Event-ID header is the same as with the
	// lastEventId param.
	byParam := v03ReadStream(ctx, t, ts, "tasks/resubscribe", map[string]any{"id": vars["streamed"], "lastEventId": vars["resumeFrom"]}, nil)
	byHeader := v03ReadStream(ctx, t, ts, "tasks/resubscribe", map[string]any{"id": vars["streamed"]}, map[string]string{"Last-Event-ID": vars["resumeFrom"]})
	if !slices.Equal(v03Descs(byParam), v03Descs(byHeader)) || !slices.Equal(v03Descs(byParam), v03Descs(streamed[3:])) {
		t.Errorf("resume after %s:\nparam  %q\nheader %q\nwant   %q", vars["resumeFrom"], v03Descs(byParam), v03Descs(byHeader), v03Descs(streamed[3:]))
	}
	for i := range min(len(byParam), len(streamed)-3) {
		if byParam[i].seq != streamed[3+i].seq || !bytes.Equal(byParam[i].reply.Result, streamed[3+i].reply.Result) {
			t.Errorf("resumed frame %d: [%d] %s, want [%d] %s as first streamed", i, byParam[i].seq, byParam[i].reply, streamed[3+i].seq, streamed[3+i].reply)
		}
	}
}

// ---- across dialects ----

// v03StateOf is the v0.3 spelling of each v1.0 state.
var v03StateOf = map[a2a.TaskState]string{
	a2a.TaskStateSubmitted: "submitted", a2a.TaskStateWorking: "working", a2a.TaskStateInputRequired: "input-required",
	a2a.TaskStateAuthRequired: "auth-required", a2a.TaskStateCompleted: "completed", a2a.TaskStateCanceled: "canceled",
	a2a.TaskStateFailed: "failed", a2a.TaskStateRejected: "rejected",
}

// v03SameEvent reports whether a v1.0 stream item and a v0.3 frame are
// the same event.
func v03SameEvent(v1 a2a.Event, f v03Frame) error {
	m := f.result
	switch e := v1.(type) {
	case *a2a.Task:
		if f.kind() != "task" || v03Str(m, "id") != string(e.ID) || v03Str(m, "status", "state") != v03StateOf[e.Status.State] {
			return fmt.Errorf("v1.0 task %s %s, v0.3 %s", e.ID, e.Status.State, v03Describe(m))
		}
	case *a2a.TaskStatusUpdateEvent:
		if f.kind() != "status-update" || v03Str(m, "taskId") != string(e.TaskID) || v03Str(m, "status", "state") != v03StateOf[e.Status.State] {
			return fmt.Errorf("v1.0 status %s %s, v0.3 %s", e.TaskID, e.Status.State, v03Describe(m))
		}
	case *a2a.TaskArtifactUpdateEvent:
		if f.kind() != "artifact-update" || v03Str(m, "taskId") != string(e.TaskID) || v03Str(m, "artifact", "artifactId") != string(e.Artifact.ID) {
			return fmt.Errorf("v1.0 artifact %s %s, v0.3 %s", e.TaskID, e.Artifact.ID, v03Describe(m))
		}
	default:
		return fmt.Errorf("v1.0 %T, v0.3 %s", v1, v03Describe(m))
	}
	return nil
}

// v03CheckV1Task checks the v1.0 shapes of a task made in v0.3 (from
// "slow 3"): upper-case states and roles, flat parts.
func v03CheckV1Task(t testing.TB, what string, raw []byte, id string) {
	t.Helper()
	var task map[string]any
	if err := json.Unmarshal(raw, &task); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if _, ok := task["kind"]; ok || v03Str(task, "id") != id {
		t.Errorf("%s: %s, want a v1.0 task %s (no kind)", what, truncateText(string(raw), 300), id)
	}
	if st := v03Str(task, "status", "state"); st != string(a2a.TaskStateWorking) {
		t.Errorf("%s: state %q, want TASK_STATE_WORKING", what, st)
	}
	hist, _ := task["history"].([]any)
	if len(hist) == 0 {
		t.Fatalf("%s: no history", what)
	}
	first, _ := hist[0].(map[string]any)
	parts, _ := first["parts"].([]any)
	if v03Str(first, "role") != "ROLE_USER" || v03Str(first, "messageId") != "cross-slow" || len(parts) != 1 {
		t.Fatalf("%s: history[0] %v, want the ROLE_USER message cross-slow with one part", what, first)
	}
	if p, _ := parts[0].(map[string]any); p["text"] != "slow 3" || p["kind"] != nil {
		t.Errorf("%s: part %v, want the flat v1.0 part {\"text\":\"slow 3\"}", what, p)
	}
	s := string(raw)
	for _, bad := range []string{`"kind"`, `"working"`, `"user"`} {
		if strings.Contains(s, bad) {
			t.Errorf("%s: %s has the v0.3 spelling %s", what, truncateText(s, 300), bad)
		}
	}
}

// v1WaitWorking waits until v1.0 GetTask shows task id WORKING and
// returns that result.
func v1WaitWorking(ctx context.Context, t testing.TB, ts *testServer, id string) json.RawMessage {
	t.Helper()
	var raw json.RawMessage
	waitFor(t, 10*time.Second, "task "+id+" working (v1.0 GetTask)", func() (bool, error) {
		r := rawCall(ctx, t, ts, "GetTask", map[string]any{"id": id})
		if r.Error != nil {
			return false, fmt.Errorf("GetTask: %d %s", r.Error.Code, r.Error.Message)
		}
		raw = r.Result
		return strings.Contains(string(r.Result), `"TASK_STATE_WORKING"`), nil
	})
	return raw
}

func TestV03CrossDialect(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, nil)

	// Made in v0.3, read in v1.0 JSON-RPC and HTTP+JSON.
	created := v03Send(ctx, t, ts, "cross-slow", "slow 3", false)
	id := v03Str(created, "id")
	if created["kind"] != "task" || id == "" {
		t.Fatalf("message/send(blocking false)=%v", created)
	}
	v03CheckV1Task(t, "v1.0 GetTask", v1WaitWorking(ctx, t, ts, id), id)
	rest := mustREST(ctx, t, http.MethodGet, ts.URL, "/tasks/"+id, "", nil)
	if rest.status != http.StatusOK {
		t.Fatalf("GET /tasks/%s: %v", id, rest)
	}
	v03CheckV1Task(t, "REST GET /tasks/{id}", rest.body, id)

	// Subscribed in both dialects at once: the same events, by stream
	// sequence, each in its dialect.
	v1 := mustOpenSSE(ctx, t, ts.URL, "", "SubscribeToTask", subscribeParams(a2a.TaskID(id)), nil)
	v1First, err := v1.next()
	if err != nil {
		t.Fatalf("SubscribeToTask: %v", err)
	}
	v0, r := v03Open(ctx, t, ts.URL+"/", "tasks/resubscribe", map[string]any{"id": id}, nil)
	if v0 == nil {
		t.Fatalf("tasks/resubscribe: %s", r)
	}
	v0First, err := v0.next()
	if err != nil {
		t.Fatalf("tasks/resubscribe: %v", err)
	}
	if _, ok := v1First.event.(*a2a.Task); !ok || v0First.kind() != "task" {
		t.Fatalf("first frames: v1.0 %s, v0.3 %s; want the task in both", v1First, v0First)
	}
	canceled := mustREST(ctx, t, http.MethodPost, ts.URL, "/tasks/"+id+":cancel", "{}", nil)
	if canceled.status != http.StatusOK || !strings.Contains(string(canceled.body), `"TASK_STATE_CANCELED"`) {
		t.Fatalf("POST /tasks/%s:cancel: %v", id, canceled)
	}
	v1Rest, err := v1.read(-1)
	if err != nil {
		t.Fatalf("SubscribeToTask: %v", err)
	}
	v0Rest, err := v0.read(-1)
	if err != nil {
		t.Fatalf("tasks/resubscribe: %v", err)
	}
	v1Frames, v0Frames := append([]sseEvent{v1First}, v1Rest...), append([]v03Frame{v0First}, v0Rest...)
	v03CheckFrames(t, "tasks/resubscribe", v0Frames, true)
	// Both see every event after the later snapshot.
	from := max(v1First.seq, v0First.seq)
	var v1Tail []sseEvent
	var v0Tail []v03Frame
	for _, f := range v1Frames {
		if f.seq > from {
			v1Tail = append(v1Tail, f)
		}
	}
	for _, f := range v0Frames {
		if f.seq > from {
			v0Tail = append(v0Tail, f)
		}
	}
	if len(v1Tail) == 0 || len(v1Tail) != len(v0Tail) {
		t.Fatalf("after seq %d: v1.0 %v, v0.3 %v; want the same events, at least the cancel", from, v1Tail, v0Tail)
	}
	for i := range v1Tail {
		if v1Tail[i].seq != v0Tail[i].seq {
			t.Errorf("frame %d: v1.0 id %d, v0.3 id %d", i, v1Tail[i].seq, v0Tail[i].seq)
		}
		if err := v03SameEvent(v1Tail[i].event, v0Tail[i]); err != nil {
			t.Errorf("frame %d (seq %d): %v", i, v1Tail[i].seq, err)
		}
	}
	if last := v0Frames[len(v0Frames)-1]; v03Describe(last.result) != `status canceled final=true ""` {
		t.Errorf("v0.3 stream ends with %s, want status canceled final=true", last)
	}
	if last := v1Frames[len(v1Frames)-1]; !isFinal(last.event, a2a.TaskStateCanceled) {
		t.Errorf("v1.0 stream ends with %s, want the canceled status", last)
	}
	got := v03MustResult(ctx, t, ts, "tasks/get", map[string]any{"id": id})
	if got["kind"] != "task" || v03Str(got, "status", "state") != "canceled" {
		t.Errorf("v0.3 tasks/get after the REST cancel: %v, want kind task, canceled", got)
	}
	v03CheckReply(t, "tasks/get", "tasks/get", v03Call(ctx, t, ts, "tasks/get", map[string]any{"id": id}))

	// Made in v1.0, read in v0.3.
	r1 := rawCall(ctx, t, ts, "SendMessage", map[string]any{"message": map[string]any{"messageId": "cross-v1", "role": "ROLE_USER",
		"parts": []any{map[string]any{"text": "echo from v1"}, map[string]any{"url": "https://example.com/x.png", "mediaType": "image/png", "filename": "x.png"}}}})
	if r1.Error != nil {
		t.Fatalf("SendMessage: %+v", r1.Error)
	}
	var sent struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	if err := json.Unmarshal(r1.Result, &sent); err != nil || sent.Task.ID == "" {
		t.Fatalf("SendMessage result %s: %v", r1.Result, err)
	}
	r3 := v03Call(ctx, t, ts, "tasks/get", map[string]any{"id": sent.Task.ID})
	v03CheckReply(t, "v0.3 tasks/get of a v1.0 task", "tasks/get", r3)
	var task map[string]any
	if err := json.Unmarshal(r3.Result, &task); err != nil {
		t.Fatal(err)
	}
	if task["kind"] != "task" || v03Str(task, "id") != sent.Task.ID || v03Str(task, "status", "state") != "completed" {
		t.Errorf("v0.3 tasks/get of a v1.0 task: %s, want kind task, completed", r3)
	}
	hist, _ := task["history"].([]any)
	if len(hist) == 0 || v03Str(hist[0], "role") != "user" || v03Str(hist[0], "messageId") != "cross-v1" {
		t.Errorf("history %v, want the user message cross-v1", task["history"])
	}
	arts, _ := task["artifacts"].([]any)
	if len(arts) != 1 {
		t.Fatalf("artifacts %v, want the echo", task["artifacts"])
	}
	parts, _ := arts[0].(map[string]any)["parts"].([]any)
	wantParts := `[{"kind":"text","text":"echo from v1"},{"file":{"mimeType":"image/png","name":"x.png","uri":"https://example.com/x.png"},"kind":"file"}]`
	if got := jsonOf(t, parts); got != wantParts {
		t.Errorf("artifact parts %s, want %s", got, wantParts)
	}
	// The legacy client reads it too.
	c := v03LegacyClient(ctx, t, ts, a2aclient03.Config{})
	lt, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: a2a03.TaskID(sent.Task.ID)})
	if err != nil || lt.Status.State != a2a03.TaskStateCompleted || len(lt.Artifacts) != 1 || len(lt.Artifacts[0].Parts) != 2 {
		t.Errorf("legacy GetTask of a v1.0 task: %s, %v", jsonOf(t, lt), err)
	} else if fp, ok := lt.Artifacts[0].Parts[1].(a2a03.FilePart); !ok || fp.File.(a2a03.FileURI).URI != "https://example.com/x.png" {
		t.Errorf("legacy GetTask: part 1 %#v, want the file uri", lt.Artifacts[0].Parts[1])
	}
}

// ---- A2A-Version ----

func TestV03Versions(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, nil)
	url := ts.URL + "/"
	done := v03Send(ctx, t, ts, "versions-done", "echo versions", true)
	id := v03Str(done, "id")
	n := 0
	v03Params := func() map[string]any {
		n++
		return map[string]any{"message": v03Message(fmt.Sprintf("versions-%d", n), "echo v")}
	}
	v1Params := func() map[string]any {
		n++
		return map[string]any{"message": map[string]any{"messageId": fmt.Sprintf("versions-%d", n), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "echo v"}}}}
	}
	for _, tc := range []struct {
		name    string
		url     string
		version string // "" sends no header
		method  string
		params  any
		// code is the error wanted; 0: a v0.3 result (v03) or a v1.0 one.
		code int
		v03  bool
	}{
		{name: "0.3 message/send", version: "0.3", method: "message/send", params: v03Params(), v03: true},
		{name: "0.2 message/send", version: "0.2", method: "message/send", params: v03Params(), v03: true},
		{name: "0.3.1 message/send", version: "0.3.1", method: "message/send", params: v03Params(), v03: true},
		{name: "0.3 query message/send", url: url + "?A2A-Version=0.3", method: "message/send", params: v03Params(), v03: true},
		{name: "0.3 tasks/get", version: "0.3", method: "tasks/get", params: map[string]any{"id": id}, v03: true},
		{name: "none message/send", method: "message/send", params: v03Params(), v03: true},
		{name: "none tasks/get", method: "tasks/get", params: map[string]any{"id": id}, v03: true},
		{name: "none GetTask", method: "GetTask", params: map[string]any{"id": id}},
		{name: "none SendMessage", method: "SendMessage", params: v1Params()},
		{name: "1.0 GetTask", version: "1.0", method: "GetTask", params: map[string]any{"id": id}},
		{name: "1.0 message/send", version: "1.0", method: "message/send", params: v03Params(), code: -32601},
		{name: "1.0 tasks/get", version: "1.0", method: "tasks/get", params: map[string]any{"id": id}, code: -32601},
		{name: "1.0 push list", version: "1.0", method: "tasks/pushNotificationConfig/list", params: map[string]any{"id": id}, code: -32601},
		{name: "1.0 query message/send", url: url + "?A2A-Version=1.0", method: "message/send", params: v03Params(), code: -32601},
		{name: "0.3 GetTask", version: "0.3", method: "GetTask", params: map[string]any{"id": id}, code: -32601},
		{name: "0.2 SendMessage", version: "0.2", method: "SendMessage", params: v1Params(), code: -32601},
		{name: "0.5 message/send", version: "0.5", method: "message/send", params: v03Params(), code: -32009},
	} {
		u := tc.url
		if u == "" {
			u = url
		}
		var hdr map[string]string
		if tc.version != "" {
			hdr = map[string]string{"A2A-Version": tc.version}
		}
		r := v03CallURL(ctx, t, u, tc.method, tc.params, hdr)
		switch {
		case tc.code != 0:
			if r.Error == nil || r.Error.Code != tc.code {
				t.Errorf("%s: %s, want error %d", tc.name, r, tc.code)
			}
		case r.Error != nil:
			t.Errorf("%s: %s, want a result", tc.name, r)
		case tc.v03:
			v03CheckReply(t, tc.name, tc.method, r)
			if v03Str(v03Decode(t, r.Result), "kind") != "task" {
				t.Errorf("%s: %s, want a v0.3 task", tc.name, r)
			}
		default:
			// v1.0: GetTask answers a Task, SendMessage {"task": Task}.
			res, _ := v03Decode(t, r.Result).(map[string]any)
			if tk, ok := res["task"].(map[string]any); ok {
				res = tk
			}
			if _, ok := res["kind"]; ok || !strings.HasPrefix(v03Str(res, "status", "state"), "TASK_STATE_") {
				t.Errorf("%s: %s, want a v1.0 task", tc.name, r)
			}
		}
	}

	// The streaming methods are routed the same way, before the stream
	// starts: a version that does not fit the method is a plain response;
	// the errors of a v0.3 streaming method are one SSE error event.
	for _, tc := range []struct {
		name, version, method string
		params                any
		code                  int
		stream                bool
	}{
		{"1.0 message/stream", "1.0", "message/stream", v03Params(), -32601, false},
		{"1.0 tasks/resubscribe", "1.0", "tasks/resubscribe", map[string]any{"id": id}, -32601, false},
		{"0.3 SendStreamingMessage", "0.3", "SendStreamingMessage", v1Params(), -32601, false},
		{"0.3 SubscribeToTask", "0.3", "SubscribeToTask", map[string]any{"id": id}, -32601, false},
		{"0.3 tasks/resubscribe of a done task", "0.3", "tasks/resubscribe", map[string]any{"id": id}, -32004, true},
	} {
		s, r := v03Open(ctx, t, url, tc.method, tc.params, map[string]string{"A2A-Version": tc.version})
		if s != nil {
			frames, err := s.read(-1)
			s.close()
			if !tc.stream || err != nil || len(frames) != 1 || frames[0].reply.Error == nil || frames[0].reply.Error.Code != tc.code {
				t.Errorf("%s: a stream (%v, %v), want error %d (as a stream: %v)", tc.name, frames, err, tc.code, tc.stream)
			}
			continue
		}
		if tc.stream || r.Error == nil || r.Error.Code != tc.code {
			t.Errorf("%s: %s, want error %d (as a stream: %v)", tc.name, r, tc.code, tc.stream)
		}
	}
	for _, version := range []string{"0.3", "0.2", ""} {
		var hdr map[string]string
		if version != "" {
			hdr = map[string]string{"A2A-Version": version}
		}
		frames := v03ReadStream(ctx, t, ts, "message/stream", v03Params(), hdr)
		v03CheckFrames(t, "message/stream A2A-Version "+version, frames, true)
		if len(frames) == 0 || v03Describe(frames[len(frames)-1].result) != `status completed final=true ""` {
			t.Errorf("message/stream A2A-Version %q: %v, want a v0.3 stream ending completed", version, frames)
		}
	}
}

// ---- product bugs: these tests fail until the bugs are fixed ----

// TestV03BugErrorDataShape: a request that says A2A-Version 0.3 (or no
// version, which means 0.3) and that the edge refuses outside the v0.3
// method handlers (an unknown or a v1.0 method name) gets a v1.0 error,
// whose data is an array. v0.x error data is an object: the a2a-go v0.3
// client decodes it into a map and fails, so ListTasks (tasks/list, not a
// v0.3 JSON-RPC method) gives a decode error, not ErrMethodNotFound.
func TestV03BugErrorDataShape(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, nil)
	for _, tc := range []struct {
		name, version, method string
	}{
		{"A2A-Version 0.3, a v1.0 method", "0.3", "GetTask"},
		{"A2A-Version 0.2, a v1.0 method", "0.2", "SendMessage"},
		{"A2A-Version 0.3, an unknown method", "0.3", "tasks/list"},
		{"no A2A-Version, an unknown v0.x-style method", "", "tasks/list"},
	} {
		var hdr map[string]string
		if tc.version != "" {
			hdr = map[string]string{"A2A-Version": tc.version}
		}
		r := v03CallURL(ctx, t, ts.URL+"/", tc.method, map[string]any{"id": "x"}, hdr)
		if r.Error == nil || r.Error.Code != -32601 {
			t.Errorf("%s: %s, want -32601", tc.name, r)
			continue
		}
		var s v03Shape
		s.errorObj("error", r.Error)
		s.report(t, tc.name)
	}
	c := v03LegacyClient(ctx, t, ts, a2aclient03.Config{})
	if _, err := c.ListTasks(ctx, &a2a03.ListTasksRequest{}); !errors.Is(err, a2a03.ErrMethodNotFound) {
		t.Errorf("legacy client ListTasks: %v, want ErrMethodNotFound", err)
	}
}

// TestV03BugDataPartNotObject: a v0.3 data part's data must be an object
// (DataPart.data in a2a-v0.3.schema.json), but message/send takes any JSON
// value and renders it back as it is. The task then breaks v0.3 clients:
// the a2a-go v0.3 client cannot decode it at all.
func TestV03BugDataPartNotObject(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, nil)
	r := v03Call(ctx, t, ts, "message/send", map[string]any{"message": map[string]any{"kind": "message", "messageId": "data-array",
		"role": "user", "parts": []any{map[string]any{"kind": "data", "data": []any{1, 2}}}}})
	if r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("message/send with data [1,2]: %s, want -32602 (data must be an object)", r)
	}
	if r.Error != nil {
		return
	}
	id := v03Str(v03Decode(t, r.Result), "id")
	c := v03LegacyClient(ctx, t, ts, a2aclient03.Config{})
	if _, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: a2a03.TaskID(id)}); err != nil {
		t.Errorf("legacy GetTask of the accepted task: %v", err)
	}
}

// TestV03PushBodies: a webhook of a v0.3 task receives the whole task in
// the v0.3 shape at every status, as the v0.3 reference server posts it.
func TestV03PushBodies(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })
	rc := newHookReceiver(t, nil)
	task := v03Send(ctx, t, ts, "push-ask", "ask", true)
	id := v03Str(task, "id")
	v03MustResult(ctx, t, ts, "tasks/pushNotificationConfig/set", map[string]any{"taskId": id,
		"pushNotificationConfig": map[string]any{"url": rc.URL("/v03"), "token": "tok"}})
	answer := v03Message("push-answer", "Ada")
	answer["taskId"] = id
	v03MustResult(ctx, t, ts, "message/send", map[string]any{"message": answer})
	reqs := hooksFor(waitLegacyFinal(t, rc, a2a.TaskID(id)), a2a.TaskID(id))
	checkLegacyPushBodies(t, reqs, id, []string{"working", "input-required", "working", "completed"}, "task")
	for _, r := range hooksOK(reqs) {
		if r.Header.Get("X-A2A-Notification-Token") != "tok" {
			t.Errorf("push without the client's token: %v", r.Header)
		}
	}
}
