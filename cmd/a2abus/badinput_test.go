package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// badInputCase is one raw JSON-RPC POST and the answer it must get.
type badInputCase struct {
	name    string
	body    string
	raw     []byte            // the body, when it is too big to write inline
	headers map[string]string // extra request headers
	// wantCode is the JSON-RPC error code; 0 means a result.
	wantCode int
	// wantID is the response id as JSON.
	wantID string
	// wantTaskID, if set, is the taskId the error's ErrorInfo metadata
	// must name.
	wantTaskID string
	// writes marks a request that may append to the event stream: it
	// runs after the check that bad input changed nothing.
	writes bool
}

// badInputReasons are the ErrorInfo reasons of the codes the table uses.
var badInputReasons = map[int]string{
	-32700: "PARSE_ERROR",
	-32600: "INVALID_REQUEST",
	-32601: "METHOD_NOT_FOUND",
	-32602: "INVALID_PARAMS",
	-32603: "INTERNAL_ERROR",
	-32001: "TASK_NOT_FOUND",
	-32002: "TASK_NOT_CANCELABLE",
	-32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
	-32004: "UNSUPPORTED_OPERATION",
	-32009: "VERSION_NOT_SUPPORTED",
}

// rpcBody returns a request with id 1 for method and params (raw JSON).
func rpcBody(method, params string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
}

// unknownTask is a well-formed task id no task has.
const unknownTask = "0197a0c4-7f0e-7d2a-9a51-3c1b0a9e7f21"

// badInputCases returns the table. done is a COMPLETED task; asking is an
// INPUT_REQUIRED task.
func badInputCases(done, asking setupTask) []badInputCase {
	big := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"big","role":"ROLE_USER","parts":[{"text":"` +
		strings.Repeat("x", 2<<20) + `"}]},"configuration":{"returnImmediately":true}}}`
	msg := func(m string) string {
		return rpcBody("SendMessage", `{"message":`+m+`,"configuration":{"returnImmediately":true}}`)
	}
	return []badInputCase{
		// Envelopes.
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":1,"method":`, wantCode: -32700, wantID: "null"},
		{name: "trailing garbage", body: `{"jsonrpc":"2.0","id":1,"method":"GetTask"} x`, wantCode: -32700, wantID: "null"},
		{name: "empty body", body: ``, wantCode: -32700, wantID: "null"},
		{name: "whitespace body", body: " \n\t", wantCode: -32700, wantID: "null"},
		{name: "batch", body: `[` + rpcBody("GetTask", `{"id":"x"}`) + `]`, wantCode: -32600, wantID: "null"},
		{name: "JSON string", body: `"SendMessage"`, wantCode: -32600, wantID: "null"},
		{name: "jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}`, wantCode: -32600, wantID: "1"},
		{name: "jsonrpc missing", body: `{"id":"abc","method":"GetTask","params":{"id":"x"}}`, wantCode: -32600, wantID: `"abc"`},
		{name: "jsonrpc number", body: `{"jsonrpc":2.0,"id":1,"method":"GetTask","params":{"id":"x"}}`, wantCode: -32600, wantID: "1"},
		{name: "method missing", body: `{"jsonrpc":"2.0","id":1,"params":{"id":"x"}}`, wantCode: -32600, wantID: "1"},
		{name: "method number", body: `{"jsonrpc":"2.0","id":1,"method":7}`, wantCode: -32600, wantID: "1"},
		{name: "method empty", body: `{"jsonrpc":"2.0","id":1,"method":""}`, wantCode: -32600, wantID: "1"},
		{name: "object id", body: `{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask","params":{"id":"x"}}`, wantCode: -32600, wantID: "null"},
		{name: "array id", body: `{"jsonrpc":"2.0","id":[1],"method":"GetTask","params":{"id":"x"}}`, wantCode: -32600, wantID: "null"},
		{name: "null id", body: `{"jsonrpc":"2.0","id":null,"method":"GetTask","params":{"id":"x"}}`, wantCode: -32600, wantID: "null"},
		{name: "bool id", body: `{"jsonrpc":"2.0","id":true,"method":"GetTask","params":{"id":"x"}}`, wantCode: -32600, wantID: "null"},
		{name: "missing id", body: `{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"n1","role":"ROLE_USER","parts":[{"text":"echo hi"}]},"configuration":{"returnImmediately":true}}}`, wantCode: -32600, wantID: "null"},
		{name: "unknown method", body: rpcBody("tasks/bogus", `{}`), wantCode: -32601, wantID: "1"},
		{name: "v0.3 method name under A2A-Version 1.0", body: rpcBody("message/send", `{}`), headers: map[string]string{"A2A-Version": "1.0"}, wantCode: -32601, wantID: "1"},
		{name: "v1.0 method name under A2A-Version 0.3", body: rpcBody("GetTask", `{"id":"x"}`), headers: map[string]string{"A2A-Version": "0.3"}, wantCode: -32601, wantID: "1"},
		{name: "oversized body", raw: []byte(big), wantCode: -32600, wantID: "null"},

		// Versions.
		{name: "A2A-Version 99.0", body: rpcBody("ListTasks", `{}`), headers: map[string]string{"A2A-Version": "99.0"}, wantCode: -32009, wantID: "1"},
		{name: "A2A-Version 1.1", body: rpcBody("GetTask", `{"id":"x"}`), headers: map[string]string{"A2A-Version": "1.1"}, wantCode: -32009, wantID: "1"},
		{name: "A2A-Version 1.0", body: rpcBody("ListTasks", `{}`), headers: map[string]string{"A2A-Version": "1.0"}, wantID: "1"},
		{name: "A2A-Version 1.0.3", body: rpcBody("ListTasks", `{}`), headers: map[string]string{"A2A-Version": "1.0.3"}, wantID: "1"},

		// SendMessage params.
		{name: "params array", body: rpcBody("SendMessage", `[{"message":{}}]`), wantCode: -32602, wantID: "1"},
		{name: "params string", body: rpcBody("SendMessage", `"hi"`), wantCode: -32602, wantID: "1"},
		{name: "params missing", body: `{"jsonrpc":"2.0","id":"s","method":"SendMessage"}`, wantCode: -32602, wantID: `"s"`},
		{name: "params null", body: rpcBody("SendMessage", `null`), wantCode: -32602, wantID: "1"},
		{name: "message missing", body: rpcBody("SendMessage", `{"configuration":{"returnImmediately":true}}`), wantCode: -32602, wantID: "1"},
		{name: "message not an object", body: msg(`"hi"`), wantCode: -32602, wantID: "1"},
		{name: "parts empty", body: msg(`{"messageId":"b1","role":"ROLE_USER","parts":[]}`), wantCode: -32602, wantID: "1"},
		{name: "parts missing", body: msg(`{"messageId":"b2","role":"ROLE_USER"}`), wantCode: -32602, wantID: "1"},
		{name: "role agent", body: msg(`{"messageId":"b3","role":"ROLE_AGENT","parts":[{"text":"echo hi"}]}`), wantCode: -32602, wantID: "1"},
		{name: "role missing", body: msg(`{"messageId":"b4","parts":[{"text":"echo hi"}]}`), wantCode: -32602, wantID: "1"},
		{name: "role v0.3 user", body: msg(`{"messageId":"b5","role":"user","parts":[{"text":"echo hi"}]}`), wantCode: -32602, wantID: "1"},
		{name: "messageId missing", body: msg(`{"role":"ROLE_USER","parts":[{"text":"echo hi"}]}`), wantCode: -32602, wantID: "1"},
		{name: "messageId too long", body: msg(`{"messageId":"` + strings.Repeat("m", 257) + `","role":"ROLE_USER","parts":[{"text":"echo hi"}]}`), wantCode: -32602, wantID: "1"},
		{name: "part without content", body: msg(`{"messageId":"b6","role":"ROLE_USER","parts":[{"mediaType":"text/plain"}]}`), wantCode: -32602, wantID: "1"},
		{name: "part null", body: msg(`{"messageId":"b7","role":"ROLE_USER","parts":[null]}`), wantCode: -32602, wantID: "1"},
		{name: "part with two contents", body: msg(`{"messageId":"b8","role":"ROLE_USER","parts":[{"text":"a","url":"https://e.x"}]}`), wantCode: -32602, wantID: "1"},
		{name: "historyLength -1", body: rpcBody("SendMessage", `{"message":{"messageId":"b9","role":"ROLE_USER","parts":[{"text":"echo hi"}]},"configuration":{"returnImmediately":true,"historyLength":-1}}`), wantCode: -32602, wantID: "1"},
		{name: "push config to a loopback webhook", body: rpcBody("SendMessage", `{"message":{"messageId":"b10","role":"ROLE_USER","parts":[{"text":"echo hi"}]},"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"url":"http://127.0.0.1:9/hook"}}}`), wantCode: -32602, wantID: "1"},
		{name: "push config without url", body: rpcBody("SendMessage", `{"message":{"messageId":"b11","role":"ROLE_USER","parts":[{"text":"echo hi"}]},"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"token":"t"}}}`), wantCode: -32602, wantID: "1"},
		{name: "send bad tenant", body: rpcBody("SendMessage", `{"tenant":"bad tenant!","message":{"messageId":"b11","role":"ROLE_USER","parts":[{"text":"echo hi"}]},"configuration":{"returnImmediately":true}}`), wantCode: -32602, wantID: "1"},
		{name: "follow-up to unknown task", body: msg(`{"messageId":"b12","role":"ROLE_USER","taskId":"` + unknownTask + `","parts":[{"text":"more"}]}`), wantCode: -32001, wantID: "1", wantTaskID: unknownTask},
		{name: "follow-up to a wildcard task id", body: msg(`{"messageId":"b13","role":"ROLE_USER","taskId":"a.b.>","parts":[{"text":"more"}]}`), wantCode: -32001, wantID: "1", wantTaskID: "a.b.>"},
		{name: "follow-up to a completed task", body: msg(`{"messageId":"b14","role":"ROLE_USER","taskId":"` + done.ID + `","parts":[{"text":"more"}]}`), wantCode: -32004, wantID: "1", wantTaskID: done.ID},
		{name: "follow-up with another contextId", body: msg(`{"messageId":"b15","role":"ROLE_USER","taskId":"` + asking.ID + `","contextId":"not-` + asking.ContextID + `","parts":[{"text":"Ann"}]}`), wantCode: -32602, wantID: "1", wantTaskID: asking.ID},
		{name: "follow-up in another tenant", body: rpcBody("SendMessage", `{"tenant":"other","message":{"messageId":"b16","role":"ROLE_USER","taskId":"`+asking.ID+`","parts":[{"text":"Ann"}]},"configuration":{"returnImmediately":true}}`), wantCode: -32001, wantID: "1", wantTaskID: asking.ID},
		{name: "streaming without message", body: rpcBody("SendStreamingMessage", `{}`), wantCode: -32602, wantID: "1"},

		// GetTask.
		{name: "get id missing", body: rpcBody("GetTask", `{}`), wantCode: -32602, wantID: "1"},
		{name: "get id number", body: rpcBody("GetTask", `{"id":5}`), wantCode: -32602, wantID: "1"},
		{name: "get unknown id", body: rpcBody("GetTask", `{"id":"`+unknownTask+`"}`), wantCode: -32001, wantID: "1", wantTaskID: unknownTask},
		{name: "get wildcard id", body: rpcBody("GetTask", `{"id":"a.b.>"}`), wantCode: -32001, wantID: "1", wantTaskID: "a.b.>"},
		{name: "get star id", body: rpcBody("GetTask", `{"id":"*"}`), wantCode: -32001, wantID: "1", wantTaskID: "*"},
		{name: "get id with spaces", body: rpcBody("GetTask", `{"id":"a b"}`), wantCode: -32001, wantID: "1", wantTaskID: "a b"},
		{name: "get in another tenant", body: rpcBody("GetTask", `{"id":"`+done.ID+`","tenant":"other"}`), wantCode: -32001, wantID: "1", wantTaskID: done.ID},
		{name: "get historyLength -1", body: rpcBody("GetTask", `{"id":"`+unknownTask+`","historyLength":-1}`), wantCode: -32602, wantID: "1"},
		{name: "get bad tenant", body: rpcBody("GetTask", `{"id":"`+unknownTask+`","tenant":"bad tenant!"}`), wantCode: -32602, wantID: "1"},
		{name: "get wildcard tenant", body: rpcBody("GetTask", `{"id":"`+unknownTask+`","tenant":">"}`), wantCode: -32602, wantID: "1"},

		// CancelTask.
		{name: "cancel unknown id", body: rpcBody("CancelTask", `{"id":"`+unknownTask+`"}`), wantCode: -32001, wantID: "1", wantTaskID: unknownTask},
		{name: "cancel wildcard id", body: rpcBody("CancelTask", `{"id":"a.*.>"}`), wantCode: -32001, wantID: "1", wantTaskID: "a.*.>"},
		{name: "cancel a completed task", body: rpcBody("CancelTask", `{"id":"`+done.ID+`"}`), wantCode: -32002, wantID: "1", wantTaskID: done.ID},
		{name: "cancel in another tenant", body: rpcBody("CancelTask", `{"id":"`+asking.ID+`","tenant":"other"}`), wantCode: -32001, wantID: "1", wantTaskID: asking.ID},
		{name: "cancel id missing", body: rpcBody("CancelTask", `{}`), wantCode: -32602, wantID: "1"},

		// ListTasks.
		{name: "list pageSize 101", body: rpcBody("ListTasks", `{"pageSize":101}`), wantCode: -32602, wantID: "1"},
		{name: "list pageSize -5", body: rpcBody("ListTasks", `{"pageSize":-5}`), wantCode: -32602, wantID: "1"},
		{name: "list bad pageToken", body: rpcBody("ListTasks", `{"pageToken":"not a token"}`), wantCode: -32602, wantID: "1"},
		{name: "list bad status", body: rpcBody("ListTasks", `{"status":"TASK_STATE_BOGUS"}`), wantCode: -32602, wantID: "1"},
		{name: "list v0.3 status", body: rpcBody("ListTasks", `{"status":"working"}`), wantCode: -32602, wantID: "1"},
		{name: "list statusTimestampAfter yesterday", body: rpcBody("ListTasks", `{"statusTimestampAfter":"yesterday"}`), wantCode: -32602, wantID: "1"},
		{name: "list historyLength -1", body: rpcBody("ListTasks", `{"historyLength":-1}`), wantCode: -32602, wantID: "1"},
		{name: "list bad tenant", body: rpcBody("ListTasks", `{"tenant":"bad tenant!"}`), wantCode: -32602, wantID: "1"},
		{name: "list tenant too long", body: rpcBody("ListTasks", `{"tenant":"`+strings.Repeat("t", 65)+`"}`), wantCode: -32602, wantID: "1"},

		// Writes, after the no-change check.
		{name: "snake_case params", body: `{"jsonrpc":"2.0","id":"snake","method":"SendMessage","params":{"message":{"message_id":"snake-1","role":"ROLE_USER","parts":[{"text":"echo hi"}]},"configuration":{"return_immediately":true}}}`, wantID: `"snake"`, writes: true},
	}
}

// postRPC posts body to url with the given headers and returns the
// decoded response after checking the HTTP-level rules every JSON-RPC
// answer follows.
func postRPC(t *testing.T, url string, body []byte, headers map[string]string) map[string]json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP status=%d, want 200; body %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type=%q, want application/json", ct)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("response is not a JSON object: %v; %s", err, b)
	}
	if string(out["jsonrpc"]) != `"2.0"` {
		t.Fatalf("jsonrpc=%s, want \"2.0\"; %s", out["jsonrpc"], b)
	}
	return out
}

// checkBadInput runs one case against url.
func checkBadInput(t *testing.T, url string, tc badInputCase) {
	t.Helper()
	body := tc.raw
	if body == nil {
		body = []byte(tc.body)
	}
	resp := postRPC(t, url, body, tc.headers)
	if got := string(resp["id"]); got != tc.wantID {
		t.Errorf("id=%s, want %s", got, tc.wantID)
	}
	_, hasResult := resp["result"]
	rawErr, hasError := resp["error"]
	if tc.wantCode == 0 {
		if !hasResult || hasError {
			t.Fatalf("want a result, got error %s", rawErr)
		}
		return
	}
	if hasResult || !hasError {
		t.Fatalf("want error %d, got result %s", tc.wantCode, resp["result"])
	}
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    []struct {
			Type     string            `json:"@type"`
			Reason   string            `json:"reason"`
			Domain   string            `json:"domain"`
			Metadata map[string]string `json:"metadata"`
		} `json:"data"`
	}
	// v0.x requests (a v0.x method name, or no v1.0 name without a
	// version header) get the ErrorInfo as an object, v1.0 in an array.
	var v0x struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(rawErr, &v0x) == nil && len(v0x.Data) > 0 && v0x.Data[0] == '{' {
		rawErr = bytes.Replace(rawErr, v0x.Data, append(append([]byte{'['}, v0x.Data...), ']'), 1)
	}
	if err := json.Unmarshal(rawErr, &e); err != nil {
		t.Fatalf("error object %s: %v", rawErr, err)
	}
	if e.Code != tc.wantCode {
		t.Fatalf("code=%d, want %d; error %s", e.Code, tc.wantCode, rawErr)
	}
	if e.Message == "" {
		t.Errorf("error without message: %s", rawErr)
	}
	if len(e.Data) == 0 {
		t.Fatalf("error without data: %s", rawErr)
	}
	info := e.Data[0]
	if info.Type != "type.googleapis.com/google.rpc.ErrorInfo" || info.Domain != "a2a-protocol.org" || info.Reason != badInputReasons[tc.wantCode] {
		t.Errorf("data[0]=%+v, want ErrorInfo, domain a2a-protocol.org, reason %s", info, badInputReasons[tc.wantCode])
	}
	if tc.wantTaskID != "" && info.Metadata["taskId"] != tc.wantTaskID {
		t.Errorf("data[0].metadata.taskId=%q, want %q", info.Metadata["taskId"], tc.wantTaskID)
	}
}

// setupTask is a task made before the table runs.
type setupTask struct {
	ID, ContextID, State string
}

// sendBlocking sends text in a new task and waits for the demo agent to
// complete or interrupt it.
func sendBlocking(t *testing.T, url, messageID, text string) setupTask {
	t.Helper()
	resp := postRPC(t, url, []byte(rpcBody("SendMessage", `{"message":{"messageId":"`+messageID+`","role":"ROLE_USER","parts":[{"text":"`+text+`"}]}}`)), nil)
	var r struct {
		Task struct {
			ID        string `json:"id"`
			ContextID string `json:"contextId"`
			Status    struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(resp["result"], &r); err != nil || r.Task.ID == "" {
		t.Fatalf("SendMessage %q: %s %s (%v)", text, resp["result"], resp["error"], err)
	}
	return setupTask{ID: r.Task.ID, ContextID: r.Task.ContextID, State: r.Task.Status.State}
}

// streamState is what a write to the event stream changes.
type streamState struct{ LastSeq, Msgs uint64 }

func readStreamState(t *testing.T, s jetstream.Stream) streamState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	return streamState{LastSeq: info.State.LastSeq, Msgs: info.State.Msgs}
}

// TestBadInput posts malformed and invalid requests to a running server:
// each gets its exact JSON-RPC error, and together they leave the event
// stream as it was.
func TestBadInput(t *testing.T) {
	ts := startServer(t, nil)
	nc, err := nats.Connect(ts.NATSURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, "A2A_EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	url := ts.URL + "/"

	// Tasks the table refers to. Blocking sends return once the demo
	// agent has written its last event for now, so the stream is still.
	done := sendBlocking(t, url, "setup-echo", "echo hi")
	asking := sendBlocking(t, url, "setup-ask", "ask")
	if done.State != "TASK_STATE_COMPLETED" || asking.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("setup tasks in %s and %s, want TASK_STATE_COMPLETED and TASK_STATE_INPUT_REQUIRED", done.State, asking.State)
	}

	cases := badInputCases(done, asking)
	before := readStreamState(t, stream)
	for _, tc := range cases {
		if tc.writes {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			was := readStreamState(t, stream)
			checkBadInput(t, url, tc)
			if now := readStreamState(t, stream); now != was {
				t.Errorf("the request changed the event stream: %+v, want %+v", now, was)
			}
		})
	}
	after := readStreamState(t, stream)
	if after != before {
		t.Errorf("bad input changed the event stream: %+v, want %+v", after, before)
	}

	// The check can fail: a valid request moves the stream.
	for _, tc := range cases {
		if !tc.writes {
			continue
		}
		t.Run(tc.name, func(t *testing.T) { checkBadInput(t, url, tc) })
	}
	if got := readStreamState(t, stream); got.LastSeq <= after.LastSeq || got.Msgs <= after.Msgs {
		t.Errorf("event stream after a SendMessage=%+v, want more than %+v", got, after)
	}
}
