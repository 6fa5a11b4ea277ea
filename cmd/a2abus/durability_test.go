package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

var rpcID atomic.Int64

// call posts one JSON-RPC request to url and returns its result.
func call(url, method string, params any) (json.RawMessage, error) {
	id := rpcID.Add(1)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: read response: %w", method, err)
	}
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *rpcError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d, undecodable response %q: %w", method, resp.StatusCode, raw, err)
	}
	if r.JSONRPC != "2.0" || string(r.ID) != strconv.FormatInt(id, 10) {
		return nil, fmt.Errorf("%s: response jsonrpc=%q id=%s, want 2.0 and %d", method, r.JSONRPC, r.ID, id)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, r.Error)
	}
	if len(r.Result) == 0 {
		return nil, fmt.Errorf("%s: response has neither result nor error: %s", method, raw)
	}
	return r.Result, nil
}

func mustCall(t *testing.T, url, method string, params any) json.RawMessage {
	t.Helper()
	res, err := call(url, method, params)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Just enough of the v1.0 JSON shapes for the checks.
type (
	partJSON struct {
		Text string `json:"text"`
	}
	messageJSON struct {
		MessageID string     `json:"messageId"`
		Role      string     `json:"role"`
		Parts     []partJSON `json:"parts"`
	}
	artifactJSON struct {
		ArtifactID string     `json:"artifactId"`
		Name       string     `json:"name"`
		Parts      []partJSON `json:"parts"`
	}
	taskJSON struct {
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State   string       `json:"state"`
			Message *messageJSON `json:"message"`
		} `json:"status"`
		History   []messageJSON  `json:"history"`
		Artifacts []artifactJSON `json:"artifacts"`
	}
)

func (m messageJSON) text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (a artifactJSON) text() string { return messageJSON{Parts: a.Parts}.text() }

func decodeTask(t *testing.T, raw json.RawMessage) taskJSON {
	t.Helper()
	var task taskJSON
	if err := json.Unmarshal(raw, &task); err != nil {
		t.Fatalf("decode task %s: %v", raw, err)
	}
	return task
}

// decodeAny decodes raw into generic JSON values, for comparisons that
// take every field into account.
func decodeAny(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

func userMessage(id, text string) map[string]any {
	return map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
}

// send sends a message and returns the task of the SendMessage result.
func send(t *testing.T, url string, msg map[string]any, returnImmediately bool) taskJSON {
	t.Helper()
	params := map[string]any{"message": msg}
	if returnImmediately {
		params["configuration"] = map[string]any{"returnImmediately": true}
	}
	var res struct {
		Task json.RawMessage `json:"task"`
	}
	raw := mustCall(t, url, "SendMessage", params)
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Task) == 0 {
		t.Fatalf("SendMessage result %s: want {\"task\": ...} (err %v)", raw, err)
	}
	return decodeTask(t, res.Task)
}

func getTask(t *testing.T, url, id string) json.RawMessage {
	t.Helper()
	return mustCall(t, url, "GetTask", map[string]any{"id": id})
}

// poll calls cond every pollEvery until it returns true, and fails the
// test if that takes longer than d. cond's last note goes into the
// failure message.
func poll(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		ok, note := cond()
		if ok {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("%s: not within %v; last: %s", what, d, note)
		}
	}
}

// progressRE matches the slow skill's progress messages.
var progressRE = regexp.MustCompile(`^progress (\d+)/(\d+)$`)

// progressOf returns the numbers of the task's progress messages, in
// history order, and fails on a malformed one.
func progressOf(t *testing.T, task taskJSON, total int) []int {
	t.Helper()
	var ns []int
	for _, m := range task.History {
		txt := m.text()
		if m.Role != "ROLE_AGENT" || !strings.HasPrefix(txt, "progress ") {
			continue
		}
		sm := progressRE.FindStringSubmatch(txt)
		if sm == nil {
			t.Fatalf("task %s: malformed progress message %q", task.ID, txt)
		}
		n, _ := strconv.Atoi(sm[1])
		if of, _ := strconv.Atoi(sm[2]); of != total || n < 1 || n > total {
			t.Fatalf("task %s: progress message %q, want i/%d with 1<=i<=%d", task.ID, txt, total, total)
		}
		ns = append(ns, n)
	}
	return ns
}

// TestDurabilitySIGKILL kills a2abus serve with SIGKILL while a task is
// mid-work, restarts it on the same data directory, and checks that no
// accepted work is lost: every task reads back as before, the interrupted
// task resumes where it stopped and completes, a task waiting for input
// still takes it, and a message id seen before the crash still names its
// task. Then it checks the restarted server shuts down cleanly on SIGTERM.
func TestDurabilitySIGKILL(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	msgID := func(name string) string { return "durability-" + run + "-" + name }

	first := startProc(t, "first a2abus", bin, data)

	// Tasks of every kind: finished, waiting for input, canceled, and
	// one in the middle of its work at the kill.
	var order []string // every task id created, in order
	var echoIDs []string
	for i := range 5 {
		task := send(t, first.URL, userMessage(msgID(fmt.Sprintf("echo-%d", i)), fmt.Sprintf("echo hello %d", i)), false)
		if task.Status.State != "TASK_STATE_COMPLETED" {
			t.Fatalf("echo task %d: state %s, want TASK_STATE_COMPLETED", i, task.Status.State)
		}
		echoIDs = append(echoIDs, task.ID)
		order = append(order, task.ID)
	}
	ask := send(t, first.URL, userMessage(msgID("ask"), "ask"), false)
	if ask.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("ask task: state %s, want TASK_STATE_INPUT_REQUIRED", ask.Status.State)
	}
	order = append(order, ask.ID)

	canceled := send(t, first.URL, userMessage(msgID("slow-30"), "slow 30"), true)
	order = append(order, canceled.ID)
	if got := decodeTask(t, mustCall(t, first.URL, "CancelTask", map[string]any{"id": canceled.ID})); got.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask(%s): state %s, want TASK_STATE_CANCELED", canceled.ID, got.Status.State)
	}

	const slowSecs = 4
	slow := send(t, first.URL, userMessage(msgID("slow-4"), fmt.Sprintf("slow %d", slowSecs)), true)
	order = append(order, slow.ID)
	poll(t, midWorkTimeout, "slow task mid-work", func() (bool, string) {
		raw := getTask(t, first.URL, slow.ID)
		task := decodeTask(t, raw)
		if task.Status.State != "TASK_STATE_WORKING" && task.Status.State != "TASK_STATE_SUBMITTED" {
			t.Fatalf("slow task ended before the kill (make it longer): %s", raw)
		}
		return task.Status.State == "TASK_STATE_WORKING" && task.Status.Message != nil &&
			strings.HasPrefix(task.Status.Message.text(), "progress "), string(raw)
	})

	// What the server has told clients before the crash.
	before := make(map[string]json.RawMessage, len(order))
	for _, id := range order {
		before[id] = getTask(t, first.URL, id)
	}
	slowBefore := decodeTask(t, before[slow.ID])
	if slowBefore.Status.State != "TASK_STATE_WORKING" {
		t.Fatalf("slow task not working at the kill: %s", before[slow.ID])
	}
	doneBefore := len(progressOf(t, slowBefore, slowSecs))
	if doneBefore == 0 || doneBefore >= slowSecs {
		t.Fatalf("slow task has %d of %d progress messages before the kill, want some but not all", doneBefore, slowSecs)
	}

	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	err := first.waitExit(killTimeout)
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("first a2abus exit: %v, want killed by SIGKILL", err)
	}
	t.Logf("killed the first a2abus with the slow task at progress %d/%d", doneBefore, slowSecs)

	second := startProc(t, "second a2abus", bin, data)

	t.Run("tasks survive", func(t *testing.T) {
		for _, id := range order {
			raw := getTask(t, second.URL, id)
			if id == slow.ID {
				after := decodeAny(t, raw)
				was := decodeAny(t, before[id])
				for _, k := range []string{"id", "contextId"} {
					if !reflect.DeepEqual(after[k], was[k]) {
						t.Errorf("slow task %s after restart: %s=%v, want %v", id, k, after[k], was[k])
					}
				}
				hAfter, _ := after["history"].([]any)
				hBefore, _ := was["history"].([]any)
				if len(hAfter) < len(hBefore) || !reflect.DeepEqual(hAfter[:len(hBefore)], hBefore) {
					t.Errorf("slow task %s: history before the kill is not a prefix of the history after\nbefore: %s\nafter:  %s", id, before[id], raw)
				}
				if st := decodeTask(t, raw).Status.State; st != "TASK_STATE_WORKING" && st != "TASK_STATE_COMPLETED" {
					t.Errorf("slow task %s after restart: state %s, want WORKING or COMPLETED", id, st)
				}
				continue
			}
			// A settled task reads back exactly as before: id, context,
			// status (state, message, timestamp), history and artifacts.
			if after, was := decodeAny(t, raw), decodeAny(t, before[id]); !reflect.DeepEqual(after, was) {
				t.Errorf("task %s changed across the restart\nbefore: %s\nafter:  %s", id, before[id], raw)
			}
		}
	})

	t.Run("ListTasks counts every task", func(t *testing.T) {
		var list struct {
			Tasks []struct {
				ID string `json:"id"`
			} `json:"tasks"`
			TotalSize int `json:"totalSize"`
		}
		raw := mustCall(t, second.URL, "ListTasks", map[string]any{})
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatalf("decode ListTasks result %s: %v", raw, err)
		}
		if list.TotalSize != len(order) {
			t.Errorf("ListTasks totalSize=%d, want %d", list.TotalSize, len(order))
		}
		var got []string
		for _, task := range list.Tasks {
			got = append(got, task.ID)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(order))
		if !slices.Equal(got, want) {
			t.Errorf("ListTasks ids=%v, want %v", got, want)
		}
	})

	t.Run("slow task resumes and completes", func(t *testing.T) {
		var done taskJSON
		poll(t, resumeTimeout, "slow task completed after the restart", func() (bool, string) {
			raw := getTask(t, second.URL, slow.ID)
			done = decodeTask(t, raw)
			switch done.Status.State {
			case "TASK_STATE_COMPLETED":
				return true, string(raw)
			case "TASK_STATE_WORKING", "TASK_STATE_SUBMITTED":
				return false, string(raw)
			}
			t.Fatalf("slow task after the restart: %s", raw)
			return false, ""
		})
		// Every step 1..N is there, in order. The step in flight at the
		// kill may appear twice (once from the killed worker if its append
		// reached the stream, once from the resumed one), so a duplicate
		// is accepted for steps the client had not yet seen before the
		// kill, never for ones it had.
		ns := progressOf(t, done, slowSecs)
		if !slices.IsSorted(ns) {
			t.Errorf("progress out of order: %v", ns)
		}
		if got := slices.Compact(slices.Clone(ns)); !slices.Equal(got, []int{1, 2, 3, 4}) {
			t.Errorf("progress steps %v, want each of 1..%d", ns, slowSecs)
		}
		for i := 1; i < len(ns); i++ {
			if ns[i] == ns[i-1] {
				if ns[i] <= doneBefore {
					t.Errorf("progress %d/%d repeated after the restart, though it was recorded before the kill: %v", ns[i], slowSecs, ns)
				} else {
					t.Logf("progress %d/%d, in flight at the kill, appears twice: %v", ns[i], slowSecs, ns)
				}
			}
		}
		i := slices.IndexFunc(done.Artifacts, func(a artifactJSON) bool { return a.Name == "result" })
		if i < 0 {
			t.Fatalf("completed slow task has no artifact \"result\": %+v", done.Artifacts)
		}
		if got, want := done.Artifacts[i].text(), fmt.Sprintf("worked for %d seconds", slowSecs); got != want {
			t.Errorf("result artifact %q, want %q", got, want)
		}
	})

	t.Run("ask task takes its answer", func(t *testing.T) {
		answer := userMessage(msgID("ask-answer"), "Ada")
		answer["taskId"] = ask.ID
		task := send(t, second.URL, answer, false)
		if task.ID != ask.ID || task.ContextID != ask.ContextID {
			t.Errorf("answer went to task %s context %s, want %s %s", task.ID, task.ContextID, ask.ID, ask.ContextID)
		}
		if task.Status.State != "TASK_STATE_COMPLETED" {
			t.Fatalf("ask task after the answer: state %s, want TASK_STATE_COMPLETED", task.Status.State)
		}
		if task.Status.Message == nil || task.Status.Message.text() != "Hello, Ada!" {
			t.Errorf("ask task status message %+v, want \"Hello, Ada!\"", task.Status.Message)
		}
		i := slices.IndexFunc(task.Artifacts, func(a artifactJSON) bool { return a.Name == "answer" })
		if i < 0 || task.Artifacts[i].text() != "Hello, Ada!" {
			t.Errorf("ask task artifacts %+v, want \"answer\" with \"Hello, Ada!\"", task.Artifacts)
		}
	})

	t.Run("message ids survive", func(t *testing.T) {
		for i, want := range echoIDs {
			task := send(t, second.URL, userMessage(msgID(fmt.Sprintf("echo-%d", i)), fmt.Sprintf("echo hello %d", i)), false)
			if task.ID != want {
				t.Errorf("resend of echo-%d: task %s, want %s (a new task for a message id seen before the crash)", i, task.ID, want)
			}
		}
		var list struct {
			TotalSize int `json:"totalSize"`
		}
		if err := json.Unmarshal(mustCall(t, second.URL, "ListTasks", map[string]any{}), &list); err != nil {
			t.Fatal(err)
		}
		if list.TotalSize != len(order) {
			t.Errorf("ListTasks totalSize=%d after the resends, want %d", list.TotalSize, len(order))
		}
	})

	// A clean, ordered shutdown: HTTP first, the embedded NATS server last.
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	if err := second.waitExit(shutdownTimeout); err != nil {
		t.Errorf("second a2abus after SIGTERM: %v, want exit status 0", err)
	}
	log := second.log()
	stopping := strings.Index(log, "msg=\"shutting down\"")
	stopped := strings.Index(log, "msg=\"nats server stopped\"")
	if stopping < 0 || stopped < stopping {
		t.Errorf("second a2abus log: want \"shutting down\" and then \"nats server stopped\"; got:\n%s", log)
	}
}

func TestServeFlagsFromEnv(t *testing.T) {
	env := map[string]string{
		"A2ABUS_HTTP":            "127.0.0.1:9999",
		"A2ABUS_NO_DEMO":         "true",
		"A2ABUS_WORKER_ACK_WAIT": "5s",
	}
	getenv := func(k string) string { return env[k] }
	defaults, err := parseServe(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("parseServe(defaults): %v", err)
	}

	tests := []struct {
		name string
		args []string
		want func(*ServeConfig)
	}{
		{
			name: "env",
			want: func(c *ServeConfig) {
				c.HTTP = "127.0.0.1:9999"
				c.NoDemo = true
				c.WorkerAckWait = 5 * time.Second
			},
		},
		{
			name: "flag wins over env",
			args: []string{"--http", "127.0.0.1:7777", "--worker-ack-wait=3s"},
			want: func(c *ServeConfig) {
				c.HTTP = "127.0.0.1:7777"
				c.NoDemo = true
				c.WorkerAckWait = 3 * time.Second
			},
		},
		{
			name: "bool flag turns an env true off",
			args: []string{"--no-demo=false"},
			want: func(c *ServeConfig) {
				c.HTTP = "127.0.0.1:9999"
				c.WorkerAckWait = 5 * time.Second
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			got, err := parseServe(tt.args, getenv, &stderr)
			if err != nil {
				t.Fatalf("parseServe(%q)=%v, want no error; stderr: %s", tt.args, err, stderr.String())
			}
			want := defaults
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("parseServe(%q)=\n%+v\nwant\n%+v", tt.args, got, want)
			}
		})
	}

	t.Run("bad env value", func(t *testing.T) {
		bad := func(k string) string {
			if k == "A2ABUS_WORKER_ACK_WAIT" {
				return "abc"
			}
			return ""
		}
		_, err := parseServe(nil, bad, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "A2ABUS_WORKER_ACK_WAIT") {
			t.Errorf("parseServe with A2ABUS_WORKER_ACK_WAIT=abc: error %v, want one naming A2ABUS_WORKER_ACK_WAIT", err)
		}
	})
}

func TestServeHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := Main(context.Background(), []string{"serve", "--help"}, func(string) string { return "" }, &stdout, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("Main(serve --help)=%v, want flag.ErrHelp", err)
	}
	help := stdout.String() + stderr.String()
	flags := []string{"data", "http", "nats-listen", "nats-url", "no-demo", "public-url", "log-level",
		"worker-ack-wait", "worker-max-deliver", "worker-tenants", "max-body", "view-cache", "max-age", "replicas",
		"sse-keepalive", "sse-buffer", "sse-keep-open-on-auth-required",
		"no-push", "push-allow-private", "push-max-attempts", "push-backoff-base", "push-backoff-max",
		"push-timeout", "push-alg", "push-token-ttl"}
	// The flags the help lists (PrintDefaults lines start "  -name") are
	// exactly these, so a new flag fails this test until it is added here.
	var listed []string
	for _, line := range strings.Split(help, "\n") {
		if f, ok := strings.CutPrefix(line, "  -"); ok {
			listed = append(listed, strings.Fields(f)[0])
		}
	}
	slices.Sort(listed)
	if want := slices.Sorted(slices.Values(flags)); !slices.Equal(listed, want) {
		t.Errorf("flags listed by serve --help: %v, want %v", listed, want)
	}
	for _, f := range flags {
		if !strings.Contains(help, "-"+f) {
			t.Errorf("serve --help does not mention -%s:\n%s", f, help)
		}
	}
	if !strings.Contains(help, "A2ABUS_") {
		t.Errorf("serve --help does not mention the A2ABUS_ environment prefix:\n%s", help)
	}
}

func TestServeFlagBeatsBadEnv(t *testing.T) {
	env := map[string]string{"A2ABUS_WORKER_ACK_WAIT": "abc"}
	c, err := parseServe([]string{"--worker-ack-wait", "3s"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || c.WorkerAckWait != 3*time.Second {
		t.Errorf("parseServe(flag over bad env) = %v, %v; want 3s, no error", c.WorkerAckWait, err)
	}
}
