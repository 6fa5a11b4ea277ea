package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/golang-jwt/jwt/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/jwks"
	"github.com/a2abus/a2abus/webhook"
)

// Push notification tests: the real server (startServer, or the binary
// for the crash test) pushing to real HTTP receivers on 127.0.0.1, with
// the task's status events read from NATS as the reference of what must
// arrive.

// hookWait bounds every wait of the push tests. It is generous: the
// machine may be slow and busy.
const hookWait = 60 * time.Second

// hookContext returns a context that ends with the test or after 3 minutes.
func hookContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// ---- the receiver ----

// hookHang is the answer of a receiver that never answers (until the test
// ends).
const hookHang = -1

// hookReq is one request a receiver got.
type hookReq struct {
	Path   string
	Header http.Header
	Body   []byte
	At     time.Time
	// Status is what the receiver answered, or hookHang.
	Status int
	// Claims are the push token's claims, not verified; nil if the
	// request had no readable token.
	Claims *jwks.PushClaims
	Kid    string
	// Kind is the body's only key: "statusUpdate" or "task".
	Kind string
}

func (r hookReq) ok() bool { return r.Status >= 200 && r.Status < 300 }

func (r hookReq) task() a2a.TaskID {
	if r.Claims == nil {
		return ""
	}
	return a2a.TaskID(r.Claims.TaskID)
}

func (r hookReq) seq() uint64 {
	if r.Claims == nil {
		return 0
	}
	return r.Claims.Seq
}

func (r hookReq) String() string {
	return fmt.Sprintf("%s task %s seq %d %s -> %d", r.Path, r.task(), r.seq(), r.Kind, r.Status)
}

// request rebuilds the request for jwks.Verifier.Verify, which reads the
// headers only.
func (r hookReq) request() *http.Request {
	return &http.Request{Method: http.MethodPost, Header: r.Header.Clone()}
}

// hookReceiver is a webhook receiver on 127.0.0.1 that records every
// request and answers what answer says.
type hookReceiver struct {
	srv *httptest.Server

	mu sync.Mutex
	// answer decides the status of request n (0-based, all paths) given
	// the requests before it. Called with mu held.
	answer  func(n int, r hookReq, before []hookReq) int
	reqs    []hookReq
	changed chan struct{} // closed and replaced at every request
	release chan struct{} // closed at cleanup: hung requests return
}

// newHookReceiver starts a receiver; answer nil answers 200 to everything.
func newHookReceiver(t testing.TB, answer func(n int, r hookReq, before []hookReq) int) *hookReceiver {
	t.Helper()
	if answer == nil {
		answer = func(int, hookReq, []hookReq) int { return http.StatusOK }
	}
	rc := &hookReceiver{answer: answer, changed: make(chan struct{}), release: make(chan struct{})}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	// Cleanups run last-in first-out: hung handlers return before Close
	// waits for them.
	t.Cleanup(rc.srv.Close)
	t.Cleanup(func() { close(rc.release) })
	return rc
}

// URL returns the receiver's URL with path.
func (rc *hookReceiver) URL(path string) string { return rc.srv.URL + path }

func (rc *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := hookReq{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, At: time.Now()}
	if r.Method != http.MethodPost {
		req.Kind = "method " + r.Method
	}
	if tok := hookToken(r.Header); tok != "" {
		var c jwks.PushClaims
		if t, _, err := jwt.NewParser().ParseUnverified(tok, &c); err == nil {
			req.Claims = &c
			req.Kid, _ = t.Header["kid"].(string)
		}
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(body, &keys) == nil && len(keys) == 1 {
		for k := range keys {
			req.Kind = k
		}
	}
	rc.mu.Lock()
	req.Status = rc.answer(len(rc.reqs), req, rc.reqs)
	rc.reqs = append(rc.reqs, req)
	close(rc.changed)
	rc.changed = make(chan struct{})
	rc.mu.Unlock()
	if req.Status == hookHang {
		<-rc.release
		return
	}
	w.WriteHeader(req.Status)
}

// setAnswer replaces the answer function.
func (rc *hookReceiver) setAnswer(answer func(n int, r hookReq, before []hookReq) int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.answer = answer
}

// requests returns the requests so far.
func (rc *hookReceiver) requests() []hookReq {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.reqs)
}

// waitFor waits until cond holds for the requests so far, woken by every
// new request, and returns them.
func (rc *hookReceiver) waitFor(t testing.TB, d time.Duration, what string, cond func([]hookReq) bool) []hookReq {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		rc.mu.Lock()
		reqs, changed := slices.Clone(rc.reqs), rc.changed
		rc.mu.Unlock()
		if cond(reqs) {
			return reqs
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("receiver: %s: not within %v; got %d requests:\n%s", what, d, len(reqs), hookReqsString(reqs))
		}
	}
}

// waitFinal waits until the receiver accepted the {"task": ...} push of
// task id and returns all requests.
func (rc *hookReceiver) waitFinal(t testing.TB, id a2a.TaskID) []hookReq {
	t.Helper()
	return rc.waitFor(t, hookWait, fmt.Sprintf("final push of task %s", id), func(reqs []hookReq) bool {
		return slices.ContainsFunc(reqs, func(r hookReq) bool { return r.task() == id && r.ok() && r.Kind == "task" })
	})
}

// legacyPushTask is the part of a v0.x push body (the whole task in the
// task's dialect) these tests read.
type legacyPushTask struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
}

// waitLegacyFinal waits until the receiver accepted the push of task id's
// completed status in a v0.x task body, and returns all requests.
func waitLegacyFinal(t testing.TB, rc *hookReceiver, id a2a.TaskID) []hookReq {
	t.Helper()
	return rc.waitFor(t, hookWait, fmt.Sprintf("final v0.x push of task %s", id), func(reqs []hookReq) bool {
		return slices.ContainsFunc(reqs, func(r hookReq) bool {
			var b legacyPushTask
			return r.task() == id && r.ok() && json.Unmarshal(r.Body, &b) == nil && b.Status.State == "completed"
		})
	})
}

// checkLegacyPushBodies checks that the accepted pushes of task id are its
// whole task in a v0.x shape (kind is "task" in v0.3, absent in v0.1), one
// per status, in order.
func checkLegacyPushBodies(t testing.TB, reqs []hookReq, id string, states []string, kind string) {
	t.Helper()
	var got []string
	for _, r := range hooksOK(reqs) {
		var b legacyPushTask
		if err := json.Unmarshal(r.Body, &b); err != nil || b.ID != id || b.Kind != kind {
			t.Errorf("push body %s: want the v0.x task %s with kind %q, got %v", r.Body, id, kind, err)
		}
		got = append(got, b.Status.State)
	}
	if !slices.Equal(got, states) {
		t.Errorf("pushed states %v, want %v", got, states)
	}
}

func hookReqsString(reqs []hookReq) string {
	var b strings.Builder
	for i, r := range reqs {
		fmt.Fprintf(&b, "  %d: %s\n", i, r)
	}
	return b.String()
}

// hookToken returns the push JWT of a request, where a receiver finds it.
func hookToken(h http.Header) string {
	if s := h.Get(jwks.SignatureHeader); s != "" {
		return s
	}
	if s, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer "); ok {
		return s
	}
	return ""
}

func hooksFor(reqs []hookReq, id a2a.TaskID) []hookReq {
	return slices.DeleteFunc(slices.Clone(reqs), func(r hookReq) bool { return r.task() != id })
}

func hooksOK(reqs []hookReq) []hookReq {
	return slices.DeleteFunc(slices.Clone(reqs), func(r hookReq) bool { return !r.ok() })
}

func hookSeqs(reqs []hookReq) []uint64 {
	out := make([]uint64, len(reqs))
	for i, r := range reqs {
		out[i] = r.seq()
	}
	return out
}

// ---- NATS ----

// hookStatusEvents reads every status event of a task (subject
// a2a.evt.default.<id>.st) from the events stream, in order.
func hookStatusEvents(ctx context.Context, t testing.TB, js jetstream.JetStream, id a2a.TaskID) []events.Event {
	t.Helper()
	s, err := js.Stream(ctx, engine.DefaultConfig().EventsStream)
	if err != nil {
		t.Fatalf("Stream(%s)=%v", engine.DefaultConfig().EventsStream, err)
	}
	subj := events.Subject(events.DefaultTenant, id, events.KindStatus)
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		t.Fatalf("stream Info(%s)=%v", subj, err)
	}
	total := 0
	for _, n := range info.State.Subjects {
		total += int(n)
	}
	if total == 0 {
		t.Fatalf("task %s has no status events", id)
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subj}})
	if err != nil {
		t.Fatalf("OrderedConsumer(%s)=%v", subj, err)
	}
	var out []events.Event
	for len(out) < total {
		batch, err := cons.Fetch(total-len(out), jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			t.Fatalf("reading %s: %v", subj, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			ev, err := events.Decode(m.Subject(), m.Headers(), m.Data(), md.Sequence.Stream)
			if err != nil {
				t.Fatalf("Decode(seq %d)=%v", md.Sequence.Stream, err)
			}
			out = append(out, ev)
		}
		if err := batch.Error(); err != nil {
			t.Fatalf("reading %s: %v", subj, err)
		}
		if n == 0 {
			t.Fatalf("reading %s: no messages after %d of %d", subj, len(out), total)
		}
	}
	return out
}

func hookEventSeqs(evs []events.Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

// checkHookedOnce checks that the accepted (2xx) pushes of a task are
// exactly its status events, each once, in order: a {"statusUpdate": ...}
// equal to the event for each but the last, and the whole task, in
// finalState, for the last. cfgID names the push config (for the jti).
func checkHookedOnce(t testing.TB, reqs []hookReq, statuses []events.Event, id a2a.TaskID, cfgID string, finalState a2a.TaskState) {
	t.Helper()
	got := hooksOK(hooksFor(reqs, id))
	if !slices.Equal(hookSeqs(got), hookEventSeqs(statuses)) {
		t.Fatalf("task %s: accepted pushes for event seqs %v, want each status event %v exactly once, in order; requests:\n%s",
			id, hookSeqs(got), hookEventSeqs(statuses), hookReqsString(hooksFor(reqs, id)))
	}
	for i, r := range got {
		ev := statuses[i]
		st := ev.Body.(*a2a.TaskStatusUpdateEvent)
		if want := fmt.Sprintf("%s.%s.%s.%d", events.DefaultTenant, id, cfgID, ev.Seq); r.Claims.ID != want {
			t.Errorf("push %d of task %s: jti %q, want %q", i, id, r.Claims.ID, want)
		}
		if r.Claims.TaskID != string(id) || r.Claims.Tenant != events.DefaultTenant {
			t.Errorf("push %d: claims taskId %q tenant %q, want %q %q", i, r.Claims.TaskID, r.Claims.Tenant, id, events.DefaultTenant)
		}
		if r.Claims.BodySHA256 != jwks.BodyHash(r.Body) {
			t.Errorf("push %d: bodySha256 %q does not match the body", i, r.Claims.BodySHA256)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("push %d: Content-Type %q, want application/json", i, ct)
		}
		if i < len(got)-1 {
			want, err := json.Marshal(a2a.StreamResponse{Event: st})
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != "statusUpdate" || !bytes.Equal(r.Body, want) {
				t.Errorf("push %d of task %s (seq %d): body\n%s\nwant\n%s", i, id, ev.Seq, r.Body, want)
			}
			continue
		}
		if r.Kind != "task" {
			t.Errorf("last push of task %s: body %s, want {\"task\": ...}", id, r.Body)
			continue
		}
		var sr a2a.StreamResponse
		if err := json.Unmarshal(r.Body, &sr); err != nil {
			t.Fatalf("last push of task %s: %v in %s", id, err, r.Body)
		}
		task := sr.Event.(*a2a.Task)
		if task.ID != id || task.Status.State != finalState || st.Status.State != finalState {
			t.Errorf("last push of task %s: task %s in %s (event state %s), want %s", id, task.ID, task.Status.State, st.Status.State, finalState)
		}
	}
}

// ---- tools ----

// hookTool runs an a2abus tool command in process and returns its output.
func hookTool(ctx context.Context, t testing.TB, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := Main(ctx, args, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("a2abus %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// hookCursor is the JSON of a pair's delivery cursor in A2A_PUSHSTATE.
type hookCursor struct {
	Delivered  uint64 `json:"delivered"`
	Attempts   int    `json:"attempts"`
	LastError  string `json:"lastError"`
	Dead       bool   `json:"dead"`
	LeaseOwner string `json:"leaseOwner"`
}

// waitHookCursor watches the cursor of a (task, config) pair until cond
// holds.
func waitHookCursor(ctx context.Context, t testing.TB, js jetstream.JetStream, id a2a.TaskID, cfgID, what string, cond func(hookCursor) bool) hookCursor {
	t.Helper()
	kv, err := js.KeyValue(ctx, webhook.StateBucket)
	if err != nil {
		t.Fatalf("KeyValue(%s)=%v", webhook.StateBucket, err)
	}
	key := events.DefaultTenant + "." + string(id) + "." + cfgID
	w, err := kv.Watch(ctx, key)
	if err != nil {
		t.Fatalf("Watch(%s)=%v", key, err)
	}
	defer func() { _ = w.Stop() }()
	deadline := time.NewTimer(hookWait)
	defer deadline.Stop()
	var last hookCursor
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				t.Fatalf("cursor %s: watch closed", key)
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			if err := json.Unmarshal(e.Value(), &last); err != nil {
				t.Fatalf("cursor %s: %v in %s", key, err, e.Value())
			}
			if cond(last) {
				return last
			}
		case <-deadline.C:
			t.Fatalf("cursor %s: %s: not within %v; last %+v", key, what, hookWait, last)
		}
	}
}

// waitHookLeasesFree watches the cursors of the (task, cfgID) pairs until
// each has failed at least once and none is leased.
func waitHookLeasesFree(ctx context.Context, t testing.TB, js jetstream.JetStream, ids []a2a.TaskID, cfgID string) {
	t.Helper()
	kv, err := js.KeyValue(ctx, webhook.StateBucket)
	if err != nil {
		t.Fatalf("KeyValue(%s)=%v", webhook.StateBucket, err)
	}
	var keys []string
	for _, id := range ids {
		keys = append(keys, events.DefaultTenant+"."+string(id)+"."+cfgID)
	}
	w, err := kv.WatchFiltered(ctx, keys)
	if err != nil {
		t.Fatalf("Watch(%v)=%v", keys, err)
	}
	defer func() { _ = w.Stop() }()
	deadline := time.NewTimer(hookWait)
	defer deadline.Stop()
	last := map[string]hookCursor{}
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				t.Fatal("cursor watch closed")
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var c hookCursor
			if err := json.Unmarshal(e.Value(), &c); err != nil {
				t.Fatalf("cursor %s: %v in %s", e.Key(), err, e.Value())
			}
			last[e.Key()] = c
			free := len(last) == len(keys)
			for _, c := range last {
				free = free && c.Attempts > 0 && c.LeaseOwner == ""
			}
			if free {
				return
			}
		case <-deadline.C:
			t.Fatalf("cursors %v: not all failed once and unleased within %v; last %+v", keys, hookWait, last)
		}
	}
}

// hookDeadLetter is a line of a2abus push dlq list --json.
type hookDeadLetter struct {
	Seq      uint64 `json:"seq"`
	TaskID   string `json:"taskId"`
	ConfigID string `json:"configId"`
	URL      string `json:"url"`
	EventSeq uint64 `json:"eventSeq"`
	Status   int    `json:"httpStatus"`
	Error    string `json:"error"`
	Attempts int    `json:"attempts"`
}

func hookDeadLetters(ctx context.Context, t testing.TB, natsURL string) []hookDeadLetter {
	t.Helper()
	var out []hookDeadLetter
	for line := range strings.Lines(hookTool(ctx, t, "push", "dlq", "list", "--json", "--nats-url", natsURL)) {
		var d hookDeadLetter
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("push dlq list --json: line %q: %v", line, err)
		}
		out = append(out, d)
	}
	return out
}

// hookSend sends text with a push config.
func hookSend(ctx context.Context, t testing.TB, ts *testServer, text string, cfg *a2a.PushConfig, immediate bool) *a2a.Task {
	t.Helper()
	c := newClient(ctx, t, ts)
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: userText(text),
		Config: &a2a.SendMessageConfig{PushConfig: cfg, ReturnImmediately: immediate}})
	if err != nil {
		t.Fatalf("SendMessage(%q) with push config %s: %v", text, cfg.URL, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage(%q) result is %T, want *a2a.Task", text, res)
	}
	return task
}

// hookJWKS gets the JWKS of an edge over HTTP and returns its kids, the
// raw document and the Cache-Control max-age.
func hookJWKS(ctx context.Context, t testing.TB, base string) (kids []string, raw []byte, maxAge int) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/.well-known/jwks.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET JWKS: %v", err)
	}
	defer resp.Body.Close()
	raw, err = io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %v %s", req.URL, resp.StatusCode, err, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/jwk-set+json" {
		t.Errorf("JWKS Content-Type %q, want application/jwk-set+json", ct)
	}
	m := regexp.MustCompile(`(?:^|[ ,])max-age=(\d+)(?:$|[ ,])`).FindStringSubmatch(resp.Header.Get("Cache-Control"))
	if m == nil {
		t.Fatalf("JWKS Cache-Control %q, want a max-age", resp.Header.Get("Cache-Control"))
	}
	maxAge, _ = strconv.Atoi(m[1])
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatalf("JWKS %s: %v", raw, err)
	}
	for _, k := range set.Keys {
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			if _, ok := k[private]; ok {
				t.Errorf("JWKS key %v has the private parameter %q", k["kid"], private)
			}
		}
		if k["use"] != "sig" || k["alg"] == nil {
			t.Errorf("JWKS key %v: use %v alg %v, want sig and an alg", k["kid"], k["use"], k["alg"])
		}
		kid, _ := k["kid"].(string)
		kids = append(kids, kid)
	}
	slices.Sort(kids)
	return kids, raw, maxAge
}

// hookVerifier returns a receiver-side verifier for pushes to audience,
// with the JWKS of the edge at base.
func hookVerifier(ctx context.Context, t testing.TB, base, audience, issuer string) *jwks.Verifier {
	t.Helper()
	v, err := jwks.NewVerifier(ctx, base+"/.well-known/jwks.json", jwks.VerifierOptions{Audience: audience, Issuer: issuer})
	if err != nil {
		t.Fatalf("NewVerifier(%s)=%v", base, err)
	}
	t.Cleanup(func() { _ = v.Close(context.Background()) })
	return v
}

// ---- tests ----

func TestPushDeliversEveryStatusSigned(t *testing.T) {
	t.Parallel()
	ctx := hookContext(t)
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate = true })
	js := connectJS(t, ts.NATSURL)
	rc := newHookReceiver(t, nil)
	hook := rc.URL("/hook")

	kids, _, maxAge := hookJWKS(ctx, t, ts.URL)
	if len(kids) != 1 {
		t.Fatalf("JWKS kids %v, want one key", kids)
	}
	if maxAge <= 0 || maxAge > 300 {
		t.Errorf("JWKS max-age=%d, want 1..300", maxAge)
	}
	issuer := ts.URL + "/"
	v := hookVerifier(ctx, t, ts.URL, hook, issuer)

	task := hookSend(ctx, t, ts, "slow 2", &a2a.PushConfig{ID: "hook-1", URL: hook, Token: "tok"}, false)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("slow 2: state %s, want %s", task.Status.State, a2a.TaskStateCompleted)
	}
	reqs := hooksFor(rc.waitFinal(t, task.ID), task.ID)
	statuses := hookStatusEvents(ctx, t, js, task.ID)
	if len(statuses) < 4 {
		t.Fatalf("slow 2 has %d status events, want at least 4 (working, 2 progress, completed)", len(statuses))
	}
	checkHookedOnce(t, reqs, statuses, task.ID, "hook-1", a2a.TaskStateCompleted)
	if len(reqs) != len(statuses) {
		t.Errorf("receiver got %d requests for the task, want %d (it answered 200 to all):\n%s", len(reqs), len(statuses), hookReqsString(reqs))
	}

	// The final push carries the whole task, with its artifact.
	var final a2a.StreamResponse
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &final); err != nil {
		t.Fatal(err)
	}
	ft := final.Event.(*a2a.Task)
	if i := slices.IndexFunc(ft.Artifacts, func(a *a2a.Artifact) bool { return a.Name == "result" }); i < 0 ||
		hookText(ft.Artifacts[i].Parts) != "worked for 2 seconds" {
		t.Errorf("final push task artifacts %s, want \"result\": \"worked for 2 seconds\"", jsonOf(t, ft.Artifacts))
	}
	if ft.ContextID != task.ContextID || len(ft.History) < 3 {
		t.Errorf("final push task context %s, %d history entries; want %s and the progress messages", ft.ContextID, len(ft.History), task.ContextID)
	}

	for i, r := range reqs {
		for _, h := range []string{"X-A2A-Notification-Token", "A2A-Notification-Token"} {
			if got := r.Header.Get(h); got != "tok" {
				t.Errorf("push %d: %s %q, want %q", i, h, got, "tok")
			}
		}
		if r.Header.Get(jwks.SignatureHeader) != "" {
			t.Errorf("push %d: %s set without config authentication", i, jwks.SignatureHeader)
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			t.Fatalf("push %d: Authorization %q, want Bearer <JWT>", i, r.Header.Get("Authorization"))
		}
		claims, err := v.Verify(ctx, r.request(), r.Body)
		if err != nil {
			t.Fatalf("push %d: Verify=%v", i, err)
		}
		if claims.Seq != statuses[i].Seq || claims.TaskID != string(task.ID) {
			t.Errorf("push %d: verified claims taskId %s seq %d, want %s %d", i, claims.TaskID, claims.Seq, task.ID, statuses[i].Seq)
		}
		if want := fmt.Sprintf("default.%s.hook-1.%d", task.ID, statuses[i].Seq); claims.ID != want {
			t.Errorf("push %d: jti %q, want %q", i, claims.ID, want)
		}
		if claims.Issuer != issuer {
			t.Errorf("push %d: iss %q, want %q", i, claims.Issuer, issuer)
		}
		if aud, _ := claims.GetAudience(); !slices.Equal(aud, []string{hook}) {
			t.Errorf("push %d: aud %v, want [%s]", i, aud, hook)
		}
		if ttl := claims.ExpiresAt.Sub(claims.IssuedAt.Time); ttl != jwks.DefaultTokenTTL {
			t.Errorf("push %d: exp-iat %v, want %v", i, ttl, jwks.DefaultTokenTTL)
		}
		if !slices.Contains(kids, r.Kid) {
			t.Errorf("push %d: kid %q not in the JWKS %v", i, r.Kid, kids)
		}
	}

	// A receiver refuses a changed body, a replay, and a token for
	// another webhook.
	r := reqs[0]
	tampered := bytes.Clone(r.Body)
	tampered[len(tampered)/2] ^= 0x01
	if _, err := v.Verify(ctx, r.request(), tampered); !errors.Is(err, jwks.ErrBodyMismatch) {
		t.Errorf("Verify(tampered body)=%v, want ErrBodyMismatch", err)
	}
	if _, err := v.Verify(ctx, r.request(), r.Body); !errors.Is(err, jwks.ErrReplayed) {
		t.Errorf("Verify(replayed push)=%v, want ErrReplayed", err)
	}
	other := hookVerifier(ctx, t, ts.URL, rc.URL("/other"), "")
	if _, err := other.Verify(ctx, reqs[1].request(), reqs[1].Body); !errors.Is(err, jwt.ErrTokenInvalidAudience) {
		t.Errorf("Verify(push to %s) with audience %s: %v, want ErrTokenInvalidAudience", hook, rc.URL("/other"), err)
	}
	if _, err := v.Verify(ctx, &http.Request{Header: http.Header{}}, r.Body); !errors.Is(err, jwks.ErrNoToken) {
		t.Errorf("Verify(no token)=%v, want ErrNoToken", err)
	}

	t.Run("config authentication", func(t *testing.T) {
		basic := rc.URL("/basic")
		vb := hookVerifier(ctx, t, ts.URL, basic, issuer)
		task := hookSend(ctx, t, ts, "echo basic", &a2a.PushConfig{ID: "basic", URL: basic,
			Auth: &a2a.PushAuthInfo{Scheme: "Basic", Credentials: "dXNlcjpwYXNz"}}, false)
		reqs := hooksFor(rc.waitFinal(t, task.ID), task.ID)
		checkHookedOnce(t, reqs, hookStatusEvents(ctx, t, js, task.ID), task.ID, "basic", a2a.TaskStateCompleted)
		for i, r := range reqs {
			if got := r.Header.Get("Authorization"); got != "Basic dXNlcjpwYXNz" {
				t.Errorf("push %d: Authorization %q, want %q", i, got, "Basic dXNlcjpwYXNz")
			}
			if r.Header.Get(jwks.SignatureHeader) == "" {
				t.Fatalf("push %d: no %s header", i, jwks.SignatureHeader)
			}
			if got := r.Header.Get("X-A2A-Notification-Token"); got != "" {
				t.Errorf("push %d: X-A2A-Notification-Token %q without a config token", i, got)
			}
			if _, err := vb.Verify(ctx, r.request(), r.Body); err != nil {
				t.Errorf("push %d: Verify(%s)=%v", i, jwks.SignatureHeader, err)
			}
		}
	})
}

func hookText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

// hookFailFirst answers code to the first n requests for each task, then 200.
func hookFailFirst(n, code int) func(int, hookReq, []hookReq) int {
	return func(_ int, r hookReq, before []hookReq) int {
		if len(hooksFor(before, r.task())) < n {
			return code
		}
		return http.StatusOK
	}
}

// checkHookRetried checks that the failed pushes of a task came first, were
// n attempts at its first status (one jti), and were spaced by at least
// minGap.
func checkHookRetried(t testing.TB, reqs []hookReq, statuses []events.Event, n int, minGap time.Duration) {
	t.Helper()
	for i, r := range reqs {
		if (i < n) == r.ok() {
			t.Fatalf("push %d answered %d; want %d failures, then successes:\n%s", i, r.Status, n, hookReqsString(reqs))
		}
		if i < n && (r.seq() != statuses[0].Seq || r.Claims.ID != reqs[0].Claims.ID) {
			t.Errorf("failed push %d: seq %d jti %s, want retries of the first status %d (jti %s)", i, r.seq(), r.Claims.ID, statuses[0].Seq, reqs[0].Claims.ID)
		}
		if i > 0 && i <= n {
			if gap := r.At.Sub(reqs[i-1].At); gap < minGap {
				t.Errorf("attempt %d came %v after attempt %d, want a backoff of at least %v", i+1, gap, i, minGap)
			}
		}
	}
}

func TestPushRetriesThenDelivers(t *testing.T) {
	t.Parallel()
	ctx := hookContext(t)
	ts := startServer(t, func(c *ServeConfig) {
		c.PushPrivate = true
		c.PushBackoff, c.PushBackoffMx, c.PushAttempts = 50*time.Millisecond, 200*time.Millisecond, 10
	})
	js := connectJS(t, ts.NATSURL)

	for _, tt := range []struct {
		name string
		text string
		code int
		n    int
		// minGap is the least time between failed attempts: the
		// backoff's, for slow 2, whose second status comes a second
		// after the first. (An echo's second status comes at once and
		// makes an early attempt: see TestPushBackoffHeldAcrossNewStatuses.)
		minGap time.Duration
	}{
		{"503", "slow 2", http.StatusServiceUnavailable, 3, 40 * time.Millisecond},
		{"429", "echo too many", http.StatusTooManyRequests, 2, 0},
		{"500", "echo server error", http.StatusInternalServerError, 1, 0},
		{"408", "echo timeout", http.StatusRequestTimeout, 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := newHookReceiver(t, hookFailFirst(tt.n, tt.code))
			task := hookSend(ctx, t, ts, tt.text, &a2a.PushConfig{ID: "retry", URL: rc.URL("/hook")}, false)
			reqs := hooksFor(rc.waitFinal(t, task.ID), task.ID)
			statuses := hookStatusEvents(ctx, t, js, task.ID)
			checkHookedOnce(t, reqs, statuses, task.ID, "retry", a2a.TaskStateCompleted)
			checkHookRetried(t, reqs, statuses, tt.n, tt.minGap)
			if len(reqs) != tt.n+len(statuses) {
				t.Errorf("receiver got %d requests, want %d failures and %d deliveries:\n%s", len(reqs), tt.n, len(statuses), hookReqsString(reqs))
			}
		})
	}

	t.Run("timeout", func(t *testing.T) {
		ts := startServer(t, func(c *ServeConfig) {
			c.PushPrivate = true
			c.PushBackoff, c.PushBackoffMx, c.PushAttempts = 50*time.Millisecond, 200*time.Millisecond, 10
			c.PushTimeout = 300 * time.Millisecond
		})
		js := connectJS(t, ts.NATSURL)
		rc := newHookReceiver(t, hookFailFirst(1, hookHang))
		task := hookSend(ctx, t, ts, "echo hang", &a2a.PushConfig{ID: "hang", URL: rc.URL("/hook")}, false)
		reqs := hooksFor(rc.waitFinal(t, task.ID), task.ID)
		statuses := hookStatusEvents(ctx, t, js, task.ID)
		checkHookedOnce(t, reqs, statuses, task.ID, "hang", a2a.TaskStateCompleted)
		checkHookRetried(t, reqs, statuses, 1, 0)
		if gap := reqs[1].At.Sub(reqs[0].At); gap < 300*time.Millisecond {
			t.Errorf("retry %v after the hung attempt, want at least the 300ms push timeout", gap)
		}
	})
}

// TestPushBackoffHeldAcrossNewStatuses checks that a failing webhook is
// retried on the backoff schedule even while the task keeps producing
// statuses: a new status must not trigger an early attempt.
func TestPushBackoffHeldAcrossNewStatuses(t *testing.T) {
	t.Parallel()
	ctx := hookContext(t)
	const base = 3 * time.Second
	ts := startServer(t, func(c *ServeConfig) {
		c.PushPrivate = true
		c.PushBackoff, c.PushBackoffMx, c.PushAttempts = base, base, 40
	})
	js := connectJS(t, ts.NATSURL)
	var up atomic.Bool
	rc := newHookReceiver(t, func(int, hookReq, []hookReq) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	// slow 4 makes a status every second, for 4 seconds, while every
	// attempt fails: the attempts must still be base apart.
	task := hookSend(ctx, t, ts, "slow 4", &a2a.PushConfig{ID: "backoff", URL: rc.URL("/hook")}, false)
	failed := hooksFor(rc.requests(), task.ID)
	up.Store(true)
	for i := 1; i < len(failed); i++ {
		if gap := failed[i].At.Sub(failed[i-1].At); gap < base*9/10 {
			t.Errorf("attempt %d came %v after attempt %d (seq %d, %d); want the backoff of %v±10%% between attempts; attempts:\n%s",
				i+1, gap.Round(time.Millisecond), i, failed[i-1].seq(), failed[i].seq(), base, hookReqsString(failed))
			break
		}
	}
	// Once the receiver is up, everything arrives.
	reqs := hooksFor(rc.waitFinal(t, task.ID), task.ID)
	checkHookedOnce(t, reqs, hookStatusEvents(ctx, t, js, task.ID), task.ID, "backoff", a2a.TaskStateCompleted)
}

// waitHookWakeUps waits until the push fan-out has acknowledged every
// status event up to seq and the push queue is empty: every wake-up has
// been handled.
func waitHookWakeUps(ctx context.Context, t testing.TB, js jetstream.JetStream, seq uint64) {
	t.Helper()
	waitFor(t, hookWait, fmt.Sprintf("push wake-ups up to event %d handled", seq), func() (bool, error) {
		fan, err := js.Consumer(ctx, engine.DefaultConfig().EventsStream, "a2abus-push-fanout")
		if err != nil {
			return false, err
		}
		fi, err := fan.Info(ctx)
		if err != nil {
			return false, err
		}
		if fi.AckFloor.Stream < seq || fi.NumAckPending > 0 {
			return false, nil
		}
		q, err := js.Stream(ctx, webhook.QueueStream)
		if err != nil {
			return false, err
		}
		qi, err := q.Info(ctx)
		if err != nil {
			return false, err
		}
		return qi.State.Msgs == 0, nil
	})
}

func TestPushDeadLetterAndRedrive(t *testing.T) {
	t.Parallel()
	ctx := hookContext(t)
	ts := startServer(t, func(c *ServeConfig) {
		c.PushPrivate = true
		c.PushBackoff, c.PushBackoffMx, c.PushAttempts = 50*time.Millisecond, 200*time.Millisecond, 3
	})
	js := connectJS(t, ts.NATSURL)

	t.Run("4xx dead-letters at once; redrive resumes in order", func(t *testing.T) {
		var open atomic.Bool
		rc := newHookReceiver(t, func(int, hookReq, []hookReq) int {
			if open.Load() {
				return http.StatusOK
			}
			return http.StatusBadRequest
		})
		hook := rc.URL("/hook")
		task := hookSend(ctx, t, ts, "slow 2", &a2a.PushConfig{ID: "dlq", URL: hook}, false)
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("slow 2: state %s, want %s", task.Status.State, a2a.TaskStateCompleted)
		}
		statuses := hookStatusEvents(ctx, t, js, task.ID)
		cur := waitHookCursor(ctx, t, js, task.ID, "dlq", "dead", func(c hookCursor) bool { return c.Dead })
		if cur.Delivered != 0 || cur.Attempts != 1 || !strings.Contains(cur.LastError, "400") {
			t.Errorf("cursor of the dead pair %+v, want delivered 0, 1 attempt, error HTTP 400", cur)
		}
		// Every later status was handled while the pair was dead, and
		// none was sent.
		waitHookWakeUps(ctx, t, js, statuses[len(statuses)-1].Seq)
		reqs := hooksFor(rc.requests(), task.ID)
		if len(reqs) != 1 || reqs[0].Status != http.StatusBadRequest || reqs[0].seq() != statuses[0].Seq {
			t.Fatalf("requests while dead:\n%s\nwant one for the first status %d, answered 400", hookReqsString(reqs), statuses[0].Seq)
		}

		list := hookTool(ctx, t, "push", "dlq", "list", "--nats-url", ts.NATSURL)
		for _, want := range []string{string(task.ID), "config dlq", "HTTP 400", hook, "1 dead letters", fmt.Sprintf("event %d", statuses[0].Seq)} {
			if !strings.Contains(list, want) {
				t.Errorf("push dlq list:\n%s\nwant it to mention %q", list, want)
			}
		}
		dls := hookDeadLetters(ctx, t, ts.NATSURL)
		if len(dls) != 1 || dls[0].TaskID != string(task.ID) || dls[0].ConfigID != "dlq" || dls[0].Status != 400 ||
			dls[0].Attempts != 1 || dls[0].EventSeq != statuses[0].Seq || dls[0].URL != hook {
			t.Errorf("push dlq list --json: %+v, want task %s config dlq HTTP 400 after 1 attempt at event %d", dls, task.ID, statuses[0].Seq)
		}

		open.Store(true)
		out := hookTool(ctx, t, "push", "dlq", "redrive", "--all", "--nats-url", ts.NATSURL)
		if !strings.Contains(out, "1 redriven") {
			t.Errorf("push dlq redrive --all: %q, want \"1 redriven\"", out)
		}
		reqs = hooksFor(rc.waitFinal(t, task.ID), task.ID)
		checkHookedOnce(t, reqs, statuses, task.ID, "dlq", a2a.TaskStateCompleted)
		if len(reqs) != 1+len(statuses) {
			t.Errorf("receiver got %d requests, want the 400 and %d deliveries:\n%s", len(reqs), len(statuses), hookReqsString(reqs))
		}
		if list := hookTool(ctx, t, "push", "dlq", "list", "--nats-url", ts.NATSURL); !strings.Contains(list, "0 dead letters") {
			t.Errorf("push dlq list after the redrive:\n%s\nwant 0 dead letters", list)
		}
		cur = waitHookCursor(ctx, t, js, task.ID, "dlq", "all delivered", func(c hookCursor) bool {
			return c.Delivered == statuses[len(statuses)-1].Seq && c.LeaseOwner == ""
		})
		if cur.Dead || cur.Attempts != 0 {
			t.Errorf("cursor after the redrive %+v, want alive with no attempts", cur)
		}
	})

	t.Run("attempts exhausted", func(t *testing.T) {
		rc := newHookReceiver(t, func(int, hookReq, []hookReq) int { return http.StatusInternalServerError })
		task := hookSend(ctx, t, ts, "echo exhausted", &a2a.PushConfig{ID: "exhausted", URL: rc.URL("/hook")}, false)
		statuses := hookStatusEvents(ctx, t, js, task.ID)
		cur := waitHookCursor(ctx, t, js, task.ID, "exhausted", "dead", func(c hookCursor) bool { return c.Dead })
		if cur.Attempts != 3 || cur.Delivered != 0 {
			t.Errorf("cursor %+v, want 3 attempts, nothing delivered", cur)
		}
		waitHookWakeUps(ctx, t, js, statuses[len(statuses)-1].Seq)
		reqs := hooksFor(rc.requests(), task.ID)
		if len(reqs) != 3 || slices.ContainsFunc(reqs, func(r hookReq) bool { return r.seq() != statuses[0].Seq }) {
			t.Errorf("receiver got:\n%s\nwant 3 attempts at the first status %d", hookReqsString(reqs), statuses[0].Seq)
		}
		dls := slices.DeleteFunc(hookDeadLetters(ctx, t, ts.NATSURL), func(d hookDeadLetter) bool { return d.TaskID != string(task.ID) })
		if len(dls) != 1 || dls[0].Attempts != 3 || dls[0].Status != 500 || dls[0].EventSeq != statuses[0].Seq {
			t.Errorf("dead letters of the task: %+v, want one after 3 attempts, HTTP 500, event %d", dls, statuses[0].Seq)
		}
		// Redrive by number.
		rc.setAnswer(func(int, hookReq, []hookReq) int { return http.StatusOK })
		out := hookTool(ctx, t, "push", "dlq", "redrive", "--nats-url", ts.NATSURL, strconv.FormatUint(dls[0].Seq, 10))
		if !strings.Contains(out, "1 redriven") {
			t.Errorf("push dlq redrive %d: %q, want \"1 redriven\"", dls[0].Seq, out)
		}
		reqs = hooksFor(rc.waitFinal(t, task.ID), task.ID)
		checkHookedOnce(t, reqs, statuses, task.ID, "exhausted", a2a.TaskStateCompleted)
	})
}

func TestPushSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	ctx := hookContext(t)
	bin := buildBinary(t)
	data := t.TempDir()
	flags := []string{"--push-allow-private", "--push-backoff-base", "200ms", "--push-backoff-max", "500ms", "--worker-ack-wait", "2s"}

	// The receiver is down (503) until after the restart.
	var up atomic.Bool
	rc := newHookReceiver(t, func(int, hookReq, []hookReq) int {
		if up.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	hook := rc.URL("/hook")

	first := startProc(t, "first a2abus", bin, data, flags...)
	natsURL1 := first.NATSURL
	ts1 := &testServer{URL: first.URL}
	echo := hookSend(ctx, t, ts1, "echo before the crash", &a2a.PushConfig{ID: "crash", URL: hook}, false)
	slow := hookSend(ctx, t, ts1, "slow 3", &a2a.PushConfig{ID: "crash", URL: hook}, true)
	// Deliveries of both tasks are failing and being retried.
	rc.waitFor(t, hookWait, "attempts for both tasks", func(reqs []hookReq) bool {
		return len(hooksFor(reqs, echo.ID)) >= 2 && len(hooksFor(reqs, slow.ID)) >= 2
	})
	// Kill between attempts, when neither pair is leased, so both are
	// pending retries (a deliverer killed in the middle of a POST holds
	// its pair's lease for the lease time, 30s).
	waitHookLeasesFree(ctx, t, connectJS(t, natsURL1), []a2a.TaskID{echo.ID, slow.ID}, "crash")

	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	err := first.waitExit(killTimeout)
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("first a2abus exit: %v, want killed by SIGKILL", err)
	}
	killedAt := time.Now()
	if n := len(hooksOK(rc.requests())); n != 0 {
		t.Fatalf("%d pushes accepted before the kill, want none (the receiver was down)", n)
	}

	natsURL := startProc(t, "second a2abus", bin, data, flags...).NATSURL
	up.Store(true)
	rc.waitFinal(t, echo.ID)
	reqs := rc.waitFinal(t, slow.ID)
	t.Logf("all pushes delivered %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	js := connectJS(t, natsURL)
	for _, task := range []*a2a.Task{echo, slow} {
		checkHookedOnce(t, reqs, hookStatusEvents(ctx, t, js, task.ID), task.ID, "crash", a2a.TaskStateCompleted)
	}
}

// hookKidsEqual reports whether the JWKS kids are exactly want.
func hookKidsEqual(got []string, want ...string) bool {
	return slices.Equal(got, slices.Sorted(slices.Values(want)))
}

// hookRing reads the shared key ring from the A2A_KEYS bucket.
func hookRing(ctx context.Context, t testing.TB, js jetstream.JetStream) jwks.Ring {
	t.Helper()
	kv, err := js.KeyValue(ctx, webhook.KeysBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, "ring")
	if err != nil {
		t.Fatalf("key ring: %v", err)
	}
	var r jwks.Ring
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPushKeyRotation(t *testing.T) {
	t.Parallel()
	ctx := hookContext(t)
	const ttl, grace = 2 * time.Second, time.Second
	ts := startServer(t, func(c *ServeConfig) { c.PushPrivate, c.PushTokenTTL = true, ttl })
	js := connectJS(t, ts.NATSURL)
	// A second, stateless edge on the same NATS.
	edge2 := startServer(t, func(c *ServeConfig) {
		c.NATSURL, c.NoDemo, c.PushPrivate, c.PushTokenTTL = ts.NATSURL, true, true, ttl
	})
	rc := newHookReceiver(t, nil)
	hook := rc.URL("/hook")
	// One verifier for the whole test, as a receiver would have.
	v := hookVerifier(ctx, t, ts.URL, hook, "")

	kids, _, _ := hookJWKS(ctx, t, ts.URL)
	if len(kids) != 1 {
		t.Fatalf("JWKS kids %v, want one", kids)
	}
	oldKid := kids[0]
	if kids2, _, _ := hookJWKS(ctx, t, edge2.URL); !hookKidsEqual(kids2, oldKid) {
		t.Fatalf("second edge JWKS kids %v, want %s", kids2, oldKid)
	}

	task := hookSend(ctx, t, ts, "slow 6", &a2a.PushConfig{ID: "rot", URL: hook}, true)
	reqs := rc.waitFor(t, hookWait, "a first push", func(reqs []hookReq) bool { return len(hooksOK(reqs)) > 0 })
	if reqs[0].Kid != oldKid {
		t.Fatalf("first push kid %q, want %q", reqs[0].Kid, oldKid)
	}

	out := hookTool(ctx, t, "keys", "rotate", "--grace", grace.String(), "--token-ttl", ttl.String(), "--nats-url", ts.NATSURL)
	ring := hookRing(ctx, t, js)
	if len(ring.Keys) != 2 || ring.Keys[0].ID != oldKid {
		t.Fatalf("ring after rotate: %v, want the old key and a new one", ring.Keys)
	}
	oldKey, newKey := ring.Keys[0], ring.Keys[1]
	if !strings.Contains(out, oldKey.ID) || !strings.Contains(out, newKey.ID) || strings.Contains(out, `"d"`) {
		t.Errorf("keys rotate output %q, want both kids and no private key", out)
	}

	// Schedule: the new key is published now and signs after the grace;
	// the old one stops signing then and stays published for the token
	// lifetime and the clock skew.
	if !oldKey.SignUntil.Equal(newKey.SignFrom) || newKey.SignFrom.Sub(newKey.PublishAt) != grace {
		t.Errorf("old key signs until %v, new key published %v signs from %v; want the handover %v after publication",
			oldKey.SignUntil, newKey.PublishAt, newKey.SignFrom, grace)
	}
	if want := oldKey.SignUntil.Add(ttl + jwks.ClockSkew); !oldKey.PublishUntil.Equal(want) {
		t.Errorf("old key PublishUntil %v, want SignUntil + %v + ClockSkew = %v", oldKey.PublishUntil, ttl, want)
	}
	if !newKey.PublishUntil.IsZero() || !newKey.SignUntil.IsZero() {
		t.Errorf("new key %v: want no end of signing or publication", newKey)
	}
	ids := func(ks []jwks.Key) []string {
		var out []string
		for _, k := range ks {
			out = append(out, k.ID)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name string
		at   time.Time
		pub  []string
		sign string
	}{
		{"during the grace", newKey.SignFrom.Add(-time.Nanosecond), []string{oldKid, newKey.ID}, oldKid},
		{"at the handover", newKey.SignFrom, []string{oldKid, newKey.ID}, newKey.ID},
		{"last moment of the old key", oldKey.PublishUntil.Add(-time.Nanosecond), []string{oldKid, newKey.ID}, newKey.ID},
		{"old key retired", oldKey.PublishUntil, []string{newKey.ID}, newKey.ID},
	} {
		if got := ids(ring.Published(tc.at)); !slices.Equal(got, slices.Sorted(slices.Values(tc.pub))) {
			t.Errorf("%s: Published=%v, want %v", tc.name, got, tc.pub)
		}
		if k, err := ring.Signer(tc.at); err != nil || k.ID != tc.sign {
			t.Errorf("%s: Signer=%v, %v; want %s", tc.name, k.ID, err, tc.sign)
		}
	}
	if got := ids(ring.Prune(oldKey.PublishUntil).Keys); !slices.Equal(got, []string{newKey.ID}) {
		t.Errorf("Prune(at retirement)=%v, want only the new key", got)
	}

	// Both edges follow the rotation without a restart, and publish the
	// new key before it signs.
	for _, e := range []*testServer{ts, edge2} {
		waitFor(t, hookWait, "JWKS of "+e.URL+" with both keys", func() (bool, error) {
			kids, _, _ := hookJWKS(ctx, t, e.URL)
			return hookKidsEqual(kids, oldKid, newKey.ID), nil
		})
		_, _, maxAge := hookJWKS(ctx, t, e.URL)
		if now := time.Now(); now.Before(newKey.SignFrom) && time.Duration(maxAge)*time.Second > newKey.SignFrom.Sub(now) {
			t.Errorf("JWKS of %s during the grace: max-age=%d, past the handover in %v", e.URL, maxAge, newKey.SignFrom.Sub(now))
		}
	}
	if time.Now().After(newKey.SignFrom) {
		t.Errorf("the edges published the new key only after it started signing (%v late)", time.Since(newKey.SignFrom))
	}

	// After the grace the pushes carry the new kid.
	rc.waitFor(t, hookWait, "a push signed with the new key", func(reqs []hookReq) bool {
		return slices.ContainsFunc(reqs, func(r hookReq) bool { return r.Kid == newKey.ID })
	})
	_, _, maxAge := hookJWKS(ctx, t, ts.URL)
	if left := time.Until(oldKey.PublishUntil); time.Duration(maxAge)*time.Second > left+time.Second {
		t.Errorf("JWKS max-age=%d, past the old key's retirement in %v", maxAge, left)
	}

	reqs = hooksFor(rc.waitFinal(t, task.ID), task.ID)
	checkHookedOnce(t, reqs, hookStatusEvents(ctx, t, js, task.ID), task.ID, "rot", a2a.TaskStateCompleted)
	// The kid switches once, at the handover, and every token verifies
	// with the one verifier: the new kid makes it refetch the JWKS, and
	// the old kid stays in it. Tokens of the old key are checked last.
	switched := false
	for i, r := range reqs {
		switch {
		case r.Kid == newKey.ID:
			switched = true
		case r.Kid != oldKid || switched:
			t.Errorf("push %d: kid %q; want %s until the handover, then %s:\n%s", i, r.Kid, oldKid, newKey.ID, hookReqsString(reqs))
		case !r.At.Before(newKey.SignFrom.Add(time.Second)):
			t.Errorf("push %d at %v signed with the old key, the handover was at %v", i, r.At, newKey.SignFrom)
		}
	}
	slices.SortStableFunc(reqs, func(a, b hookReq) int {
		return strings.Compare(strconv.FormatBool(a.Kid == oldKid), strconv.FormatBool(b.Kid == oldKid))
	})
	for _, r := range reqs {
		claims, err := v.Verify(ctx, r.request(), r.Body)
		if err != nil {
			t.Errorf("Verify(push seq %d, kid %s)=%v", r.seq(), r.Kid, err)
			continue
		}
		if ttlGot := claims.ExpiresAt.Sub(claims.IssuedAt.Time); ttlGot != ttl {
			t.Errorf("push seq %d: exp-iat %v, want the token TTL %v", r.seq(), ttlGot, ttl)
		}
	}
}

func TestPushConfigMethodsA2AClient(t *testing.T) {
	t.Parallel()
	ctx := hookContext(t)
	// Without --push-allow-private: configs use public addresses, and are
	// added to a finished task, so nothing is ever sent to them.
	ts := startServer(t, nil)
	c := newClient(ctx, t, ts)
	if card := resolveCard(ctx, t, ts); !card.Capabilities.PushNotifications {
		t.Errorf("card capabilities.pushNotifications=false, want true")
	}
	task := mustSend(ctx, t, c, userText("echo configs"), false)

	a, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "cfg-a", URL: "https://93.184.216.34/a", Token: "ta"})
	if err != nil {
		t.Fatalf("CreateTaskPushConfig(cfg-a)=%v", err)
	}
	if a.ID != "cfg-a" || a.TaskID != task.ID || a.URL != "https://93.184.216.34/a" || a.Token != "ta" {
		t.Errorf("created %+v, want cfg-a as sent", a)
	}
	b, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: "https://93.184.216.34/b",
		Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "secret"}})
	if err != nil {
		t.Fatalf("CreateTaskPushConfig(no id)=%v", err)
	}
	if b.ID == "" || !events.ValidTaskID(a2a.TaskID(b.ID)) || b.Auth == nil || b.Auth.Scheme != "Bearer" {
		t.Errorf("created without id: %+v, want a server-assigned id and the authentication", b)
	}
	if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "cfg-c", URL: "http://8.8.8.8:8080/c"}); err != nil {
		t.Fatalf("CreateTaskPushConfig(cfg-c)=%v", err)
	}
	// Create with an existing id replaces the config.
	a2, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "cfg-a", URL: "https://93.184.216.34/a2"})
	if err != nil || a2.URL != "https://93.184.216.34/a2" {
		t.Fatalf("CreateTaskPushConfig(cfg-a again)=%+v, %v; want the replacement", a2, err)
	}

	got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "cfg-a"})
	if err != nil || got.ID != "cfg-a" || got.URL != "https://93.184.216.34/a2" || got.TaskID != task.ID {
		t.Errorf("GetTaskPushConfig(cfg-a)=%+v, %v; want the replacement", got, err)
	}
	if got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: b.ID}); err != nil || got.Auth == nil || got.Auth.Credentials != "secret" {
		t.Errorf("GetTaskPushConfig(%s)=%+v, %v; want it with its authentication", b.ID, got, err)
	}

	all, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil {
		t.Fatalf("ListTaskPushConfigs=%v", err)
	}
	wantIDs := slices.Sorted(slices.Values([]string{"cfg-a", b.ID, "cfg-c"}))
	var gotIDs []string
	for _, cfg := range all {
		gotIDs = append(gotIDs, cfg.ID)
	}
	if !slices.Equal(gotIDs, wantIDs) {
		t.Errorf("ListTaskPushConfigs ids %v, want %v (ordered by id)", gotIDs, wantIDs)
	}
	// Pages of one: the client hides nextPageToken, so page by hand.
	var paged []string
	token := ""
	for range 10 {
		params := map[string]any{"taskId": task.ID, "pageSize": 1}
		if token != "" {
			params["pageToken"] = token
		}
		r := rawCall(ctx, t, ts, "ListTaskPushNotificationConfigs", params)
		if r.Error != nil {
			t.Fatalf("ListTaskPushNotificationConfigs page %d: %+v", len(paged), r.Error)
		}
		var page a2a.ListTaskPushConfigResponse
		if err := json.Unmarshal(r.Result, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Configs) != 1 {
			t.Fatalf("page %d: %d configs, want 1 (%s)", len(paged), len(page.Configs), r.Result)
		}
		paged = append(paged, page.Configs[0].ID)
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	if !slices.Equal(paged, wantIDs) {
		t.Errorf("paged ids %v, want %v", paged, wantIDs)
	}

	for range 2 { // deleting is idempotent
		if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "cfg-a"}); err != nil {
			t.Errorf("DeleteTaskPushConfig(cfg-a)=%v", err)
		}
	}
	if _, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "cfg-a"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTaskPushConfig(deleted)=%v, want ErrTaskNotFound", err)
	}
	if all, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID}); err != nil || len(all) != 2 {
		t.Errorf("ListTaskPushConfigs after delete: %d configs, %v; want 2", len(all), err)
	}

	for _, tt := range []struct {
		name string
		cfg  a2a.PushConfig
		want error
	}{
		{"unknown task", a2a.PushConfig{TaskID: "no-such-task", URL: "https://93.184.216.34/"}, a2a.ErrTaskNotFound},
		{"malformed task id", a2a.PushConfig{TaskID: "a.b", URL: "https://93.184.216.34/"}, a2a.ErrTaskNotFound},
		{"loopback", a2a.PushConfig{TaskID: task.ID, URL: "http://127.0.0.1:9/hook"}, a2a.ErrInvalidParams},
		{"metadata address", a2a.PushConfig{TaskID: task.ID, URL: "http://169.254.169.254/"}, a2a.ErrInvalidParams},
		{"localhost", a2a.PushConfig{TaskID: task.ID, URL: "http://localhost:9/"}, a2a.ErrInvalidParams},
		{"no url", a2a.PushConfig{TaskID: task.ID}, a2a.ErrInvalidParams},
		{"scheme", a2a.PushConfig{TaskID: task.ID, URL: "ftp://93.184.216.34/"}, a2a.ErrInvalidParams},
		{"bad id", a2a.PushConfig{TaskID: task.ID, ID: "a/b", URL: "https://93.184.216.34/"}, a2a.ErrInvalidParams},
	} {
		if _, err := c.CreateTaskPushConfig(ctx, &tt.cfg); !errors.Is(err, tt.want) {
			t.Errorf("CreateTaskPushConfig(%s)=%v, want %v", tt.name, err, tt.want)
		}
	}
	// A send with a loopback webhook is refused too, and makes no task.
	_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: userText("echo refused"),
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: "http://127.0.0.1:9/hook"}}})
	if !errors.Is(err, a2a.ErrInvalidParams) {
		t.Errorf("SendMessage with a loopback webhook: %v, want ErrInvalidParams", err)
	}
	if _, err := c.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("ListTaskPushConfigs(unknown task)=%v, want ErrTaskNotFound", err)
	}
}

// TestPushFailedFollowUpKeepsConfig: a follow-up send that the task
// refuses must leave the task's push configs as they were, even when it
// names an existing config id.
func TestPushFailedFollowUpKeepsConfig(t *testing.T) {
	t.Parallel()
	ctx := hookContext(t)
	ts := startServer(t, nil)
	c := newClient(ctx, t, ts)
	task := mustSend(ctx, t, c, userText("echo done"), false)
	if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "keep", URL: "https://93.184.216.34/keep"}); err != nil {
		t.Fatalf("CreateTaskPushConfig(keep)=%v", err)
	}
	msg := userText("echo again")
	msg.TaskID = task.ID
	_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg,
		Config: &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{ID: "keep", URL: "https://93.184.216.34/other"}}})
	if !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Fatalf("follow-up to a completed task: %v, want ErrUnsupportedOperation", err)
	}
	got, err := c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "keep"})
	if err != nil || got.URL != "https://93.184.216.34/keep" {
		t.Errorf("config \"keep\" after the refused follow-up: %+v, %v; want it unchanged (URL https://93.184.216.34/keep)", got, err)
	}
}

// TestPushDLQRedriveFlagsAfterSeq runs a2abus push dlq redrive in the
// form its usage line shows: "redrive [--all | SEQ ...] [--nats-url URL]".
func TestPushDLQRedriveFlagsAfterSeq(t *testing.T) {
	t.Parallel()
	ctx := hookContext(t)
	ts := startServer(t, nil)
	var stdout, stderr bytes.Buffer
	err := Main(ctx, []string{"push", "dlq", "redrive", "7", "--nats-url", ts.NATSURL}, func(string) string { return "" }, &stdout, &stderr)
	if err != nil || !strings.Contains(stdout.String(), "0 redriven") {
		t.Errorf("a2abus push dlq redrive 7 --nats-url URL: %v, stdout %q; want \"0 redriven\" (no dead letter 7)", err, stdout.String())
	}
	stdout.Reset()
	if err := Main(ctx, []string{"push", "dlq", "list", "--json", "--nats-url", ts.NATSURL}, func(string) string { return "" }, &stdout, &stderr); err != nil || stdout.Len() != 0 {
		t.Errorf("a2abus push dlq list --json: %v, stdout %q; want nothing", err, stdout.String())
	}
}
