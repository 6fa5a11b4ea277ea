package edge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/jwks"
	"github.com/a2abus/a2abus/webhook"
)

// Push is the edge's part of push notifications: the config store and the
// signer whose ring the JWKS endpoint publishes. A nil Push turns push
// notifications off.
type Push struct {
	Store  *webhook.Store
	Signer *jwks.Signer
}

// errConfigMissing is a config that a lookup did not find.
var errConfigMissing = webhook.ErrConfigNotFound

func errPushNotSupported() *Error {
	return &Error{Code: codePushNotSupported, Message: "Push Notification is not supported by this agent"}
}

// pushError maps config store errors.
func pushError(err error, taskID string) *Error {
	switch {
	case errors.Is(err, webhook.ErrForbiddenTarget):
		return invalidParams("%s (a loopback, private, link-local, multicast or unspecified address; start the server with --push-allow-private for local development)", err.Error())
	case errors.Is(err, webhook.ErrInvalidConfig):
		return invalidParams("%s", err.Error())
	case errors.Is(err, webhook.ErrConfigNotFound):
		return &Error{Code: codeTaskNotFound, Message: "Task not found: no such push notification config", Metadata: map[string]string{"taskId": taskID}}
	}
	return toError(err, taskID)
}

// taskExists answers TaskNotFound for a task the caller cannot see.
func (h *Handler) taskExists(ctx context.Context, tenant string, id a2a.TaskID) *Error {
	if id == "" {
		return invalidParams("taskId is required")
	}
	if _, err := h.views.Load(ctx, tenant, id); err != nil {
		return toError(err, string(id))
	}
	return nil
}

// pushTask checks the preconditions of every push config method: push is
// on, the tenant is valid and the task exists. It returns the tenant.
func (h *Handler) pushTask(ctx context.Context, tenant string, task a2a.TaskID) (string, *Error) {
	if h.push == nil {
		return "", errPushNotSupported()
	}
	tenant, perr := tenantOf(tenant)
	if perr != nil {
		return "", perr
	}
	return tenant, h.taskExists(ctx, tenant, task)
}

func (h *Handler) createPushConfig(ctx context.Context, p *a2a.PushConfig) (any, *Error) {
	tenant, perr := h.pushTask(ctx, p.Tenant, p.TaskID)
	if perr != nil {
		return nil, perr
	}
	cfg, err := h.push.Store.Put(ctx, tenant, *p)
	if err != nil {
		return nil, pushError(err, string(p.TaskID))
	}
	cfg.Tenant = p.Tenant
	return cfg, nil
}

func (h *Handler) getPushConfig(ctx context.Context, p *a2a.GetTaskPushConfigRequest) (any, *Error) {
	tenant, perr := h.pushTask(ctx, p.Tenant, p.TaskID)
	if perr != nil {
		return nil, perr
	}
	if p.ID == "" {
		return nil, invalidParams("id is required")
	}
	cfg, err := h.push.Store.Get(ctx, tenant, p.TaskID, p.ID)
	if err != nil {
		return nil, pushError(err, string(p.TaskID))
	}
	cfg.Tenant = p.Tenant
	return cfg, nil
}

func (h *Handler) listPushConfigs(ctx context.Context, p *a2a.ListTaskPushConfigRequest) (any, *Error) {
	tenant, perr := h.pushTask(ctx, p.Tenant, p.TaskID)
	if perr != nil {
		return nil, perr
	}
	if p.PageSize < 0 || p.PageSize > maxPageSize {
		return nil, invalidParams("pageSize must be between 1 and %d", maxPageSize)
	}
	size := p.PageSize
	if size == 0 {
		size = defPageSize
	}
	cfgs, err := h.push.Store.List(ctx, tenant, p.TaskID)
	if err != nil {
		return nil, pushError(err, string(p.TaskID))
	}
	// Configs are ordered by id; the page token is the last id returned.
	start := 0
	if p.PageToken != "" {
		if !events.ValidTaskID(a2a.TaskID(p.PageToken)) {
			return nil, invalidParams("pageToken was not issued by this server")
		}
		start = sort.Search(len(cfgs), func(i int) bool { return cfgs[i].ID > p.PageToken })
	}
	end := min(start+size, len(cfgs))
	resp := &a2a.ListTaskPushConfigResponse{Configs: make([]*a2a.PushConfig, 0, end-start)}
	for i := start; i < end; i++ {
		c := cfgs[i]
		c.Tenant = p.Tenant
		resp.Configs = append(resp.Configs, &c)
	}
	if end < len(cfgs) {
		resp.NextPageToken = cfgs[end-1].ID
	}
	return resp, nil
}

func (h *Handler) deletePushConfig(ctx context.Context, p *a2a.DeleteTaskPushConfigRequest) (any, *Error) {
	tenant, perr := h.pushTask(ctx, p.Tenant, p.TaskID)
	if perr != nil {
		return nil, perr
	}
	if p.ID == "" {
		return nil, invalidParams("id is required")
	}
	if err := h.push.Store.Delete(ctx, tenant, p.TaskID, p.ID); err != nil {
		return nil, pushError(err, string(p.TaskID))
	}
	return struct{}{}, nil
}

// sendPushConfig stores the push config that came with a send, for the
// task the send creates (id newID) or continues. It returns a function that
// removes it again if the send fails.
func (h *Handler) sendPushConfig(ctx context.Context, tenant string, cfg *a2a.PushConfig, msg *a2a.Message, newID a2a.TaskID) (undo func(), perr *Error) {
	if cfg == nil {
		return func() {}, nil
	}
	if h.push == nil {
		return nil, errPushNotSupported()
	}
	c := *cfg
	c.TaskID = msg.TaskID
	if c.TaskID == "" {
		c.TaskID = newID
	} else if perr := h.taskExists(ctx, tenant, c.TaskID); perr != nil {
		return nil, perr
	}
	// A follow-up may replace a config the task has: keep the old one to
	// put back if the send is refused.
	var previous *a2a.PushConfig
	if c.ID != "" {
		old, err := h.push.Store.Get(ctx, tenant, c.TaskID, c.ID)
		switch {
		case err == nil:
			previous = &old
		case !errors.Is(err, webhook.ErrConfigNotFound):
			return nil, pushError(err, string(c.TaskID))
		}
	}
	stored, err := h.push.Store.Put(ctx, tenant, c)
	if err != nil {
		return nil, pushError(err, string(c.TaskID))
	}
	return func() {
		ctx := context.WithoutCancel(ctx)
		var err error
		if previous != nil {
			_, err = h.push.Store.Put(ctx, tenant, *previous)
		} else {
			err = h.push.Store.Delete(ctx, tenant, stored.TaskID, stored.ID)
		}
		if err != nil {
			h.logger.Warn("undo the push config of a refused send", "err", err)
		}
	}, nil
}

// serveJWKS serves the public keys of the push key ring.
func (h *Handler) serveJWKS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if h.push == nil {
		http.NotFound(w, r)
		return
	}
	now := time.Now()
	ring := h.push.Signer.Ring()
	b, err := ring.JWKS(now)
	if err != nil {
		h.logger.Error("jwks", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	// Cache for at most 5 minutes, and never past the ring's next change.
	maxAge := 300 * time.Second
	if next := ring.NextChange(now); !next.IsZero() {
		maxAge = min(maxAge, next.Sub(now))
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(maxAge.Seconds())))
	if _, err := w.Write(b); err != nil {
		h.logger.Debug("jwks write", "err", err)
	}
}

// PushBody renders the push body of status st in the dialect the task was
// created in: a v1.0 StreamResponse ([webhook.V1Body]), or for v0.3 and
// v0.1 tasks the whole task in that dialect, as their reference servers
// post it.
func PushBody(view *events.View, st *a2a.TaskStatusUpdateEvent) ([]byte, error) {
	switch view.Dialect {
	case dialect01:
		return json.Marshal(v01TaskOf(&view.Task, nil))
	case dialect03, "0.2":
		return json.Marshal(v03TaskOf(&view.Task))
	}
	return webhook.V1Body(view, st)
}
