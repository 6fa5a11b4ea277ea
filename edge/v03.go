package edge

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The v0.3 JSON-RPC dialect (message/send, tasks/get, ...; a2a-v0.3.schema.json):
// the same engine, rendered with "kind" discriminators, lower-case states
// and roles, file parts, and the "final" flag on status events.

// dialect03 is the protocol version recorded on tasks made in v0.3.
const dialect03 = "0.3"

// v03File is a file part's content in v0.3 and v0.1.
type v03File struct {
	Name     string `json:"name,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Bytes    string `json:"bytes,omitempty"`
	URI      string `json:"uri,omitempty"`
	// Data is the original articles' spelling of Bytes (v0.1), accepted
	// on input; it is never sent.
	Data string `json:"data,omitempty"`
}

type v03Part struct {
	Kind     string         `json:"kind"`
	Text     *string        `json:"text,omitempty"`
	File     *v03File       `json:"file,omitempty"`
	Data     any            `json:"data,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

type v03Message struct {
	Kind             string         `json:"kind"`
	MessageID        string         `json:"messageId"`
	Role             string         `json:"role"`
	Parts            []v03Part      `json:"parts"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	Metadata         map[string]any `json:"metadata,omitempty"`
}

type v03Status struct {
	State     string      `json:"state"`
	Message   *v03Message `json:"message,omitempty"`
	Timestamp string      `json:"timestamp,omitempty"`
}

type v03Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []v03Part      `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

type v03Task struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    v03Status      `json:"status"`
	Artifacts []v03Artifact  `json:"artifacts,omitempty"`
	History   []v03Message   `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type v03StatusEvent struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    v03Status      `json:"status"`
	Final     bool           `json:"final"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type v03ArtifactEvent struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  v03Artifact    `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// v03State renders a v1.0 state: TASK_STATE_INPUT_REQUIRED → input-required.
func v03State(s a2a.TaskState) string {
	if s == a2a.TaskStateUnspecified {
		return "unknown"
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

func v03Role(r a2a.MessageRole) string {
	return strings.ToLower(strings.TrimPrefix(string(r), "ROLE_"))
}

func v03PartOf(p *a2a.Part) v03Part {
	out := v03Part{Metadata: p.Metadata}
	switch c := p.Content.(type) {
	case a2a.Text:
		t := string(c)
		out.Kind, out.Text = "text", &t
	case a2a.Raw:
		out.Kind = "file"
		out.File = &v03File{Name: p.Filename, MimeType: p.MediaType, Bytes: base64.StdEncoding.EncodeToString(c)}
	case a2a.URL:
		out.Kind = "file"
		out.File = &v03File{Name: p.Filename, MimeType: p.MediaType, URI: string(c)}
	case a2a.Data:
		// v0.x data parts are objects: another value is wrapped.
		out.Kind, out.Data = "data", c.Value
		if _, ok := c.Value.(map[string]any); !ok {
			out.Data = map[string]any{"value": c.Value}
		}
	}
	return out
}

func v03PartsOf(ps a2a.ContentParts) []v03Part {
	out := make([]v03Part, 0, len(ps))
	for _, p := range ps {
		out = append(out, v03PartOf(p))
	}
	return out
}

func v03MessageOf(m *a2a.Message) *v03Message {
	if m == nil {
		return nil
	}
	out := &v03Message{Kind: "message", MessageID: m.ID, Role: v03Role(m.Role), Parts: v03PartsOf(m.Parts),
		ContextID: m.ContextID, TaskID: string(m.TaskID), Extensions: m.Extensions, Metadata: m.Metadata}
	for _, r := range m.ReferenceTasks {
		out.ReferenceTaskIDs = append(out.ReferenceTaskIDs, string(r))
	}
	return out
}

func v03StatusOf(s a2a.TaskStatus) v03Status {
	out := v03Status{State: v03State(s.State), Message: v03MessageOf(s.Message)}
	if s.Timestamp != nil {
		out.Timestamp = s.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	return out
}

func v03ArtifactOf(a *a2a.Artifact) v03Artifact {
	return v03Artifact{ArtifactID: string(a.ID), Name: a.Name, Description: a.Description, Parts: v03PartsOf(a.Parts),
		Metadata: a.Metadata, Extensions: a.Extensions}
}

func v03TaskOf(t *a2a.Task) v03Task {
	out := v03Task{Kind: "task", ID: string(t.ID), ContextID: t.ContextID, Status: v03StatusOf(t.Status), Metadata: t.Metadata}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, v03ArtifactOf(a))
	}
	for _, m := range t.History {
		out.History = append(out.History, *v03MessageOf(m))
	}
	return out
}

func v03StatusEventOf(e *a2a.TaskStatusUpdateEvent, final bool) v03StatusEvent {
	return v03StatusEvent{Kind: "status-update", TaskID: string(e.TaskID), ContextID: e.ContextID, Status: v03StatusOf(e.Status), Final: final, Metadata: e.Metadata}
}

func v03ArtifactEventOf(e *a2a.TaskArtifactUpdateEvent) v03ArtifactEvent {
	return v03ArtifactEvent{Kind: "artifact-update", TaskID: string(e.TaskID), ContextID: e.ContextID, Artifact: v03ArtifactOf(e.Artifact),
		Append: e.Append, LastChunk: e.LastChunk, Metadata: e.Metadata}
}

// Requests.

type v03Auth struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

type v03PushConfig struct {
	ID             string   `json:"id,omitempty"`
	URL            string   `json:"url"`
	Token          string   `json:"token,omitempty"`
	Authentication *v03Auth `json:"authentication,omitempty"`
}

type v03TaskPushConfig struct {
	TaskID                 string        `json:"taskId"`
	PushNotificationConfig v03PushConfig `json:"pushNotificationConfig"`
}

type v03SendParams struct {
	Message       *v03Message `json:"message"`
	Configuration *struct {
		AcceptedOutputModes    []string       `json:"acceptedOutputModes"`
		Blocking               *bool          `json:"blocking"`
		HistoryLength          *int           `json:"historyLength"`
		PushNotificationConfig *v03PushConfig `json:"pushNotificationConfig"`
	} `json:"configuration"`
	Metadata map[string]any `json:"metadata"`
}

func (c *v03PushConfig) v1(task a2a.TaskID) *a2a.PushConfig {
	if c == nil {
		return nil
	}
	out := &a2a.PushConfig{ID: c.ID, TaskID: task, URL: c.URL, Token: c.Token}
	if c.Authentication != nil && len(c.Authentication.Schemes) > 0 {
		out.Auth = &a2a.PushAuthInfo{Scheme: c.Authentication.Schemes[0], Credentials: c.Authentication.Credentials}
	}
	return out
}

func v03PushConfigOf(c a2a.PushConfig) v03TaskPushConfig {
	out := v03TaskPushConfig{TaskID: string(c.TaskID), PushNotificationConfig: v03PushConfig{ID: c.ID, URL: c.URL, Token: c.Token}}
	if c.Auth != nil {
		out.PushNotificationConfig.Authentication = &v03Auth{Schemes: []string{c.Auth.Scheme}, Credentials: c.Auth.Credentials}
	}
	return out
}

// v1Part converts a v0.3 part; it reports an invalid one.
func (p v03Part) v1() (*a2a.Part, *Error) {
	switch p.Kind {
	case "text":
		if p.Text == nil {
			return nil, invalidParams("a text part needs text")
		}
		return &a2a.Part{Content: a2a.Text(*p.Text), Metadata: p.Metadata}, nil
	case "file":
		if p.File == nil {
			return nil, invalidParams("a file part needs file")
		}
		out := &a2a.Part{Filename: p.File.Name, MediaType: p.File.MimeType, Metadata: p.Metadata}
		bytes := p.File.Bytes
		if bytes == "" {
			bytes = p.File.Data
		}
		switch {
		case bytes != "" && p.File.URI == "":
			b, err := base64.StdEncoding.DecodeString(bytes)
			if err != nil {
				return nil, invalidParams("file.bytes is not base64")
			}
			out.Content = a2a.Raw(b)
		case p.File.URI != "" && bytes == "":
			out.Content = a2a.URL(p.File.URI)
		default:
			return nil, invalidParams("a file part needs exactly one of bytes and uri")
		}
		return out, nil
	case "data":
		if _, ok := p.Data.(map[string]any); !ok {
			return nil, invalidParams("a data part needs data, a JSON object")
		}
		return &a2a.Part{Content: a2a.Data{Value: p.Data}, Metadata: p.Metadata}, nil
	}
	return nil, invalidParams("part kind %q is not text, file or data", truncate(p.Kind, 20))
}

func (m *v03Message) v1() (*a2a.Message, *Error) {
	if m == nil {
		return nil, invalidParams("message is required")
	}
	if m.Role != "user" {
		return nil, invalidParams("message.role must be user")
	}
	out := &a2a.Message{ID: m.MessageID, Role: a2a.MessageRoleUser, ContextID: m.ContextID, TaskID: a2a.TaskID(m.TaskID),
		Extensions: m.Extensions, Metadata: m.Metadata}
	for _, r := range m.ReferenceTaskIDs {
		out.ReferenceTasks = append(out.ReferenceTasks, a2a.TaskID(r))
	}
	for _, p := range m.Parts {
		v, perr := p.v1()
		if perr != nil {
			return nil, perr
		}
		out.Parts = append(out.Parts, v)
	}
	return out, nil
}

// sendParams converts message/send and message/stream params.
func (p *v03SendParams) v1() (*a2a.SendMessageRequest, *Error) {
	msg, perr := p.Message.v1()
	if perr != nil {
		return nil, perr
	}
	out := &a2a.SendMessageRequest{Message: msg, Metadata: p.Metadata, Config: &a2a.SendMessageConfig{}}
	if c := p.Configuration; c != nil {
		out.Config.AcceptedOutputModes = c.AcceptedOutputModes
		out.Config.HistoryLength = c.HistoryLength
		out.Config.ReturnImmediately = c.Blocking != nil && !*c.Blocking
		out.Config.PushConfig = c.PushNotificationConfig.v1("")
	}
	return out, nil
}

// v03Methods are the v0.3 JSON-RPC method names.
var v03Methods = map[string]bool{
	"message/send": true, "message/stream": true, "tasks/get": true, "tasks/cancel": true, "tasks/resubscribe": true,
	"tasks/pushNotificationConfig/set": true, "tasks/pushNotificationConfig/get": true,
	"tasks/pushNotificationConfig/list": true, "tasks/pushNotificationConfig/delete": true,
	"agent/getAuthenticatedExtendedCard": true,
}

type v03TaskParams struct {
	ID                       string          `json:"id"`
	HistoryLength            *int            `json:"historyLength"`
	PushNotificationConfigID string          `json:"pushNotificationConfigId"`
	Metadata                 map[string]any  `json:"metadata"`
	LastEventID              json.RawMessage `json:"lastEventId"`
}

// callV03 runs a v0.3 method that answers with one JSON-RPC response.
func (h *Handler) callV03(r *http.Request, method string, params json.RawMessage) (any, *Error) {
	ctx := r.Context()
	switch method {
	case "message/send":
		var p v03SendParams
		if perr := decodeObject(params, &p); perr != nil {
			return nil, perr
		}
		req, perr := p.v1()
		if perr != nil {
			return nil, perr
		}
		t, perr := h.sendMessageTask(ctx, req, dialect03, "")
		if perr != nil {
			return nil, perr
		}
		return v03TaskOf(t), nil
	case "tasks/get", "tasks/cancel":
		var p v03TaskParams
		if perr := decodeObject(params, &p); perr != nil {
			return nil, perr
		}
		var res any
		var perr *Error
		if method == "tasks/get" {
			res, perr = h.getTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(p.ID), HistoryLength: p.HistoryLength})
		} else {
			res, perr = h.cancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(p.ID), Metadata: p.Metadata})
		}
		if perr != nil {
			return nil, perr
		}
		return v03TaskOf(res.(*a2a.Task)), nil
	case "tasks/pushNotificationConfig/set":
		var p v03TaskPushConfig
		if perr := decodeObject(params, &p); perr != nil {
			return nil, perr
		}
		res, perr := h.createPushConfig(ctx, p.PushNotificationConfig.v1(a2a.TaskID(p.TaskID)))
		if perr != nil {
			return nil, perr
		}
		return v03PushConfigOf(res.(a2a.PushConfig)), nil
	case "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete":
		var p v03TaskParams
		if perr := decodeObject(params, &p); perr != nil {
			return nil, perr
		}
		task := a2a.TaskID(p.ID)
		switch {
		case method == "tasks/pushNotificationConfig/delete":
			if _, perr := h.deletePushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task, ID: p.PushNotificationConfigID}); perr != nil {
				return nil, perr
			}
			return json.RawMessage("null"), nil
		case method == "tasks/pushNotificationConfig/get" && p.PushNotificationConfigID != "":
			res, perr := h.getPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task, ID: p.PushNotificationConfigID})
			if perr != nil {
				return nil, perr
			}
			return v03PushConfigOf(res.(a2a.PushConfig)), nil
		}
		res, perr := h.listPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task, PageSize: maxPageSize})
		if perr != nil {
			return nil, perr
		}
		cfgs := res.(*a2a.ListTaskPushConfigResponse).Configs
		if method == "tasks/pushNotificationConfig/get" {
			// Without a config id, get answers the task's first config.
			if len(cfgs) == 0 {
				return nil, pushError(errConfigMissing, string(task))
			}
			return v03PushConfigOf(*cfgs[0]), nil
		}
		out := make([]v03TaskPushConfig, 0, len(cfgs))
		for _, c := range cfgs {
			out = append(out, v03PushConfigOf(*c))
		}
		return out, nil
	case "agent/getAuthenticatedExtendedCard":
		return nil, &Error{Code: codeExtendedCardNotConfigured, Message: "Authenticated Extended Card is not configured"}
	}
	return nil, &Error{Code: codeMethodNotFound, Message: "Method not found: " + truncate(method, 100)}
}

// streamV03 serves message/stream and tasks/resubscribe.
func (h *Handler) streamV03(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string, params json.RawMessage) {
	rp := reply{id: id, v03: true}
	if method == "message/stream" {
		var p v03SendParams
		if perr := decodeObject(params, &p); perr != nil {
			h.fail(w, rp, perr)
			return
		}
		req, perr := p.v1()
		if perr != nil {
			h.fail(w, rp, perr)
			return
		}
		h.sendStreamingMessage(w, r, rp, req)
		return
	}
	var p v03TaskParams
	if perr := decodeObject(params, &p); perr != nil {
		h.fail(w, rp, perr)
		return
	}
	h.subscribeToTask(w, r, rp, &subscribeParams{ID: a2a.TaskID(p.ID), LastEventID: p.LastEventID})
}
