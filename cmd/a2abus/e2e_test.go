package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
)

// End-to-end tests: the real server (startServer) driven by the official
// a2a-go client over JSON-RPC, with the event log checked through NATS
// where the protocol cannot show what happened.

// e2eTimeout bounds every test's calls; the suite runs in a few seconds.
const e2eTimeout = 45 * time.Second

// e2eContext returns a context that ends with the test or after e2eTimeout.
func e2eContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), e2eTimeout)
	t.Cleanup(cancel)
	return ctx
}

// resolveCard fetches the agent card from the server's well-known path.
func resolveCard(ctx context.Context, t testing.TB, ts *testServer) *a2a.AgentCard {
	t.Helper()
	card, err := agentcard.NewResolver(&http.Client{Timeout: 10 * time.Second}).Resolve(ctx, ts.URL)
	if err != nil {
		t.Fatalf("Resolve(%s)=%v", ts.URL, err)
	}
	return card
}

// newClient resolves the card and builds a JSON-RPC client from it.
func newClient(ctx context.Context, t testing.TB, ts *testServer) *a2aclient.Client {
	t.Helper()
	card := resolveCard(ctx, t, ts)
	c, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC}}))
	if err != nil {
		t.Fatalf("NewFromCard()=%v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// startE2E starts a server and a client for it.
func startE2E(t *testing.T) (context.Context, *testServer, *a2aclient.Client) {
	t.Helper()
	ctx := e2eContext(t)
	ts := startServer(t, nil)
	return ctx, ts, newClient(ctx, t, ts)
}

func userText(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

// sendTask sends msg and returns the task of the result. It does not touch
// t, so goroutines may call it.
func sendTask(ctx context.Context, c *a2aclient.Client, msg *a2a.Message, immediate bool) (*a2a.Task, error) {
	req := &a2a.SendMessageRequest{Message: msg}
	if immediate {
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	}
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		return nil, err
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("SendMessage result is %T, want *a2a.Task", res)
	}
	return task, nil
}

func mustSend(ctx context.Context, t testing.TB, c *a2aclient.Client, msg *a2a.Message, immediate bool) *a2a.Task {
	t.Helper()
	task, err := sendTask(ctx, c, msg, immediate)
	if err != nil {
		t.Fatalf("SendMessage(%q)=%v", firstText(msg), err)
	}
	return task
}

func mustGet(ctx context.Context, t testing.TB, c *a2aclient.Client, req *a2a.GetTaskRequest) *a2a.Task {
	t.Helper()
	task, err := c.GetTask(ctx, req)
	if err != nil {
		t.Fatalf("GetTask(%s)=%v", req.ID, err)
	}
	return task
}

func firstText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	for _, p := range m.Parts {
		if s := p.Text(); s != "" {
			return s
		}
	}
	return ""
}

// waitFor polls cond every 20ms until it holds, failing the test after
// timeout. It is for states only reachable by polling the API (GetTask).
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		select {
		case <-deadline.C:
			t.Fatalf("%s: not reached within %v", what, timeout)
		case <-tick.C:
		}
	}
}

// waitState polls GetTask until the task is in state.
func waitState(ctx context.Context, t testing.TB, c *a2aclient.Client, id a2a.TaskID, state a2a.TaskState, timeout time.Duration) *a2a.Task {
	t.Helper()
	var last *a2a.Task
	waitFor(t, timeout, fmt.Sprintf("task %s in %s", id, state), func() (bool, error) {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			return false, err
		}
		last = task
		if task.Status.State != state && task.Status.State.Terminal() {
			return false, fmt.Errorf("task reached %s", task.Status.State)
		}
		return task.Status.State == state, nil
	})
	return last
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// rpcReply is a raw JSON-RPC response.
type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawCall posts one JSON-RPC request to the server, for what the typed
// client cannot show (which keys a result leaves out).
func rawCall(ctx context.Context, t testing.TB, ts *testServer, method string, params any) rpcReply {
	t.Helper()
	body := jsonOf(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: HTTP %s, want 200", method, resp.Status)
	}
	var r rpcReply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("POST %s: decode: %v", method, err)
	}
	return r
}

// eventStream connects to the server's NATS and returns the events stream.
func eventStream(ctx context.Context, t testing.TB, ts *testServer) jetstream.Stream {
	t.Helper()
	nc, err := nats.Connect(ts.NATSURL, nats.Name("a2abus-e2e-test"))
	if err != nil {
		t.Fatalf("nats.Connect(%s)=%v", ts.NATSURL, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, engine.DefaultConfig().EventsStream)
	if err != nil {
		t.Fatalf("Stream(%s)=%v", engine.DefaultConfig().EventsStream, err)
	}
	return s
}

// lastEvent returns the newest event of a task in the default tenant.
func lastEvent(ctx context.Context, t testing.TB, s jetstream.Stream, id a2a.TaskID) events.Event {
	t.Helper()
	subj := events.EventsPrefix + events.DefaultTenant + "." + string(id) + ".>"
	m, err := s.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		t.Fatalf("GetLastMsgForSubject(%s)=%v", subj, err)
	}
	ev, err := events.Decode(m.Subject, m.Header, m.Data, m.Sequence)
	if err != nil {
		t.Fatalf("Decode(seq %d)=%v", m.Sequence, err)
	}
	return ev
}

func TestE2ECardDiscovery(t *testing.T) {
	t.Parallel()
	ctx := e2eContext(t)
	ts := startServer(t, nil)

	card := resolveCard(ctx, t, ts)
	if card.Name != "a2abus demo agent" {
		t.Errorf("card.name=%q, want %q", card.Name, "a2abus demo agent")
	}
	if len(card.SupportedInterfaces) == 0 {
		t.Fatal("card.supportedInterfaces is empty")
	}
	in := card.SupportedInterfaces[0]
	if in.ProtocolBinding != a2a.TransportProtocolJSONRPC {
		t.Errorf("supportedInterfaces[0].protocolBinding=%q, want %q", in.ProtocolBinding, a2a.TransportProtocolJSONRPC)
	}
	if in.ProtocolVersion != "1.0" {
		t.Errorf("supportedInterfaces[0].protocolVersion=%q, want 1.0", in.ProtocolVersion)
	}
	if want := ts.URL + "/"; in.URL != want {
		t.Errorf("supportedInterfaces[0].url=%q, want %q", in.URL, want)
	}
	// Every interface served: v1.0 JSON-RPC and HTTP+JSON, and both v0.3
	// bindings (the spec's backward-compatibility guidance).
	var ifaces []string
	for _, in := range card.SupportedInterfaces {
		ifaces = append(ifaces, fmt.Sprintf("%s %s %s", in.ProtocolBinding, in.ProtocolVersion, in.URL))
	}
	wantIfaces := []string{"JSONRPC 1.0 ", "HTTP+JSON 1.0 ", "JSONRPC 0.3 ", "HTTP+JSON 0.3 "}
	for i := range wantIfaces {
		wantIfaces[i] += ts.URL + "/"
	}
	if !slices.Equal(ifaces, wantIfaces) {
		t.Errorf("supportedInterfaces %q, want %q", ifaces, wantIfaces)
	}
	if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications {
		t.Errorf("capabilities streaming=%v pushNotifications=%v, want true true",
			card.Capabilities.Streaming, card.Capabilities.PushNotifications)
	}
	var skills []string
	for _, s := range card.Skills {
		skills = append(skills, s.ID)
	}
	if want := []string{"echo", "ask", "stream", "slow"}; !slices.Equal(skills, want) {
		t.Errorf("skills=%v, want %v", skills, want)
	}

	c, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatalf("NewFromCard()=%v", err)
	}
	defer func() { _ = c.Destroy() }()
	task := mustSend(ctx, t, c, userText("echo card"), false)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("state=%s, want %s", task.Status.State, a2a.TaskStateCompleted)
	}
}

func TestE2ESendMessageBlockingEcho(t *testing.T) {
	t.Parallel()
	ctx, _, c := startE2E(t)

	msg := a2a.NewMessage(a2a.MessageRoleUser,
		a2a.NewTextPart("echo hello"),
		a2a.NewDataPart(map[string]any{"n": 1.5, "s": "x"}),
		a2a.NewTextPart("second"))
	task := mustSend(ctx, t, c, msg, false)

	if task.ID == "" || task.ContextID == "" {
		t.Fatalf("task id=%q contextId=%q, want both set", task.ID, task.ContextID)
	}
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state=%s, want %s", task.Status.State, a2a.TaskStateCompleted)
	}
	if task.Status.Timestamp == nil {
		t.Error("status.timestamp is unset")
	}
	if len(task.Artifacts) != 1 {
		t.Fatalf("artifacts=%s, want one", jsonOf(t, task.Artifacts))
	}
	if art := task.Artifacts[0]; art.ID != "echo" {
		t.Errorf("artifactId=%q, want echo", art.ID)
	}
	if got, want := jsonOf(t, task.Artifacts[0].Parts), jsonOf(t, msg.Parts); got != want {
		t.Errorf("artifact parts=%s, want %s", got, want)
	}
	i := slices.IndexFunc(task.History, func(m *a2a.Message) bool { return m.ID == msg.ID })
	if i < 0 {
		t.Fatalf("history=%s has no message %s", jsonOf(t, task.History), msg.ID)
	}
	h := task.History[i]
	if h.Role != a2a.MessageRoleUser || h.TaskID != task.ID || h.ContextID != task.ContextID {
		t.Errorf("history message role=%s taskId=%q contextId=%q, want %s %q %q",
			h.Role, h.TaskID, h.ContextID, a2a.MessageRoleUser, task.ID, task.ContextID)
	}
	if got, want := jsonOf(t, h.Parts), jsonOf(t, msg.Parts); got != want {
		t.Errorf("history parts=%s, want %s", got, want)
	}

	got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: task.ID})
	if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 {
		t.Errorf("GetTask state=%s artifacts=%d, want %s 1", got.Status.State, len(got.Artifacts), a2a.TaskStateCompleted)
	}

	// configuration.historyLength cuts the history of the result.
	for _, n := range []int{0, 1} {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
			Message: userText(fmt.Sprintf("echo history %d", n)),
			Config:  &a2a.SendMessageConfig{HistoryLength: ptr(n)},
		})
		if err != nil {
			t.Fatalf("SendMessage(historyLength %d)=%v", n, err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.History) != n || len(task.Artifacts) != 1 {
			t.Errorf("SendMessage(historyLength %d)=%s, want COMPLETED with %d history messages and the artifact", n, jsonOf(t, res), n)
		}
	}
}

func TestE2EReturnImmediately(t *testing.T) {
	t.Parallel()
	ctx, _, c := startE2E(t)

	// slow 1 works for a second: a result before COMPLETED shows the
	// send did not wait for it.
	task := mustSend(ctx, t, c, userText("slow 1"), true)
	if s := task.Status.State; s != a2a.TaskStateSubmitted && s != a2a.TaskStateWorking {
		t.Fatalf("state=%s, want SUBMITTED or WORKING", s)
	}
	done := waitState(ctx, t, c, task.ID, a2a.TaskStateCompleted, 20*time.Second)
	if len(done.Artifacts) != 1 || done.Artifacts[0].Parts[0].Text() != "worked for 1 seconds" {
		t.Errorf("artifacts=%s, want one with %q", jsonOf(t, done.Artifacts), "worked for 1 seconds")
	}
	var progress []string
	for _, m := range done.History {
		if m.Role == a2a.MessageRoleAgent {
			progress = append(progress, firstText(m))
		}
	}
	if want := []string{"progress 1/1"}; !slices.Equal(progress, want) {
		t.Errorf("agent messages=%q, want %q", progress, want)
	}
}

// askRoundTrip runs the ask skill to completion with the answer name.
func askRoundTrip(ctx context.Context, t testing.TB, c *a2aclient.Client, name string) *a2a.Task {
	t.Helper()
	task := mustSend(ctx, t, c, userText("ask"), false)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("ask: state=%s, want %s", task.Status.State, a2a.TaskStateInputRequired)
	}
	answer := userText(name)
	answer.TaskID, answer.ContextID = task.ID, task.ContextID
	done := mustSend(ctx, t, c, answer, false)
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answer: state=%s, want %s", done.Status.State, a2a.TaskStateCompleted)
	}
	return done
}

func TestE2EGetTaskHistoryLength(t *testing.T) {
	t.Parallel()
	ctx, ts, c := startE2E(t)
	task := askRoundTrip(ctx, t, c, "Ada")

	all := []string{"ask", "What is your name?", "Ada", "Hello, Ada!"}
	tests := []struct {
		name    string
		length  *int
		want    []string
		wantErr error
	}{
		{name: "unset", length: nil, want: all},
		{name: "zero", length: ptr(0), want: nil},
		{name: "one", length: ptr(1), want: all[3:]},
		{name: "two", length: ptr(2), want: all[2:]},
		{name: "four", length: ptr(4), want: all},
		{name: "more than kept", length: ptr(100), want: all},
		{name: "negative", length: ptr(-1), wantErr: a2a.ErrInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: tt.length})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("GetTask()=%v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("GetTask()=%v", err)
			}
			var texts []string
			for _, m := range got.History {
				texts = append(texts, firstText(m))
			}
			if !slices.Equal(texts, tt.want) {
				t.Errorf("history=%q, want %q", texts, tt.want)
			}
			if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 {
				t.Errorf("state=%s artifacts=%d, want COMPLETED 1", got.Status.State, len(got.Artifacts))
			}
		})
	}

	// historyLength 0 leaves the key out (§2 "send no history").
	r := rawCall(ctx, t, ts, "GetTask", map[string]any{"id": task.ID, "historyLength": 0})
	if r.Error != nil {
		t.Fatalf("GetTask raw error %d %s", r.Error.Code, r.Error.Message)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(r.Result, &keys); err != nil {
		t.Fatal(err)
	}
	if h, ok := keys["history"]; ok {
		t.Errorf("historyLength 0: result has history %s, want the key left out", h)
	}
}

// listAll walks every page of req and returns the tasks in order,
// checking totalSize and page sizes on each page.
func listAll(ctx context.Context, t testing.TB, c *a2aclient.Client, req a2a.ListTasksRequest) ([]*a2a.Task, int) {
	t.Helper()
	var out []*a2a.Task
	total := -1
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatal("ListTasks: more than 1000 pages")
		}
		resp, err := c.ListTasks(ctx, &req)
		if err != nil {
			t.Fatalf("ListTasks(page %d)=%v", page, err)
		}
		if total >= 0 && resp.TotalSize != total {
			t.Errorf("page %d: totalSize=%d, want %d as on the first page", page, resp.TotalSize, total)
		}
		total = resp.TotalSize
		size := req.PageSize
		if size == 0 {
			size = 50
		}
		if resp.PageSize != size {
			t.Errorf("page %d: pageSize=%d, want %d", page, resp.PageSize, size)
		}
		out = append(out, resp.Tasks...)
		if resp.NextPageToken == "" {
			if len(resp.Tasks) > size {
				t.Errorf("last page %d: %d tasks, want at most %d", page, len(resp.Tasks), size)
			}
			break
		}
		if len(resp.Tasks) != size {
			t.Errorf("page %d: %d tasks with a next page, want %d", page, len(resp.Tasks), size)
		}
		req.PageToken = resp.NextPageToken
	}
	return out, total
}

func idsOf(tasks []*a2a.Task) []a2a.TaskID {
	ids := make([]a2a.TaskID, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	return ids
}

func sortedIDs(ids []a2a.TaskID) []a2a.TaskID {
	s := slices.Clone(ids)
	slices.Sort(s)
	return s
}

func TestE2EListTasks(t *testing.T) {
	t.Parallel()
	ctx, ts, c := startE2E(t)

	const perContext = 40
	contexts := []string{a2a.NewContextID(), a2a.NewContextID(), a2a.NewContextID()}
	n := perContext * len(contexts)

	// 120 echo tasks, 8 sends at a time.
	var (
		mu    sync.Mutex
		echo  = map[a2a.TaskID]string{} // task -> context
		errs  []error
		wg    sync.WaitGroup
		slots = make(chan struct{}, 8)
	)
	for i := range n {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			msg := userText(fmt.Sprintf("echo %d", i))
			msg.ContextID = contexts[i%len(contexts)]
			task, err := sendTask(ctx, c, msg, false)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case task.Status.State != a2a.TaskStateCompleted || task.ContextID != msg.ContextID:
				errs = append(errs, fmt.Errorf("echo %d: state=%s contextId=%q, want COMPLETED %q", i, task.Status.State, task.ContextID, msg.ContextID))
			default:
				echo[task.ID] = task.ContextID
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("creating echo tasks: %v", err)
	}
	if len(echo) != n {
		t.Fatalf("%d distinct echo tasks, want %d", len(echo), n)
	}

	ask := mustSend(ctx, t, c, userText("ask"), false)
	if ask.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("ask: state=%s, want INPUT_REQUIRED", ask.Status.State)
	}
	slow := mustSend(ctx, t, c, userText("slow 30"), true)
	if canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: slow.ID}); err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask(slow)=%v, %v; want CANCELED", canceled, err)
	}
	total := n + 2

	// Every task, newest status first, 7 at a time.
	all, gotTotal := listAll(ctx, t, c, a2a.ListTasksRequest{PageSize: 7})
	if gotTotal != total || len(all) != total {
		t.Fatalf("pageSize 7: totalSize=%d, walked %d tasks, want %d", gotTotal, len(all), total)
	}
	want := append(slices.Collect(func(yield func(a2a.TaskID) bool) {
		for id := range echo {
			if !yield(id) {
				return
			}
		}
	}), ask.ID, slow.ID)
	if got := sortedIDs(idsOf(all)); !slices.Equal(got, sortedIDs(want)) {
		t.Fatalf("pageSize 7: walked tasks are not each task exactly once:\n got %v\nwant %v", got, sortedIDs(want))
	}
	for i, task := range all {
		if task.Status.Timestamp == nil {
			t.Fatalf("task %s has no status timestamp", task.ID)
		}
		if i > 0 && task.Status.Timestamp.After(*all[i-1].Status.Timestamp) {
			t.Errorf("tasks %d and %d out of order: %v then %v", i-1, i, *all[i-1].Status.Timestamp, *task.Status.Timestamp)
		}
	}

	t.Run("default page size", func(t *testing.T) {
		resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatalf("ListTasks()=%v", err)
		}
		if len(resp.Tasks) != 50 || resp.PageSize != 50 || resp.TotalSize != total || resp.NextPageToken == "" {
			t.Errorf("ListTasks()=%d tasks, pageSize %d, totalSize %d, nextPageToken %q; want 50, 50, %d, non-empty",
				len(resp.Tasks), resp.PageSize, resp.TotalSize, resp.NextPageToken, total)
		}
		if got, want := idsOf(resp.Tasks), idsOf(all[:50]); !slices.Equal(got, want) {
			t.Errorf("first page=%v, want the 50 newest %v", got, want)
		}
		// Without historyLength the history is sent.
		for _, task := range resp.Tasks {
			if len(task.History) == 0 {
				t.Errorf("task %s: no history, want it without historyLength", task.ID)
				break
			}
		}
	})

	t.Run("pageSize 100", func(t *testing.T) {
		resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 100, StatusTimestampAfter: all[len(all)-1].Status.Timestamp})
		if err != nil {
			t.Fatalf("ListTasks()=%v", err)
		}
		if len(resp.Tasks) != 100 || resp.NextPageToken == "" {
			t.Errorf("pageSize 100: %d tasks, nextPageToken %q; want 100 and a token", len(resp.Tasks), resp.NextPageToken)
		}
	})

	t.Run("context filter", func(t *testing.T) {
		for _, ctxID := range contexts {
			tasks, tot := listAll(ctx, t, c, a2a.ListTasksRequest{ContextID: ctxID, PageSize: 15})
			if tot != perContext || len(tasks) != perContext {
				t.Errorf("contextId %s: totalSize=%d, %d tasks, want %d", ctxID, tot, len(tasks), perContext)
			}
			for _, task := range tasks {
				if task.ContextID != ctxID || echo[task.ID] != ctxID {
					t.Errorf("contextId %s: got task %s of context %q", ctxID, task.ID, task.ContextID)
				}
			}
		}
		resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: ask.ContextID})
		if err != nil {
			t.Fatalf("ListTasks()=%v", err)
		}
		if got := idsOf(resp.Tasks); !slices.Equal(got, []a2a.TaskID{ask.ID}) || resp.TotalSize != 1 {
			t.Errorf("contextId of ask: %v totalSize %d, want [%s] 1", got, resp.TotalSize, ask.ID)
		}
		resp, err = c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: "no-such-context"})
		if err != nil {
			t.Fatalf("ListTasks()=%v", err)
		}
		if len(resp.Tasks) != 0 || resp.TotalSize != 0 || resp.NextPageToken != "" {
			t.Errorf("unknown contextId: %d tasks totalSize %d token %q, want none", len(resp.Tasks), resp.TotalSize, resp.NextPageToken)
		}
	})

	t.Run("status filter", func(t *testing.T) {
		tests := []struct {
			state a2a.TaskState
			want  int
			ids   []a2a.TaskID
		}{
			{state: a2a.TaskStateInputRequired, want: 1, ids: []a2a.TaskID{ask.ID}},
			{state: a2a.TaskStateCanceled, want: 1, ids: []a2a.TaskID{slow.ID}},
			{state: a2a.TaskStateCompleted, want: n},
			{state: a2a.TaskStateWorking, want: 0},
		}
		for _, tt := range tests {
			tasks, tot := listAll(ctx, t, c, a2a.ListTasksRequest{Status: tt.state, PageSize: 100})
			if tot != tt.want || len(tasks) != tt.want {
				t.Errorf("status %s: totalSize=%d, %d tasks, want %d", tt.state, tot, len(tasks), tt.want)
			}
			for _, task := range tasks {
				if task.Status.State != tt.state {
					t.Errorf("status %s: got task %s in %s", tt.state, task.ID, task.Status.State)
				}
			}
			if tt.ids != nil && !slices.Equal(idsOf(tasks), tt.ids) {
				t.Errorf("status %s: %v, want %v", tt.state, idsOf(tasks), tt.ids)
			}
		}
	})

	t.Run("statusTimestampAfter", func(t *testing.T) {
		after := *all[59].Status.Timestamp
		var want []a2a.TaskID
		for _, task := range all {
			if !task.Status.Timestamp.Before(after) {
				want = append(want, task.ID)
			}
		}
		tasks, tot := listAll(ctx, t, c, a2a.ListTasksRequest{StatusTimestampAfter: &after, PageSize: 100})
		if tot != len(want) {
			t.Errorf("statusTimestampAfter %v: totalSize=%d, want %d", after, tot, len(want))
		}
		if got := idsOf(tasks); !slices.Equal(got, want) {
			t.Errorf("statusTimestampAfter %v: %d tasks %v, want %d %v", after, len(got), got, len(want), want)
		}
	})

	t.Run("statusTimestampAfter in the future", func(t *testing.T) {
		future := all[0].Status.Timestamp.Add(time.Hour)
		resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{StatusTimestampAfter: &future})
		if err != nil {
			t.Fatalf("ListTasks()=%v", err)
		}
		if len(resp.Tasks) != 0 || resp.TotalSize != 0 || resp.NextPageToken != "" {
			t.Errorf("statusTimestampAfter %v: %d tasks totalSize %d token %q, want none", future, len(resp.Tasks), resp.TotalSize, resp.NextPageToken)
		}
	})

	t.Run("context and status", func(t *testing.T) {
		for _, tt := range []struct {
			state a2a.TaskState
			want  int
		}{{a2a.TaskStateCompleted, perContext}, {a2a.TaskStateInputRequired, 0}} {
			resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contexts[1], Status: tt.state, PageSize: 100})
			if err != nil {
				t.Fatalf("ListTasks()=%v", err)
			}
			if len(resp.Tasks) != tt.want || resp.TotalSize != tt.want {
				t.Errorf("contextId and status %s: %d tasks totalSize %d, want %d", tt.state, len(resp.Tasks), resp.TotalSize, tt.want)
			}
		}
	})

	t.Run("explicit pageSize 0", func(t *testing.T) {
		r := rawCall(ctx, t, ts, "ListTasks", map[string]any{"pageSize": 0})
		if r.Error != nil {
			t.Fatalf("ListTasks(pageSize 0) error %d %s", r.Error.Code, r.Error.Message)
		}
		var resp a2a.ListTasksResponse
		if err := json.Unmarshal(r.Result, &resp); err != nil {
			t.Fatal(err)
		}
		if len(resp.Tasks) != 50 || resp.PageSize != 50 || resp.TotalSize != total {
			t.Errorf("ListTasks(pageSize 0)=%d tasks pageSize %d totalSize %d, want 50 50 %d", len(resp.Tasks), resp.PageSize, resp.TotalSize, total)
		}
	})

	t.Run("historyLength 0", func(t *testing.T) {
		resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{HistoryLength: ptr(0), PageSize: 100})
		if err != nil {
			t.Fatalf("ListTasks()=%v", err)
		}
		for _, task := range resp.Tasks {
			if len(task.History) != 0 {
				t.Errorf("task %s: history=%s, want none", task.ID, jsonOf(t, task.History))
			}
		}
		r := rawCall(ctx, t, ts, "ListTasks", map[string]any{"historyLength": 0, "pageSize": 5})
		if r.Error != nil {
			t.Fatalf("ListTasks raw error %d %s", r.Error.Code, r.Error.Message)
		}
		var raw struct{ Tasks []map[string]json.RawMessage }
		if err := json.Unmarshal(r.Result, &raw); err != nil {
			t.Fatal(err)
		}
		for _, task := range raw.Tasks {
			if h, ok := task["history"]; ok {
				t.Errorf("historyLength 0: task has history %s, want the key left out", h)
			}
		}
	})

	t.Run("historyLength 1", func(t *testing.T) {
		resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{HistoryLength: ptr(1), ContextID: ask.ContextID})
		if err != nil {
			t.Fatalf("ListTasks()=%v", err)
		}
		if len(resp.Tasks) != 1 || len(resp.Tasks[0].History) != 1 || firstText(resp.Tasks[0].History[0]) != "What is your name?" {
			t.Errorf("historyLength 1 on ask: %s, want only the question", jsonOf(t, resp.Tasks))
		}
	})

	t.Run("includeArtifacts", func(t *testing.T) {
		for _, include := range []bool{false, true} {
			tasks, _ := listAll(ctx, t, c, a2a.ListTasksRequest{Status: a2a.TaskStateCompleted, IncludeArtifacts: include, PageSize: 100})
			for _, task := range tasks {
				if include && (len(task.Artifacts) != 1 || task.Artifacts[0].ID != "echo") {
					t.Fatalf("includeArtifacts true: task %s artifacts=%s, want the echo artifact", task.ID, jsonOf(t, task.Artifacts))
				}
				if !include && task.Artifacts != nil {
					t.Fatalf("includeArtifacts false: task %s artifacts=%s, want none", task.ID, jsonOf(t, task.Artifacts))
				}
			}
		}
		r := rawCall(ctx, t, ts, "ListTasks", map[string]any{"status": "TASK_STATE_COMPLETED", "pageSize": 5})
		if r.Error != nil {
			t.Fatalf("ListTasks raw error %d %s", r.Error.Code, r.Error.Message)
		}
		var raw struct{ Tasks []map[string]json.RawMessage }
		if err := json.Unmarshal(r.Result, &raw); err != nil {
			t.Fatal(err)
		}
		if len(raw.Tasks) != 5 {
			t.Fatalf("raw ListTasks: %d tasks, want 5", len(raw.Tasks))
		}
		for _, task := range raw.Tasks {
			if a, ok := task["artifacts"]; ok {
				t.Errorf("includeArtifacts unset: task has artifacts %s, want the key left out", a)
			}
		}
	})

	t.Run("invalid", func(t *testing.T) {
		tests := []struct {
			name string
			req  a2a.ListTasksRequest
		}{
			{name: "pageSize 101", req: a2a.ListTasksRequest{PageSize: 101}},
			{name: "pageSize -1", req: a2a.ListTasksRequest{PageSize: -1}},
			{name: "historyLength -1", req: a2a.ListTasksRequest{HistoryLength: ptr(-1)}},
			{name: "bad pageToken", req: a2a.ListTasksRequest{PageToken: "garbage!!"}},
			{name: "bogus status", req: a2a.ListTasksRequest{Status: "TASK_STATE_BOGUS"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp, err := c.ListTasks(ctx, &tt.req)
				if !errors.Is(err, a2a.ErrInvalidParams) {
					t.Errorf("ListTasks(%s)=%v, %v; want %v", jsonOf(t, tt.req), resp, err, a2a.ErrInvalidParams)
				}
			})
		}
		// The bogus status on the wire as a client that is not a2a-go
		// would send it.
		r := rawCall(ctx, t, ts, "ListTasks", map[string]any{"status": "TASK_STATE_BOGUS"})
		if r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("raw ListTasks bogus status: error=%+v, want code -32602", r.Error)
		}
	})
}

// TestE2ECancelTask cancels tasks whose handlers run. It is not parallel
// so that a data race found under -race is reported against it alone:
// canceling a handler that has posted progress makes the worker's fence
// goroutine read Task.view (workers/task.go ID, via checkFence) while the
// handler's appends replace it under Task.mu.
func TestE2ECancelTask(t *testing.T) {
	ctx, ts, c := startE2E(t)
	stream := eventStream(ctx, t, ts)

	running := mustSend(ctx, t, c, userText("slow 30"), true)

	// A blocking send of another slow task, found through its context.
	blockedMsg := userText("slow 30")
	blockedMsg.ContextID = a2a.NewContextID()
	type sendResult struct {
		task *a2a.Task
		err  error
	}
	blocked := make(chan sendResult, 1)
	go func() {
		task, err := sendTask(ctx, c, blockedMsg, false)
		blocked <- sendResult{task, err}
	}()

	// Cancel a task whose handler runs: wait for its first progress.
	waitFor(t, 20*time.Second, "progress of the running task", func() (bool, error) {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: running.ID})
		if err != nil {
			return false, err
		}
		return task.Status.State == a2a.TaskStateWorking && strings.HasPrefix(firstText(task.Status.Message), "progress "), nil
	})
	var blockedID a2a.TaskID
	waitFor(t, 20*time.Second, "the blocked send's task WORKING", func() (bool, error) {
		resp, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: blockedMsg.ContextID})
		if err != nil || len(resp.Tasks) != 1 {
			return false, err
		}
		blockedID = resp.Tasks[0].ID
		return resp.Tasks[0].Status.State == a2a.TaskStateWorking, nil
	})

	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: running.ID})
	if err != nil {
		t.Fatalf("CancelTask()=%v", err)
	}
	if canceled.ID != running.ID || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask()=task %s in %s, want %s in %s", canceled.ID, canceled.Status.State, running.ID, a2a.TaskStateCanceled)
	}
	if got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: running.ID}); got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("GetTask() state=%s, want %s", got.Status.State, a2a.TaskStateCanceled)
	}

	// A task canceled as soon as it is made, maybe before a worker took it.
	fresh := mustSend(ctx, t, c, userText("slow 30"), true)
	if got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: fresh.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask(fresh)=%v, %v; want CANCELED", got, err)
	}

	// Canceling the blocked send's task ends the send with the task.
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: blockedID}); err != nil {
		t.Fatalf("CancelTask(blocked)=%v", err)
	}
	select {
	case r := <-blocked:
		if r.err != nil {
			t.Fatalf("blocked SendMessage()=%v", r.err)
		}
		if r.task.ID != blockedID || r.task.Status.State != a2a.TaskStateCanceled {
			t.Errorf("blocked SendMessage()=task %s in %s, want %s in %s", r.task.ID, r.task.Status.State, blockedID, a2a.TaskStateCanceled)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocked SendMessage() did not return within 10s of the cancel")
	}

	last := map[a2a.TaskID]events.Event{}
	for _, id := range []a2a.TaskID{running.ID, fresh.ID, blockedID} {
		ev := lastEvent(ctx, t, stream, id)
		st, ok := ev.Body.(*a2a.TaskStatusUpdateEvent)
		if !ok || st.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("last event of task %s is %s %s, want the CANCELED status", id, ev.Type, jsonOf(t, ev.Body))
		}
		last[id] = ev
	}
	// Proving an absence: the slow skill posts progress every second, so
	// a worker still running (or one taking the fresh task late) would
	// append within 2.5s. Nothing signals "no event", hence a plain timer
	// here and nowhere else.
	select {
	case <-time.After(2500 * time.Millisecond):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	for id, ev := range last {
		if after := lastEvent(ctx, t, stream, id); after.Seq != ev.Seq {
			t.Errorf("task %s: last event moved from seq %d to %d (%s %s) after cancel", id, ev.Seq, after.Seq, after.Type, jsonOf(t, after.Body))
		}
		if got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: id}); got.Status.State != a2a.TaskStateCanceled {
			t.Errorf("task %s after wait: state=%s, want %s", id, got.Status.State, a2a.TaskStateCanceled)
		}
	}

	// An interrupted task can be canceled; then it takes no answer.
	ask := mustSend(ctx, t, c, userText("ask"), false)
	if got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: ask.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask(INPUT_REQUIRED)=%v, %v; want CANCELED", got, err)
	}
	answer := userText("Ada")
	answer.TaskID = ask.ID
	if _, err := sendTask(ctx, c, answer, false); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("answer to a canceled task: %v, want %v", err, a2a.ErrUnsupportedOperation)
	}

	tests := []struct {
		name    string
		id      a2a.TaskID
		wantErr error
	}{
		{name: "canceled again", id: running.ID, wantErr: a2a.ErrTaskNotCancelable},
		{name: "completed", id: mustSend(ctx, t, c, userText("echo done"), false).ID, wantErr: a2a.ErrTaskNotCancelable},
		{name: "unknown", id: a2a.NewTaskID(), wantErr: a2a.ErrTaskNotFound},
		{name: "impossible id", id: "no/such.task", wantErr: a2a.ErrTaskNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: tt.id}); !errors.Is(err, tt.wantErr) {
				t.Errorf("CancelTask(%s)=%v, want %v", tt.id, err, tt.wantErr)
			}
		})
	}
}

func TestE2EAskRoundTrip(t *testing.T) {
	t.Parallel()
	ctx, _, c := startE2E(t)

	task := mustSend(ctx, t, c, userText("ask"), false)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("state=%s, want %s", task.Status.State, a2a.TaskStateInputRequired)
	}
	q := task.Status.Message
	if q == nil || q.Role != a2a.MessageRoleAgent || firstText(q) != "What is your name?" {
		t.Fatalf("status.message=%s, want the agent asking %q", jsonOf(t, q), "What is your name?")
	}

	wrong := userText("Bob")
	wrong.TaskID, wrong.ContextID = task.ID, a2a.NewContextID()
	if _, err := sendTask(ctx, c, wrong, false); !errors.Is(err, a2a.ErrInvalidParams) {
		t.Fatalf("follow-up with another contextId: %v, want %v", err, a2a.ErrInvalidParams)
	}
	if got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: task.ID}); got.Status.State != a2a.TaskStateInputRequired || len(got.History) != 2 {
		t.Fatalf("after the refused follow-up: state=%s history=%d, want INPUT_REQUIRED 2", got.Status.State, len(got.History))
	}

	// The refused message's id is free again: the corrected retry reuses it.
	answer := *wrong
	answer.Parts = a2a.ContentParts{a2a.NewTextPart("Ada")}
	answer.ContextID = task.ContextID
	done := mustSend(ctx, t, c, &answer, false)
	if done.ID != task.ID || done.ContextID != task.ContextID {
		t.Errorf("answer: task %s context %s, want %s %s", done.ID, done.ContextID, task.ID, task.ContextID)
	}
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answer: state=%s, want %s", done.Status.State, a2a.TaskStateCompleted)
	}
	if len(done.Artifacts) != 1 || done.Artifacts[0].ID != "answer" || len(done.Artifacts[0].Parts) != 1 ||
		done.Artifacts[0].Parts[0].Text() != "Hello, Ada!" {
		t.Errorf("artifacts=%s, want answer %q", jsonOf(t, done.Artifacts), "Hello, Ada!")
	}

	// A retried answer is a replay of the first: the completed task, no
	// error and nothing appended.
	replay := answer
	again := mustSend(ctx, t, c, &replay, false)
	if again.ID != task.ID || again.Status.State != a2a.TaskStateCompleted || len(again.History) != len(done.History) {
		t.Errorf("retried answer: task %s in %s with %d history messages, want %s COMPLETED %d",
			again.ID, again.Status.State, len(again.History), task.ID, len(done.History))
	}

	// Only taskId: the task's context is taken.
	ask2 := mustSend(ctx, t, c, userText("ask"), false)
	only := userText("Grace")
	only.TaskID = ask2.ID
	done2 := mustSend(ctx, t, c, only, false)
	if done2.Status.State != a2a.TaskStateCompleted || done2.ContextID != ask2.ContextID {
		t.Fatalf("answer without contextId: state=%s context=%s, want COMPLETED %s", done2.Status.State, done2.ContextID, ask2.ContextID)
	}
	if len(done2.Artifacts) != 1 || done2.Artifacts[0].Parts[0].Text() != "Hello, Grace!" {
		t.Errorf("artifacts=%s, want %q", jsonOf(t, done2.Artifacts), "Hello, Grace!")
	}
	last := done2.History[len(done2.History)-2]
	if last.ID != only.ID || last.ContextID != ask2.ContextID || last.TaskID != ask2.ID {
		t.Errorf("answer in history=%s, want taskId %s contextId %s", jsonOf(t, last), ask2.ID, ask2.ContextID)
	}
}

func TestE2EFollowUpErrors(t *testing.T) {
	t.Parallel()
	ctx, _, c := startE2E(t)

	done := mustSend(ctx, t, c, userText("echo once"), false)
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state=%s, want %s", done.Status.State, a2a.TaskStateCompleted)
	}
	tests := []struct {
		name    string
		taskID  a2a.TaskID
		wantErr error
	}{
		{name: "terminal task", taskID: done.ID, wantErr: a2a.ErrUnsupportedOperation},
		{name: "unknown task", taskID: a2a.NewTaskID(), wantErr: a2a.ErrTaskNotFound},
		{name: "impossible task id", taskID: "no/such.task", wantErr: a2a.ErrTaskNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, immediate := range []bool{false, true} {
				msg := userText("echo again")
				msg.TaskID = tt.taskID
				if _, err := sendTask(ctx, c, msg, immediate); !errors.Is(err, tt.wantErr) {
					t.Errorf("SendMessage(taskId %s, returnImmediately %v)=%v, want %v", tt.taskID, immediate, err, tt.wantErr)
				}
			}
		})
	}
	for _, id := range []a2a.TaskID{a2a.NewTaskID(), "no/such.task"} {
		if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("GetTask(%q)=%v, want %v", id, err, a2a.ErrTaskNotFound)
		}
	}
	if got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: done.ID}); len(got.History) != 1 {
		t.Errorf("terminal task history=%d messages, want 1 (unchanged)", len(got.History))
	}
}

func TestE2EIdempotentSend(t *testing.T) {
	t.Parallel()
	ctx, ts, c := startE2E(t)
	stream := eventStream(ctx, t, ts)

	msg := userText("echo once only")
	first := mustSend(ctx, t, c, msg, false)
	again := *msg
	second := mustSend(ctx, t, c, &again, false)
	if second.ID != first.ID {
		t.Fatalf("resent message: task %s, want %s", second.ID, first.ID)
	}
	if second.Status.State != a2a.TaskStateCompleted {
		t.Errorf("resent message: state=%s, want %s", second.Status.State, a2a.TaskStateCompleted)
	}
	third := mustSend(ctx, t, c, &again, true)
	if third.ID != first.ID {
		t.Fatalf("resent with returnImmediately: task %s, want %s", third.ID, first.ID)
	}

	// The in subject holds creations and follow-ups: exactly one event,
	// the creation.
	subj := events.Subject(events.DefaultTenant, first.ID, events.KindIn)
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		t.Fatalf("stream Info(%s)=%v", subj, err)
	}
	if got := info.State.Subjects[subj]; got != 1 {
		t.Errorf("%d events on %s, want 1", got, subj)
	}
	m, err := stream.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		t.Fatalf("GetLastMsgForSubject(%s)=%v", subj, err)
	}
	ev, err := events.Decode(m.Subject, m.Header, m.Data, m.Sequence)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != events.TypeCreated {
		t.Errorf("event on %s is %s, want %s", subj, ev.Type, events.TypeCreated)
	}
	if got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: first.ID}); len(got.History) != 1 {
		t.Errorf("history=%d messages, want 1", len(got.History))
	}

	// Concurrent retries of one message make one task.
	msg2 := userText("echo concurrent")
	ids := make([]a2a.TaskID, 6)
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			m := *msg2
			task, err := sendTask(ctx, c, &m, false)
			if err == nil {
				ids[i] = task.ID
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent sends: %v", err)
	}
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("concurrent sends of one message made tasks %v, want one", ids)
		}
	}
	subj2 := events.Subject(events.DefaultTenant, ids[0], events.KindIn)
	info, err = stream.Info(ctx, jetstream.WithSubjectFilter(subj2))
	if err != nil {
		t.Fatalf("stream Info(%s)=%v", subj2, err)
	}
	if got := info.State.Subjects[subj2]; got != 1 {
		t.Errorf("%d events on %s, want 1", got, subj2)
	}
}
