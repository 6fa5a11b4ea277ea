package edge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/projections"
)

// Streaming defaults.
const (
	// DefaultKeepAlive is how often an idle stream gets a comment.
	DefaultKeepAlive = 15 * time.Second
	// DefaultStreamBuffer is how many events a stream may fall behind the
	// live feed before it is cut off.
	DefaultStreamBuffer = 4096
)

// errStreamDone stops a replay once the stream has sent its last event.
var errStreamDone = errors.New("stream done")

// reply says how a request is answered: JSON-RPC (with the request id)
// or REST.
type reply struct {
	rest bool
	id   json.RawMessage
	// v03 and v01 render in the v0.3 or the v0.1 dialect. rest and v03
	// together are the v0.3 HTTP+JSON binding: proto-JSON of the 0.3
	// proto.
	v03, v01 bool
}

// itemForm is how a reply renders stream items, for the encoding cache.
type itemForm uint8

const (
	formV1      itemForm = iota // v1.0 StreamResponse (JSON-RPC and REST)
	formV03                     // v0.3 JSON-RPC, with kind
	formV03REST                 // v0.3 HTTP+JSON StreamResponse
)

func (rp reply) form() itemForm {
	switch {
	case rp.v03 && rp.rest:
		return formV03REST
	case rp.v03:
		return formV03
	}
	return formV1
}

func (rp reply) dialect() string {
	switch {
	case rp.v01:
		return dialect01
	case rp.v03:
		return dialect03
	}
	return dialect1
}

// taskItem is the stream item of a task snapshot. v0.1 streams have no
// task item: the snapshot is its status.
func (rp reply) taskItem(t *a2a.Task) any {
	switch {
	case rp.v01:
		return v01StatusEventOf(t.ID, t.Status, false)
	case rp.v03 && rp.rest:
		task := pb03TaskOf(t)
		return pb03StreamResponse{Task: &task}
	case rp.v03:
		return v03TaskOf(t)
	}
	return a2a.StreamResponse{Event: t}
}

// statusItem is the stream item of a status event; final is whether the
// stream ends with it.
func (rp reply) statusItem(e *a2a.TaskStatusUpdateEvent, final bool) any {
	switch rp.form() {
	case formV03REST:
		return pb03StatusItem(e, final)
	case formV03:
		return v03StatusEventOf(e, final)
	}
	return a2a.StreamResponse{Event: e}
}

// artifactItem is the stream item of an artifact event.
func (rp reply) artifactItem(e *a2a.TaskArtifactUpdateEvent) any {
	switch rp.form() {
	case formV03REST:
		return pb03ArtifactItem(e)
	case formV03:
		return v03ArtifactEventOf(e)
	}
	return a2a.StreamResponse{Event: e}
}

// fail answers a streaming request that has not started streaming with e.
// A v0.x JSON-RPC stream answers it as a stream of one error event, as the
// v0.3 reference server (a2a-python) does and the v0.3 clients expect: the
// legacy a2a-go client reads a stream's errors only from its events.
func (h *Handler) fail(w http.ResponseWriter, rp reply, e *Error) {
	switch {
	case rp.rest && rp.v03:
		h.writeRESTV03(w, e)
	case rp.rest:
		h.writeREST(w, e)
	case rp.v03 || rp.v01:
		if e.Code == codeInternal {
			h.logger.Error("request failed", "err", e.Err)
		}
		newSSE(w, rp).fail(e)
	default:
		h.writeError(w, rp.id, e)
	}
}

// sse writes one SSE stream: JSON-RPC responses, or bare StreamResponses
// for REST.
type sse struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	rp    reply
	began bool
	// artIndex numbers the task's artifacts for v0.1 frames.
	artIndex map[a2a.ArtifactID]int
}

func newSSE(w http.ResponseWriter, rp reply) *sse {
	return &sse{w: w, rc: http.NewResponseController(w), rp: rp}
}

// numberArtifacts seeds the v0.1 artifact indexes with the task's
// artifacts, so a stream that starts mid-task numbers as the task does.
func (s *sse) numberArtifacts(t *a2a.Task) {
	if !s.rp.v01 {
		return
	}
	s.artIndex = make(map[a2a.ArtifactID]int, len(t.Artifacts))
	for i, a := range t.Artifacts {
		s.artIndex[a.ID] = i
	}
}

func (s *sse) begin() {
	if s.began {
		return
	}
	s.began = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

// event writes one frame: "id: <seq>" and the JSON-RPC response whose
// result is result.
func (s *sse) event(seq uint64, result any) error {
	b, err := json.Marshal(result)
	if err != nil {
		return err
	}
	return s.frame(seq, b)
}

// frame writes one frame whose result is the encoded JSON value result.
// The pieces are written as they are, so no copy of a large frame outlives
// it.
func (s *sse) frame(seq uint64, result []byte) error {
	s.begin()
	var head [64]byte
	h := append(head[:0], "id: "...)
	h = strconv.AppendUint(h, seq, 10)
	parts := [][]byte{append(h, "\ndata: "...), result, []byte("\n\n")}
	if !s.rp.rest {
		parts = [][]byte{append(h, "\ndata: {\"jsonrpc\":\"2.0\",\"id\":"...), s.rp.id, []byte(`,"result":`), result, []byte("}\n\n")}
	}
	for _, part := range parts {
		if _, err := s.w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// fail ends the stream with an error event (no id line: it is not an
// event of the task): a JSON-RPC error, or a REST error body.
func (s *sse) fail(e *Error) {
	s.begin()
	var data any = e.info()
	if s.rp.v03 || s.rp.v01 {
		data = e.info()[0]
	}
	var v any = rpcResponse{JSONRPC: "2.0", ID: s.rp.id, Error: &rpcError{Code: e.Code, Message: e.Message, Data: data}}
	switch {
	case s.rp.rest && s.rp.v03:
		v = v03RESTErrorBody(e, v03RESTStatusOf(e))
	case s.rp.rest:
		v = restErrorBody(e)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	if _, err := s.w.Write(append(append([]byte("data: "), b...), "\n\n"...)); err == nil {
		s.flush()
	}
}

func (s *sse) comment(text string) error {
	s.begin()
	_, err := s.w.Write([]byte(": " + text + "\n\n"))
	return err
}

func (s *sse) flush() error {
	s.begin()
	return s.rc.Flush()
}

// streamItem is what the client sees of an event: an encoded
// StreamResponse, or nil for events streams do not carry (client input).
// final reports that the stream ends after it. Encodings are shared by
// every stream of the edge through a cache keyed by stream sequence, so
// an event watched by many subscribers is encoded once.
func (h *Handler) streamItem(ev events.Event, s *sse) (item []byte, final bool, err error) {
	rp := s.rp
	switch b := ev.Body.(type) {
	case *a2a.TaskStatusUpdateEvent:
		final = h.closesStream(b.Status.State)
	case *events.Created, *a2a.TaskArtifactUpdateEvent:
	default:
		return nil, false, nil
	}
	if rp.v01 {
		// v0.1 artifact events carry the artifact's index in the task,
		// which is per stream: not cached.
		item, err = json.Marshal(s.v01Item(ev, final))
		return item, final, err
	}
	key := encodedKey{ev.Seq, rp.form()}
	if item, ok := h.encoded.get(key); ok {
		return item, final, nil
	}
	var v any
	switch b := ev.Body.(type) {
	case *events.Created:
		v = rp.taskItem(b.Task)
	case *a2a.TaskStatusUpdateEvent:
		v = rp.statusItem(b, final)
	case *a2a.TaskArtifactUpdateEvent:
		v = rp.artifactItem(b)
	}
	item, err = json.Marshal(v)
	if err != nil {
		return nil, false, err
	}
	h.encoded.put(key, item)
	return item, final, nil
}

// encodedCache keeps the encodings of the most recent stream items by
// sequence. Sequences are unique in the stream, so they need no tenant or
// task in the key.
type encodedCache struct {
	// mu guards items and order.
	mu    sync.Mutex
	items map[encodedKey][]byte
	order []encodedKey // ring of keys, oldest at next
	next  int
}

// encodedKey is an event's sequence and the form it is rendered in.
type encodedKey struct {
	seq  uint64
	form itemForm
}

func newEncodedCache(size int) *encodedCache {
	return &encodedCache{items: make(map[encodedKey][]byte, size), order: make([]encodedKey, size)}
}

func (c *encodedCache) get(seq encodedKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.items[seq]
	return b, ok
}

func (c *encodedCache) put(seq encodedKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[seq]; ok {
		return
	}
	delete(c.items, c.order[c.next])
	c.order[c.next] = seq
	c.next = (c.next + 1) % len(c.order)
	c.items[seq] = b
}

// closesStream reports whether a stream ends at a task in state s.
func (h *Handler) closesStream(s a2a.TaskState) bool {
	switch {
	case s.Terminal(), s == a2a.TaskStateInputRequired:
		return true
	case s == a2a.TaskStateAuthRequired:
		return !h.cfg.KeepOpenOnAuthRequired
	}
	return false
}

// pump sends the watched task's events after sequence after until one
// ends the stream, the client goes away, or the watch is cut off.
func (h *Handler) pump(ctx context.Context, s *sse, w *projections.Watch, after uint64) {
	keepAlive := time.NewTicker(h.cfg.KeepAlive)
	defer keepAlive.Stop()
	for {
		ev, ok, err := w.Poll()
		if err != nil {
			if errors.Is(err, projections.ErrWatchOverflow) {
				h.logger.Info("stream cut off: subscriber too slow", "buffer", h.cfg.StreamBuffer)
			}
			// The client resumes with Last-Event-ID; close so it does.
			return
		}
		if ok {
			if ev.Seq <= after {
				continue
			}
			item, final, err := h.streamItem(ev, s)
			after = ev.Seq
			if err != nil {
				h.logger.Error("encode stream item", "seq", ev.Seq, "err", err)
				s.fail(&Error{Code: codeInternal, Message: "Internal error"})
				return
			}
			if item == nil {
				continue
			}
			if err := s.frame(ev.Seq, item); err != nil {
				return
			}
			if final {
				s.flush()
				return
			}
			continue
		}
		if err := s.flush(); err != nil {
			return
		}
		select {
		case <-w.Ready():
		case <-keepAlive.C:
			if s.comment("keep-alive") != nil || s.flush() != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// sendStreamingMessage serves SendStreamingMessage: the task first, then its
// events as they happen, until it is terminal or interrupted.
func (h *Handler) sendStreamingMessage(w http.ResponseWriter, r *http.Request, rp reply, p *a2a.SendMessageRequest) {
	h.sendStreamingMessageID(w, r, rp, p, "")
}

// sendStreamingMessageID is SendStreamingMessage whose new task gets the id
// newID, or a fresh one.
func (h *Handler) sendStreamingMessageID(w http.ResponseWriter, r *http.Request, rp reply, p *a2a.SendMessageRequest, newID a2a.TaskID) {
	ctx := r.Context()
	tenant, cfg, perr := h.checkSend(p)
	if perr != nil {
		h.fail(w, rp, perr)
		return
	}
	if newID == "" {
		newID = a2a.NewTaskID()
	}
	watched := p.Message.TaskID
	if watched == "" {
		watched = newID
	}
	watch := h.feed.WatchBounded(tenant, watched, h.cfg.StreamBuffer)
	defer func() { watch.Close() }()
	res, perr := h.send(ctx, tenant, p, cfg, newID, rp.dialect())
	if perr != nil {
		h.fail(w, rp, perr)
		return
	}
	v := res.View
	var err error
	if res.Replayed && v.Task.ID != watched {
		watch.Close()
		watch = h.feed.WatchBounded(tenant, v.Task.ID, h.cfg.StreamBuffer)
		if v, err = h.views.Load(ctx, tenant, v.Task.ID); err != nil {
			h.fail(w, rp, toError(err, string(res.View.Task.ID)))
			return
		}
	}
	s := newSSE(w, rp)
	s.numberArtifacts(&v.Task)
	if err := s.event(v.Seq, rp.taskItem(renderTask(v, cfg.HistoryLength, true))); err != nil {
		return
	}
	if v.Terminal() || (res.Replayed && h.closesStream(v.Task.Status.State)) {
		s.flush()
		return
	}
	h.pump(ctx, s, watch, v.Seq)
}

// subscribeParams are SubscribeToTask's params, with the resume position
// for clients that cannot set the Last-Event-ID header.
type subscribeParams struct {
	Tenant      string          `json:"tenant"`
	ID          a2a.TaskID      `json:"id"`
	LastEventID json.RawMessage `json:"lastEventId"`
}

// lastEventID returns the resume position of a subscribe request: the
// Last-Event-ID header, else the lastEventId param, else the lastEventId
// query parameter. ok is false when none is given.
func lastEventID(r *http.Request, p *subscribeParams) (seq uint64, ok bool, perr *Error) {
	raw := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if raw == "" && len(p.LastEventID) > 0 && string(p.LastEventID) != "null" {
		var s string
		if json.Unmarshal(p.LastEventID, &s) != nil {
			s = string(p.LastEventID) // a JSON number
		}
		raw = strings.TrimSpace(s)
		if raw == "" {
			return 0, false, invalidParams("lastEventId must be an event id")
		}
	}
	if raw == "" {
		raw = strings.TrimSpace(r.URL.Query().Get("lastEventId"))
	}
	if raw == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return 0, false, invalidParams("Last-Event-ID %q is not an event id (a stream sequence number)", truncate(raw, 40))
	}
	return n, true, nil
}

// subscribeToTask serves SubscribeToTask: without a resume position, the
// current task and then every later event; with Last-Event-ID L, exactly
// the events after L (the task first if events after L have aged out of
// the stream), then every later event.
func (h *Handler) subscribeToTask(w http.ResponseWriter, r *http.Request, rp reply, p *subscribeParams) {
	ctx := r.Context()
	tenant, perr := tenantOf(p.Tenant)
	if perr != nil {
		h.fail(w, rp, perr)
		return
	}
	if p.ID == "" {
		h.fail(w, rp, invalidParams("id is required"))
		return
	}
	last, resume, perr := lastEventID(r, p)
	if perr != nil {
		h.fail(w, rp, perr)
		return
	}
	watch := h.feed.WatchBounded(tenant, p.ID, h.cfg.StreamBuffer)
	defer watch.Close()
	v, err := h.views.Load(ctx, tenant, p.ID)
	if err != nil {
		h.fail(w, rp, toError(err, string(p.ID)))
		return
	}
	s := newSSE(w, rp)
	s.numberArtifacts(&v.Task)
	if !resume {
		if v.Terminal() {
			h.fail(w, rp, &Error{Code: codeUnsupportedOperation,
				Message:  "This operation is not supported: the task is in a terminal state; read it with GetTask (tasks/get in v0.x)",
				Metadata: map[string]string{"taskId": string(p.ID)}})
			return
		}
		if err := s.event(v.Seq, rp.taskItem(renderTask(v, nil, true))); err != nil {
			return
		}
		h.pump(ctx, s, watch, v.Seq)
		return
	}
	if last >= v.Seq {
		// Nothing was missed.
		if v.Terminal() {
			s.begin()
			s.flush()
			return
		}
		h.pump(ctx, s, watch, last)
		return
	}
	after := last
	first := true
	_, err = h.views.Events(ctx, tenant, p.ID, last, func(ev events.Event) error {
		if first && ev.Prev > last {
			// Events after last have aged out: the task as it is now
			// stands in for them.
			if err := s.event(v.Seq, rp.taskItem(renderTask(v, nil, true))); err != nil {
				return err
			}
			after = v.Seq
			if v.Terminal() {
				return errStreamDone
			}
		}
		first = false
		if ev.Seq <= after {
			return nil
		}
		item, final, err := h.streamItem(ev, s)
		after = ev.Seq
		if err != nil {
			return err
		}
		if item == nil {
			return nil
		}
		if err := s.frame(ev.Seq, item); err != nil {
			return err
		}
		if final {
			return errStreamDone
		}
		return nil
	})
	switch {
	case errors.Is(err, errStreamDone):
		s.flush()
		return
	case err != nil && !s.began:
		h.fail(w, rp, toError(err, string(p.ID)))
		return
	case err != nil:
		if ctx.Err() == nil {
			h.logger.Error("replay", "task", p.ID, "err", err)
			s.fail(&Error{Code: codeInternal, Message: "Internal error"})
		}
		return
	}
	h.pump(ctx, s, watch, after)
}
