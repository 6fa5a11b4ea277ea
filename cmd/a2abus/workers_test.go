package main

// The example workers of workers/examples (Python, TypeScript) as real
// processes against a real server: the a2a-go v2 client's tasks served by
// them, redelivery across languages after a kill -9, MaxDeliver, cancel
// and heartbeats. make worker-deps (run once per test binary) installs
// what they need.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// Waits of the worker tests, generous for a busy two-core machine.
const (
	workerReadyTimeout = 90 * time.Second
	workerTaskTimeout  = 60 * time.Second
)

// The example workers, relative to the repository root.
var exampleWorkers = map[string]struct {
	card string   // the agent name it registers
	cmd  []string // its command line
}{
	"python":     {"a2abus Python demo agent", []string{"workers/examples/python/.venv/bin/python", "workers/examples/python/worker.py"}},
	"typescript": {"a2abus TypeScript worker", []string{"node", "workers/examples/typescript/dist/worker.js"}},
}

// workerDeps runs make worker-deps once: the Python venv with the pinned
// requirements, npm ci and the TypeScript build. Under make test they are
// there already and make has nothing to do.
var workerDeps = sync.OnceValues(func() (string, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	cmd := exec.Command("make", "-s", "worker-deps")
	cmd.Dir = root
	cmd.Env = childEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("make worker-deps: %v\n%s", err, out)
	}
	return root, nil
})

// workerProc is a running example worker.
type workerProc struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd

	mu      sync.Mutex
	lines   []logLine     // its stderr, line by line
	changed chan struct{} // closed and replaced on each new line

	done chan struct{} // closed once it has exited
}

type logLine struct {
	at   time.Time
	text string
}

// startWorker starts the example worker of lang for tenant with the
// credentials serve wrote under data, plus env, and waits until it prints
// "ready". At cleanup it gets SIGTERM (SIGKILL if it lingers), and on
// failure its log goes to t.Log.
func startWorker(t testing.TB, lang, data, tenant string, env ...string) *workerProc {
	t.Helper()
	root, err := workerDeps()
	if err != nil {
		t.Fatal(err)
	}
	ex, ok := exampleWorkers[lang]
	if !ok {
		t.Fatalf("no example worker %q", lang)
	}
	creds, err := readEnvFile(filepath.Join(data, credentialsDir, tenant+".env"))
	if err != nil {
		t.Fatalf("credentials of %s: %v", tenant, err)
	}
	cmd := exec.Command(ex.cmd[0], ex.cmd[1:]...)
	if !strings.Contains(ex.cmd[0], "/") {
		if cmd.Path, err = exec.LookPath(ex.cmd[0]); err != nil {
			t.Fatalf("%s: %v", ex.cmd[0], err)
		}
	} else {
		cmd.Path = filepath.Join(root, ex.cmd[0])
	}
	cmd.Args[0] = cmd.Path
	for i := 1; i < len(cmd.Args); i++ {
		cmd.Args[i] = filepath.Join(root, cmd.Args[i])
	}
	// Only the credentials file and env configure it.
	cmd.Env = slices.DeleteFunc(childEnv(), func(kv string) bool { return strings.HasPrefix(kv, "A2A_") })
	for k, v := range creds {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "PYTHONUNBUFFERED=1")
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	w := &workerProc{t: t, name: lang + "@" + tenant, cmd: cmd, changed: make(chan struct{}), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", w.name, err)
	}
	ready := make(chan struct{})
	var pipes sync.WaitGroup
	pipes.Go(func() {
		sc := bufio.NewScanner(stdout)
		saw := false
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "ready" && !saw {
				saw = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	})
	pipes.Go(func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, logLine{time.Now(), sc.Text()})
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stderr)
	})
	go func() {
		pipes.Wait() // Wait must come after the last read from the pipes
		_ = cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		w.stop()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", w.name, w.log())
		}
	})

	deadline := time.NewTimer(workerReadyTimeout)
	defer deadline.Stop()
	select {
	case <-ready:
	case <-w.done:
		t.Fatalf("%s exited before ready (%v):\n%s", w.name, cmd.ProcessState, w.log())
	case <-deadline.C:
		t.Fatalf("%s not ready after %v:\n%s", w.name, workerReadyTimeout, w.log())
	}
	return w
}

// kill ends the worker with SIGKILL, as a crash would, and waits for it.
func (w *workerProc) kill() {
	_ = w.cmd.Process.Kill()
	<-w.done
}

// stop ends the worker with SIGTERM, then SIGKILL if it has not exited
// within shutdownTimeout.
func (w *workerProc) stop() {
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	timer := time.NewTimer(shutdownTimeout)
	defer timer.Stop()
	select {
	case <-w.done:
	case <-timer.C:
		w.kill()
	}
}

func (w *workerProc) log() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, l := range w.lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}

// linesOf returns the worker's log lines about task.
func (w *workerProc) linesOf(task a2a.TaskID) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, l := range w.lines {
		if strings.Contains(l.text, "task="+string(task)) {
			out = append(out, l.text)
		}
	}
	return out
}

// waitLine waits until the worker logs a line about task that matches re
// and returns when the line arrived.
func (w *workerProc) waitLine(task a2a.TaskID, re *regexp.Regexp, timeout time.Duration) time.Time {
	w.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for i := 0; ; {
		w.mu.Lock()
		for ; i < len(w.lines); i++ {
			if l := w.lines[i]; strings.Contains(l.text, "task="+string(task)) && re.MatchString(l.text) {
				w.mu.Unlock()
				return l.at
			}
		}
		changed := w.changed
		w.mu.Unlock()
		select {
		case <-changed:
		case <-w.done:
			w.t.Fatalf("%s exited before logging /%s/ for task %s", w.name, re, task)
		case <-deadline.C:
			w.t.Fatalf("%s: no line /%s/ for task %s within %v", w.name, re, task, timeout)
		}
	}
}

// What the workers log (workers/examples/*): a claim, and the stop after
// a cancel or takeover.
var (
	workerClaimed = regexp.MustCompile(`claimed`)
	workerFenced  = regexp.MustCompile(`fenced`)
)

// tenantClient builds an a2a-go client from the card served for tenant.
func tenantClient(ctx context.Context, t testing.TB, ts *testServer, tenant string) *a2aclient.Client {
	t.Helper()
	base := ts.URL
	if tenant != "" {
		base += "/" + tenant
	}
	c, err := a2aclient.NewFromCard(ctx, resolveCardAt(ctx, t, base),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// streamTurn sends msg over SendStreamingMessage and describes the events.
func streamTurn(ctx context.Context, t testing.TB, c *a2aclient.Client, msg *a2a.Message) (a2a.TaskID, []string) {
	t.Helper()
	evs, err := collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}))
	if err != nil {
		t.Fatalf("SendStreamingMessage(%q): %v after %d events", firstText(msg), err, len(evs))
	}
	if len(evs) == 0 {
		t.Fatalf("SendStreamingMessage(%q): no events", firstText(msg))
	}
	return evs[0].TaskInfo().TaskID, descsOf(evs, func(e a2a.Event) a2a.Event { return e })
}

// skillRun is one use of the demo skills: the descriptions of the events
// of each turn and the final task.
type skillRun struct {
	turns [][]string
	task  *a2a.Task
}

// runSkill runs turns (the first starts a task, the others answer it) on
// c, streaming each.
func runSkill(ctx context.Context, t testing.TB, c *a2aclient.Client, turns ...string) skillRun {
	t.Helper()
	var run skillRun
	var id a2a.TaskID
	for i, text := range turns {
		msg := userText(text)
		if i > 0 {
			msg.TaskID = id
		}
		got, descs := streamTurn(ctx, t, c, msg)
		if i > 0 && got != id {
			t.Fatalf("turn %d of %v went to task %s, want %s", i, turns, got, id)
		}
		id = got
		run.turns = append(run.turns, descs)
	}
	run.task = mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: id})
	return run
}

// The uses of the demo skills every worker must serve alike.
var skillRuns = []struct {
	name  string
	turns []string
	want  [][]string // the events of each turn
	state a2a.TaskState
	art   string // the text of the final task's artifacts
}{
	{name: "echo", turns: []string{"echo hello from a client"},
		want: [][]string{{
			"task",
			`status TASK_STATE_WORKING ""`,
			`artifact echo append=false last=true "echo hello from a client"`,
			`status TASK_STATE_COMPLETED ""`,
		}},
		state: a2a.TaskStateCompleted, art: "echo hello from a client"},
	{name: "stream", turns: []string{"stream 4 20"},
		want: [][]string{{
			"task",
			`status TASK_STATE_WORKING ""`,
			`status TASK_STATE_WORKING "streaming 4 chunks every 20 ms"`,
			`artifact stream append=false last=false "chunk 1/4\n"`,
			`artifact stream append=true last=false "chunk 2/4\n"`,
			`artifact stream append=true last=false "chunk 3/4\n"`,
			`artifact stream append=true last=true "chunk 4/4\n"`,
			`status TASK_STATE_COMPLETED "streamed 4 chunks"`,
		}},
		state: a2a.TaskStateCompleted, art: "chunk 1/4\nchunk 2/4\nchunk 3/4\nchunk 4/4\n"},
	{name: "ask", turns: []string{"ask", "Ada"},
		want: [][]string{{
			"task",
			`status TASK_STATE_WORKING ""`,
			`status TASK_STATE_INPUT_REQUIRED "What is your name?"`,
		}, {
			"task",
			`status TASK_STATE_WORKING ""`,
			`artifact answer append=false last=true "Hello, Ada!"`,
			`status TASK_STATE_COMPLETED "Hello, Ada!"`,
		}},
		state: a2a.TaskStateCompleted, art: "Hello, Ada!"},
}

// TestExampleWorkers: the a2a-go v2 client's echo, stream and ask tasks,
// served by the Python worker and by the TypeScript worker, give the same
// events in the same order as the in-process Go demo; each worker
// registers its card; a cancel stops each; heartbeats carry a task past
// AckWait on one delivery.
func TestExampleWorkers(t *testing.T) {
	t.Parallel()
	ctx := workerContext(t)
	const ackWait = 2 * time.Second
	ts := startServer(t, func(c *ServeConfig) {
		c.WorkerTenants = []string{"python", "typescript"}
		c.WorkerAckWait = ackWait
	})

	// The Go demo serves the default tenant: the reference.
	demo := tenantClient(ctx, t, ts, "")
	for _, sr := range skillRuns {
		run := runSkill(ctx, t, demo, sr.turns...)
		if !slices.EqualFunc(run.turns, sr.want, slices.Equal) {
			t.Fatalf("the Go demo's %s:\n%s\nwant\n%s", sr.name, run.turns, sr.want)
		}
	}

	for _, lang := range []string{"python", "typescript"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			w := startWorker(t, lang, ts.Data, lang, "A2A_CONCURRENCY=4")
			waitCard(t, ts.URL+"/"+lang, exampleWorkers[lang].card)
			c := tenantClient(ctx, t, ts, lang)

			t.Run("card", func(t *testing.T) {
				card := resolveCardAt(ctx, t, ts.URL+"/"+lang)
				var skills []string
				for _, s := range card.Skills {
					skills = append(skills, s.ID)
				}
				slices.Sort(skills)
				if want := []string{"ask", "echo", "slow", "stream"}; !slices.Equal(skills, want) {
					t.Errorf("skills %v, want %v", skills, want)
				}
				for _, in := range card.SupportedInterfaces {
					if in.Tenant != lang {
						t.Errorf("interface %s %s has tenant %q", in.ProtocolBinding, in.URL, in.Tenant)
					}
				}
			})

			for _, sr := range skillRuns {
				t.Run(sr.name, func(t *testing.T) {
					run := runSkill(ctx, t, c, sr.turns...)
					if !slices.EqualFunc(run.turns, sr.want, slices.Equal) {
						t.Errorf("events:\n%q\nwant (as the Go demo)\n%q", run.turns, sr.want)
					}
					if run.task.Status.State != sr.state {
						t.Errorf("final state %s, want %s", run.task.Status.State, sr.state)
					}
					var art strings.Builder
					for _, a := range run.task.Artifacts {
						art.WriteString(textOf(a.Parts))
					}
					if art.String() != sr.art {
						t.Errorf("artifacts %q, want %q", art.String(), sr.art)
					}
				})
			}

			t.Run("cancel", func(t *testing.T) {
				task := mustSend(ctx, t, c, userText("slow 30"), true)
				waitProgress(ctx, t, c, task.ID, 1)
				at := time.Now()
				canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
				if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
					t.Fatalf("CancelTask: %v, %v", canceled, err)
				}
				stopped := w.waitLine(task.ID, workerFenced, workerTaskTimeout)
				// Measured, not asserted: the worker should stop within a
				// second (docs/worker-protocol.md).
				t.Logf("%s stopped %v after the cancel was sent", lang, stopped.Sub(at).Round(time.Millisecond))
				// It wrote nothing after the cancel.
				got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: task.ID})
				if got.Status.State != a2a.TaskStateCanceled || len(got.History) != len(canceled.History) || len(got.Artifacts) != 0 {
					t.Errorf("after the worker stopped: %s, %d messages (%d at the cancel), %d artifacts",
						got.Status.State, len(got.History), len(canceled.History), len(got.Artifacts))
				}
			})

			t.Run("heartbeat", func(t *testing.T) {
				// slow 8 runs four times AckWait on one delivery: the
				// worker's +WPI keeps the item.
				const secs = 8
				task := mustSend(ctx, t, c, userText("slow "+strconv.Itoa(secs)), true)
				done := waitState(ctx, t, c, task.ID, a2a.TaskStateCompleted, workerTaskTimeout)
				if steps := progressSteps(t, done); !slices.Equal(steps, seq(1, secs)) {
					t.Errorf("progress steps %v, want 1..%d once each", steps, secs)
				}
				for _, l := range w.linesOf(task.ID) {
					if !strings.Contains(l, "attempt=1") {
						t.Errorf("the item was redelivered: %s", l)
					}
				}
				if len(w.linesOf(task.ID)) == 0 {
					t.Errorf("%s logged nothing about task %s", lang, task.ID)
				}
			})
		})
	}
}

// TestWorkerTakeoverAcrossLanguages: a Python worker killed with SIGKILL
// in the middle of a slow task; after AckWait the TypeScript worker takes
// the redelivered item and finishes the task from where it stood.
func TestWorkerTakeoverAcrossLanguages(t *testing.T) {
	t.Parallel()
	ctx := workerContext(t)
	const ackWait = 2 * time.Second
	ts := startServer(t, func(c *ServeConfig) {
		c.WorkerTenants = []string{"xlang"}
		c.WorkerAckWait = ackWait
	})
	py := startWorker(t, "python", ts.Data, "xlang", "A2A_CONCURRENCY=1")
	c := tenantClient(ctx, t, ts, "xlang")

	const secs = 6
	task := mustSend(ctx, t, c, userText("slow "+strconv.Itoa(secs)), true)
	before := waitProgress(ctx, t, c, task.ID, 2)
	py.kill()
	killed := time.Now()
	steps := progressSteps(t, mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: task.ID}))
	t.Logf("killed the python worker at progress %v of %d", steps, secs)
	if len(steps) < before || len(steps) >= secs {
		t.Fatalf("progress at the kill %v", steps)
	}

	tsw := startWorker(t, "typescript", ts.Data, "xlang", "A2A_CONCURRENCY=1")
	claimed := tsw.waitLine(task.ID, workerClaimed, workerTaskTimeout)
	t.Logf("the typescript worker claimed the task %v after the kill (AckWait %v)", claimed.Sub(killed).Round(time.Millisecond), ackWait)
	done := waitState(ctx, t, c, task.ID, a2a.TaskStateCompleted, workerTaskTimeout)

	// The steps recorded before the kill are not done again; the one in
	// flight at the kill may be.
	all := progressSteps(t, done)
	want := seq(1, secs)
	if !slices.Equal(slices.Compact(slices.Clone(all)), want) || len(all) > secs+1 {
		t.Errorf("progress steps %v, want each of 1..%d in order (one repeat at most)", all, secs)
	}
	if !slices.Equal(all[:len(steps)], steps) {
		t.Errorf("progress steps %v do not continue those before the kill %v", all, steps)
	}
	if art := textOf(done.Artifacts[0].Parts); len(done.Artifacts) != 1 || art != fmt.Sprintf("worked for %d seconds", secs) {
		t.Errorf("artifacts %v", done.Artifacts)
	}
	for _, l := range tsw.linesOf(task.ID) {
		if !strings.Contains(l, "attempt=2") {
			t.Errorf("typescript: %s, want attempt=2", l)
		}
	}
}

// TestWorkerMaxDeliver: with MaxDeliver 2, a task whose worker dies on the
// first delivery is failed by the worker of the second, with a reason the
// client reads; in both directions between the languages.
func TestWorkerMaxDeliver(t *testing.T) {
	t.Parallel()
	ctx := workerContext(t)
	ts := startServer(t, func(c *ServeConfig) {
		c.WorkerTenants = []string{"py2ts", "ts2py"}
		c.WorkerAckWait = 2 * time.Second
		c.WorkerMaxDel = 2
	})
	for _, tc := range []struct{ tenant, first, second string }{
		{"py2ts", "python", "typescript"},
		{"ts2py", "typescript", "python"},
	} {
		t.Run(tc.tenant, func(t *testing.T) {
			t.Parallel()
			first := startWorker(t, tc.first, ts.Data, tc.tenant, "A2A_CONCURRENCY=1")
			c := tenantClient(ctx, t, ts, tc.tenant)
			task := mustSend(ctx, t, c, userText("slow 30"), true)
			waitProgress(ctx, t, c, task.ID, 1)
			first.kill()

			startWorker(t, tc.second, ts.Data, tc.tenant, "A2A_CONCURRENCY=1")
			failed := waitState(ctx, t, c, task.ID, a2a.TaskStateFailed, workerTaskTimeout)
			if got, want := firstText(failed.Status.Message), "the agent gave up after 1 attempts"; got != want {
				t.Errorf("FAILED with %q, want %q", got, want)
			}
			if failed.Status.Message == nil || failed.Status.Message.Role != a2a.MessageRoleAgent {
				t.Errorf("FAILED status message %+v, want an agent message", failed.Status.Message)
			}
		})
	}
}

// workerContext bounds a worker test's calls: longer than e2eContext, as
// the tests wait for workers to start and for AckWait to pass.
func workerContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// resolveCardAt resolves the card served under base.
func resolveCardAt(ctx context.Context, t testing.TB, base string) *a2a.AgentCard {
	t.Helper()
	card, err := agentcard.NewResolver(&http.Client{Timeout: 10 * time.Second}).Resolve(ctx, base)
	if err != nil {
		t.Fatalf("card of %s: %v", base, err)
	}
	return card
}

// progressSteps returns k of each "progress k/N" agent message in the
// task's history, in order.
func progressSteps(t testing.TB, task *a2a.Task) []int {
	t.Helper()
	var out []int
	for _, m := range task.History {
		if m.Role != a2a.MessageRoleAgent {
			continue
		}
		if sm := progressRE.FindStringSubmatch(textOf(m.Parts)); sm != nil {
			k, _ := strconv.Atoi(sm[1])
			out = append(out, k)
		}
	}
	return out
}

// waitProgress waits until the task has at least n progress steps and
// returns how many it has.
func waitProgress(ctx context.Context, t testing.TB, c *a2aclient.Client, id a2a.TaskID, n int) int {
	t.Helper()
	got := 0
	waitFor(t, workerTaskTimeout, fmt.Sprintf("task %s at progress %d", id, n), func() (bool, error) {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			return false, err
		}
		if task.Status.State.Terminal() {
			return false, fmt.Errorf("task %s", task.Status.State)
		}
		got = len(progressSteps(t, task))
		return got >= n, nil
	})
	return got
}

// seq returns from..to.
func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
