package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2apb"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2apb/v0/pbconv"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Tests of the v0.3 HTTP+JSON binding under /v1/ (edge/v03rest.go): golden
// files of raw requests and responses for every route, each success body
// decoded with protojson into the a2apb types of a2a-go v0.3.15 (the Go
// types of the 0.3 proto) as the oracle, bad input that must change
// nothing, SSE resume across this binding and the v1.0 one, tasks shared
// with the other dialects, and a2a-go's v0.3 compat REST client end to end.
//
// Regenerate the golden files with
//
//	go test -run TestV03RESTGolden ./cmd/a2abus/ -rewrite-v03rest

var pb03Rewrite = flag.Bool("rewrite-v03rest", false, "rewrite the v0.3 HTTP+JSON golden files in testdata/v03rest")

// ---- raw HTTP ----

// pb03Headers are the headers of a v0.3 client: no A2A-Version unless hdr
// sets one (restDo sends 1.0 otherwise).
func pb03Headers(hdr map[string]string) map[string]string {
	out := map[string]string{"A2A-Version": ""}
	maps.Copy(out, hdr)
	return out
}

// pb03Do sends one request to the server as a v0.3 client does.
func pb03Do(ctx context.Context, t testing.TB, method, base, path, body string, hdr map[string]string) restReply {
	t.Helper()
	return mustREST(ctx, t, method, base, path, body, pb03Headers(hdr))
}

// pb03OK sends a request that must succeed (200 application/json) and
// decodes the body into m with pb03Unmarshal.
func pb03OK(ctx context.Context, t testing.TB, method, base, path, body string, m proto.Message) {
	t.Helper()
	r := pb03Do(ctx, t, method, base, path, body, nil)
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %s: %v, want 200 application/json", method, path, r)
	}
	if err := pb03Unmarshal(r.body, m); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
}

// pb03Send posts text to /v1/message:send, blocking or not, and returns
// the task.
func pb03Send(ctx context.Context, t testing.TB, base, messageID, text string, blocking bool) *a2apb.Task {
	t.Helper()
	var resp a2apb.SendMessageResponse
	pb03OK(ctx, t, http.MethodPost, base, "/v1/message:send", pb03SendBody(t, messageID, text, blocking), &resp)
	task := resp.GetTask()
	if task == nil {
		t.Fatalf("POST /v1/message:send %q: %v, want a task", text, &resp)
	}
	return task
}

func pb03SendBody(t testing.TB, messageID, text string, blocking bool) string {
	t.Helper()
	return jsonOf(t, map[string]any{
		"message":       map[string]any{"messageId": messageID, "role": "ROLE_USER", "content": []any{map[string]any{"text": text}}},
		"configuration": map[string]any{"blocking": blocking},
	})
}

// ---- the oracle ----

// pb03Unmarshal decodes raw, proto-JSON of the 0.3 proto, into m with
// protojson's default options, which reject unknown fields and wrong
// types. a2a-go v0.3.15 generated a2apb from a later revision of that
// proto, whose Message field 5 is named "parts"; the 0.3 wire (a2a-python
// 0.3, a2a-go's v0.3 compat layer, this server) names it "content". So
// each Message object (an object with a "messageId") must have "content"
// and no "parts", and its "content" is renamed "parts" here, explicitly,
// before protojson reads it.
func pb03Unmarshal(raw []byte, m proto.Message) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("body %s: %v", truncateText(string(raw), 300), err)
	}
	if err := pb03ContentToParts(v, "body"); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := (protojson.UnmarshalOptions{}).Unmarshal(b, m); err != nil {
		return fmt.Errorf("protojson %T from %s: %v", m, truncateText(string(raw), 300), err)
	}
	return nil
}

// pb03ContentToParts renames "content" to "parts" in every Message object
// of v, and reports a Message that has "parts" or no "content".
func pb03ContentToParts(v any, path string) error {
	switch t := v.(type) {
	case map[string]any:
		if _, isMsg := t["messageId"]; isMsg {
			if _, ok := t["parts"]; ok {
				return fmt.Errorf("%s: a message with \"parts\"; the 0.3 wire names them \"content\"", path)
			}
			content, ok := t["content"]
			if !ok {
				return fmt.Errorf("%s: a message without \"content\"", path)
			}
			delete(t, "content")
			t["parts"] = content
		}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			if k == "metadata" || k == "data" {
				continue // client data
			}
			if err := pb03ContentToParts(t[k], path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, c := range t {
			if err := pb03ContentToParts(c, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// pb03ErrorJSON is the v0.3 error body: a2a-python 0.3's {"message"} and
// the google.rpc.Status "error" member.
type pb03ErrorJSON struct {
	Message *string `json:"message"`
	restErrorJSON
}

// pb03CheckError checks that r is the v0.3 error with HTTP status and
// ErrorInfo reason: {"message": m, "error": {"code": status, "status",
// "message": m, "details": [ErrorInfo]}}, application/json.
func pb03CheckError(t testing.TB, what string, r restReply, status int, reason string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: %v, want HTTP %d", what, r, status)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	if err := pb03CheckErrorBody(r.body, status, reason); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

func pb03CheckErrorBody(body []byte, status int, reason string) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || len(top) != 2 {
		return fmt.Errorf("body %s: want exactly {\"message\", \"error\"} (%v)", truncateText(string(body), 300), err)
	}
	var e pb03ErrorJSON
	if err := json.Unmarshal(body, &e); err != nil || e.Message == nil || e.Error == nil {
		return fmt.Errorf("body %s: want a message and an error (%v)", truncateText(string(body), 300), err)
	}
	switch {
	case *e.Message == "" || e.Error.Message != *e.Message:
		return fmt.Errorf("body %s: message %q and error.message %q, want the same, not empty", truncateText(string(body), 300), *e.Message, e.Error.Message)
	case e.Error.Code != status || e.Error.Status == "":
		return fmt.Errorf("body %s: error.code %d status %q, want %d and a google.rpc code", truncateText(string(body), 300), e.Error.Code, e.Error.Status, status)
	case len(e.Error.Details) != 1:
		return fmt.Errorf("body %s: want one ErrorInfo in details", truncateText(string(body), 300))
	}
	info := e.Error.Details[0]
	if info.Type != "type.googleapis.com/google.rpc.ErrorInfo" || info.Domain != "a2a-protocol.org" || info.Reason != reason {
		return fmt.Errorf("details[0]=%+v, want an ErrorInfo of a2a-protocol.org with reason %s", info, reason)
	}
	return nil
}

// ---- SSE ----

// pb03Frame is one frame of a v0.3 REST stream: the StreamResponse
// (decoded by the oracle, and as a v1.0 event through a2a-go's pbconv, for
// the comparisons of stream_test.go), or an error body.
type pb03Frame struct {
	sseEvent
	data string
	sr   *a2apb.StreamResponse
}

func (f pb03Frame) String() string { return f.sseEvent.String() }

// pb03Open opens a v0.3 REST stream; the answer must be an SSE stream.
func pb03Open(ctx context.Context, t testing.TB, method, base, path, body string, hdr map[string]string) *restStream {
	t.Helper()
	return mustOpenREST(ctx, t, method, base, path, body, pb03Headers(hdr))
}

// pb03Next returns the next frame of s, skipping comments, or io.EOF.
func pb03Next(s *restStream) (pb03Frame, error) {
	for {
		it, err := s.p.next()
		if err != nil {
			return pb03Frame{}, err
		}
		if it.isComment {
			continue
		}
		return pb03DecodeFrame(it)
	}
}

func pb03DecodeFrame(it sseItem) (pb03Frame, error) {
	f := pb03Frame{data: it.data}
	if seq, has, err := it.sequence(); err != nil {
		return f, err
	} else {
		f.seq, f.hasID = seq, has
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(it.data), &keys); err != nil {
		return f, fmt.Errorf("frame data %q: %v", truncateText(it.data, 200), err)
	}
	if _, ok := keys["error"]; ok {
		var e pb03ErrorJSON
		if err := json.Unmarshal([]byte(it.data), &e); err != nil || e.Error == nil {
			return f, fmt.Errorf("error frame %q: %v", truncateText(it.data, 200), err)
		}
		f.errCode = e.Error.Code
		return f, nil
	}
	if len(keys) != 1 {
		return f, fmt.Errorf("frame data %q: %d keys, want one StreamResponse member", truncateText(it.data, 200), len(keys))
	}
	var sr a2apb.StreamResponse
	if err := pb03Unmarshal([]byte(it.data), &sr); err != nil {
		return f, err
	}
	ev, err := pbconv.FromProtoStreamResponse(&sr)
	if err != nil {
		return f, fmt.Errorf("pbconv of %q: %v", truncateText(it.data, 200), err)
	}
	f.sr, f.event = &sr, ev
	return f, nil
}

// pb03Read reads n frames of s (n < 0: to the end of the stream).
func pb03Read(s *restStream, n int) ([]pb03Frame, error) {
	return readFrames(func() (pb03Frame, error) { return pb03Next(s) }, n)
}

// pb03ReadStream opens a stream and reads it to the end.
func pb03ReadStream(ctx context.Context, t testing.TB, method, base, path, body string, hdr map[string]string) []pb03Frame {
	t.Helper()
	s := pb03Open(ctx, t, method, base, path, body, hdr)
	defer s.close()
	frames, err := pb03Read(s, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return frames
}

// pb03Events returns the frames as the frames of stream_test.go.
func pb03Events(frames []pb03Frame) []sseEvent {
	out := make([]sseEvent, len(frames))
	for i, f := range frames {
		out[i] = f.sseEvent
	}
	return out
}

// pb03CheckFrames checks a v0.3 REST stream: increasing ids, an error
// frame only last and without id, the task first if taskFirst, and
// "final" only on the last frame of a complete stream, a status update.
func pb03CheckFrames(t testing.TB, what string, frames []pb03Frame, taskFirst, complete bool) {
	t.Helper()
	var last uint64
	for i, f := range frames {
		if f.sr == nil {
			if i != len(frames)-1 || f.hasID {
				t.Errorf("%s: frame %d: an error frame must be the last and have no id", what, i)
			}
			continue
		}
		if !f.hasID || f.seq <= last {
			t.Errorf("%s: frame %d: id %d (has id %v) after %d, want increasing stream sequences", what, i, f.seq, f.hasID, last)
		}
		last = f.seq
		final := f.sr.GetStatusUpdate().GetFinal()
		if wantFinal := complete && i == len(frames)-1 && f.sr.GetStatusUpdate() != nil; final != wantFinal {
			t.Errorf("%s: frame %d (%s): final=%v, want %v", what, i, f, final, wantFinal)
		}
	}
	if taskFirst && len(frames) > 0 && frames[0].sr.GetTask() == nil {
		t.Errorf("%s: first frame %s, want the task", what, frames[0])
	}
}

// pb03Settle waits until the task stops changing (terminal or waiting
// for input): it follows the task's stream to its end.
func pb03Settle(ctx context.Context, t testing.TB, base, id string) {
	t.Helper()
	path := "/v1/tasks/" + id + ":subscribe"
	r, err := openREST(ctx, http.MethodGet, base, path, "", pb03Headers(nil))
	if err != nil {
		// A terminal task answers 501 UnsupportedOperation: settled.
		if strings.Contains(err.Error(), "HTTP 501") {
			return
		}
		t.Fatal(err)
	}
	defer r.close()
	if _, err := pb03Read(r, -1); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// ---- golden files ----

// pb03IDs finds a UUID and the resource collection before it.
var pb03IDs = regexp.MustCompile(`(tasks/|pushNotificationConfigs/)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`)

// pb03Walk normalises v as v03Norm.walk does, and also the ids inside
// resource names, paths and messages ("tasks/<id>").
func pb03Walk(n *v03Norm, v any, key, parent string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range slices.Sorted(maps.Keys(t)) {
			out[k] = pb03Walk(n, t[k], k, key)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, c := range t {
			out[i] = pb03Walk(n, c, key, parent)
		}
		return out
	case string:
		if _, known := n.names[t]; known || key == "timestamp" || v03UUID.MatchString(t) {
			return n.walk(t, key, parent)
		}
		return pb03IDs.ReplaceAllStringFunc(t, func(m string) string {
			sub := pb03IDs.FindStringSubmatch(m)
			if p, ok := n.names[sub[2]]; ok {
				return sub[1] + p
			}
			label := "id"
			switch sub[1] {
			case "tasks/":
				label = "task"
			case "pushNotificationConfigs/":
				label = "config"
			}
			return sub[1] + n.name(label, sub[2])
		})
	}
	return v
}

// pb03Golden compares doc, normalised, with testdata/v03rest/<name>.json.
func pb03Golden(t testing.TB, name string, doc map[string]any, known map[string]string) {
	t.Helper()
	norm := pb03Walk(newV03Norm(known), doc, "", "")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(norm); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "v03rest", name+".json"), buf.Bytes(), *pb03Rewrite,
		"go test -run TestV03RESTGolden ./cmd/a2abus/ -rewrite-v03rest")
}

// pb03JSON decodes a golden document's JSON body, or keeps what is not
// JSON as a string.
func pb03JSON(b []byte) any {
	if len(bytes.TrimSpace(b)) == 0 {
		return string(b)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() || !json.Valid(b) {
		return string(b)
	}
	return v
}

// pb03Case is one golden request.
type pb03Case struct {
	name   string
	method string
	// path and body, and the values of hdr: {{name}} stands for a value
	// made in the setup.
	path, body string
	hdr        map[string]string
	// stream: a 200 answer is an SSE stream.
	stream bool
	// status is the HTTP status wanted; reason the ErrorInfo reason of an
	// error.
	status int
	reason string
	// oracle returns the a2a.v1 message a 200 JSON body decodes into.
	oracle func() proto.Message
	// settle: the request starts work that goes on after its answer; wait
	// for the task (the answer's task id) to settle.
	settle bool
}

func TestV03RESTGolden(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })
	_, es := streamJS(ctx, t, ts.NATSURL)

	// The setup: tasks in known states, named as {{name}} in requests and
	// <name> in the golden files.
	vars := map[string]string{}
	known := map[string]string{}
	addTask := func(name string, task *a2apb.Task) {
		vars[name], vars[name+"Ctx"] = task.GetId(), task.GetContextId()
		known[vars[name]], known[vars[name+"Ctx"]] = "<task:"+name+">", "<context:"+name+">"
	}
	addTask("done", pb03Send(ctx, t, ts.URL, "setup-done", "echo done", true))
	addTask("asking", pb03Send(ctx, t, ts.URL, "setup-asking", "ask", true))
	addTask("asking2", pb03Send(ctx, t, ts.URL, "setup-asking2", "ask", true))
	addTask("other", pb03Send(ctx, t, ts.URL, "setup-other", "echo other", true))
	for _, n := range []string{"asking", "asking2"} {
		var task a2apb.Task
		pb03OK(ctx, t, http.MethodGet, ts.URL, "/v1/tasks/"+vars[n], "", &task)
		if task.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_INPUT_REQUIRED {
			t.Fatalf("setup task %s: %s, want TASK_STATE_INPUT_REQUIRED", n, task.GetStatus().GetState())
		}
	}
	streamed := pb03ReadStream(ctx, t, http.MethodPost, ts.URL, "/v1/message:stream", pb03SendBody(t, "setup-streamed", "stream 3 0", false), nil)
	if len(streamed) != 7 {
		t.Fatalf("setup stream: %v, want 7 frames", streamed)
	}
	addTask("streamed", streamed[0].sr.GetTask())
	vars["resumeFrom"] = strconv.FormatUint(streamed[2].seq, 10)
	vars["head"] = strconv.FormatUint(streamed[len(streamed)-1].seq, 10)
	known[vars["resumeFrom"]], known[vars["head"]] = "<seq:resume-from>", "<seq:head>"
	known[ts.URL+"/"] = "<server>/"
	hook := "http://127.0.0.1:9/hook" // configs of finished tasks: nothing is sent

	task := func() proto.Message { return &a2apb.Task{} }
	sent := func() proto.Message { return &a2apb.SendMessageResponse{} }
	pushCfg := func() proto.Message { return &a2apb.TaskPushNotificationConfig{} }
	pushList := func() proto.Message { return &a2apb.ListTaskPushNotificationConfigResponse{} }
	empty := func() proto.Message { return &emptypb.Empty{} }
	const (
		notFound      = "TASK_NOT_FOUND"
		invalidParams = "INVALID_PARAMS"
		noMethod      = "METHOD_NOT_FOUND"
	)
	msg := func(m string) string { return `{"message":` + m + `,"configuration":{"blocking":true}}` }
	b64 := base64.StdEncoding.EncodeToString([]byte("hello, file"))
	cases := []pb03Case{
		// message:send
		{name: "message_send_echo", method: "POST", path: "/v1/message:send", status: 200, oracle: sent,
			body: msg(`{"messageId":"golden-echo","role":"ROLE_USER","content":[{"text":"echo golden"}]}`)},
		{name: "message_send_parts", method: "POST", path: "/v1/message:send", status: 200, oracle: sent,
			body: `{"message":{"messageId":"golden-parts","role":"ROLE_USER","metadata":{"trace":"t1"},"content":[` +
				`{"text":"echo parts","metadata":{"lang":"en"}},` +
				`{"file":{"name":"hello.txt","mimeType":"text/plain","fileWithBytes":"` + b64 + `"}},` +
				`{"file":{"name":"logo.png","mimeType":"image/png","fileWithUri":"https://example.com/logo.png"}},` +
				`{"data":{"data":{"answer":42,"list":[1,"two"],"nested":{"ok":true}}}}]},` +
				`"configuration":{"blocking":true,"acceptedOutputModes":["text/plain"]},"metadata":{"req":"r1"}}`},
		// The proto field names: "request" for the message, "parts" (as
		// a2a-go v0.3.15's a2apb names Message field 5), snake_case, the
		// role by number, URL-safe unpadded base64.
		{name: "message_send_proto_names", method: "POST", path: "/v1/message:send", status: 200, oracle: sent,
			body: `{"request":{"message_id":"golden-names","role":1,"parts":[{"text":"echo names"},` +
				`{"file":{"file_with_bytes":"` + base64.RawURLEncoding.EncodeToString([]byte{0xfb, 0xff}) + `","mime_type":"application/octet-stream"}}]},"configuration":{"blocking":true}}`},
		// As in proto3, a configuration without "blocking": true does not
		// block.
		{name: "message_send_nonblocking", method: "POST", path: "/v1/message:send", status: 200, oracle: sent, settle: true,
			body: `{"message":{"messageId":"golden-nonblocking","role":"ROLE_USER","content":[{"text":"echo later"}]},"configuration":{}}`},
		// Nor does a request without configuration (a2a-python 0.3).
		{name: "message_send_no_configuration", method: "POST", path: "/v1/message:send", status: 200, oracle: sent, settle: true,
			body: `{"message":{"messageId":"golden-noconfig","role":"ROLE_USER","content":[{"text":"echo later too"}]}}`},
		// historyLength 0 is no limit ("if 0, the history will be unlimited").
		{name: "message_send_history_length_0", method: "POST", path: "/v1/message:send", status: 200, oracle: sent,
			body: `{"message":{"messageId":"golden-h0","role":"ROLE_USER","content":[{"text":"echo h0"}]},"configuration":{"blocking":true,"historyLength":0}}`},
		{name: "message_send_ask", method: "POST", path: "/v1/message:send", status: 200, oracle: sent,
			body: msg(`{"messageId":"golden-ask","role":"ROLE_USER","content":[{"text":"ask"}]}`)},
		{name: "message_send_followup", method: "POST", path: "/v1/message:send", status: 200, oracle: sent,
			body: msg(`{"messageId":"golden-followup","role":"ROLE_USER","taskId":"{{asking}}","contextId":"{{askingCtx}}","content":[{"text":"Golden"}]}`)},
		{name: "message_send_followup_terminal", method: "POST", path: "/v1/message:send", status: 501, reason: "UNSUPPORTED_OPERATION",
			body: msg(`{"messageId":"golden-followup-done","role":"ROLE_USER","taskId":"{{done}}","content":[{"text":"more"}]}`)},
		{name: "message_send_context_mismatch", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-ctx","role":"ROLE_USER","taskId":"{{asking2}}","contextId":"{{doneCtx}}","content":[{"text":"x"}]}`)},
		{name: "message_send_unknown_task", method: "POST", path: "/v1/message:send", status: 404, reason: notFound,
			body: msg(`{"messageId":"golden-unknown","role":"ROLE_USER","taskId":"no-such-task","content":[{"text":"echo"}]}`)},
		{name: "message_send_role_agent", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-agent","role":"ROLE_AGENT","content":[{"text":"echo"}]}`)},
		{name: "message_send_role_missing", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-norole","content":[{"text":"echo"}]}`)},
		// The v0.3 JSON-RPC shape is not this binding's.
		{name: "message_send_jsonrpc_shape", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"kind":"message","messageId":"golden-jsonrpc","role":"user","parts":[{"kind":"text","text":"echo"}]}`)},
		{name: "message_send_content_and_parts", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-both-fields","role":"ROLE_USER","content":[{"text":"a"}],"parts":[{"text":"b"}]}`)},
		{name: "message_send_message_and_request", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: `{"message":{"messageId":"golden-m","role":"ROLE_USER","content":[{"text":"a"}]},"request":{"messageId":"golden-r","role":"ROLE_USER","content":[{"text":"b"}]}}`},
		{name: "message_send_file_both", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-file-both","role":"ROLE_USER","content":[{"file":{"fileWithBytes":"` + b64 + `","fileWithUri":"https://example.com/f"}}]}`)},
		{name: "message_send_file_neither", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-file-neither","role":"ROLE_USER","content":[{"file":{"name":"f"}}]}`)},
		{name: "message_send_bad_base64", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-b64","role":"ROLE_USER","content":[{"file":{"fileWithBytes":"not base64!"}}]}`)},
		{name: "message_send_part_empty", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-part-empty","role":"ROLE_USER","content":[{}]}`)},
		{name: "message_send_part_two_kinds", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-part-two","role":"ROLE_USER","content":[{"text":"a","data":{"data":{}}}]}`)},
		{name: "message_send_data_not_object", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-data-array","role":"ROLE_USER","content":[{"data":{"data":[1,2]}}]}`)},
		{name: "message_send_no_content", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"messageId":"golden-nocontent","role":"ROLE_USER","content":[]}`)},
		{name: "message_send_no_message_id", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: msg(`{"role":"ROLE_USER","content":[{"text":"echo"}]}`)},
		{name: "message_send_no_message", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams, body: `{"configuration":{"blocking":true}}`},
		{name: "message_send_negative_history", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: `{"message":{"messageId":"golden-hneg","role":"ROLE_USER","content":[{"text":"echo"}]},"configuration":{"historyLength":-1}}`},
		{name: "message_send_history_string", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams,
			body: `{"message":{"messageId":"golden-hstr","role":"ROLE_USER","content":[{"text":"echo"}]},"configuration":{"historyLength":"x"}}`},
		{name: "message_send_array", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams, body: `[]`},
		{name: "message_send_empty_body", method: "POST", path: "/v1/message:send", status: 422, reason: invalidParams},
		{name: "message_send_bad_json", method: "POST", path: "/v1/message:send", status: 400, reason: "PARSE_ERROR", body: `{"message":`},
		// GET /v1/{name=tasks/*}
		{name: "tasks_get", method: "GET", path: "/v1/tasks/{{done}}", status: 200, oracle: task},
		{name: "tasks_get_history_length_1", method: "GET", path: "/v1/tasks/{{asking}}?historyLength=1", status: 200, oracle: task},
		{name: "tasks_get_history_length_0", method: "GET", path: "/v1/tasks/{{done}}?historyLength=0", status: 200, oracle: task},
		{name: "tasks_get_input_required", method: "GET", path: "/v1/tasks/{{asking2}}", status: 200, oracle: task},
		{name: "tasks_get_unknown", method: "GET", path: "/v1/tasks/no-such-task", status: 404, reason: notFound},
		{name: "tasks_get_dot_dot", method: "GET", path: "/v1/tasks/%2E%2E", status: 404, reason: notFound},
		{name: "tasks_get_bad_history", method: "GET", path: "/v1/tasks/{{done}}?historyLength=abc", status: 422, reason: invalidParams},
		{name: "tasks_get_negative_history", method: "GET", path: "/v1/tasks/{{done}}?historyLength=-1", status: 422, reason: invalidParams},
		// POST /v1/{name=tasks/*}:cancel
		{name: "tasks_cancel", method: "POST", path: "/v1/tasks/{{asking2}}:cancel", status: 200, oracle: task},
		{name: "tasks_cancel_terminal", method: "POST", path: "/v1/tasks/{{done}}:cancel", body: `{"name":"tasks/{{done}}"}`, status: 409, reason: "TASK_NOT_CANCELABLE"},
		{name: "tasks_cancel_unknown", method: "POST", path: "/v1/tasks/no-such-task:cancel", status: 404, reason: notFound},
		{name: "tasks_cancel_other_name", method: "POST", path: "/v1/tasks/{{asking}}:cancel", body: `{"name":"tasks/{{other}}"}`, status: 422, reason: invalidParams},
		{name: "tasks_cancel_dot_dot_name", method: "POST", path: "/v1/tasks/{{asking}}:cancel", body: `{"name":"tasks/../{{asking}}"}`, status: 422, reason: invalidParams},
		{name: "tasks_cancel_bad_json", method: "POST", path: "/v1/tasks/{{asking}}:cancel", body: `{"name":`, status: 400, reason: "PARSE_ERROR"},
		// Push notification configs.
		{name: "push_create", method: "POST", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 200, oracle: pushCfg,
			body: `{"name":"tasks/{{done}}/pushNotificationConfigs/cfg-a","pushNotificationConfig":{"id":"cfg-a","url":"` + hook + `/a","token":"tok-a","authentication":{"schemes":["Bearer"],"credentials":"secret"}}}`},
		{name: "push_create_request", method: "POST", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 200, oracle: pushCfg,
			body: `{"parent":"tasks/{{done}}","configId":"cfg-b","config":{"name":"tasks/{{done}}/pushNotificationConfigs/cfg-b","pushNotificationConfig":{"url":"` + hook + `/b"}}}`},
		{name: "push_create_no_id", method: "POST", path: "/v1/tasks/{{other}}/pushNotificationConfigs", status: 200, oracle: pushCfg,
			body: `{"pushNotificationConfig":{"url":"` + hook + `/c"}}`},
		{name: "push_create_unknown_task", method: "POST", path: "/v1/tasks/no-such-task/pushNotificationConfigs", status: 404, reason: notFound,
			body: `{"pushNotificationConfig":{"url":"` + hook + `"}}`},
		{name: "push_create_no_url", method: "POST", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 422, reason: invalidParams,
			body: `{"pushNotificationConfig":{"id":"cfg-x"}}`},
		{name: "push_create_bad_scheme", method: "POST", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 422, reason: invalidParams,
			body: `{"pushNotificationConfig":{"url":"ftp://example.com/"}}`},
		{name: "push_create_no_config", method: "POST", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 422, reason: invalidParams,
			body: `{"url":"` + hook + `"}`},
		{name: "push_create_other_parent", method: "POST", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 422, reason: invalidParams,
			body: `{"parent":"tasks/{{other}}","config":{"pushNotificationConfig":{"url":"` + hook + `"}}}`},
		{name: "push_create_bad_name", method: "POST", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 422, reason: invalidParams,
			body: `{"name":"tasks/{{done}}/pushNotificationConfigs/x/../y","pushNotificationConfig":{"url":"` + hook + `"}}`},
		{name: "push_create_ids_differ", method: "POST", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 422, reason: invalidParams,
			body: `{"configId":"cfg-y","config":{"pushNotificationConfig":{"id":"cfg-z","url":"` + hook + `"}}}`},
		{name: "push_create_both_shapes", method: "POST", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 422, reason: invalidParams,
			body: `{"config":{"pushNotificationConfig":{"url":"` + hook + `"}},"pushNotificationConfig":{"url":"` + hook + `"}}`},
		{name: "push_get", method: "GET", path: "/v1/tasks/{{done}}/pushNotificationConfigs/cfg-b", status: 200, oracle: pushCfg},
		{name: "push_get_unknown_config", method: "GET", path: "/v1/tasks/{{done}}/pushNotificationConfigs/no-such-config", status: 404, reason: notFound},
		{name: "push_list", method: "GET", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 200, oracle: pushList},
		{name: "push_list_page", method: "GET", path: "/v1/tasks/{{done}}/pushNotificationConfigs?pageSize=1", status: 200, oracle: pushList},
		{name: "push_list_empty", method: "GET", path: "/v1/tasks/{{asking}}/pushNotificationConfigs", status: 200, oracle: pushList},
		{name: "push_list_unknown_task", method: "GET", path: "/v1/tasks/no-such-task/pushNotificationConfigs", status: 404, reason: notFound},
		{name: "push_delete", method: "DELETE", path: "/v1/tasks/{{done}}/pushNotificationConfigs/cfg-a", status: 200, oracle: empty},
		{name: "push_get_deleted", method: "GET", path: "/v1/tasks/{{done}}/pushNotificationConfigs/cfg-a", status: 404, reason: notFound},
		{name: "push_list_after_delete", method: "GET", path: "/v1/tasks/{{done}}/pushNotificationConfigs", status: 200, oracle: pushList},
		// GET /v1/card and GET /v1/tasks.
		{name: "card", method: "GET", path: "/v1/card", status: 200, oracle: func() proto.Message { return &a2apb.AgentCard{} }},
		{name: "tasks_list", method: "GET", path: "/v1/tasks?contextId={{doneCtx}}&status=TASK_STATE_COMPLETED&historyLength=1", status: 200,
			oracle: func() proto.Message { return &a2apb.ListTasksResponse{} }},
		{name: "tasks_list_cancelled", method: "GET", path: "/v1/tasks?contextId={{asking2Ctx}}&status=TASK_STATE_CANCELLED&includeArtifacts=true", status: 200,
			oracle: func() proto.Message { return &a2apb.ListTasksResponse{} }},
		{name: "tasks_list_bad_status", method: "GET", path: "/v1/tasks?status=completed", status: 422, reason: invalidParams},
		// Streams.
		{name: "message_stream_echo", method: "POST", path: "/v1/message:stream", stream: true, status: 200,
			body: `{"message":{"messageId":"golden-stream-echo","role":"ROLE_USER","content":[{"text":"echo streamed"}]}}`},
		{name: "message_stream_ask", method: "POST", path: "/v1/message:stream", stream: true, status: 200,
			body: `{"message":{"messageId":"golden-stream-ask","role":"ROLE_USER","content":[{"text":"ask"}]}}`},
		{name: "message_stream_role_agent", method: "POST", path: "/v1/message:stream", stream: true, status: 422, reason: invalidParams,
			body: `{"message":{"messageId":"golden-stream-agent","role":"ROLE_AGENT","content":[{"text":"echo"}]}}`},
		{name: "message_stream_bad_json", method: "POST", path: "/v1/message:stream", stream: true, status: 400, reason: "PARSE_ERROR", body: `{`},
		{name: "tasks_subscribe_resume", method: "GET", path: "/v1/tasks/{{streamed}}:subscribe", stream: true, status: 200,
			hdr: map[string]string{"Last-Event-ID": "{{resumeFrom}}"}},
		{name: "tasks_subscribe_resume_post", method: "POST", path: "/v1/tasks/{{streamed}}:subscribe", stream: true, status: 200,
			body: `{"name":"tasks/{{streamed}}","lastEventId":"{{resumeFrom}}"}`},
		{name: "tasks_subscribe_at_head", method: "GET", path: "/v1/tasks/{{streamed}}:subscribe", stream: true, status: 200,
			hdr: map[string]string{"Last-Event-ID": "{{head}}"}},
		{name: "tasks_subscribe_terminal", method: "GET", path: "/v1/tasks/{{done}}:subscribe", stream: true, status: 501, reason: "UNSUPPORTED_OPERATION"},
		{name: "tasks_subscribe_unknown", method: "GET", path: "/v1/tasks/no-such-task:subscribe", stream: true, status: 404, reason: notFound},
		{name: "tasks_subscribe_bad_last_event_id", method: "GET", path: "/v1/tasks/{{streamed}}:subscribe", stream: true, status: 422, reason: invalidParams,
			hdr: map[string]string{"Last-Event-ID": "abc"}},
		{name: "tasks_subscribe_other_name", method: "POST", path: "/v1/tasks/{{streamed}}:subscribe", stream: true, status: 422, reason: invalidParams,
			body: `{"name":"tasks/{{done}}"}`},
		// Routes: an unknown path is 404, a known one with another method
		// 405 with Allow, as a2a-python's (Starlette's) router answers.
		{name: "route_unknown", method: "GET", path: "/v1/nope", status: 404, reason: noMethod},
		{name: "route_unknown_verb", method: "POST", path: "/v1/tasks/{{done}}:pause", status: 404, reason: noMethod},
		{name: "route_too_deep", method: "GET", path: "/v1/tasks/{{done}}/pushNotificationConfigs/cfg-b/x", status: 404, reason: noMethod},
		{name: "route_no_task_id", method: "GET", path: "/v1/tasks/", status: 404, reason: noMethod},
		{name: "route_encoded_dot_dot", method: "GET", path: "/v1/tasks/%2E%2E/{{done}}", status: 404, reason: noMethod},
		{name: "route_encoded_slash", method: "POST", path: "/v1/tasks/..%2F{{done}}:cancel", status: 404, reason: noMethod},
		{name: "route_get_send", method: "GET", path: "/v1/message:send", status: 405, reason: noMethod},
		{name: "route_delete_task", method: "DELETE", path: "/v1/tasks/{{done}}", status: 405, reason: noMethod},
		{name: "route_get_cancel", method: "GET", path: "/v1/tasks/{{done}}:cancel", status: 405, reason: noMethod},
		{name: "route_put_push_config", method: "PUT", path: "/v1/tasks/{{done}}/pushNotificationConfigs/cfg-b", status: 405, reason: noMethod},
		{name: "route_post_card", method: "POST", path: "/v1/card", body: `{}`, status: 405, reason: noMethod},
		// A2A-Version: /v1/ is the v0.3 binding.
		{name: "version_0_3", method: "GET", path: "/v1/tasks/{{done}}?historyLength=0", hdr: map[string]string{"A2A-Version": "0.3"}, status: 200, oracle: task},
		{name: "version_1_0", method: "GET", path: "/v1/tasks/{{done}}", hdr: map[string]string{"A2A-Version": "1.0"}, status: 404, reason: noMethod},
		{name: "version_9_9", method: "POST", path: "/v1/message:send", hdr: map[string]string{"A2A-Version": "9.9"}, status: 400, reason: "VERSION_NOT_SUPPORTED",
			body: msg(`{"messageId":"golden-v99","role":"ROLE_USER","content":[{"text":"echo"}]}`)},
	}

	subst := regexp.MustCompile(`\{\{(\w+)\}\}`)
	expand := func(name, s string) string {
		return subst.ReplaceAllStringFunc(s, func(m string) string {
			v, ok := vars[m[2:len(m)-2]]
			if !ok {
				t.Fatalf("%s: no setup value %s", name, m)
			}
			return v
		})
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("case %s twice", tc.name)
		}
		seen[tc.name] = true
		path, body := expand(tc.name, tc.path), expand(tc.name, tc.body)
		hdr := map[string]string{}
		hdrDoc := map[string]any{}
		for k, v := range tc.hdr {
			hdr[k] = expand(tc.name, v)
			hdrDoc[k] = hdr[k]
		}
		req := map[string]any{"method": tc.method, "path": path}
		if body != "" {
			req["body"] = pb03JSON([]byte(body))
		}
		if len(hdr) > 0 {
			req["headers"] = hdrDoc
		}
		was := readStreamState(t, es)
		resp := map[string]any{"status": tc.status}
		if tc.stream && tc.status == http.StatusOK {
			frames := pb03ReadStream(ctx, t, tc.method, ts.URL, path, body, hdr)
			pb03CheckFrames(t, tc.name, frames, strings.HasSuffix(path, "message:stream"), true)
			out := []any{}
			for i, f := range frames {
				if f.sr == nil {
					t.Errorf("%s: frame %d is an error: %s", tc.name, i, f.data)
				}
				out = append(out, map[string]any{"id": fmt.Sprintf("<seq-%d>", i+1), "data": pb03JSON([]byte(f.data))})
			}
			resp["contentType"], resp["frames"] = "text/event-stream", out
		} else {
			r := pb03Do(ctx, t, tc.method, ts.URL, path, body, hdr)
			resp["contentType"], resp["body"] = r.header.Get("Content-Type"), pb03JSON(r.body)
			if allow := r.header.Get("Allow"); allow != "" {
				resp["allow"] = allow
			}
			switch {
			case tc.status != http.StatusOK:
				pb03CheckError(t, tc.name, r, tc.status, tc.reason)
			case r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json":
				t.Errorf("%s: %v, want 200 application/json", tc.name, r)
			case tc.oracle == nil:
				t.Fatalf("%s: no oracle for a 200 body", tc.name)
			default:
				if err := pb03Unmarshal(r.body, tc.oracle()); err != nil {
					t.Errorf("%s: %v", tc.name, err)
				}
			}
			if tc.settle {
				var sr a2apb.SendMessageResponse
				if err := pb03Unmarshal(r.body, &sr); err != nil || sr.GetTask() == nil {
					t.Fatalf("%s: no task to settle in %s (%v)", tc.name, r.body, err)
				}
				pb03Settle(ctx, t, ts.URL, sr.GetTask().GetId())
			}
		}
		// Bad input changes nothing.
		if now := readStreamState(t, es); tc.status != http.StatusOK && now != was {
			t.Errorf("%s: the event stream changed: %+v, want %+v", tc.name, now, was)
		}
		pb03Golden(t, tc.name, map[string]any{"request": req, "response": resp}, known)
	}

	// The golden directory holds exactly the cases.
	if !*pb03Rewrite {
		files, err := filepath.Glob(filepath.Join("testdata", "v03rest", "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if name := strings.TrimSuffix(filepath.Base(f), ".json"); !seen[name] {
				t.Errorf("%s: no case of that name (stale golden file)", f)
			}
		}
	}

	// A resumed stream carries exactly the first stream's frames after the
	// resume position, with their ids.
	resumed := pb03ReadStream(ctx, t, http.MethodGet, ts.URL, "/v1/tasks/"+vars["streamed"]+":subscribe?lastEventId="+vars["resumeFrom"], "", nil)
	if got, want := pb03Data(resumed), pb03Data(streamed[3:]); !slices.Equal(got, want) {
		t.Errorf("resumed after %s:\n%q\nwant the first stream's\n%q", vars["resumeFrom"], got, want)
	}
}

// pb03Data is "id data" of each frame.
func pb03Data(frames []pb03Frame) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = strconv.FormatUint(f.seq, 10) + " " + f.data
	}
	return out
}

// TestV03RESTDotSegments: a path with unencoded dot segments never
// reaches the binding: net/http's ServeMux answers 307 with the cleaned
// path, as for every route of the server. (A client that follows it sends
// its request to the cleaned path.)
func TestV03RESTDotSegments(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, nil)
	_, es := streamJS(ctx, t, ts.NATSURL)
	done := pb03Send(ctx, t, ts.URL, "dots-done", "echo dots", true)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	was := readStreamState(t, es)
	for _, tc := range []struct{ method, path, location string }{
		{"GET", "/v1/tasks/../x", "/v1/x"},
		{"GET", "/v1/tasks/" + done.GetId() + "/../" + done.GetId(), "/v1/tasks/" + done.GetId()},
		{"POST", "/v1/tasks/./" + done.GetId() + ":cancel", "/v1/tasks/" + done.GetId() + ":cancel"},
		{"GET", "/v1/tasks/x/../../../.well-known/agent-card.json", "/.well-known/agent-card.json"},
	} {
		req, err := http.NewRequestWithContext(ctx, tc.method, ts.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != tc.location {
			t.Errorf("%s %s: HTTP %d Location %q, want 307 %s", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Location"), tc.location)
		}
	}
	if now := readStreamState(t, es); now != was {
		t.Errorf("the event stream changed: %+v, want %+v", now, was)
	}
}

// ---- resume across bindings ----

// TestV03RESTStreamResume drops a stream on one REST binding and resumes
// it on the other with the last id seen: together the two streams carry
// every event of the task exactly once, in order, each frame in its
// binding's shape, with the task's stream sequences as ids.
func TestV03RESTStreamResume(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, nil)
	_, es := streamJS(ctx, t, ts.NATSURL)

	t.Run("v1.0 REST resumed on v0.3 REST", func(t *testing.T) {
		t.Parallel()
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
		rest := pb03ReadStream(ctx, t, "GET", ts.URL, "/v1/tasks/"+string(task.ID)+":subscribe", "", lastEventHeader(head[len(head)-1].seq))
		pb03CheckFrames(t, "GET /v1/tasks/{id}:subscribe", rest, false, true)
		all := append(slices.Clip(head), pb03Events(rest)...)
		checkFramesExact(t, "v1.0 REST stream + v0.3 REST resume", all, taskLog(ctx, t, es, task.ID), 0)
		checkChunks(t, "v1.0 REST stream + v0.3 REST resume", eventsOf(all), 40)
	})

	t.Run("v0.3 REST resumed on v1.0 REST", func(t *testing.T) {
		t.Parallel()
		s := pb03Open(ctx, t, "POST", ts.URL, "/v1/message:stream", pb03SendBody(t, "resume-03-10", "stream 40 5", false), nil)
		head, err := pb03Read(s, 10)
		if err != nil {
			t.Fatalf("POST /v1/message:stream: %v", err)
		}
		s.close()
		pb03CheckFrames(t, "POST /v1/message:stream", head, true, false)
		task := head[0].sr.GetTask()
		if task == nil {
			t.Fatalf("first frame %v, want the task", head[0])
		}
		rest := readREST(ctx, t, "GET", ts.URL, "/tasks/"+task.GetId()+":subscribe", "", lastEventHeader(head[len(head)-1].seq))
		all := append(pb03Events(head), rest...)
		checkFramesExact(t, "v0.3 REST stream + v1.0 REST resume", all, taskLog(ctx, t, es, a2a.TaskID(task.GetId())), 0)
		checkChunks(t, "v0.3 REST stream + v1.0 REST resume", eventsOf(all), 40)
	})

	t.Run("v0.3 REST resumed on v0.3 REST", func(t *testing.T) {
		t.Parallel()
		s := pb03Open(ctx, t, "POST", ts.URL, "/v1/message:stream", pb03SendBody(t, "resume-03-03", "stream 40 5", false), nil)
		head, err := pb03Read(s, 10)
		if err != nil {
			t.Fatalf("POST /v1/message:stream: %v", err)
		}
		s.close()
		id := head[0].sr.GetTask().GetId()
		rest := pb03ReadStream(ctx, t, "POST", ts.URL, "/v1/tasks/"+id+":subscribe",
			`{"lastEventId":"`+strconv.FormatUint(head[len(head)-1].seq, 10)+`"}`, nil)
		all := append(slices.Clip(head), rest...)
		pb03CheckFrames(t, "v0.3 REST stream + resume", all, true, true)
		checkFramesExact(t, "v0.3 REST stream + v0.3 REST resume", pb03Events(all), taskLog(ctx, t, es, a2a.TaskID(id)), 0)
	})
}

// ---- across dialects ----

// TestV03RESTCrossDialect shares tasks between this binding and the
// others: each answers in its own dialect.
func TestV03RESTCrossDialect(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, nil)

	// Made in v0.3 REST, read in v1.0 JSON-RPC and HTTP+JSON and v0.3
	// JSON-RPC, canceled in v1.0 JSON-RPC, read again here.
	created := pb03Send(ctx, t, ts.URL, "cross-slow", "slow 3", false)
	id := created.GetId()
	v03CheckV1Task(t, "v1.0 GetTask", v1WaitWorking(ctx, t, ts, id), id)
	if rest := mustREST(ctx, t, http.MethodGet, ts.URL, "/tasks/"+id, "", nil); rest.status != http.StatusOK {
		t.Errorf("GET /tasks/%s: %v", id, rest)
	} else {
		v03CheckV1Task(t, "v1.0 REST GET /tasks/{id}", rest.body, id)
	}
	// tasks/get is shared by v0.1 and v0.3: a task made here is a v0.3 task.
	r03 := v03Call(ctx, t, ts, "tasks/get", map[string]any{"id": id})
	v03CheckReply(t, "v0.3 tasks/get", "tasks/get", r03)
	if got := v03Decode(t, r03.Result); v03Str(got, "kind") != "task" || v03Str(got, "status", "state") != "working" {
		t.Errorf("v0.3 tasks/get: %s, want a v0.3 task, working", r03)
	}
	if r := rawCall(ctx, t, ts, "CancelTask", map[string]any{"id": id}); r.Error != nil || !strings.Contains(string(r.Result), `"TASK_STATE_CANCELED"`) {
		t.Fatalf("v1.0 CancelTask: %s %+v", r.Result, r.Error)
	}
	var canceled a2apb.Task
	pb03OK(ctx, t, http.MethodGet, ts.URL, "/v1/tasks/"+id, "", &canceled)
	if canceled.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_CANCELLED || canceled.GetHistory()[0].GetRole() != a2apb.Role_ROLE_USER {
		t.Errorf("GET /v1/tasks/{id} after the v1.0 cancel: %v, want TASK_STATE_CANCELLED and the ROLE_USER message", &canceled)
	}

	// Made in v1.0 JSON-RPC, read here.
	r1 := rawCall(ctx, t, ts, "SendMessage", map[string]any{"message": map[string]any{"messageId": "cross-v1", "role": "ROLE_USER",
		"parts": []any{map[string]any{"text": "echo from v1"}, map[string]any{"url": "https://example.com/x.png", "mediaType": "image/png", "filename": "x.png"},
			map[string]any{"data": []any{1, 2}}}}})
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
	r := pb03Do(ctx, t, http.MethodGet, ts.URL, "/v1/tasks/"+sent.Task.ID, "", nil)
	var v1Task a2apb.Task
	if err := pb03Unmarshal(r.body, &v1Task); r.status != http.StatusOK || err != nil {
		t.Fatalf("GET /v1/tasks/{v1.0 task}: %v (%v)", r, err)
	}
	if strings.Contains(string(r.body), `"kind"`) {
		t.Errorf("GET /v1/tasks/{v1.0 task}: %s has the v0.3 JSON-RPC \"kind\"", r.body)
	}
	wantParts := `{"artifactId":"echo","name":"echo","parts":[{"text":"echo from v1"},` +
		`{"file":{"fileWithUri":"https://example.com/x.png","mimeType":"image/png","name":"x.png"}},{"data":{"data":{"value":[1,2]}}}]}`
	var art struct {
		Artifacts []json.RawMessage `json:"artifacts"`
		History   []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"history"`
	}
	if err := json.Unmarshal(r.body, &art); err != nil || len(art.Artifacts) != 1 || string(art.Artifacts[0]) != wantParts {
		t.Errorf("artifacts of the v1.0 task: %s (%v), want [%s]", r.body, err, wantParts)
	}
	if v1Task.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED || len(art.History) == 0 ||
		art.History[0].Role != "ROLE_USER" || len(art.History[0].Content) != 3 {
		t.Errorf("the v1.0 task here: %s, want COMPLETED with the ROLE_USER message of 3 parts in content", r.body)
	}

	// Made in v0.1, read here.
	v01 := v01Call(ctx, t, ts, v01Request(t, "tasks/send", map[string]any{"id": "cross-v01-task", "sessionId": "cross-v01-session",
		"message": v01TextMessage("user", "echo from v0.1")}))
	if v01.Error != nil {
		t.Fatalf("tasks/send: %+v", v01.Error)
	}
	var from01 a2apb.Task
	pb03OK(ctx, t, http.MethodGet, ts.URL, "/v1/tasks/cross-v01-task", "", &from01)
	if from01.GetContextId() != "cross-v01-session" || from01.GetStatus().GetState() != a2apb.TaskState_TASK_STATE_COMPLETED ||
		len(from01.GetHistory()) == 0 || from01.GetHistory()[0].GetParts()[0].GetText() != "echo from v0.1" {
		t.Errorf("GET /v1/tasks/{v0.1 task}: %v, want the completed task of the session", &from01)
	}
	// and tasks/get still answers it in v0.1.
	if g := v01Call(ctx, t, ts, v01Request(t, "tasks/get", map[string]any{"id": "cross-v01-task"})); g.Error != nil || !strings.Contains(string(g.Result), `"sessionId":"cross-v01-session"`) {
		t.Errorf("v0.1 tasks/get: %s %+v, want the v0.1 task", g.Result, g.Error)
	}

	// Streams of one task in both v0.3 bindings see the same events.
	slow := pb03Send(ctx, t, ts.URL, "cross-slow-2", "slow 30", false)
	sub := pb03Open(ctx, t, "GET", ts.URL, "/v1/tasks/"+slow.GetId()+":subscribe", "", nil)
	first, err := pb03Read(sub, 1)
	if err != nil || first[0].sr.GetTask() == nil {
		t.Fatalf("GET /v1/tasks/{id}:subscribe: %v %v, want the task first", first, err)
	}
	v0, rr := v03Open(ctx, t, ts.URL+"/", "tasks/resubscribe", map[string]any{"id": slow.GetId()}, nil)
	if v0 == nil {
		t.Fatalf("tasks/resubscribe: %s", rr)
	}
	v0First, err := v0.next()
	if err != nil || v0First.kind() != "task" {
		t.Fatalf("tasks/resubscribe: %v %v", v0First, err)
	}
	restCancel := pb03Do(ctx, t, http.MethodPost, ts.URL, "/v1/tasks/"+slow.GetId()+":cancel", "", nil)
	if restCancel.status != http.StatusOK {
		t.Fatalf("POST /v1/tasks/{id}:cancel: %v", restCancel)
	}
	pbRest, err := pb03Read(sub, -1)
	if err != nil {
		t.Fatal(err)
	}
	v0Rest, err := v0.read(-1)
	if err != nil {
		t.Fatal(err)
	}
	from := max(first[0].seq, v0First.seq)
	var pbTail, v0Tail []string
	for _, f := range pbRest {
		if f.seq > from {
			pbTail = append(pbTail, fmt.Sprintf("%d %s", f.seq, describe(f.event)))
		}
	}
	for _, f := range v0Rest {
		if f.seq > from {
			v0Tail = append(v0Tail, fmt.Sprintf("%d %s", f.seq, v03Describe(f.result)))
		}
	}
	if len(pbTail) == 0 || len(pbTail) != len(v0Tail) {
		t.Fatalf("after seq %d: v0.3 REST %q, v0.3 JSON-RPC %q; want the same events", from, pbTail, v0Tail)
	}
	last := pbRest[len(pbRest)-1]
	if last.sr.GetStatusUpdate().GetStatus().GetState() != a2apb.TaskState_TASK_STATE_CANCELLED || !last.sr.GetStatusUpdate().GetFinal() {
		t.Errorf("v0.3 REST stream ends with %s, want TASK_STATE_CANCELLED final", last.data)
	}
	if l := v0Rest[len(v0Rest)-1]; v03Describe(l.result) != `status canceled final=true ""` {
		t.Errorf("v0.3 JSON-RPC stream ends with %s, want canceled final", l)
	}
}

// ---- a2a-go's v0.3 REST client ----

// TestV03RESTCompatClient drives every route with the v0.3 HTTP+JSON
// transport of a2a-go v2 (a2acompat/a2av0), which speaks proto-JSON with
// "content" and reads errors from the body's "error" member.
func TestV03RESTCompatClient(t *testing.T) {
	t.Parallel()
	ctx := v03Context(t)
	ts := startServer(t, nil)
	c, err := a2av0.NewRESTTransport(a2av0.RESTTransportConfig{URL: ts.URL, Client: &http.Client{Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	blocking := &a2a.SendMessageConfig{}

	res, err := c.SendMessage(ctx, nil, &a2a.SendMessageRequest{Message: userText("echo compat"), Config: blocking})
	done, ok := res.(*a2a.Task)
	if err != nil || !ok || done.Status.State != a2a.TaskStateCompleted || len(done.Artifacts) != 1 || textOf(done.Artifacts[0].Parts) != "echo compat" {
		t.Fatalf("SendMessage=%s, %v; want the completed echo", jsonOf(t, res), err)
	}
	if len(done.History) == 0 || textOf(done.History[0].Parts) != "echo compat" || done.History[0].Role != a2a.MessageRoleUser {
		t.Errorf("history %s, want the user message (its content)", jsonOf(t, done.History))
	}
	got, err := c.GetTask(ctx, nil, &a2a.GetTaskRequest{ID: done.ID, HistoryLength: ptr(0)})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.History) != 0 {
		t.Errorf("GetTask(historyLength 0)=%s, %v", jsonOf(t, got), err)
	}

	evs, err := collect(c.SendStreamingMessage(ctx, nil, &a2a.SendMessageRequest{Message: userText("stream 5 10")}))
	if err != nil || len(evs) != 9 {
		t.Fatalf("SendStreamingMessage: %d events %v, %v", len(evs), descsOf(evs, func(e a2a.Event) a2a.Event { return e }), err)
	}
	checkChunks(t, "SendStreamingMessage", evs, 5)
	if !isFinal(evs[len(evs)-1], a2a.TaskStateCompleted) {
		t.Errorf("stream ends with %s, want COMPLETED", describe(evs[len(evs)-1]))
	}

	slowRes, err := c.SendMessage(ctx, nil, &a2a.SendMessageRequest{Message: userText("slow 30"), Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatalf("SendMessage(slow 30)=%v", err)
	}
	slow := slowRes.(*a2a.Task)
	subscribed := make(chan []a2a.Event, 1)
	subErr := make(chan error, 1)
	first := make(chan struct{})
	go func() {
		var out []a2a.Event
		for ev, err := range c.SubscribeToTask(ctx, nil, &a2a.SubscribeToTaskRequest{ID: slow.ID}) {
			if err != nil {
				subErr <- err
				return
			}
			if len(out) == 0 {
				close(first)
			}
			out = append(out, ev)
		}
		subscribed <- out
	}()
	select {
	case <-first:
	case err := <-subErr:
		t.Fatalf("SubscribeToTask: %v", err)
	case <-ctx.Done():
		t.Fatal("SubscribeToTask: no first event")
	}
	canceled, err := c.CancelTask(ctx, nil, &a2a.CancelTaskRequest{ID: slow.ID})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask=%s, %v; want CANCELED", jsonOf(t, canceled), err)
	}
	select {
	case evs := <-subscribed:
		if _, ok := evs[0].(*a2a.Task); !ok || !isFinal(evs[len(evs)-1], a2a.TaskStateCanceled) {
			t.Errorf("SubscribeToTask: %v, want the task first and CANCELED last", descsOf(evs, func(e a2a.Event) a2a.Event { return e }))
		}
	case err := <-subErr:
		t.Fatalf("SubscribeToTask: %v", err)
	case <-ctx.Done():
		t.Fatal("SubscribeToTask did not end after the cancel")
	}

	cfg, err := c.CreateTaskPushConfig(ctx, nil, &a2a.PushConfig{TaskID: done.ID, ID: "cfg-1", URL: "https://93.184.216.34/hook", Token: "tok",
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "secret"}})
	if err != nil || cfg.ID != "cfg-1" || cfg.TaskID != done.ID || cfg.Token != "tok" || cfg.Auth == nil || cfg.Auth.Scheme != "Bearer" {
		t.Fatalf("CreateTaskPushConfig=%s, %v", jsonOf(t, cfg), err)
	}
	if g, err := c.GetTaskPushConfig(ctx, nil, &a2a.GetTaskPushConfigRequest{TaskID: done.ID, ID: "cfg-1"}); err != nil || g.URL != cfg.URL {
		t.Errorf("GetTaskPushConfig=%s, %v", jsonOf(t, g), err)
	}
	if l, err := c.ListTaskPushConfigs(ctx, nil, &a2a.ListTaskPushConfigRequest{TaskID: done.ID}); err != nil || len(l) != 1 || l[0].ID != "cfg-1" {
		t.Errorf("ListTaskPushConfigs=%s, %v", jsonOf(t, l), err)
	}
	if err := c.DeleteTaskPushConfig(ctx, nil, &a2a.DeleteTaskPushConfigRequest{TaskID: done.ID, ID: "cfg-1"}); err != nil {
		t.Errorf("DeleteTaskPushConfig=%v", err)
	}
	if _, err := c.GetTaskPushConfig(ctx, nil, &a2a.GetTaskPushConfigRequest{TaskID: done.ID, ID: "cfg-1"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTaskPushConfig(deleted)=%v, want ErrTaskNotFound", err)
	}

	list, err := c.ListTasks(ctx, nil, &a2a.ListTasksRequest{ContextID: done.ContextID})
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != done.ID {
		t.Errorf("ListTasks(context)=%s, %v; want the echo task", jsonOf(t, list), err)
	}
	card, err := c.GetExtendedAgentCard(ctx, nil, &a2a.GetExtendedAgentCardRequest{})
	if err != nil || card.Name == "" || len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != ts.URL+"/" {
		t.Errorf("GetExtendedAgentCard (GET /v1/card)=%s, %v", jsonOf(t, card), err)
	}

	// Errors map to the A2A errors through the body's ErrorInfo.
	if _, err := c.GetTask(ctx, nil, &a2a.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTask(unknown)=%v, want ErrTaskNotFound", err)
	}
	if _, err := c.CancelTask(ctx, nil, &a2a.CancelTaskRequest{ID: done.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Errorf("CancelTask(completed)=%v, want ErrTaskNotCancelable", err)
	}
	if _, err := collect(c.SubscribeToTask(ctx, nil, &a2a.SubscribeToTaskRequest{ID: done.ID})); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("SubscribeToTask(completed)=%v, want ErrUnsupportedOperation", err)
	}
	agent := userText("echo")
	agent.Role = a2a.MessageRoleAgent
	if _, err := c.SendMessage(ctx, nil, &a2a.SendMessageRequest{Message: agent, Config: blocking}); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("SendMessage(role agent)=%v, want ErrInvalidParams", err)
	}
}
