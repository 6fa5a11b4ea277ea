package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
)

// Streaming tests: SendStreamingMessage and SubscribeToTask over SSE,
// driven by the a2a-go client and by a raw SSE reader that sees the
// frames' ids, with the task's events read back from the stream as the
// reference.

// streamTimeout bounds each streaming test; the whole file runs in well
// under a minute, the margin is for loaded machines.
const streamTimeout = 90 * time.Second

func streamContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), streamTimeout)
	t.Cleanup(cancel)
	return ctx
}

// ---- raw SSE ----

// sseItem is one thing read from an SSE body: a comment line, or a frame
// (its id line, if any, and its data).
type sseItem struct {
	comment   string
	isComment bool
	id        string
	hasID     bool
	data      string
}

// sequence returns the item's id as a stream sequence, and whether it
// has one.
func (it sseItem) sequence() (uint64, bool, error) {
	if !it.hasID {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(it.id, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("frame id %q is not a sequence: %v", it.id, err)
	}
	return n, true, nil
}

// sseParser reads an SSE body as the server writes it: "id:" and "data:"
// lines ended by a blank line, and ": comment" lines.
type sseParser struct{ r *bufio.Reader }

func newSSEParser(r io.Reader) *sseParser { return &sseParser{r: bufio.NewReaderSize(r, 64<<10)} }

// next returns the next item, or io.EOF at the clean end of the body.
func (p *sseParser) next() (sseItem, error) {
	var it sseItem
	var data []string
	for {
		line, err := p.r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && data == nil && !it.hasID {
				return sseItem{}, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return sseItem{}, fmt.Errorf("body ends inside a frame: %w", io.ErrUnexpectedEOF)
			}
			return sseItem{}, err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		switch {
		case line == "":
			if data != nil || it.hasID {
				it.data = strings.Join(data, "\n")
				return it, nil
			}
		case strings.HasPrefix(line, ":"):
			if data == nil && !it.hasID {
				return sseItem{isComment: true, comment: strings.TrimPrefix(line[1:], " ")}, nil
			}
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				it.id, it.hasID = value, true
			case "data":
				data = append(data, value)
			}
		}
	}
}

// sseEvent is a decoded frame: the event with its id (the stream
// sequence), or a JSON-RPC error.
type sseEvent struct {
	seq     uint64
	hasID   bool
	event   a2a.Event
	errCode int
}

func (e sseEvent) String() string {
	if e.event == nil {
		return fmt.Sprintf("[%d] error %d", e.seq, e.errCode)
	}
	return fmt.Sprintf("[%d] %s", e.seq, describe(e.event))
}

func decodeFrame(it sseItem) (sseEvent, error) {
	var ev sseEvent
	if seq, has, err := it.sequence(); err != nil {
		return ev, err
	} else {
		ev.seq, ev.hasID = seq, has
	}
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(it.data), &resp); err != nil {
		return ev, fmt.Errorf("frame data %q: %v", truncateText(it.data, 200), err)
	}
	if resp.JSONRPC != "2.0" || string(resp.ID) != "1" {
		return ev, fmt.Errorf("frame data %q: not a JSON-RPC 2.0 response to request 1", truncateText(it.data, 200))
	}
	if resp.Error != nil {
		ev.errCode = resp.Error.Code
		return ev, nil
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal(resp.Result, &sr); err != nil {
		return ev, fmt.Errorf("frame result %q: %v", truncateText(string(resp.Result), 200), err)
	}
	ev.event = sr.Event
	return ev, nil
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// sseStream is an open SSE response.
type sseStream struct {
	resp   *http.Response
	p      *sseParser
	cancel context.CancelFunc
	// comments holds the comment lines read so far.
	comments []string
}

// next returns the next frame, skipping comments (which it records), or
// io.EOF at the end of the stream.
func (s *sseStream) next() (sseEvent, error) {
	for {
		it, err := s.p.next()
		if err != nil {
			return sseEvent{}, err
		}
		if it.isComment {
			s.comments = append(s.comments, it.comment)
			continue
		}
		return decodeFrame(it)
	}
}

// read reads n frames (n < 0: to the end of the stream).
func (s *sseStream) read(n int) ([]sseEvent, error) { return readFrames(s.next, n) }

// readFrames reads n frames with next (n < 0: to the end of the stream).
// The SSE readers of every dialect's tests share it.
func readFrames[F any](next func() (F, error), n int) ([]F, error) {
	var out []F
	for n < 0 || len(out) < n {
		f, err := next()
		if errors.Is(err, io.EOF) && n < 0 {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("after %d frames: %w", len(out), err)
		}
		out = append(out, f)
	}
	return out, nil
}

// close drops the connection.
func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// rpcRequestBody is a JSON-RPC request with id 1.
func rpcRequestBody(method string, params any) ([]byte, error) {
	return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

// postSSE posts a streaming JSON-RPC request to base+"/"+query with the
// extra headers. The response may be SSE or a JSON error; the caller
// checks. It does not touch t.
func postSSE(ctx context.Context, base, query, method string, params any, hdr map[string]string) (*http.Response, context.CancelFunc, error) {
	body, err := rpcRequestBody(method, params)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/"+query, bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("A2A-Version", "1.0")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// openSSE posts a streaming request and checks that the answer is an SSE
// stream. It does not touch t.
func openSSE(ctx context.Context, base, query, method string, params any, hdr map[string]string) (*sseStream, error) {
	resp, cancel, err := postSSE(ctx, base, query, method, params, hdr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%s: HTTP %s, Content-Type %q, headers %v, proto %s, TE %v, body %s; want 200 text/event-stream", method, resp.Status, ct, resp.Header, resp.Proto, resp.TransferEncoding, truncateText(string(b), 100))
	}
	return &sseStream{resp: resp, p: newSSEParser(resp.Body), cancel: cancel}, nil
}

func mustOpenSSE(ctx context.Context, t testing.TB, base, query, method string, params any, hdr map[string]string) *sseStream {
	t.Helper()
	s, err := openSSE(ctx, base, query, method, params, hdr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

// readSSE opens a stream and reads it to the end.
func readSSE(ctx context.Context, t testing.TB, base, query, method string, params any, hdr map[string]string) []sseEvent {
	t.Helper()
	s := mustOpenSSE(ctx, t, base, query, method, params, hdr)
	defer s.close()
	frames, err := s.read(-1)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return frames
}

// jsonRPCError posts a streaming request that must be refused before the
// stream starts: HTTP 200 with a JSON (not SSE) JSON-RPC error. It
// returns the error code.
func jsonRPCError(ctx context.Context, t testing.TB, base, query, method string, params any, hdr map[string]string) int {
	t.Helper()
	resp, cancel, err := postSSE(ctx, base, query, method, params, hdr)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %s, want 200", method, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q, want application/json", method, ct)
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: decode: %v", method, err)
	}
	if r.Error == nil {
		t.Fatalf("%s: result %s, want an error", method, r.Result)
	}
	return r.Error.Code
}

func sendParams(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: userText(text)}
}

func subscribeParams(id a2a.TaskID) map[string]any { return map[string]any{"id": id} }

func lastEventHeader(seq uint64) map[string]string {
	return map[string]string{"Last-Event-ID": strconv.FormatUint(seq, 10)}
}

// ---- the reference: the task's events in the stream ----

// logEvent is one event of a task as the stream holds it, as a stream
// item: the created event as its task, status and artifact updates.
type logEvent struct {
	seq   uint64
	event a2a.Event
}

func (e logEvent) String() string { return fmt.Sprintf("[%d] %s", e.seq, describe(e.event)) }

// streamJS connects to a server's NATS and returns the events stream.
func streamJS(ctx context.Context, t testing.TB, natsURL string) (jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	nc, err := nats.Connect(natsURL, nats.Name("a2abus-stream-test"))
	if err != nil {
		t.Fatalf("nats.Connect(%s)=%v", natsURL, err)
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
	return js, s
}

// taskLog reads every event the stream holds on a2a.evt.default.<id>.>
// with an ordered consumer, without the client input events (.in events
// other than the creation), which streams do not carry.
func taskLog(ctx context.Context, t testing.TB, s jetstream.Stream, id a2a.TaskID) []logEvent {
	t.Helper()
	filter := events.TaskFilter(events.DefaultTenant, id)
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		t.Fatalf("stream Info(%s)=%v", filter, err)
	}
	total := uint64(0)
	for _, n := range info.State.Subjects {
		total += n
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		t.Fatalf("OrderedConsumer(%s)=%v", filter, err)
	}
	var out []logEvent
	read := uint64(0)
	for read < total {
		batch, err := cons.Fetch(int(min(total-read, 500)), jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			t.Fatalf("reading %s: %v after %d of %d messages", filter, err, read, total)
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
			switch b := ev.Body.(type) {
			case *events.Created:
				out = append(out, logEvent{ev.Seq, b.Task})
			case *a2a.TaskStatusUpdateEvent:
				out = append(out, logEvent{ev.Seq, b})
			case *a2a.TaskArtifactUpdateEvent:
				out = append(out, logEvent{ev.Seq, b})
			}
		}
		if err := batch.Error(); err != nil {
			t.Fatalf("reading %s: %v after %d of %d messages", filter, err, read, total)
		}
		if n == 0 {
			t.Fatalf("reading %s: no messages after %d of %d", filter, read, total)
		}
		read += uint64(n)
	}
	return out
}

// ---- comparing ----

func textOf(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

// describe renders what a stream item says, for comparing streams with
// the log: a task is just "task" (a snapshot stands for several events).
func describe(e a2a.Event) string {
	switch e := e.(type) {
	case *a2a.Task:
		return "task"
	case *a2a.TaskStatusUpdateEvent:
		msg := ""
		if e.Status.Message != nil {
			msg = textOf(e.Status.Message.Parts)
		}
		return fmt.Sprintf("status %s %q", e.Status.State, msg)
	case *a2a.TaskArtifactUpdateEvent:
		return fmt.Sprintf("artifact %s append=%t last=%t %q", e.Artifact.ID, e.Append, e.LastChunk, textOf(e.Artifact.Parts))
	case *a2a.Message:
		return "message " + textOf(e.Parts)
	}
	return fmt.Sprintf("%T", e)
}

func descsOf[E any](evs []E, f func(E) a2a.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = describe(f(e))
	}
	return out
}

func logDescs(l []logEvent) []string {
	return descsOf(l, func(e logEvent) a2a.Event { return e.event })
}

func frameDescs(f []sseEvent) []string {
	return descsOf(f, func(e sseEvent) a2a.Event { return e.event })
}

// checkFramesExact checks that frames are exactly the log events from
// log[from] on: the same ids in the same order, none missing or repeated,
// each saying what its event says.
func checkFramesExact(t testing.TB, what string, frames []sseEvent, log []logEvent, from int) {
	t.Helper()
	want := log[from:]
	var gotSeqs, wantSeqs []uint64
	for _, f := range frames {
		gotSeqs = append(gotSeqs, f.seq)
		if !f.hasID || f.event == nil {
			t.Errorf("%s: frame %v without id or event", what, f)
		}
	}
	for _, e := range want {
		wantSeqs = append(wantSeqs, e.seq)
	}
	if !slices.Equal(gotSeqs, wantSeqs) {
		t.Fatalf("%s: frame ids=%v\nwant the log's %v", what, gotSeqs, wantSeqs)
	}
	got, exp := frameDescs(frames), logDescs(want)
	for i := range got {
		if got[i] != exp[i] {
			t.Errorf("%s: frame %d (id %d)=%s, want %s", what, i, frames[i].seq, got[i], exp[i])
		}
	}
}

// checkChunks checks that the artifact "stream" chunks among evs (after
// the parts the first task snapshot already holds, if any) are "chunk
// i/n" for i=1..n, once each, in order, with append on all but the first
// and lastChunk on the last.
func checkChunks(t testing.TB, what string, evs []a2a.Event, n int) {
	t.Helper()
	var texts []string
	for i, e := range evs {
		switch e := e.(type) {
		case *a2a.Task:
			if i != 0 {
				t.Errorf("%s: task at item %d, want only first", what, i)
				continue
			}
			for _, a := range e.Artifacts {
				if a.ID == "stream" {
					for _, p := range a.Parts {
						texts = append(texts, p.Text())
					}
				}
			}
		case *a2a.TaskArtifactUpdateEvent:
			if e.Artifact.ID != "stream" {
				continue
			}
			k := len(texts) + 1
			if e.Append != (k > 1) || e.LastChunk != (k == n) {
				t.Errorf("%s: chunk %d append=%t lastChunk=%t, want %t %t", what, k, e.Append, e.LastChunk, k > 1, k == n)
			}
			for _, p := range e.Artifact.Parts {
				texts = append(texts, p.Text())
			}
		}
	}
	var want []string
	for i := 1; i <= n; i++ {
		want = append(want, fmt.Sprintf("chunk %d/%d\n", i, n))
	}
	if !slices.Equal(texts, want) {
		t.Errorf("%s: %d chunks %q, want chunk 1/%d..%d/%d once each in order", what, len(texts), shortList(texts), n, n, n)
	}
}

func shortList(s []string) []string {
	if len(s) <= 12 {
		return s
	}
	return append(append(slices.Clip(s[:6]), "..."), s[len(s)-6:]...)
}

func eventsOf(frames []sseEvent) []a2a.Event {
	out := make([]a2a.Event, len(frames))
	for i, f := range frames {
		out[i] = f.event
	}
	return out
}

func isFinal(e a2a.Event, state a2a.TaskState) bool {
	s, ok := e.(*a2a.TaskStatusUpdateEvent)
	return ok && s.Status.State == state
}

// collect reads an a2a-go event stream to its end.
func collect(seq iter.Seq2[a2a.Event, error]) ([]a2a.Event, error) {
	var out []a2a.Event
	for ev, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// checkClientStream checks an a2a-go stream of task id against the task's
// log: a Task first, standing for the log's first prefix events (prefix <
// 0: any number), then exactly the rest of the log, in order, ending at
// state final.
func checkClientStream(t testing.TB, what string, got []a2a.Event, log []logEvent, id a2a.TaskID, prefix int, final a2a.TaskState) {
	t.Helper()
	if len(got) < 2 {
		t.Fatalf("%s: %d events %v, want a task and updates", what, len(got), descsOf(got, func(e a2a.Event) a2a.Event { return e }))
	}
	task, ok := got[0].(*a2a.Task)
	if !ok {
		t.Fatalf("%s: first event %s, want the task", what, describe(got[0]))
	}
	if task.ID != id {
		t.Errorf("%s: first event is task %s, want %s", what, task.ID, id)
	}
	if last := got[len(got)-1]; !isFinal(last, final) {
		t.Errorf("%s: last event %s, want status %s", what, describe(last), final)
	}
	rest := descsOf(got[1:], func(e a2a.Event) a2a.Event { return e })
	all := logDescs(log)
	if len(rest) >= len(all) || !slices.Equal(rest, all[len(all)-len(rest):]) {
		t.Fatalf("%s: events after the task:\n%s\nwant the end of the log:\n%s", what, strings.Join(rest, "\n"), strings.Join(all, "\n"))
	}
	n := len(all) - len(rest)
	if prefix >= 0 && n != prefix {
		t.Errorf("%s: the task stands for %d log events, want %d", what, n, prefix)
	}
	// The task is the task as of those events.
	want := a2a.TaskStateUnspecified
	for _, e := range log[:n] {
		switch e := e.event.(type) {
		case *a2a.Task:
			want = e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			want = e.Status.State
		}
	}
	if task.Status.State != want {
		t.Errorf("%s: first task in state %s, want %s (after %d log events)", what, task.Status.State, want, n)
	}
}

// ---- tests ----

// TestStreamClient drives SendStreamingMessage and SubscribeToTask with
// the a2a-go client.
func TestStreamClient(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	ts := startServer(t, nil)
	c := newClient(ctx, t, ts)
	_, es := streamJS(ctx, t, ts.NATSURL)

	for _, tc := range []struct {
		text   string
		chunks int
		final  a2a.TaskState
	}{
		{"stream 5 20", 5, a2a.TaskStateCompleted},
		{"ask", 0, a2a.TaskStateInputRequired},
		{"echo hello stream", 0, a2a.TaskStateCompleted},
	} {
		got, err := collect(c.SendStreamingMessage(ctx, sendParams(tc.text)))
		if err != nil {
			t.Fatalf("SendStreamingMessage(%q)=%v after %d events", tc.text, err, len(got))
		}
		if len(got) == 0 {
			t.Fatalf("SendStreamingMessage(%q): no events", tc.text)
		}
		task, ok := got[0].(*a2a.Task)
		if !ok {
			t.Fatalf("SendStreamingMessage(%q): first event %s, want the task", tc.text, describe(got[0]))
		}
		if task.Status.State != a2a.TaskStateSubmitted {
			t.Errorf("SendStreamingMessage(%q): first task in %s, want %s", tc.text, task.Status.State, a2a.TaskStateSubmitted)
		}
		log := taskLog(ctx, t, es, task.ID)
		checkClientStream(t, tc.text, got, log, task.ID, 1, tc.final)
		if tc.chunks > 0 {
			checkChunks(t, tc.text, got, tc.chunks)
		}
		if tc.text == "echo hello stream" {
			a, ok := got[len(got)-2].(*a2a.TaskArtifactUpdateEvent)
			if !ok || textOf(a.Artifact.Parts) != tc.text {
				t.Errorf("echo: event before COMPLETED is %s, want the echo artifact %q", describe(got[len(got)-2]), tc.text)
			}
		}
		if tc.text != "ask" {
			continue
		}

		// The answer, streamed: the task first, then up to COMPLETED.
		before := taskLog(ctx, t, es, task.ID)
		answer := userText("Ada")
		answer.TaskID = task.ID
		answer.ContextID = task.ContextID
		got, err = collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: answer}))
		if err != nil {
			t.Fatalf("SendStreamingMessage(answer)=%v after %d events", err, len(got))
		}
		log = taskLog(ctx, t, es, task.ID)
		checkClientStream(t, "ask answer", got, log, task.ID, len(before), a2a.TaskStateCompleted)
		if last, ok := got[len(got)-1].(*a2a.TaskStatusUpdateEvent); ok && (last.Status.Message == nil || textOf(last.Status.Message.Parts) != "Hello, Ada!") {
			t.Errorf("ask answer: final status %s, want the greeting", describe(last))
		}
	}

	// SubscribeToTask on a running task, beside the SendStreamingMessage
	// stream that started it: both see the same events.
	next, stop := iter.Pull2(c.SendStreamingMessage(ctx, sendParams("stream 20 50")))
	defer stop()
	var first []a2a.Event
	for chunks := 0; chunks < 3; {
		ev, err, ok := next()
		if err != nil || !ok {
			t.Fatalf("SendStreamingMessage(stream 20 50): err=%v ok=%v after %v", err, ok, len(first))
		}
		first = append(first, ev)
		if _, isArt := ev.(*a2a.TaskArtifactUpdateEvent); isArt {
			chunks++
		}
	}
	id := first[0].(*a2a.Task).ID
	sub, err := collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}))
	if err != nil {
		t.Fatalf("SubscribeToTask(%s)=%v after %d events", id, err, len(sub))
	}
	for {
		ev, err, ok := next()
		if err != nil {
			t.Fatalf("SendStreamingMessage(stream 20 50)=%v", err)
		}
		if !ok {
			break
		}
		first = append(first, ev)
	}
	log := taskLog(ctx, t, es, id)
	checkClientStream(t, "SendStreamingMessage(stream 20 50)", first, log, id, 1, a2a.TaskStateCompleted)
	checkChunks(t, "SendStreamingMessage(stream 20 50)", first, 20)
	checkClientStream(t, "SubscribeToTask(stream 20 50)", sub, log, id, -1, a2a.TaskStateCompleted)
	checkChunks(t, "SubscribeToTask(stream 20 50)", sub, 20)
	if st := sub[0].(*a2a.Task).Status.State; st != a2a.TaskStateWorking {
		t.Errorf("SubscribeToTask: first task in %s, want %s (subscribed while it ran)", st, a2a.TaskStateWorking)
	}
}

// TestStreamResumeAcrossEdges drops a SendStreamingMessage stream on one
// edge and resumes it with SubscribeToTask and the last id seen on
// another edge of the same NATS: together the two streams carry every
// event of the task exactly once, in order. The id is passed as the
// Last-Event-ID header, the lastEventId param and the lastEventId query
// parameter.
func TestStreamResumeAcrossEdges(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	a := startServer(t, nil)
	b := startServer(t, func(c *ServeConfig) { c.NATSURL = a.NATSURL; c.NoDemo = true })
	_, es := streamJS(ctx, t, a.NATSURL)

	for _, tc := range []struct {
		name   string
		chunks int
		read   int
		resume func(id a2a.TaskID, last uint64) (query string, params any, hdr map[string]string)
	}{
		{"header", 500, 100, func(id a2a.TaskID, last uint64) (string, any, map[string]string) {
			return "", subscribeParams(id), lastEventHeader(last)
		}},
		{"param", 80, 20, func(id a2a.TaskID, last uint64) (string, any, map[string]string) {
			return "", map[string]any{"id": id, "lastEventId": strconv.FormatUint(last, 10)}, nil
		}},
		{"query", 80, 30, func(id a2a.TaskID, last uint64) (string, any, map[string]string) {
			return "?lastEventId=" + url.QueryEscape(strconv.FormatUint(last, 10)), subscribeParams(id), nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text := fmt.Sprintf("stream %d 5", tc.chunks)
			s := mustOpenSSE(ctx, t, a.URL, "", "SendStreamingMessage", sendParams(text), nil)
			// One frame more than the client keeps: the client "saw" the
			// first tc.read frames and lost the last one with the
			// connection. That way the task is past the resume point
			// (resuming at the task's head is TestStreamResumeAtHead).
			head, err := s.read(tc.read + 1)
			if err != nil {
				t.Fatalf("SendStreamingMessage(%s) on edge A: %v", text, err)
			}
			s.close()
			head = head[:tc.read]
			task, ok := head[0].event.(*a2a.Task)
			if !ok {
				t.Fatalf("first frame %v, want the task", head[0])
			}
			last := head[len(head)-1].seq
			if isFinal(head[len(head)-1].event, a2a.TaskStateCompleted) {
				t.Fatalf("the task completed within the first %d frames", len(head))
			}

			query, params, hdr := tc.resume(task.ID, last)
			rest := readSSE(ctx, t, b.URL, query, "SubscribeToTask", params, hdr)
			if len(rest) == 0 {
				t.Fatalf("resumed stream on edge B after %d: no frames", last)
			}
			if _, isTask := rest[0].event.(*a2a.Task); isTask {
				t.Errorf("resumed stream starts with a task snapshot, want the event after %d", last)
			}

			log := taskLog(ctx, t, es, task.ID)
			if _, ok := log[0].event.(*a2a.Task); !ok || log[0].seq != head[0].seq {
				t.Errorf("first frame id %d, want the created event %v", head[0].seq, log[0])
			}
			all := append(slices.Clip(head), rest...)
			checkFramesExact(t, "first stream + resumed stream", all, log, 0)
			checkChunks(t, "first stream + resumed stream", eventsOf(all), tc.chunks)
			if f := all[len(all)-1]; !isFinal(f.event, a2a.TaskStateCompleted) {
				t.Errorf("last frame %v, want status COMPLETED", f)
			}
		})
	}
}

// TestStreamResumeAtHead resumes a task that is not over with the id of
// its last event: nothing was missed, so the stream has no frame until
// the task moves on, but it is an SSE stream from the start (200,
// Content-Type text/event-stream), and it carries the events that follow.
// (edge/stream.go resumes at the head straight into pump, whose first
// flush commits the response before sse.begin has set its headers.)
func TestStreamResumeAtHead(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	ts := startServer(t, nil)
	c := newClient(ctx, t, ts)
	_, es := streamJS(ctx, t, ts.NATSURL)

	task := mustSend(ctx, t, c, userText("ask"), false)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("ask: %s, want INPUT_REQUIRED", task.Status.State)
	}
	before := taskLog(ctx, t, es, task.ID)
	head := before[len(before)-1].seq

	resp, cancel, err := postSSE(ctx, ts.URL, "", "SubscribeToTask", subscribeParams(task.ID), lastEventHeader(head))
	if err != nil {
		t.Fatalf("SubscribeToTask after %d: %v", head, err)
	}
	defer cancel()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("SubscribeToTask after the task's last event %d: HTTP %s, Content-Type %q, headers %v; want 200 text/event-stream", head, resp.Status, ct, resp.Header)
	}

	answer := userText("Grace")
	answer.TaskID = task.ID
	done := mustSend(ctx, t, c, answer, false)
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answer: %s, want COMPLETED", done.Status.State)
	}
	frames, err := (&sseStream{resp: resp, p: newSSEParser(resp.Body), cancel: cancel}).read(-1)
	if err != nil {
		t.Fatalf("SubscribeToTask after %d: %v", head, err)
	}
	log := taskLog(ctx, t, es, task.ID)
	checkFramesExact(t, fmt.Sprintf("SubscribeToTask after %d", head), frames, log, len(before))
}

// waitSnapshot waits until the KV snapshot of task id holds the view at
// seq (written in the background when a task with many events settles).
func waitSnapshot(ctx context.Context, t testing.TB, js jetstream.JetStream, id a2a.TaskID, seq uint64) {
	t.Helper()
	kv, err := js.KeyValue(ctx, engine.DefaultConfig().SnapshotBucket)
	if err != nil {
		t.Fatalf("KeyValue(%s)=%v", engine.DefaultConfig().SnapshotBucket, err)
	}
	key := events.DefaultTenant + "." + string(id)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	w, err := kv.Watch(wctx, key)
	if err != nil {
		t.Fatalf("Watch(%s)=%v", key, err)
	}
	defer w.Stop()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				t.Fatalf("snapshot of %s: watch closed", id)
			}
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var v events.View
			if err := json.Unmarshal(e.Value(), &v); err != nil {
				t.Fatalf("snapshot of %s: %v", id, err)
			}
			if v.Seq == seq {
				return
			}
		case <-wctx.Done():
			t.Fatalf("no snapshot of task %s at seq %d within 30s", id, seq)
		}
	}
}

// purgeBelow removes the events of task id below seq from the stream.
func purgeBelow(ctx context.Context, t testing.TB, es jetstream.Stream, id a2a.TaskID, seq uint64) {
	t.Helper()
	filter := events.TaskFilter(events.DefaultTenant, id)
	if err := es.Purge(ctx, jetstream.WithPurgeSubject(filter), jetstream.WithPurgeSequence(seq)); err != nil {
		t.Fatalf("Purge(%s below %d)=%v", filter, seq, err)
	}
}

// TestStreamResumeAgedOut resumes from an id whose following events are
// no longer in the stream: the task snapshot comes first, then whatever
// follows it.
func TestStreamResumeAgedOut(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	a := startServer(t, nil)
	b := startServer(t, func(c *ServeConfig) { c.NATSURL = a.NATSURL; c.NoDemo = true })
	c := newClient(ctx, t, a)
	js, es := streamJS(ctx, t, a.NATSURL)

	t.Run("completed", func(t *testing.T) {
		task := mustSend(ctx, t, c, userText("stream 100 0"), false)
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("stream 100 0: %s, want COMPLETED", task.Status.State)
		}
		full := taskLog(ctx, t, es, task.ID)
		created, end := full[0].seq, full[len(full)-1].seq
		// The task has at least 64 events: its view is snapshotted at
		// completion, which is what an edge without it cached reads.
		waitSnapshot(ctx, t, js, task.ID, end)
		purgeBelow(ctx, t, es, task.ID, full[50].seq)
		if kept := taskLog(ctx, t, es, task.ID); len(kept) != len(full)-50 || kept[0].seq != full[50].seq {
			t.Fatalf("after the purge the log holds %d events from %v, want %d from %v", len(kept), kept[0], len(full)-50, full[50])
		}

		for _, edge := range []struct {
			name string
			ts   *testServer
		}{{"edge A (cached)", a}, {"edge B (snapshot)", b}} {
			frames := readSSE(ctx, t, edge.ts.URL, "", "SubscribeToTask", subscribeParams(task.ID), lastEventHeader(created))
			if len(frames) != 1 {
				t.Fatalf("%s: resume after %d: %d frames %v, want one task snapshot", edge.name, created, len(frames), frames)
			}
			snap, ok := frames[0].event.(*a2a.Task)
			if !ok {
				t.Fatalf("%s: frame %v, want the task", edge.name, frames[0])
			}
			if frames[0].seq != end {
				t.Errorf("%s: snapshot id %d, want the task's last event %d", edge.name, frames[0].seq, end)
			}
			if snap.Status.State != a2a.TaskStateCompleted {
				t.Errorf("%s: snapshot in %s, want COMPLETED", edge.name, snap.Status.State)
			}
			checkChunks(t, edge.name+" snapshot", eventsOf(frames), 100)

			// An id the log still holds the events after: exactly those.
			from := 60
			rest := readSSE(ctx, t, edge.ts.URL, "", "SubscribeToTask", subscribeParams(task.ID), lastEventHeader(full[from-1].seq))
			checkFramesExact(t, edge.name+" resume inside the kept log", rest, full, from)
		}
	})

	t.Run("running", func(t *testing.T) {
		const chunks = 300
		ref := mustOpenSSE(ctx, t, a.URL, "", "SendStreamingMessage", sendParams(fmt.Sprintf("stream %d 10", chunks)), nil)
		head, err := ref.read(80)
		if err != nil {
			t.Fatalf("SendStreamingMessage on edge A: %v", err)
		}
		id := head[0].event.(*a2a.Task).ID
		created := head[0].seq
		// Drop the task's first 60 events while it runs, and resume from
		// its first event on edge B, which never loaded it.
		purgeBelow(ctx, t, es, id, head[60].seq)
		frames := readSSE(ctx, t, b.URL, "", "SubscribeToTask", subscribeParams(id), lastEventHeader(created))
		tail, err := ref.read(-1)
		if err != nil {
			t.Fatalf("SendStreamingMessage on edge A: %v", err)
		}
		whole := append(head, tail...)
		checkChunks(t, "the full stream on edge A", eventsOf(whole), chunks)

		if len(frames) == 0 {
			t.Fatal("resumed stream: no frames")
		}
		snap, ok := frames[0].event.(*a2a.Task)
		if !ok {
			t.Fatalf("resumed stream: first frame %v, want the task snapshot", frames[0])
		}
		if snap.Status.State.Terminal() {
			t.Logf("the task ended before the resume; the live part went untested")
		}
		t.Logf("resumed on edge B: snapshot at %d in %s, then %d frames", frames[0].seq, snap.Status.State, len(frames)-1)
		log := taskLog(ctx, t, es, id)
		at := slices.IndexFunc(log, func(e logEvent) bool { return e.seq == frames[0].seq })
		if at < 0 {
			t.Fatalf("snapshot id %d is no event of the task's log %v", frames[0].seq, log)
		}
		checkFramesExact(t, "events after the snapshot", frames[1:], log, at+1)
		if f := frames[len(frames)-1]; !isFinal(f.event, a2a.TaskStateCompleted) && !snap.Status.State.Terminal() {
			t.Errorf("resumed stream ends with %v, want COMPLETED", f)
		}
		// The snapshot's chunks, then the streamed ones, are consecutive
		// and end at the last chunk.
		var texts []string
		for _, a := range snap.Artifacts {
			for _, p := range a.Parts {
				texts = append(texts, p.Text())
			}
		}
		for _, f := range frames[1:] {
			if e, ok := f.event.(*a2a.TaskArtifactUpdateEvent); ok {
				texts = append(texts, textOf(e.Artifact.Parts))
			}
		}
		if len(texts) == 0 {
			t.Fatal("resumed stream: no chunks")
		}
		var k int
		if _, err := fmt.Sscanf(texts[0], "chunk %d/", &k); err != nil {
			t.Fatalf("first chunk %q: %v", texts[0], err)
		}
		for i, s := range texts {
			if want := fmt.Sprintf("chunk %d/%d\n", k+i, chunks); s != want {
				t.Fatalf("resumed chunks %q: item %d is %q, want %q", shortList(texts), i, s, want)
			}
		}
		if k+len(texts)-1 != chunks {
			t.Errorf("resumed chunks end at %d, want %d", k+len(texts)-1, chunks)
		}
	})
}

// TestStreamResumeAgedOutRunningState resumes a running task whose first
// events, including every status event before the resume point, are gone
// from the stream. The snapshot frame sent first must still be a valid
// task: the task's id and its real state, WORKING. (Folding from an
// artifact event with no status event before it leaves the state
// unspecified; a running task has no KV snapshot before 1000 events.)
func TestStreamResumeAgedOutRunningState(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	a := startServer(t, nil)
	b := startServer(t, func(c *ServeConfig) { c.NATSURL = a.NATSURL; c.NoDemo = true })
	_, es := streamJS(ctx, t, a.NATSURL)

	// Chunks every 10 ms with status messages at 50, 100, ...: after
	// chunk 60 the next status comes 400 ms later, a window wide enough
	// to purge and resume in.
	const chunks = 200
	ref := mustOpenSSE(ctx, t, a.URL, "", "SendStreamingMessage", sendParams(fmt.Sprintf("stream %d 10", chunks)), nil)
	var head []sseEvent
	for {
		f, err := ref.next()
		if err != nil {
			t.Fatalf("SendStreamingMessage on edge A: %v after %d frames", err, len(head))
		}
		head = append(head, f)
		if e, ok := f.event.(*a2a.TaskArtifactUpdateEvent); ok && textOf(e.Artifact.Parts) == fmt.Sprintf("chunk 60/%d\n", chunks) {
			break
		}
	}
	id := head[0].event.(*a2a.Task).ID
	purgeBelow(ctx, t, es, id, head[len(head)-1].seq)

	for _, edge := range []struct {
		name string
		ts   *testServer
	}{{"edge B (never loaded the task)", b}, {"edge A", a}} {
		s := mustOpenSSE(ctx, t, edge.ts.URL, "", "SubscribeToTask", subscribeParams(id), lastEventHeader(head[0].seq))
		f, err := s.next()
		s.close()
		if err != nil {
			t.Fatalf("%s: %v", edge.name, err)
		}
		snap, ok := f.event.(*a2a.Task)
		if !ok {
			t.Fatalf("%s: first frame %v, want the task snapshot", edge.name, f)
		}
		var parts []string
		for _, a := range snap.Artifacts {
			for _, p := range a.Parts {
				parts = append(parts, p.Text())
			}
		}
		t.Logf("%s: snapshot at %d: state %s, %d history messages, artifact chunks %q", edge.name, f.seq, snap.Status.State, len(snap.History), shortList(parts))
		if snap.ID != id {
			t.Errorf("%s: snapshot of task %q, want %s", edge.name, snap.ID, id)
		}
		if snap.Status.State != a2a.TaskStateWorking {
			t.Errorf("%s: snapshot of the running task in state %s, want %s", edge.name, snap.Status.State, a2a.TaskStateWorking)
		}
	}
}

// TestStreamSubscribeErrors covers the refusals (answered as JSON before
// any SSE) and resumes of a terminal task.
func TestStreamSubscribeErrors(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	ts := startServer(t, nil)
	c := newClient(ctx, t, ts)
	_, es := streamJS(ctx, t, ts.NATSURL)

	done := mustSend(ctx, t, c, userText("echo done"), false)
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("echo: %s, want COMPLETED", done.Status.State)
	}
	log := taskLog(ctx, t, es, done.ID)

	for _, tc := range []struct {
		name   string
		query  string
		params any
		hdr    map[string]string
		want   int
	}{
		{"header abc", "", subscribeParams(done.ID), map[string]string{"Last-Event-ID": "abc"}, -32602},
		{"header -1", "", subscribeParams(done.ID), map[string]string{"Last-Event-ID": "-1"}, -32602},
		{"param abc", "", map[string]any{"id": done.ID, "lastEventId": "abc"}, nil, -32602},
		{"param -1", "", map[string]any{"id": done.ID, "lastEventId": -1}, nil, -32602},
		{"query abc", "?lastEventId=abc", subscribeParams(done.ID), nil, -32602},
		{"query -1", "?lastEventId=-1", subscribeParams(done.ID), nil, -32602},
		{"unknown task", "", subscribeParams("no-such-task"), nil, -32001},
		{"unknown task with id", "", subscribeParams("no-such-task"), lastEventHeader(1), -32001},
		{"terminal task", "", subscribeParams(done.ID), nil, -32004},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonRPCError(ctx, t, ts.URL, tc.query, "SubscribeToTask", tc.params, tc.hdr); got != tc.want {
				t.Errorf("error %d, want %d", got, tc.want)
			}
		})
	}

	t.Run("terminal task after an older id", func(t *testing.T) {
		for from := range log {
			frames := readSSE(ctx, t, ts.URL, "", "SubscribeToTask", subscribeParams(done.ID), lastEventHeader(log[from].seq))
			checkFramesExact(t, fmt.Sprintf("after %d", log[from].seq), frames, log, from+1)
		}
		// An id before the task's first event: all of it.
		frames := readSSE(ctx, t, ts.URL, "", "SubscribeToTask", subscribeParams(done.ID), lastEventHeader(log[0].seq-1))
		checkFramesExact(t, "before the task", frames, log, 0)
	})

	t.Run("terminal task at or after its end", func(t *testing.T) {
		end := log[len(log)-1].seq
		for _, last := range []uint64{end, end + 1, end + 1000000} {
			start := time.Now()
			if frames := readSSE(ctx, t, ts.URL, "", "SubscribeToTask", subscribeParams(done.ID), lastEventHeader(last)); len(frames) != 0 {
				t.Errorf("after %d (end %d): frames %v, want none", last, end, frames)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("after %d: the empty stream took %v to close", last, d)
			}
		}
	})
}

// dialStalled opens a TCP connection whose receive side holds as little
// as the kernel allows: a minimal receive buffer and a small MSS (which
// also keeps the server's send buffer small, as Linux sizes it by the
// MSS). A peer that never reads it blocks the server's writes after some
// tens of kilobytes.
func dialStalled(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1)
			if serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 536)
			}
		})
		return errors.Join(err, serr)
	}}
	return d.DialContext(ctx, "tcp", addr)
}

// TestStreamSlowSubscriber has a subscriber that never reads: the other
// subscriber and the worker go on at full speed, and the slow one is cut
// off. Cut off means: its watch holds at most --sse-buffer events; while
// the server's write to it is blocked the feed keeps pushing, the watch
// overflows and drops its queue, and as soon as the handler gets control
// back it ends the response (closing the connection) without sending the
// rest, so the client must resume with Last-Event-ID.
func TestStreamSlowSubscriber(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	ts := startServer(t, func(c *ServeConfig) { c.SSEBuffer = 50 })
	c := newClient(ctx, t, ts)
	_, es := streamJS(ctx, t, ts.NATSURL)

	const chunks = 1000
	task := mustSend(ctx, t, c, userText(fmt.Sprintf("stream %d 1", chunks)), true)

	// The stalled subscriber: a request written by hand on a connection
	// nobody reads until the task is over.
	u, err := url.Parse(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := dialStalled(ctx, u.Host)
	if err != nil {
		t.Fatalf("dial %s: %v", u.Host, err)
	}
	t.Cleanup(func() { conn.Close() })
	body, err := rpcRequestBody("SubscribeToTask", subscribeParams(task.ID))
	if err != nil {
		t.Fatal(err)
	}
	req := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nA2A-Version: 1.0\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", u.Host, len(body), body)
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatalf("write request: %v", err)
	}

	// The fast subscriber reads everything.
	start := time.Now()
	fastCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	fast := readSSE(fastCtx, t, ts.URL, "", "SubscribeToTask", subscribeParams(task.ID), nil)
	t.Logf("fast subscriber: %d frames in %v", len(fast), time.Since(start))
	if len(fast) == 0 {
		t.Fatal("fast subscriber: no frames")
	}
	if _, ok := fast[0].event.(*a2a.Task); !ok {
		t.Fatalf("fast subscriber: first frame %v, want the task", fast[0])
	}
	log := taskLog(ctx, t, es, task.ID)
	at := slices.IndexFunc(log, func(e logEvent) bool { return e.seq == fast[0].seq })
	if at < 0 {
		t.Fatalf("fast subscriber: snapshot id %d is no event of the task", fast[0].seq)
	}
	checkFramesExact(t, "fast subscriber", fast[1:], log, at+1)
	checkChunks(t, "fast subscriber", eventsOf(fast), chunks)
	if f := fast[len(fast)-1]; !isFinal(f.event, a2a.TaskStateCompleted) {
		t.Fatalf("fast subscriber: last frame %v, want COMPLETED", f)
	}
	if got := mustGet(ctx, t, c, &a2a.GetTaskRequest{ID: task.ID}); got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("GetTask: %s, want COMPLETED", got.Status.State)
	}

	// Now read the stalled connection: it ends (the server closed it)
	// before the task's end. A bigger receive buffer first, or the tiny
	// window makes the reading crawl.
	if tc, ok := conn.(*net.TCPConn); ok {
		if err := tc.SetReadBuffer(1 << 20); err != nil {
			t.Fatal(err)
		}
	}
	start = time.Now()
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("stalled subscriber: read response: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stalled subscriber: HTTP %s %q, want an SSE stream", resp.Status, resp.Header.Get("Content-Type"))
	}
	slow, err := (&sseStream{resp: resp, p: newSSEParser(resp.Body), cancel: func() {}}).read(-1)
	if err != nil {
		t.Fatalf("stalled subscriber: %v (want the stream to end cleanly at the cut)", err)
	}
	t.Logf("stalled subscriber: %d frames of %d before the cut, read in %v", len(slow), len(log), time.Since(start))
	if len(slow) == 0 {
		t.Fatal("stalled subscriber: no frames")
	}
	for _, f := range slow {
		if isFinal(f.event, a2a.TaskStateCompleted) {
			t.Fatalf("stalled subscriber got the COMPLETED frame %v: it was not cut off", f)
		}
	}
	// What it got is an unbroken part of the task, so resuming from its
	// last id loses nothing.
	at = slices.IndexFunc(log, func(e logEvent) bool { return e.seq == slow[0].seq })
	if at < 0 {
		t.Fatalf("stalled subscriber: snapshot id %d is no event of the task", slow[0].seq)
	}
	checkFramesExact(t, "stalled subscriber", slow[1:], log[:at+len(slow)], at+1)
	rest := readSSE(ctx, t, ts.URL, "", "SubscribeToTask", subscribeParams(task.ID), lastEventHeader(slow[len(slow)-1].seq))
	checkFramesExact(t, "stalled subscriber's resume", rest, log, at+len(slow))
}

// TestStreamClientDisconnect drops a SendStreamingMessage stream early:
// the task runs on to completion.
func TestStreamClientDisconnect(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	ts := startServer(t, nil)
	c := newClient(ctx, t, ts)

	sctx, cancel := context.WithCancel(ctx)
	var got []a2a.Event
	for ev, err := range c.SendStreamingMessage(sctx, sendParams("stream 30 20")) {
		if err != nil {
			t.Fatalf("SendStreamingMessage=%v after %d events", err, len(got))
		}
		got = append(got, ev)
		if len(got) == 3 {
			break
		}
	}
	cancel()
	if len(got) != 3 {
		t.Fatalf("%d events, want 3 before the disconnect", len(got))
	}
	task, ok := got[0].(*a2a.Task)
	if !ok {
		t.Fatalf("first event %s, want the task", describe(got[0]))
	}
	final := waitState(ctx, t, c, task.ID, a2a.TaskStateCompleted, 60*time.Second)
	checkChunks(t, "task after the disconnect", []a2a.Event{final}, 30)
}

// TestStreamKeepAlive waits for keep-alive comments on an idle stream.
func TestStreamKeepAlive(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	ts := startServer(t, func(c *ServeConfig) { c.SSEKeepAlive = 100 * time.Millisecond })
	c := newClient(ctx, t, ts)

	task := mustSend(ctx, t, c, userText("slow 2"), true)
	s := mustOpenSSE(ctx, t, ts.URL, "", "SubscribeToTask", subscribeParams(task.ID), nil)
	// Items in order: "F" for a frame, "K" for a keep-alive comment.
	var order []string
	var frames []sseEvent
	for {
		it, err := s.p.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SubscribeToTask: %v after %v", err, order)
		}
		if it.isComment {
			if it.comment != "keep-alive" {
				t.Errorf("comment %q, want keep-alive", it.comment)
			}
			order = append(order, "K")
			continue
		}
		f, err := decodeFrame(it)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f)
		order = append(order, "F")
	}
	seq := strings.Join(order, "")
	if !regexp.MustCompile(`FK+F`).MatchString(seq) {
		t.Errorf("items %s: want a keep-alive between two events", seq)
	}
	if len(frames) == 0 || !isFinal(frames[len(frames)-1].event, a2a.TaskStateCompleted) {
		t.Errorf("frames %v, want to end at COMPLETED", frames)
	}
}

// TestStreamStatelessEdge streams through an edge without a worker or
// NATS server of its own: the worker on the other edge does the work.
func TestStreamStatelessEdge(t *testing.T) {
	t.Parallel()
	ctx := streamContext(t)
	a := startServer(t, nil)
	b := startServer(t, func(c *ServeConfig) { c.NATSURL = a.NATSURL; c.NoDemo = true })
	_, es := streamJS(ctx, t, a.NATSURL)

	card := resolveCard(ctx, t, b)
	if !card.Capabilities.Streaming {
		t.Errorf("edge B card: capabilities.streaming=false, want true")
	}
	c := newClient(ctx, t, b)
	got, err := collect(c.SendStreamingMessage(ctx, sendParams("stream 10 10")))
	if err != nil {
		t.Fatalf("SendStreamingMessage on edge B=%v after %d events", err, len(got))
	}
	if len(got) == 0 {
		t.Fatal("SendStreamingMessage on edge B: no events")
	}
	task, ok := got[0].(*a2a.Task)
	if !ok {
		t.Fatalf("first event %s, want the task", describe(got[0]))
	}
	checkClientStream(t, "edge B", got, taskLog(ctx, t, es, task.ID), task.ID, 1, a2a.TaskStateCompleted)
	checkChunks(t, "edge B", got, 10)
}
