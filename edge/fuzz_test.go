package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/internal/natstest"
	"github.com/a2abus/a2abus/projections"
	"github.com/a2abus/a2abus/tasklog"
)

// newFuzzHandler wires the real stack (embedded JetStream, task log,
// views, feed, index, engine) behind an edge handler, as serve.go does,
// without a worker: a blocking SendMessage waits until its deadline.
func newFuzzHandler(tb testing.TB) *Handler {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ns := natstest.Run(tb, natstest.Options{})
	nc, js := natstest.Connect(tb, ns)
	ecfg := engine.DefaultConfig()
	if err := engine.Provision(ctx, js, ecfg); err != nil {
		tb.Fatal(err)
	}
	log := tasklog.New(nc, js, ecfg.EventsStream)
	kv, err := js.KeyValue(ctx, ecfg.SnapshotBucket)
	if err != nil {
		tb.Fatal(err)
	}
	views := projections.NewViews(log, kv, 1000, logger)
	tb.Cleanup(views.Close)
	index := projections.NewIndex()
	feed, err := projections.StartFeed(ctx, js, log, index, logger)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(feed.Stop)
	if err := index.Load(ctx, js, ecfg.EventsStream); err != nil {
		tb.Fatal(err)
	}
	eng, err := engine.New(ctx, js, log, views, ecfg, logger)
	if err != nil {
		tb.Fatal(err)
	}
	return New(Config{Card: a2a.AgentCard{Name: "fuzz"}, Logger: logger}, eng, views, feed, index, nil)
}

// fuzzRequestTimeout bounds one request; a SendMessage without
// returnImmediately has no worker to finish it and ends by this deadline.
const fuzzRequestTimeout = 2 * time.Second

// jsonrpcSeeds are request bodies for FuzzJSONRPC. Every SendMessage seed
// asks for returnImmediately, so mutations of it rarely block.
var jsonrpcSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21"}}`,
	`{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"a.b.>","historyLength":2}}`,
	`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"*","tenant":"t_1"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"history_length":-1,"id":"x"}}`,
	`{"jsonrpc":"2.0","id":4,"method":"ListTasks","params":{}}`,
	`{"jsonrpc":"2.0","id":5,"method":"ListTasks","params":{"pageSize":101,"status":"TASK_STATE_WORKING"}}`,
	`{"jsonrpc":"2.0","id":6,"method":"ListTasks","params":{"page_token":"bm90LWEtdG9rZW4","status_timestamp_after":"2025-01-01T00:00:00Z","include_artifacts":true}}`,
	`{"jsonrpc":"2.0","id":7,"method":"ListTasks","params":{"contextId":"c","tenant":"bad tenant!"}}`,
	`{"jsonrpc":"2.0","id":8,"method":"CancelTask","params":{"id":"0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21","metadata":{"why_not":1}}}`,
	`{"jsonrpc":"2.0","id":9,"method":"CancelTask","params":[]}`,
	`{"jsonrpc":"2.0","id":10,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_AGENT","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}}`,
	`{"jsonrpc":"2.0","id":11,"method":"SendMessage","params":{"message":{"message_id":"m2","role":"ROLE_USER","parts":[{}]},"configuration":{"return_immediately":true,"history_length":-1}}}`,
	`{"jsonrpc":"2.0","id":12,"method":"SendMessage","params":{"message":{"messageId":"m3","role":"ROLE_USER","taskId":"0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21","parts":[{"data":{"k":1}}]},"configuration":{"returnImmediately":true}}}`,
	`{"jsonrpc":"2.0","id":13,"method":"SendMessage","params":{"message":{"messageId":"m4","role":"ROLE_USER","parts":[{"text":"echo"}]},"configuration":{"returnImmediately":true,"historyLength":0}}}`,
	`{"jsonrpc":"2.0","id":14,"method":"SendStreamingMessage","params":{}}`,
	`{"jsonrpc":"2.0","id":15,"method":"GetTaskPushNotificationConfig","params":{}}`,
	`{"jsonrpc":"2.0","id":16,"method":"tasks/bogus"}`,
	`{"jsonrpc":"2.0","id":"v3","method":"tasks/get","params":{"id":"0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21"}}`,
	`{"jsonrpc":"1.0","id":17,"method":"GetTask"}`,
	`{"jsonrpc":"2.0","id":{},"method":"GetTask"}`,
	`{"jsonrpc":"2.0","id":null,"method":7}`,
	`[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`,
	`{"jsonrpc":"2.0","id":1e400,"method":"GetTask","params":{"id":"\u0000"}}`,
	`{"jsonrpc":"2.0","id":-0.5,"method":"ListTasks","params":{"pageSize":1.5}}`,
	`{"jsonrpc"`,
	``,
	`"2.0"`,
}

// FuzzJSONRPC posts arbitrary bodies (and A2A-Version headers) to the
// edge. Every answer must be HTTP 200 with one well-formed JSON-RPC 2.0
// response object: result xor error, the request's id or null, and for an
// error an integer code, a message and ErrorInfo data.
func FuzzJSONRPC(f *testing.F) {
	for _, s := range jsonrpcSeeds {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(jsonrpcSeeds[4]), "1.0")
	f.Add([]byte(jsonrpcSeeds[4]), "99.0")
	f.Add([]byte(jsonrpcSeeds[4]), "1.0.3")
	h := newFuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		ctx, cancel := context.WithTimeout(context.Background(), fuzzRequestTimeout)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if version != "" {
			req.Header[a2a.SvcParamVersion] = []string{version}
		}
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		if d := time.Since(start); d > fuzzRequestTimeout+5*time.Second {
			t.Fatalf("request took %v, past its %v deadline: %q", d, fuzzRequestTimeout, body)
		}
		checkRPCResponse(t, body, rec, ctx.Err() != nil)
	})
}

// checkRPCResponse fails unless rec holds a well-formed JSON-RPC response
// to body. expired says the request's deadline passed, which may turn any
// answer into an internal error.
func checkRPCResponse(t *testing.T, body []byte, rec *httptest.ResponseRecorder, expired bool) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status=%d, want 200; body %q", rec.Code, rec.Body.Bytes())
	}
	ct := rec.Header().Get("Content-Type")
	if ct == "text/event-stream" {
		// A streaming method that passed validation: every data line is a
		// JSON-RPC response with a result or an error.
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			var frame struct {
				JSONRPC string          `json:"jsonrpc"`
				Result  json.RawMessage `json:"result"`
				Error   json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(data), &frame); err != nil || frame.JSONRPC != "2.0" || (frame.Result == nil) == (frame.Error == nil) {
				t.Fatalf("bad SSE frame %q (%v)", data, err)
			}
		}
		return
	}
	if ct != "application/json" {
		t.Fatalf("Content-Type=%q, want application/json", ct)
	}
	var resp map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatalf("response is not a JSON object: %v; %q", err, rec.Body.Bytes())
	}
	for k := range resp {
		switch k {
		case "jsonrpc", "id", "result", "error":
		default:
			t.Fatalf("response has member %q: %s", k, rec.Body.Bytes())
		}
	}
	if string(resp["jsonrpc"]) != `"2.0"` {
		t.Fatalf("jsonrpc=%s, want \"2.0\"", resp["jsonrpc"])
	}
	id, ok := resp["id"]
	if !ok {
		t.Fatalf("response has no id: %s", rec.Body.Bytes())
	}
	_, hasResult := resp["result"]
	rawErr, hasError := resp["error"]
	if hasResult == hasError {
		t.Fatalf("response must have exactly one of result and error: %s", rec.Body.Bytes())
	}
	code := 0
	if hasError {
		var e struct {
			Code    *int   `json:"code"`
			Message string `json:"message"`
			Data    []struct {
				Type     string            `json:"@type"`
				Reason   string            `json:"reason"`
				Domain   string            `json:"domain"`
				Metadata map[string]string `json:"metadata"`
			} `json:"data"`
		}
		// v0.x errors carry the ErrorInfo as an object, v1.0 in an array.
		if i := bytes.Index(rawErr, []byte(`"data":{`)); i >= 0 {
			fixed := append([]byte{}, rawErr[:i+7]...)
			fixed = append(fixed, '[')
			end := bytes.LastIndexByte(rawErr, '}')
			fixed = append(fixed, rawErr[i+7:end]...)
			fixed = append(fixed, ']', '}')
			rawErr = fixed
		}
		dec := json.NewDecoder(bytes.NewReader(rawErr))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("malformed error object %s: %v", rawErr, err)
		}
		if e.Code == nil || e.Message == "" {
			t.Fatalf("error object without code or message: %s", rawErr)
		}
		code = *e.Code
		if len(e.Data) != 1 || e.Data[0].Type != "type.googleapis.com/google.rpc.ErrorInfo" || e.Data[0].Domain != "a2a-protocol.org" || e.Data[0].Reason != reasons[code] || e.Data[0].Reason == "" {
			t.Fatalf("error data=%s, want one ErrorInfo with reason %q", rawErr, reasons[code])
		}
		if code == codeInternal && !expired {
			t.Fatalf("internal error before the deadline: %s (request %q)", rawErr, body)
		}
	}
	// The id: null when the request's could not be read, else the
	// request's own.
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	reqOK := json.Unmarshal(body, &req) == nil && len(req.ID) > 0 && req.ID[0] != '{' && req.ID[0] != '[' && req.ID[0] != 'n' && req.ID[0] != 't' && req.ID[0] != 'f'
	switch {
	case string(id) == "null":
		if code != codeParseError && code != codeInvalidRequest {
			t.Fatalf("id null with code %d; request %q", code, body)
		}
	case !reqOK:
		t.Fatalf("id=%s for a request without a valid id: %q", id, body)
	default:
		var want bytes.Buffer
		if err := json.Compact(&want, req.ID); err != nil {
			t.Fatal(err)
		}
		if string(id) != want.String() {
			t.Fatalf("id=%s, want %s", id, want.String())
		}
	}
}

func TestJSONRPCSeeds(t *testing.T) {
	// The seeds' answers, so a change of behaviour shows up without
	// fuzzing.
	h := newFuzzHandler(t)
	want := []int{-32001, -32001, -32001, -32602, 0, -32602, -32602, -32602, -32001, -32602,
		-32602, -32602, -32001, 0, -32602, -32003, -32601, -32001, -32600, -32600, -32600,
		-32600, -32001, -32602, -32700, -32700, -32600}
	if len(want) != len(jsonrpcSeeds) {
		t.Fatalf("%d codes for %d seeds", len(want), len(jsonrpcSeeds))
	}
	for i, s := range jsonrpcSeeds {
		ctx, cancel := context.WithTimeout(context.Background(), fuzzRequestTimeout)
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", strings.NewReader(s))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkRPCResponse(t, []byte(s), rec, false)
		cancel()
		var resp struct {
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		got := 0
		if resp.Error != nil {
			got = resp.Error.Code
		}
		if got != want[i] {
			t.Errorf("seed %d %s: code=%d, want %d; %s", i, s, got, want[i], rec.Body.Bytes())
		}
	}
}

// snakeCase turns a lowerCamelCase protocol key into snake_case.
func snakeCase(k string) string {
	var b strings.Builder
	for _, r := range k {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// snakeTwin returns v with every protocol key in snake_case; values under
// metadata and data are client data and keep their keys. ok is false if
// the twin would lose a key (two keys with one snake_case form).
func snakeTwin(v any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			sk := snakeCase(k)
			if _, dup := out[sk]; dup {
				return nil, false
			}
			if freeForm[k] {
				out[sk] = val
				continue
			}
			tv, ok := snakeTwin(val)
			if !ok {
				return nil, false
			}
			out[sk] = tv
		}
		return out, true
	case []any:
		out := make([]any, len(t))
		for i := range t {
			tv, ok := snakeTwin(t[i])
			if !ok {
				return nil, false
			}
			out[i] = tv
		}
		return out, true
	}
	return v, true
}

// protocolKeysCamel reports whether every key outside metadata and data
// is lowerCamelCase (no underscore, not starting upper case) and maps back
// from its snake_case form.
func protocolKeysCamel(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if strings.Contains(k, "_") || snakeToCamel(snakeCase(k)) != k {
				return false
			}
			if freeForm[k] {
				continue
			}
			if !protocolKeysCamel(val) {
				return false
			}
		}
	case []any:
		for _, e := range t {
			if !protocolKeysCamel(e) {
				return false
			}
		}
	}
	return true
}

var paramsSeeds = []string{
	`{"message":{"messageId":"m","role":"ROLE_USER","contextId":"c","taskId":"t","referenceTaskIds":["a"],"parts":[{"text":"hi","mediaType":"text/plain","metadata":{"snake_key":1,"camelKey":2}},{"data":{"deep_key":{"x_y":1}}},{"url":"https://e.x/f","filename":"f_1"},{"raw":"AAE="}],"metadata":{"a_b":{"c_d":true}},"extensions":["e_1"]},"configuration":{"returnImmediately":true,"historyLength":3,"acceptedOutputModes":["text/plain"]},"metadata":{"trace_id":"x"},"tenant":"t_1"}`,
	`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"snake_in_value"}]}}`,
	`{"configuration":{"taskPushNotificationConfig":{"url":"https://e.x","token":"t"}}}`,
	`{"metadata":null,"message":{"parts":[{"data":[{"k_1":null}]}]}}`,
	`{"message_id":"x","messageId":"y"}`,
	`{"configuration":{"historyLength":1.0}}`,
	`{"configuration":{"historyLength":9007199254740993}}`,
	`[]`,
	`{"_":{"__":"___"}}`,
}

// FuzzDecodeParams checks the snake_case normaliser: decodeParams must not
// panic, and a camelCase SendMessageRequest and its snake_case twin decode
// alike, keys under metadata and data kept verbatim.
func FuzzDecodeParams(f *testing.F) {
	for _, s := range paramsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var direct a2a.SendMessageRequest
		_ = decodeParams(raw, &direct)
		// The twin keeps number literals as they are (UseNumber): a
		// client's 2.0 is the same 2.0 in either spelling.
		var tree any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&tree) != nil || dec.InputOffset() != int64(len(bytes.TrimRight(raw, " \t\r\n"))) || !protocolKeysCamel(tree) {
			return
		}
		twin, ok := snakeTwin(tree)
		if !ok {
			return
		}
		camelJSON, err := json.Marshal(tree)
		if err != nil {
			t.Fatal(err)
		}
		snakeJSON, err := json.Marshal(twin)
		if err != nil {
			t.Fatal(err)
		}
		var fromCamel, fromSnake a2a.SendMessageRequest
		errCamel := decodeParams(camelJSON, &fromCamel)
		errSnake := decodeParams(snakeJSON, &fromSnake)
		if (errCamel == nil) != (errSnake == nil) {
			t.Fatalf("camelCase %s: %v; snake_case %s: %v", camelJSON, errCamel, snakeJSON, errSnake)
		}
		if errCamel != nil {
			return
		}
		if !reflect.DeepEqual(fromCamel, fromSnake) {
			c, _ := json.Marshal(fromCamel)
			s, _ := json.Marshal(fromSnake)
			t.Fatalf("camelCase %s decodes to %s; snake_case %s to %s", camelJSON, c, snakeJSON, s)
		}
	})
}

// TestDecodeParamsDuplicateSpellings sends one field under both its
// spellings. Whichever wins, or an error, the answer must be the same
// every time.
func TestDecodeParamsDuplicateSpellings(t *testing.T) {
	raw := json.RawMessage(`{"message":{"message_id":"snake","messageId":"camel","role":"ROLE_USER","parts":[{"text":"hi"}]}}`)
	var first a2a.SendMessageRequest
	firstErr := decodeParams(raw, &first)
	for range 64 {
		var p a2a.SendMessageRequest
		err := decodeParams(raw, &p)
		if (err == nil) != (firstErr == nil) || !reflect.DeepEqual(p, first) {
			t.Fatalf("decodeParams() is not deterministic: got (%+v, %v), earlier (%+v, %v)", p.Message, err, first.Message, firstErr)
		}
	}
}

func TestDecodeParamsKeepsFreeFormKeys(t *testing.T) {
	raw := json.RawMessage(`{"message":{"message_id":"m","role":"ROLE_USER","parts":[{"data":{"deep_key":{"x_y":1}},"metadata":{"part_key":"v"}}],"metadata":{"a_b":{"c_d":true}}},"configuration":{"return_immediately":true,"history_length":2},"metadata":{"trace_id":"x"}}`)
	var p a2a.SendMessageRequest
	if err := decodeParams(raw, &p); err != nil {
		t.Fatalf("decodeParams()=%v", err)
	}
	if p.Message == nil || p.Message.ID != "m" || p.Message.Role != a2a.MessageRoleUser {
		t.Fatalf("decodeParams() message=%+v, want messageId m, ROLE_USER", p.Message)
	}
	if p.Config == nil || !p.Config.ReturnImmediately || p.Config.HistoryLength == nil || *p.Config.HistoryLength != 2 {
		t.Fatalf("decodeParams() configuration=%+v, want returnImmediately, historyLength 2", p.Config)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"params metadata", p.Metadata, map[string]any{"trace_id": "x"}},
		{"message metadata", p.Message.Metadata, map[string]any{"a_b": map[string]any{"c_d": true}}},
		{"data part", p.Message.Parts[0].Data(), map[string]any{"deep_key": map[string]any{"x_y": 1.0}}},
		{"part metadata", p.Message.Parts[0].Metadata, map[string]any{"part_key": "v"}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s=%v, want %v", c.name, c.got, c.want)
		}
	}
}
