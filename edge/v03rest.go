package edge

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The v0.3 HTTP+JSON binding under /v1/: the routes of the 0.3 proto's
// google.api.http annotations, with proto-JSON of that proto (package
// a2a.v1) as bodies. It is not v0.3 JSON-RPC JSON: states and roles are
// enum names (TASK_STATE_CANCELLED, ROLE_USER), a message's parts are
// "content", file parts are {"file":{"fileWithUri"|"fileWithBytes",
// "mimeType","name"}}, data parts {"data":{"data":{…}}}, and resources
// have names ("tasks/{id}"). Every route maps onto the engine calls of its
// v0.3 JSON-RPC method, through the v0.3 shapes of v03.go; tasks made here
// are v0.3 tasks.
//
// Errors follow the v0.3 reference server (a2a-python 0.3): its HTTP
// statuses and its body {"message": …}, to which the body adds the
// google.rpc.Status member "error" of the later bindings, so clients that
// read either (a2a-go's v0.3 compat client reads "error") get the A2A
// error and its ErrorInfo.

// v03RESTStatus maps protocol error codes to the HTTP status of the v0.3
// binding, as a2a-python 0.3 (src/a2a/utils/error_handlers.py) sends them.
// VersionNotSupported did not exist in v0.3; it is a bad request here.
var v03RESTStatus = map[int]int{
	codeParseError:                http.StatusBadRequest,
	codeInvalidRequest:            http.StatusBadRequest,
	codeMethodNotFound:            http.StatusNotFound,
	codeInvalidParams:             http.StatusUnprocessableEntity,
	codeInternal:                  http.StatusInternalServerError,
	codeTaskNotFound:              http.StatusNotFound,
	codeTaskNotCancelable:         http.StatusConflict,
	codePushNotSupported:          http.StatusNotImplemented,
	codeUnsupportedOperation:      http.StatusNotImplemented,
	codeContentTypeNotSupport:     http.StatusUnsupportedMediaType,
	codeExtendedCardNotConfigured: http.StatusNotFound,
	codeVersionNotSupported:       http.StatusBadRequest,
}

func v03RESTStatusOf(e *Error) int {
	if st, ok := v03RESTStatus[e.Code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// v03RESTErrorBody is the v0.3 error body for e answered with HTTP status.
func v03RESTErrorBody(e *Error, status int) any {
	return struct {
		Message string    `json:"message"`
		Error   restError `json:"error"`
	}{e.Message, restError{Code: status, Status: restStatusOf(e).name, Message: e.Message, Details: e.info()}}
}

// writeRESTV03 answers a v0.3 HTTP+JSON request with the error e.
func (h *Handler) writeRESTV03(w http.ResponseWriter, e *Error) {
	h.writeRESTV03Status(w, v03RESTStatusOf(e), e)
}

func (h *Handler) writeRESTV03Status(w http.ResponseWriter, status int, e *Error) {
	if e.Code == codeInternal {
		h.logger.Error("request failed", "err", e.Err)
	}
	h.writeJSON(w, status, v03RESTErrorBody(e, status))
}

// serveV03REST routes the v0.3 HTTP+JSON binding: every path under /v1/.
// The tenant "v1" of the v1.0 binding is therefore reserved.
func (h *Handler) serveV03REST(w http.ResponseWriter, r *http.Request) {
	version, perr := checkVersion(r)
	if perr != nil {
		h.writeRESTV03(w, perr)
		return
	}
	if version == "1.0" {
		h.writeRESTV03(w, &Error{Code: codeMethodNotFound, Message: fmt.Sprintf(
			"Method not found: %s %s: /v1/ is the v0.3 HTTP+JSON binding; the A2A-Version 1.0 routes have no /v1 prefix (the tenant \"v1\" is reserved)",
			r.Method, truncate(r.URL.Path, 100))})
		return
	}
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	result, perr := h.routeV03REST(w, r, segs)
	switch {
	case perr != nil:
		h.writeRESTV03(w, perr)
	case result != nil:
		h.writeJSON(w, http.StatusOK, result)
	}
}

// routeV03REST runs one v0.3 REST request. A nil result with a nil error
// means the handler answered itself (a stream, or 405).
func (h *Handler) routeV03REST(w http.ResponseWriter, r *http.Request, segs []string) (any, *Error) {
	ctx := r.Context()
	q := r.URL.Query()
	rp := reply{rest: true, v03: true}
	// allow reports whether the request's method is one of methods, and
	// answers 405 if it is not.
	allow := func(methods ...string) bool {
		e := methodNotAllowed(w, r, methods)
		if e != nil {
			h.writeRESTV03Status(w, http.StatusMethodNotAllowed, e)
		}
		return e == nil
	}
	notFound := &Error{Code: codeMethodNotFound, Message: fmt.Sprintf("Method not found: %s %s", r.Method, truncate(r.URL.Path, 100))}
	switch {
	case len(segs) == 1 && (segs[0] == "message:send" || segs[0] == "message:stream"):
		if !allow(http.MethodPost) {
			return nil, nil
		}
		var p pb03SendRequest
		perr := h.restBody(w, r, &p, true)
		var req *a2a.SendMessageRequest
		if perr == nil {
			req, perr = p.v1()
		}
		if segs[0] == "message:stream" {
			if perr != nil {
				h.fail(w, rp, perr)
				return nil, nil
			}
			h.sendStreamingMessage(w, r, rp, req)
			return nil, nil
		}
		if perr != nil {
			return nil, perr
		}
		t, perr := h.sendMessageTask(ctx, req, dialect03, "")
		if perr != nil {
			return nil, perr
		}
		task := pb03TaskOf(t)
		// SendMessageResponse: {"task": …} (or {"message": …}, never sent).
		return pb03StreamResponse{Task: &task}, nil
	case len(segs) == 1 && segs[0] == "card":
		if !allow(http.MethodGet) {
			return nil, nil
		}
		return pb03CardOf(h.card(r, "")), nil
	case len(segs) == 1 && segs[0] == "tasks":
		if !allow(http.MethodGet) {
			return nil, nil
		}
		return h.listTasksV03(r)
	case len(segs) == 2 && segs[0] == "tasks":
		id, verb, _ := strings.Cut(segs[1], ":")
		if id == "" {
			return nil, notFound
		}
		name := "tasks/" + id
		switch verb {
		case "":
			if !allow(http.MethodGet) {
				return nil, nil
			}
			hl, perr := queryIntPtr(q.Get("historyLength"), "historyLength")
			if perr != nil {
				return nil, perr
			}
			res, perr := h.getTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id), HistoryLength: hl})
			if perr != nil {
				return nil, perr
			}
			return pb03TaskOf(res.(*a2a.Task)), nil
		case "cancel":
			if !allow(http.MethodPost) {
				return nil, nil
			}
			// CancelTaskRequest {name}; metadata as v0.3 JSON-RPC takes it.
			var p struct {
				Name     string         `json:"name"`
				Metadata map[string]any `json:"metadata"`
			}
			if perr := h.restBody(w, r, &p, false); perr != nil {
				return nil, perr
			}
			if perr := checkName(p.Name, name); perr != nil {
				return nil, perr
			}
			res, perr := h.cancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(id), Metadata: p.Metadata})
			if perr != nil {
				return nil, perr
			}
			return pb03TaskOf(res.(*a2a.Task)), nil
		case "subscribe":
			// The proto says GET; POST as in the v1.0 binding.
			if !allow(http.MethodGet, http.MethodPost) {
				return nil, nil
			}
			p := subscribeParams{ID: a2a.TaskID(id)}
			if r.Method == http.MethodPost {
				var body struct {
					Name        string          `json:"name"`
					LastEventID json.RawMessage `json:"lastEventId"`
				}
				perr := h.restBody(w, r, &body, false)
				if perr == nil {
					perr = checkName(body.Name, name)
				}
				if perr != nil {
					h.fail(w, rp, perr)
					return nil, nil
				}
				p.LastEventID = body.LastEventID
			}
			h.subscribeToTask(w, r, rp, &p)
			return nil, nil
		}
	case len(segs) >= 3 && segs[0] == "tasks" && segs[1] != "" && segs[2] == "pushNotificationConfigs":
		task := a2a.TaskID(segs[1])
		switch {
		case len(segs) == 3:
			if !allow(http.MethodPost, http.MethodGet) {
				return nil, nil
			}
			if r.Method == http.MethodGet {
				size, perr := queryInt(q.Get("pageSize"), "pageSize")
				if perr != nil {
					return nil, perr
				}
				res, perr := h.listPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task, PageSize: size, PageToken: q.Get("pageToken")})
				if perr != nil {
					return nil, perr
				}
				list := res.(*a2a.ListTaskPushConfigResponse)
				out := pb03PushConfigList{Configs: make([]pb03PushConfig, 0, len(list.Configs)), NextPageToken: list.NextPageToken}
				for _, c := range list.Configs {
					out.Configs = append(out.Configs, pb03PushConfigOf(*c))
				}
				return out, nil
			}
			var p pb03CreatePushConfig
			if perr := h.restBody(w, r, &p, true); perr != nil {
				return nil, perr
			}
			cfg, perr := p.config(task)
			if perr != nil {
				return nil, perr
			}
			res, perr := h.createPushConfig(ctx, cfg)
			if perr != nil {
				return nil, perr
			}
			return pb03PushConfigOf(res.(a2a.PushConfig)), nil
		case len(segs) == 4 && segs[3] != "":
			if !allow(http.MethodGet, http.MethodDelete) {
				return nil, nil
			}
			if r.Method == http.MethodDelete {
				if _, perr := h.deletePushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task, ID: segs[3]}); perr != nil {
					return nil, perr
				}
				return struct{}{}, nil // google.protobuf.Empty
			}
			res, perr := h.getPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task, ID: segs[3]})
			if perr != nil {
				return nil, perr
			}
			return pb03PushConfigOf(res.(a2a.PushConfig)), nil
		}
	}
	return nil, notFound
}

// checkName reports a resource name given in a body that is not the one
// of the path.
func checkName(got, want string) *Error {
	if got != "" && got != want {
		return invalidParams("name %q differs from the path's %q", truncate(got, 100), want)
	}
	return nil
}

// listTasksV03 serves GET /v1/tasks (ListTasks of the 0.3 proto, which
// v0.3 JSON-RPC lacks).
func (h *Handler) listTasksV03(r *http.Request) (any, *Error) {
	q := r.URL.Query()
	p := a2a.ListTasksRequest{ContextID: q.Get("contextId"), PageToken: q.Get("pageToken")}
	if st := q.Get("status"); st != "" {
		s, ok := pb03StateIn(st)
		if !ok {
			return nil, invalidParams("status %q is not a TaskState of the 0.3 proto", truncate(st, 40))
		}
		p.Status = s
	}
	if perr := listQuery(q, &p, "lastUpdatedTime"); perr != nil {
		return nil, perr
	}
	res, perr := h.listTasks(r.Context(), &p)
	if perr != nil {
		return nil, perr
	}
	list := res.(*a2a.ListTasksResponse)
	out := pb03TaskList{Tasks: make([]pb03Task, 0, len(list.Tasks)), NextPageToken: list.NextPageToken, TotalSize: list.TotalSize}
	for _, t := range list.Tasks {
		out.Tasks = append(out.Tasks, pb03TaskOf(t))
	}
	return out, nil
}

// The 0.3 proto's messages in proto-JSON. Output is made from the v0.3
// JSON-RPC shapes (v03.go), so both renderings of a task agree.

type pb03File struct {
	FileWithURI   string `json:"fileWithUri,omitempty"`
	FileWithBytes string `json:"fileWithBytes,omitempty"`
	MimeType      string `json:"mimeType,omitempty"`
	Name          string `json:"name,omitempty"`
}

type pb03Data struct {
	Data any `json:"data"`
}

// pb03Part is a Part: one of text, file and data.
type pb03Part struct {
	Text     *string        `json:"text,omitempty"`
	File     *pb03File      `json:"file,omitempty"`
	Data     *pb03Data      `json:"data,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// pb03Message is a Message. Its parts are "content" in the 0.3 proto
// (a2a-python 0.3 and a2a-go's v0.3 compat layer); later drafts, and the
// code a2a-go v0.3.15 generated, name the field "parts", which is accepted
// on input.
type pb03Message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Content          []pb03Part     `json:"content"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

type pb03Status struct {
	State string `json:"state"`
	// Message is the proto's field "update", whose JSON name is "message".
	Message   *pb03Message `json:"message,omitempty"`
	Timestamp string       `json:"timestamp,omitempty"`
}

type pb03Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []pb03Part     `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

type pb03Task struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    pb03Status     `json:"status"`
	Artifacts []pb03Artifact `json:"artifacts,omitempty"`
	History   []pb03Message  `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type pb03StatusEvent struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    pb03Status     `json:"status"`
	Final     bool           `json:"final,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type pb03ArtifactEvent struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  pb03Artifact   `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// pb03StreamResponse is a StreamResponse, and with only Task set a
// SendMessageResponse. Message is the proto's field "msg", whose JSON name
// is "message"; the server never answers with a message.
type pb03StreamResponse struct {
	Task           *pb03Task          `json:"task,omitempty"`
	Message        *pb03Message       `json:"message,omitempty"`
	StatusUpdate   *pb03StatusEvent   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *pb03ArtifactEvent `json:"artifactUpdate,omitempty"`
}

// pb03PushConfig is a TaskPushNotificationConfig: the name
// "tasks/{id}/pushNotificationConfigs/{configId}" and the config, whose
// fields are those of v0.3 JSON-RPC.
type pb03PushConfig struct {
	Name                   string        `json:"name"`
	PushNotificationConfig v03PushConfig `json:"pushNotificationConfig"`
}

type pb03PushConfigList struct {
	Configs       []pb03PushConfig `json:"configs"`
	NextPageToken string           `json:"nextPageToken,omitempty"`
}

type pb03TaskList struct {
	Tasks         []pb03Task `json:"tasks"`
	NextPageToken string     `json:"nextPageToken,omitempty"`
	TotalSize     int        `json:"totalSize"`
}

// pb03States are the TaskState names of the 0.3 proto, by number.
var pb03States = []string{
	"TASK_STATE_UNSPECIFIED", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED",
	"TASK_STATE_FAILED", "TASK_STATE_CANCELLED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED",
	"TASK_STATE_AUTH_REQUIRED",
}

// pb03State renders a v0.3 state (input-required) as its 0.3 proto name
// (TASK_STATE_INPUT_REQUIRED; canceled is TASK_STATE_CANCELLED).
func pb03State(s string) string {
	switch s {
	case "unknown":
		return "TASK_STATE_UNSPECIFIED"
	case "canceled":
		return "TASK_STATE_CANCELLED"
	}
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}

// pb03StateIn parses a TaskState given by name or number, and takes the
// v1.0 spelling TASK_STATE_CANCELED too.
func pb03StateIn(s string) (a2a.TaskState, bool) {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < len(pb03States) {
		s = pb03States[n]
	}
	switch s {
	case "TASK_STATE_CANCELLED", string(a2a.TaskStateCanceled):
		return a2a.TaskStateCanceled, true
	case "TASK_STATE_UNSPECIFIED":
		return a2a.TaskStateUnspecified, true
	}
	for _, name := range pb03States {
		if s == name {
			return a2a.TaskState(s), true
		}
	}
	return "", false
}

func pb03PartFrom(p v03Part) pb03Part {
	out := pb03Part{Text: p.Text, Metadata: p.Metadata}
	switch p.Kind {
	case "file":
		out.File = &pb03File{FileWithURI: p.File.URI, FileWithBytes: p.File.Bytes, MimeType: p.File.MimeType, Name: p.File.Name}
	case "data":
		out.Data = &pb03Data{Data: p.Data}
	}
	return out
}

func pb03PartsFrom(ps []v03Part) []pb03Part {
	out := make([]pb03Part, 0, len(ps))
	for _, p := range ps {
		out = append(out, pb03PartFrom(p))
	}
	return out
}

func pb03MessageFrom(m *v03Message) *pb03Message {
	if m == nil {
		return nil
	}
	return &pb03Message{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: "ROLE_" + strings.ToUpper(m.Role),
		Content: pb03PartsFrom(m.Parts), Metadata: m.Metadata, Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs}
}

func pb03StatusFrom(s v03Status) pb03Status {
	return pb03Status{State: pb03State(s.State), Message: pb03MessageFrom(s.Message), Timestamp: s.Timestamp}
}

func pb03ArtifactFrom(a v03Artifact) pb03Artifact {
	return pb03Artifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description, Parts: pb03PartsFrom(a.Parts),
		Metadata: a.Metadata, Extensions: a.Extensions}
}

func pb03TaskOf(t *a2a.Task) pb03Task {
	v := v03TaskOf(t)
	out := pb03Task{ID: v.ID, ContextID: v.ContextID, Status: pb03StatusFrom(v.Status), Metadata: v.Metadata}
	for _, a := range v.Artifacts {
		out.Artifacts = append(out.Artifacts, pb03ArtifactFrom(a))
	}
	for _, m := range v.History {
		out.History = append(out.History, *pb03MessageFrom(&m))
	}
	return out
}

// pb03StatusItem is the stream item of a status event.
func pb03StatusItem(e *a2a.TaskStatusUpdateEvent, final bool) pb03StreamResponse {
	v := v03StatusEventOf(e, final)
	return pb03StreamResponse{StatusUpdate: &pb03StatusEvent{TaskID: v.TaskID, ContextID: v.ContextID, Status: pb03StatusFrom(v.Status),
		Final: v.Final, Metadata: v.Metadata}}
}

// pb03ArtifactItem is the stream item of an artifact event.
func pb03ArtifactItem(e *a2a.TaskArtifactUpdateEvent) pb03StreamResponse {
	v := v03ArtifactEventOf(e)
	return pb03StreamResponse{ArtifactUpdate: &pb03ArtifactEvent{TaskID: v.TaskID, ContextID: v.ContextID, Artifact: pb03ArtifactFrom(v.Artifact),
		Append: v.Append, LastChunk: v.LastChunk, Metadata: v.Metadata}}
}

func pb03PushConfigOf(c a2a.PushConfig) pb03PushConfig {
	v := v03PushConfigOf(c)
	return pb03PushConfig{Name: "tasks/" + v.TaskID + "/pushNotificationConfigs/" + v.PushNotificationConfig.ID,
		PushNotificationConfig: v.PushNotificationConfig}
}

// Requests.

// pb03InPart is a Part as clients send it.
type pb03InPart struct {
	Text *string `json:"text"`
	File *struct {
		FileWithURI   string `json:"fileWithUri"`
		FileWithBytes string `json:"fileWithBytes"`
		MimeType      string `json:"mimeType"`
		Name          string `json:"name"`
	} `json:"file"`
	Data *struct {
		Data any `json:"data"`
	} `json:"data"`
	Metadata map[string]any `json:"metadata"`
}

// v03 converts a part to its v0.3 JSON-RPC shape, whose v1 method checks
// the rest.
func (p pb03InPart) v03(i int) (v03Part, *Error) {
	n := 0
	for _, set := range []bool{p.Text != nil, p.File != nil, p.Data != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return v03Part{}, invalidParams("message.content[%d] must have exactly one of text, file and data", i)
	}
	out := v03Part{Text: p.Text, Metadata: p.Metadata}
	switch {
	case p.Text != nil:
		out.Kind = "text"
	case p.File != nil:
		f := p.File
		if (f.FileWithURI == "") == (f.FileWithBytes == "") {
			return v03Part{}, invalidParams("message.content[%d].file must have exactly one of fileWithUri and fileWithBytes", i)
		}
		out.Kind, out.File = "file", &v03File{Name: f.Name, MimeType: f.MimeType, URI: f.FileWithURI}
		if f.FileWithBytes != "" {
			b, ok := decodeProtoBytes(f.FileWithBytes)
			if !ok {
				return v03Part{}, invalidParams("message.content[%d].file.fileWithBytes is not base64", i)
			}
			out.File.Bytes = base64.StdEncoding.EncodeToString(b)
		}
	default:
		out.Kind, out.Data = "data", p.Data.Data
		if _, ok := p.Data.Data.(map[string]any); !ok {
			return v03Part{}, invalidParams("message.content[%d].data.data must be a JSON object", i)
		}
	}
	return out, nil
}

// decodeProtoBytes decodes a proto-JSON bytes value: base64, standard or
// URL-safe, padded or not, as proto-JSON parsers accept it.
func decodeProtoBytes(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// pb03InMessage is a Message as clients send it: parts in "content", or
// in "parts"; the role by name or number.
type pb03InMessage struct {
	MessageID        string          `json:"messageId"`
	ContextID        string          `json:"contextId"`
	TaskID           string          `json:"taskId"`
	Role             json.RawMessage `json:"role"`
	Content          []pb03InPart    `json:"content"`
	Parts            []pb03InPart    `json:"parts"`
	Metadata         map[string]any  `json:"metadata"`
	Extensions       []string        `json:"extensions"`
	ReferenceTaskIDs []string        `json:"referenceTaskIds"`
}

// pb03Roles are the Role names of the 0.3 proto, by number.
var pb03Roles = []string{"ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"}

// v1 converts a message through its v0.3 JSON-RPC shape.
func (m *pb03InMessage) v1() (*a2a.Message, *Error) {
	if m == nil {
		return nil, invalidParams("message is required")
	}
	if m.Content != nil && m.Parts != nil {
		return nil, invalidParams("message has both content and parts (the same field)")
	}
	parts := m.Content
	if parts == nil {
		parts = m.Parts
	}
	role := ""
	var n int
	var name string
	switch {
	case json.Unmarshal(m.Role, &name) == nil:
		role = name
	case json.Unmarshal(m.Role, &n) == nil && n >= 0 && n < len(pb03Roles):
		role = pb03Roles[n]
	}
	if role != "ROLE_USER" {
		return nil, invalidParams("message.role must be ROLE_USER")
	}
	v := &v03Message{MessageID: m.MessageID, Role: "user", ContextID: m.ContextID, TaskID: m.TaskID,
		ReferenceTaskIDs: m.ReferenceTaskIDs, Extensions: m.Extensions, Metadata: m.Metadata}
	for i, p := range parts {
		vp, perr := p.v03(i)
		if perr != nil {
			return nil, perr
		}
		v.Parts = append(v.Parts, vp)
	}
	return v.v1()
}

// pb03SendRequest is a SendMessageRequest. The message is the proto's
// field "request", whose JSON name is "message"; either is taken.
type pb03SendRequest struct {
	Message       *pb03InMessage `json:"message"`
	Request       *pb03InMessage `json:"request"`
	Configuration *struct {
		AcceptedOutputModes []string       `json:"acceptedOutputModes"`
		PushNotification    *v03PushConfig `json:"pushNotification"`
		HistoryLength       int            `json:"historyLength"`
		Blocking            bool           `json:"blocking"`
	} `json:"configuration"`
	Metadata map[string]any `json:"metadata"`
}

// v1 converts the request. blocking is a proto3 bool: only "blocking":
// true blocks, as in a2a-python 0.3 (a request without configuration
// returns at once too); historyLength 0 is no limit, as the proto says.
func (p *pb03SendRequest) v1() (*a2a.SendMessageRequest, *Error) {
	in := p.Message
	if in != nil && p.Request != nil {
		return nil, invalidParams("both message and request (the same field)")
	}
	if in == nil {
		in = p.Request
	}
	msg, perr := in.v1()
	if perr != nil {
		return nil, perr
	}
	out := &a2a.SendMessageRequest{Message: msg, Metadata: p.Metadata, Config: &a2a.SendMessageConfig{ReturnImmediately: true}}
	if c := p.Configuration; c != nil {
		out.Config.AcceptedOutputModes = c.AcceptedOutputModes
		out.Config.ReturnImmediately = !c.Blocking
		if c.HistoryLength != 0 {
			out.Config.HistoryLength = &c.HistoryLength
		}
		out.Config.PushConfig = c.PushNotification.v1("")
	}
	return out, nil
}

// pb03CreatePushConfig is the body of POST
// /v1/tasks/{id}/pushNotificationConfigs: a TaskPushNotificationConfig, as
// the proto's annotation (body: "config") says, or the whole
// CreateTaskPushNotificationConfigRequest {parent, configId, config}, as
// a2a-python and a2a-go send it.
type pb03CreatePushConfig struct {
	Parent   string `json:"parent"`
	ConfigID string `json:"configId"`
	Config   *struct {
		Name                   string         `json:"name"`
		PushNotificationConfig *v03PushConfig `json:"pushNotificationConfig"`
	} `json:"config"`
	Name                   string         `json:"name"`
	PushNotificationConfig *v03PushConfig `json:"pushNotificationConfig"`
}

// config returns the push config for task the body describes.
func (p *pb03CreatePushConfig) config(task a2a.TaskID) (*a2a.PushConfig, *Error) {
	name, cfg := p.Name, p.PushNotificationConfig
	if p.Config != nil {
		if name != "" || cfg != nil {
			return nil, invalidParams("the body is a TaskPushNotificationConfig or a CreateTaskPushNotificationConfigRequest, not both")
		}
		name, cfg = p.Config.Name, p.Config.PushNotificationConfig
	}
	if perr := checkName(p.Parent, "tasks/"+string(task)); perr != nil {
		return nil, perr
	}
	if cfg == nil {
		return nil, invalidParams("pushNotificationConfig is required")
	}
	c := *cfg
	// The config id: the config's, else configId, else the name's.
	prefix := "tasks/" + string(task) + "/pushNotificationConfigs/"
	nameID := ""
	if name != "" {
		id, ok := strings.CutPrefix(name, prefix)
		if !ok || id == "" || strings.Contains(id, "/") {
			return nil, invalidParams("name %q is not %s{configId}", truncate(name, 100), prefix)
		}
		nameID = id
	}
	for _, id := range []string{p.ConfigID, nameID} {
		switch {
		case id == "":
		case c.ID == "":
			c.ID = id
		case c.ID != id:
			return nil, invalidParams("the config ids of the body differ (%q, %q)", truncate(c.ID, 64), truncate(id, 64))
		}
	}
	return c.v1(task), nil
}

// The card.

type pb03Interface struct {
	URL       string `json:"url"`
	Transport string `json:"transport"`
}

type pb03Capabilities struct {
	Streaming         bool                 `json:"streaming"`
	PushNotifications bool                 `json:"pushNotifications"`
	Extensions        []a2a.AgentExtension `json:"extensions,omitempty"`
}

type pb03StringList struct {
	List []string `json:"list"`
}

type pb03Security struct {
	Schemes map[string]pb03StringList `json:"schemes"`
}

type pb03Skill struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Tags        []string       `json:"tags"`
	Examples    []string       `json:"examples,omitempty"`
	InputModes  []string       `json:"inputModes,omitempty"`
	OutputModes []string       `json:"outputModes,omitempty"`
	Security    []pb03Security `json:"security,omitempty"`
}

// pb03Card is an AgentCard of the 0.3 proto.
type pb03Card struct {
	ProtocolVersion                   string                   `json:"protocolVersion"`
	Name                              string                   `json:"name"`
	Description                       string                   `json:"description"`
	URL                               string                   `json:"url"`
	PreferredTransport                string                   `json:"preferredTransport"`
	AdditionalInterfaces              []pb03Interface          `json:"additionalInterfaces,omitempty"`
	Provider                          *a2a.AgentProvider       `json:"provider,omitempty"`
	Version                           string                   `json:"version"`
	DocumentationURL                  string                   `json:"documentationUrl,omitempty"`
	Capabilities                      pb03Capabilities         `json:"capabilities"`
	SecuritySchemes                   a2a.NamedSecuritySchemes `json:"securitySchemes,omitempty"`
	Security                          []pb03Security           `json:"security,omitempty"`
	DefaultInputModes                 []string                 `json:"defaultInputModes"`
	DefaultOutputModes                []string                 `json:"defaultOutputModes"`
	Skills                            []pb03Skill              `json:"skills"`
	SupportsAuthenticatedExtendedCard bool                     `json:"supportsAuthenticatedExtendedCard"`
	Signatures                        []a2a.AgentCardSignature `json:"signatures,omitempty"`
	IconURL                           string                   `json:"iconUrl,omitempty"`
}

func pb03SecurityOf(reqs a2a.SecurityRequirementsOptions) []pb03Security {
	var out []pb03Security
	for _, req := range reqs {
		s := pb03Security{Schemes: make(map[string]pb03StringList, len(req))}
		for name, scopes := range req {
			s.Schemes[string(name)] = pb03StringList{List: append([]string{}, scopes...)}
		}
		out = append(out, s)
	}
	return out
}

// pb03CardOf renders the card for v0.3 clients of this binding: the
// preferred interface is the first one's URL with JSON-RPC, and both
// bindings are listed at that URL (HTTP+JSON routes under /v1/).
func pb03CardOf(card a2a.AgentCard) pb03Card {
	out := pb03Card{ProtocolVersion: dialect03, Name: card.Name, Description: card.Description, PreferredTransport: "JSONRPC",
		Provider: card.Provider, Version: card.Version, DocumentationURL: card.DocumentationURL,
		Capabilities: pb03Capabilities{Streaming: card.Capabilities.Streaming, PushNotifications: card.Capabilities.PushNotifications,
			Extensions: card.Capabilities.Extensions},
		SecuritySchemes: card.SecuritySchemes, Security: pb03SecurityOf(card.SecurityRequirements),
		DefaultInputModes: card.DefaultInputModes, DefaultOutputModes: card.DefaultOutputModes, Skills: []pb03Skill{},
		Signatures: card.Signatures, IconURL: card.IconURL}
	if out.DefaultInputModes == nil {
		out.DefaultInputModes = []string{}
	}
	if out.DefaultOutputModes == nil {
		out.DefaultOutputModes = []string{}
	}
	if len(card.SupportedInterfaces) > 0 {
		out.URL = card.SupportedInterfaces[0].URL
		out.AdditionalInterfaces = []pb03Interface{{URL: out.URL, Transport: "JSONRPC"}, {URL: out.URL, Transport: "HTTP+JSON"}}
	}
	for _, s := range card.Skills {
		out.Skills = append(out.Skills, pb03Skill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags, Examples: s.Examples,
			InputModes: s.InputModes, OutputModes: s.OutputModes, Security: pb03SecurityOf(s.SecurityRequirements)})
	}
	return out
}
