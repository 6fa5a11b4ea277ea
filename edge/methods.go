package edge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/projections"
)

// Limits on client-made values.
const (
	maxIDLength = 256
	maxPageSize = 100
	defPageSize = 50
)

// dialect1 is the v1.0 protocol version recorded on tasks.
const dialect1 = "1.0"

// call runs one v1.0 method and returns its result.
func (h *Handler) call(r *http.Request, method string, params json.RawMessage) (any, *Error) {
	ctx := r.Context()
	switch method {
	case "SendMessage":
		var p a2a.SendMessageRequest
		if err := decodeObject(params, &p); err != nil {
			return nil, err
		}
		return h.sendMessage(ctx, &p)
	case "GetTask":
		var p a2a.GetTaskRequest
		if err := decodeObject(params, &p); err != nil {
			return nil, err
		}
		return h.getTask(ctx, &p)
	case "ListTasks":
		var p a2a.ListTasksRequest
		if err := decodeObject(params, &p); err != nil {
			return nil, err
		}
		return h.listTasks(ctx, &p)
	case "CancelTask":
		var p a2a.CancelTaskRequest
		if err := decodeObject(params, &p); err != nil {
			return nil, err
		}
		return h.cancelTask(ctx, &p)
	case "CreateTaskPushNotificationConfig":
		var p a2a.PushConfig
		if err := decodeObject(params, &p); err != nil {
			return nil, err
		}
		return h.createPushConfig(ctx, &p)
	case "GetTaskPushNotificationConfig":
		var p a2a.GetTaskPushConfigRequest
		if err := decodeObject(params, &p); err != nil {
			return nil, err
		}
		return h.getPushConfig(ctx, &p)
	case "ListTaskPushNotificationConfigs":
		var p a2a.ListTaskPushConfigRequest
		if err := decodeObject(params, &p); err != nil {
			return nil, err
		}
		return h.listPushConfigs(ctx, &p)
	case "DeleteTaskPushNotificationConfig":
		var p a2a.DeleteTaskPushConfigRequest
		if err := decodeObject(params, &p); err != nil {
			return nil, err
		}
		return h.deletePushConfig(ctx, &p)
	case "GetExtendedAgentCard":
		return nil, &Error{Code: codeUnsupportedOperation, Message: "This operation is not supported: this agent has no extended agent card"}
	}
	return nil, &Error{Code: codeMethodNotFound, Message: "Method not found: " + truncate(method, 100)}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// decodeObject decodes params, which must be a JSON object.
func decodeObject(raw json.RawMessage, v any) *Error {
	if len(raw) == 0 || raw[0] != '{' {
		return invalidParams("params must be an object")
	}
	if err := decodeParams(raw, v); err != nil {
		return invalidParams("%s", err.Error())
	}
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, events.ErrTaskNotFound) }

func tenantOf(t string) (string, *Error) {
	if t == "" {
		return events.DefaultTenant, nil
	}
	if !events.ValidTenant(t) {
		return "", invalidParams("tenant must be 1 to 64 of [A-Za-z0-9_-]")
	}
	return t, nil
}

func checkHistoryLength(n *int) *Error {
	if n != nil && *n < 0 {
		return invalidParams("historyLength must not be negative")
	}
	return nil
}

// checkMessage validates a client message.
func checkMessage(m *a2a.Message) *Error {
	switch {
	case m == nil:
		return invalidParams("message is required")
	case m.ID == "":
		return invalidParams("message.messageId is required")
	case len(m.ID) > maxIDLength:
		return invalidParams("message.messageId is longer than %d", maxIDLength)
	case m.Role != a2a.MessageRoleUser:
		return invalidParams("message.role must be ROLE_USER")
	case len(m.Parts) == 0:
		return invalidParams("message.parts must not be empty")
	case len(m.ContextID) > maxIDLength:
		return invalidParams("message.contextId is longer than %d", maxIDLength)
	case len(m.TaskID) > maxIDLength:
		return taskNotFound(string(m.TaskID))
	}
	for i, p := range m.Parts {
		if p == nil || p.Content == nil {
			return invalidParams("message.parts[%d] has no content", i)
		}
	}
	return nil
}

// checkSend validates SendMessage and SendStreamingMessage params and
// returns the tenant and the configuration (never nil).
func (h *Handler) checkSend(p *a2a.SendMessageRequest) (string, *a2a.SendMessageConfig, *Error) {
	tenant, perr := tenantOf(p.Tenant)
	if perr != nil {
		return "", nil, perr
	}
	if perr := checkMessage(p.Message); perr != nil {
		return "", nil, perr
	}
	cfg := p.Config
	if cfg == nil {
		cfg = &a2a.SendMessageConfig{}
	}
	if perr := checkHistoryLength(cfg.HistoryLength); perr != nil {
		return "", nil, perr
	}
	if cfg.PushConfig != nil && h.push == nil {
		return "", nil, errPushNotSupported()
	}
	return tenant, cfg, nil
}

func (h *Handler) sendMessage(ctx context.Context, p *a2a.SendMessageRequest) (any, *Error) {
	t, perr := h.sendMessageTask(ctx, p, dialect1, "")
	if perr != nil {
		return nil, perr
	}
	return sendMessageResponse{Task: t}, nil
}

// sendMessageTask runs SendMessage in any dialect and returns the task. A
// new task gets the id newID (v0.1 clients choose it), or a fresh one.
func (h *Handler) sendMessageTask(ctx context.Context, p *a2a.SendMessageRequest, dialect string, newID a2a.TaskID) (*a2a.Task, *Error) {
	tenant, cfg, perr := h.checkSend(p)
	if perr != nil {
		return nil, perr
	}
	blocking := !cfg.ReturnImmediately
	if newID == "" {
		newID = a2a.NewTaskID()
	}
	watched := p.Message.TaskID
	if watched == "" {
		watched = newID
	}
	var watch *projections.Watch
	if blocking {
		watch = h.feed.Watch(tenant, watched)
		defer func() { watch.Close() }()
	}
	res, perr := h.send(ctx, tenant, p, cfg, newID, dialect)
	if perr != nil {
		return nil, perr
	}
	v := res.View
	if !blocking {
		return renderTask(v, cfg.HistoryLength, true), nil
	}
	var err error
	since := res.Seq
	if res.Replayed {
		if v.Task.ID != watched {
			watch.Close()
			watch = h.feed.Watch(tenant, v.Task.ID)
			if v, err = h.views.Load(ctx, tenant, v.Task.ID); err != nil {
				return nil, toError(err, string(res.View.Task.ID))
			}
		}
		since = v.InSeq
	}
	v, err = h.await(ctx, watch, v, since)
	if err != nil {
		return nil, toError(err, string(v.Task.ID))
	}
	return renderTask(v, cfg.HistoryLength, true), nil
}

// send stores the send's push config, if any, and runs the engine's Send.
// The config is stored first so the task's first status already reaches
// it; a failed or replayed send removes it again.
func (h *Handler) send(ctx context.Context, tenant string, p *a2a.SendMessageRequest, cfg *a2a.SendMessageConfig, newID a2a.TaskID, dialect string) (engine.SendResult, *Error) {
	undo, perr := h.sendPushConfig(ctx, tenant, cfg.PushConfig, p.Message, newID)
	if perr != nil {
		return engine.SendResult{}, perr
	}
	res, err := h.engine.Send(ctx, engine.SendCommand{Tenant: tenant, Message: p.Message, Dialect: dialect, NewTaskID: newID})
	if err != nil {
		undo()
		return res, toError(err, string(p.Message.TaskID))
	}
	if res.Replayed && p.Message.TaskID == "" && res.View.Task.ID != newID {
		// The first request made the task (and stored its config).
		undo()
	}
	return res, nil
}

// await folds the watched task's events into v until the task is terminal,
// or interrupted by a status after since.
func (h *Handler) await(ctx context.Context, w *projections.Watch, v *events.View, since uint64) (*events.View, error) {
	settled := func(v *events.View) bool {
		return v.Terminal() || (v.Interrupted() && v.StatusSeq > since)
	}
	if settled(v) {
		return v, nil
	}
	nv := v.Clone()
	for !settled(nv) {
		ev, err := w.Next(ctx)
		if err != nil {
			return v, err
		}
		events.Apply(nv, ev)
	}
	h.views.Put(nv)
	return nv, nil
}

// sendMessageResponse is the v1.0 SendMessageResponse with a task.
type sendMessageResponse struct {
	Task *a2a.Task `json:"task"`
}

// renderTask returns the client's copy of a view: history cut to
// historyLength (nil: all, 0: none, N: the last N), artifacts only if
// asked for.
func renderTask(v *events.View, historyLength *int, withArtifacts bool) *a2a.Task {
	t := v.Task
	if historyLength != nil {
		n := *historyLength
		if n < len(t.History) {
			t.History = t.History[len(t.History)-n:]
		}
		if n == 0 {
			t.History = nil
		}
	}
	if !withArtifacts {
		t.Artifacts = nil
	}
	return &t
}

func (h *Handler) getTask(ctx context.Context, p *a2a.GetTaskRequest) (any, *Error) {
	tenant, perr := tenantOf(p.Tenant)
	if perr != nil {
		return nil, perr
	}
	if p.ID == "" {
		return nil, invalidParams("id is required")
	}
	if perr := checkHistoryLength(p.HistoryLength); perr != nil {
		return nil, perr
	}
	v, err := h.views.Load(ctx, tenant, p.ID)
	if err != nil {
		return nil, toError(err, string(p.ID))
	}
	return renderTask(v, p.HistoryLength, true), nil
}

var listableStates = []a2a.TaskState{
	a2a.TaskStateUnspecified, a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired,
	a2a.TaskStateAuthRequired, a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled,
	a2a.TaskStateRejected,
}

func (h *Handler) listTasks(ctx context.Context, p *a2a.ListTasksRequest) (any, *Error) {
	tenant, perr := tenantOf(p.Tenant)
	if perr != nil {
		return nil, perr
	}
	if p.PageSize == 0 {
		p.PageSize = defPageSize
	}
	if p.PageSize < 1 || p.PageSize > maxPageSize {
		return nil, invalidParams("pageSize must be between 1 and %d", maxPageSize)
	}
	if perr := checkHistoryLength(p.HistoryLength); perr != nil {
		return nil, perr
	}
	if !slices.Contains(listableStates, p.Status) {
		return nil, invalidParams("status %q is not a task state", string(p.Status))
	}
	if err := h.feed.Sync(ctx); err != nil {
		return nil, toError(err, "")
	}
	page, err := h.index.Query(ctx, projections.Query{
		Tenant: tenant, ContextID: p.ContextID, State: p.Status, After: p.StatusTimestampAfter,
		PageSize: p.PageSize, PageToken: p.PageToken,
	})
	if err != nil {
		return nil, toError(err, "")
	}
	resp := &a2a.ListTasksResponse{Tasks: make([]*a2a.Task, 0, len(page.IDs)), TotalSize: page.TotalSize, PageSize: p.PageSize, NextPageToken: page.NextPageToken}
	for _, id := range page.IDs {
		v, err := h.views.Load(ctx, tenant, id)
		if errors.Is(err, events.ErrTaskNotFound) {
			continue // aged out of the stream since the index saw it
		}
		if err != nil {
			return nil, toError(err, string(id))
		}
		resp.Tasks = append(resp.Tasks, renderTask(v, p.HistoryLength, p.IncludeArtifacts))
	}
	return resp, nil
}

func (h *Handler) cancelTask(ctx context.Context, p *a2a.CancelTaskRequest) (any, *Error) {
	tenant, perr := tenantOf(p.Tenant)
	if perr != nil {
		return nil, perr
	}
	if p.ID == "" {
		return nil, invalidParams("id is required")
	}
	v, err := h.engine.Cancel(ctx, tenant, p.ID, p.Metadata)
	if err != nil {
		return nil, toError(err, string(p.ID))
	}
	h.views.Put(v)
	return renderTask(v, nil, true), nil
}
