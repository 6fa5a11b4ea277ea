package edge

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"

	"github.com/a2abus/a2abus/events"
)

// The v0.1 JSON-RPC dialect of the original articles (a2a-v0.1.schema.json):
// tasks/send with a client-chosen task id and sessionId, tasks/sendSubscribe,
// "type" part discriminators, status and artifact events only in streams,
// final:true on the last status event. tasks/get, tasks/cancel and
// tasks/resubscribe are shared with v0.3 and answer in the dialect the task
// was created in.

// dialect01 is the protocol version recorded on tasks made in v0.1.
const dialect01 = "0.1"

// v01ConfigID is the id of a task's one v0.1 push config.
const v01ConfigID = "v01"

type v01Part struct {
	Type     string         `json:"type"`
	Text     *string        `json:"text,omitempty"`
	File     *v03File       `json:"file,omitempty"`
	Data     any            `json:"data,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

type v01Message struct {
	Role     string         `json:"role"`
	Parts    []v01Part      `json:"parts"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// v01InMessage is a v0.1 message as clients send it: the articles put the
// parts in "data" where the schema says "parts".
type v01InMessage struct {
	Role     string         `json:"role"`
	Parts    []v01Part      `json:"parts"`
	Data     []v01Part      `json:"data"`
	Metadata map[string]any `json:"metadata"`
}

type v01Status struct {
	State     string      `json:"state"`
	Message   *v01Message `json:"message,omitempty"`
	Timestamp string      `json:"timestamp,omitempty"`
}

type v01Artifact struct {
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []v01Part      `json:"parts"`
	Index       int            `json:"index"`
	Append      bool           `json:"append,omitempty"`
	LastChunk   bool           `json:"lastChunk,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

type v01Task struct {
	ID        string         `json:"id"`
	SessionID string         `json:"sessionId,omitempty"`
	Status    v01Status      `json:"status"`
	Artifacts []v01Artifact  `json:"artifacts,omitempty"`
	History   []v01Message   `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type v01StatusEvent struct {
	ID       string         `json:"id"`
	Status   v01Status      `json:"status"`
	Final    bool           `json:"final"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

type v01ArtifactEvent struct {
	ID       string         `json:"id"`
	Artifact v01Artifact    `json:"artifact"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

type v01PushConfig struct {
	URL            string   `json:"url"`
	Token          string   `json:"token,omitempty"`
	Authentication *v03Auth `json:"authentication,omitempty"`
}

type v01TaskPushConfig struct {
	ID                     string        `json:"id"`
	PushNotificationConfig v01PushConfig `json:"pushNotificationConfig"`
}

type v01SendParams struct {
	ID               string         `json:"id"`
	SessionID        string         `json:"sessionId"`
	Message          *v01InMessage  `json:"message"`
	PushNotification *v01PushConfig `json:"pushNotification"`
	HistoryLength    *int           `json:"historyLength"`
	Metadata         map[string]any `json:"metadata"`
}

// v01State renders a state; v0.1 has no rejected or auth-required.
func v01State(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateRejected:
		return "failed"
	case a2a.TaskStateAuthRequired:
		return "input-required"
	}
	return v03State(s)
}

func v01PartsOf(ps a2a.ContentParts) []v01Part {
	out := make([]v01Part, 0, len(ps))
	for _, p := range ps {
		v := v03PartOf(p)
		out = append(out, v01Part{Type: v.Kind, Text: v.Text, Data: v.Data, Metadata: v.Metadata})
		if v.File != nil {
			out[len(out)-1].File = v.File
		}
	}
	return out
}

func v01MessageOf(m *a2a.Message) *v01Message {
	if m == nil {
		return nil
	}
	return &v01Message{Role: v03Role(m.Role), Parts: v01PartsOf(m.Parts), Metadata: m.Metadata}
}

func v01StatusOf(s a2a.TaskStatus) v01Status {
	out := v01Status{State: v01State(s.State), Message: v01MessageOf(s.Message)}
	if s.Timestamp != nil {
		out.Timestamp = s.Timestamp.UTC().Format(time.RFC3339Nano)
	}
	return out
}

func v01ArtifactOf(a *a2a.Artifact, index int, appendChunk, last bool) v01Artifact {
	return v01Artifact{Name: a.Name, Description: a.Description, Parts: v01PartsOf(a.Parts), Index: index,
		Append: appendChunk, LastChunk: last, Metadata: a.Metadata}
}

// v01TaskOf renders a task; history follows the v0.1 rule: none unless
// historyLength asks for some.
func v01TaskOf(t *a2a.Task, historyLength *int) v01Task {
	out := v01Task{ID: string(t.ID), SessionID: t.ContextID, Status: v01StatusOf(t.Status), Metadata: t.Metadata}
	for i, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, v01ArtifactOf(a, i, false, false))
	}
	if historyLength != nil && *historyLength > 0 {
		h := t.History
		if len(h) > *historyLength {
			h = h[len(h)-*historyLength:]
		}
		for _, m := range h {
			out.History = append(out.History, *v01MessageOf(m))
		}
	}
	return out
}

func v01StatusEventOf(id a2a.TaskID, s a2a.TaskStatus, final bool) v01StatusEvent {
	return v01StatusEvent{ID: string(id), Status: v01StatusOf(s), Final: final}
}

// v01Item renders an event for a v0.1 stream.
func (s *sse) v01Item(ev events.Event, final bool) any {
	switch b := ev.Body.(type) {
	case *events.Created:
		return v01StatusEventOf(b.Task.ID, b.Task.Status, false)
	case *a2a.TaskStatusUpdateEvent:
		e := v01StatusEventOf(b.TaskID, b.Status, final)
		e.Metadata = b.Metadata
		return e
	case *a2a.TaskArtifactUpdateEvent:
		if s.artIndex == nil {
			s.artIndex = map[a2a.ArtifactID]int{}
		}
		i, ok := s.artIndex[b.Artifact.ID]
		if !ok {
			i = len(s.artIndex)
			s.artIndex[b.Artifact.ID] = i
		}
		return v01ArtifactEvent{ID: string(b.TaskID), Artifact: v01ArtifactOf(b.Artifact, i, b.Append, b.LastChunk), Metadata: b.Metadata}
	}
	return nil
}

func (p v01Part) v1() (*a2a.Part, *Error) {
	v := v03Part{Kind: p.Type, Text: p.Text, File: p.File, Data: p.Data, Metadata: p.Metadata}
	return v.v1()
}

// v1 converts send params to a v1.0 request and the client's task id.
func (p *v01SendParams) v1() (*a2a.SendMessageRequest, *Error) {
	if p.ID == "" {
		return nil, invalidParams("id (the task id the client chose) is required")
	}
	if !events.ValidTaskID(a2a.TaskID(p.ID)) {
		return nil, invalidParams("id must be 1 to 64 of [A-Za-z0-9_-]")
	}
	if p.Message == nil {
		return nil, invalidParams("message is required")
	}
	if p.Message.Role != "user" {
		return nil, invalidParams("message.role must be user")
	}
	parts := p.Message.Parts
	if len(parts) == 0 {
		parts = p.Message.Data
	}
	msg := &a2a.Message{ID: "v01-" + uuid.NewString(), Role: a2a.MessageRoleUser, ContextID: p.SessionID, Metadata: p.Message.Metadata}
	for _, part := range parts {
		v, perr := part.v1()
		if perr != nil {
			return nil, perr
		}
		msg.Parts = append(msg.Parts, v)
	}
	req := &a2a.SendMessageRequest{Message: msg, Metadata: p.Metadata, Config: &a2a.SendMessageConfig{HistoryLength: p.HistoryLength}}
	if c := p.PushNotification; c != nil {
		req.Config.PushConfig = (&v03PushConfig{ID: v01ConfigID, URL: c.URL, Token: c.Token, Authentication: c.Authentication}).v1("")
	}
	return req, nil
}

// v01Methods are the method names only v0.1 has.
var v01Methods = map[string]bool{
	"tasks/send": true, "tasks/sendSubscribe": true, "tasks/pushNotification/set": true, "tasks/pushNotification/get": true,
}

// sharedMethods are names of both v0.1 and v0.3; they answer in the dialect
// the task was created in.
var sharedMethods = map[string]bool{"tasks/get": true, "tasks/cancel": true, "tasks/resubscribe": true}

// taskDialect returns the dialect a shared method answers in for the task
// named in params: v0.1 if the task was created in v0.1, else v0.3.
func (h *Handler) taskDialect(r *http.Request, params json.RawMessage) string {
	var p struct {
		ID     string `json:"id"`
		Tenant string `json:"tenant"`
	}
	if json.Unmarshal(params, &p) != nil {
		return dialect03
	}
	tenant, perr := tenantOf(p.Tenant)
	if perr != nil {
		return dialect03
	}
	v, err := h.views.Load(r.Context(), tenant, a2a.TaskID(p.ID))
	if err == nil && v.Dialect == dialect01 {
		return dialect01
	}
	return dialect03
}

// resolveV01 makes a tasks/send a creation (the client's id is new) or a
// follow-up (the task exists).
func (h *Handler) resolveV01(r *http.Request, id string, req *a2a.SendMessageRequest) *Error {
	tenant, _ := tenantOf("")
	_, err := h.views.Load(r.Context(), tenant, a2a.TaskID(id))
	switch {
	case err == nil:
		req.Message.TaskID = a2a.TaskID(id)
	case isNotFound(err):
		req.Message.TaskID = ""
	default:
		return toError(err, id)
	}
	return nil
}

// callV01 runs a v0.1 method answered with one JSON-RPC response.
func (h *Handler) callV01(r *http.Request, method string, params json.RawMessage) (any, *Error) {
	ctx := r.Context()
	switch method {
	case "tasks/send":
		var p v01SendParams
		if perr := decodeObject(params, &p); perr != nil {
			return nil, perr
		}
		req, perr := p.v1()
		if perr != nil {
			return nil, perr
		}
		if perr := h.resolveV01(r, p.ID, req); perr != nil {
			return nil, perr
		}
		t, perr := h.sendMessageTask(ctx, req, dialect01, a2a.TaskID(p.ID))
		if perr != nil {
			return nil, perr
		}
		return v01TaskOf(t, p.HistoryLength), nil
	case "tasks/get", "tasks/cancel":
		var p v03TaskParams
		if perr := decodeObject(params, &p); perr != nil {
			return nil, perr
		}
		if method == "tasks/get" {
			res, perr := h.getTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(p.ID)})
			if perr != nil {
				return nil, perr
			}
			return v01TaskOf(res.(*a2a.Task), p.HistoryLength), nil
		}
		res, perr := h.cancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(p.ID), Metadata: p.Metadata})
		if perr != nil {
			return nil, perr
		}
		return v01TaskOf(res.(*a2a.Task), nil), nil
	case "tasks/pushNotification/set":
		var p v01TaskPushConfig
		if perr := decodeObject(params, &p); perr != nil {
			return nil, perr
		}
		c := p.PushNotificationConfig
		res, perr := h.createPushConfig(ctx, (&v03PushConfig{ID: v01ConfigID, URL: c.URL, Token: c.Token, Authentication: c.Authentication}).v1(a2a.TaskID(p.ID)))
		if perr != nil {
			return nil, perr
		}
		return v01PushConfigOf(res.(a2a.PushConfig)), nil
	case "tasks/pushNotification/get":
		var p v03TaskParams
		if perr := decodeObject(params, &p); perr != nil {
			return nil, perr
		}
		res, perr := h.getPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: a2a.TaskID(p.ID), ID: v01ConfigID})
		if perr != nil {
			return nil, perr
		}
		return v01PushConfigOf(res.(a2a.PushConfig)), nil
	}
	return nil, &Error{Code: codeMethodNotFound, Message: "Method not found: " + truncate(method, 100)}
}

func v01PushConfigOf(c a2a.PushConfig) v01TaskPushConfig {
	v := v03PushConfigOf(c)
	return v01TaskPushConfig{ID: string(c.TaskID), PushNotificationConfig: v01PushConfig{URL: v.PushNotificationConfig.URL,
		Token: v.PushNotificationConfig.Token, Authentication: v.PushNotificationConfig.Authentication}}
}

// streamV01 serves tasks/sendSubscribe and, for v0.1 tasks,
// tasks/resubscribe.
func (h *Handler) streamV01(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string, params json.RawMessage) {
	rp := reply{id: id, v01: true}
	if method == "tasks/sendSubscribe" {
		var p v01SendParams
		if perr := decodeObject(params, &p); perr != nil {
			h.fail(w, rp, perr)
			return
		}
		req, perr := p.v1()
		if perr == nil {
			perr = h.resolveV01(r, p.ID, req)
		}
		if perr != nil {
			h.fail(w, rp, perr)
			return
		}
		h.sendStreamingMessageID(w, r, rp, req, a2a.TaskID(p.ID))
		return
	}
	var p v03TaskParams
	if perr := decodeObject(params, &p); perr != nil {
		h.fail(w, rp, perr)
		return
	}
	h.subscribeToTask(w, r, rp, &subscribeParams{ID: a2a.TaskID(p.ID), LastEventID: p.LastEventID})
}

// v01Card is the agent card of the v0.1 era, served at
// /.well-known/agent.json.
func (h *Handler) serveV01Card(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	card := h.card(r, "")
	url := ""
	if len(card.SupportedInterfaces) > 0 {
		url = card.SupportedInterfaces[0].URL
	}
	type skill struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description,omitempty"`
		Tags        []string `json:"tags,omitempty"`
		Examples    []string `json:"examples,omitempty"`
	}
	out := struct {
		Name         string          `json:"name"`
		Description  string          `json:"description,omitempty"`
		URL          string          `json:"url"`
		Provider     any             `json:"provider,omitempty"`
		Version      string          `json:"version"`
		Capabilities map[string]bool `json:"capabilities"`
		DefaultIn    []string        `json:"defaultInputModes"`
		DefaultOut   []string        `json:"defaultOutputModes"`
		Skills       []skill         `json:"skills"`
	}{Name: card.Name, Description: card.Description, URL: url, Version: card.Version,
		Capabilities: map[string]bool{"streaming": card.Capabilities.Streaming, "pushNotifications": card.Capabilities.PushNotifications, "stateTransitionHistory": false},
		DefaultIn:    card.DefaultInputModes, DefaultOut: card.DefaultOutputModes, Skills: []skill{}}
	if card.Provider != nil {
		out.Provider = map[string]string{"organization": card.Provider.Org, "url": card.Provider.URL}
	}
	for _, s := range card.Skills {
		out.Skills = append(out.Skills, skill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags, Examples: s.Examples})
	}
	h.writeJSON(w, http.StatusOK, out)
}
