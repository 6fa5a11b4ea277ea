package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// The v1.0 HTTP+JSON binding: every route of the spec at the HTTP root or
// under a /{tenant} prefix. Results are the JSON-RPC results; errors are
// google.rpc.Status bodies (AIP-193) with the spec's HTTP status; SSE
// frames carry a bare StreamResponse with the same ids and resume rules as
// JSON-RPC.

// restStatus maps protocol error codes to the HTTP status and the
// google.rpc code name of the REST binding.
var restStatus = map[int]restCode{
	codeParseError:                {http.StatusBadRequest, "INVALID_ARGUMENT"},
	codeInvalidRequest:            {http.StatusBadRequest, "INVALID_ARGUMENT"},
	codeMethodNotFound:            {http.StatusNotFound, "UNIMPLEMENTED"},
	codeInvalidParams:             {http.StatusBadRequest, "INVALID_ARGUMENT"},
	codeInternal:                  {http.StatusInternalServerError, "INTERNAL"},
	codeTaskNotFound:              {http.StatusNotFound, "NOT_FOUND"},
	codeTaskNotCancelable:         {http.StatusBadRequest, "FAILED_PRECONDITION"},
	codePushNotSupported:          {http.StatusBadRequest, "FAILED_PRECONDITION"},
	codeUnsupportedOperation:      {http.StatusBadRequest, "FAILED_PRECONDITION"},
	codeContentTypeNotSupport:     {http.StatusBadRequest, "INVALID_ARGUMENT"},
	codeVersionNotSupported:       {http.StatusBadRequest, "FAILED_PRECONDITION"},
	codeExtendedCardNotConfigured: {http.StatusBadRequest, "FAILED_PRECONDITION"},
}

// restCode is an HTTP status and a google.rpc code name.
type restCode struct {
	http int
	name string
}

type restError struct {
	Code    int         `json:"code"`
	Status  string      `json:"status"`
	Message string      `json:"message"`
	Details []errorInfo `json:"details"`
}

func restErrorBody(e *Error) any { return restErrorBodyStatus(e, restStatusOf(e).http) }

// restErrorBodyStatus is the body of e answered with the HTTP status
// status instead of e's own.
func restErrorBodyStatus(e *Error, status int) any {
	return struct {
		Error restError `json:"error"`
	}{restError{Code: status, Status: restStatusOf(e).name, Message: e.Message, Details: e.info()}}
}

// restStatusOf is the HTTP status and code name of e.
func restStatusOf(e *Error) restCode {
	st, ok := restStatus[e.Code]
	if !ok {
		st = restStatus[codeInternal]
	}
	return st
}

// writeREST answers a REST request with the error e.
func (h *Handler) writeREST(w http.ResponseWriter, e *Error) {
	h.writeRESTStatus(w, restStatusOf(e).http, e)
}

// writeRESTStatus answers a REST request with the error e and the HTTP
// status status.
func (h *Handler) writeRESTStatus(w http.ResponseWriter, status int, e *Error) {
	if e.Code == codeInternal {
		h.logger.Error("request failed", "err", e.Err)
	}
	h.writeJSON(w, status, restErrorBodyStatus(e, status))
}

func (h *Handler) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.logger.Error("encode response", "err", err)
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":500,"status":"INTERNAL","message":"Internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if _, err := w.Write(b); err != nil {
		h.logger.Debug("write response", "err", err)
	}
}

// restRoots are the first path segments of the v1.0 routes; any other
// first segment is a tenant.
var restRoots = []string{"message:send", "message:stream", "tasks", "extendedAgentCard"}

// serveREST routes the HTTP+JSON binding.
func (h *Handler) serveREST(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	tenant := ""
	if len(segs) > 1 && !slices.Contains(restRoots, segs[0]) {
		tenant, segs = segs[0], segs[1:]
	}
	if tenant != "" && len(segs) == 2 && segs[0] == ".well-known" && segs[1] == "agent-card.json" &&
		(r.Method == http.MethodGet || r.Method == http.MethodOptions) {
		if _, perr := tenantOf(tenant); perr != nil {
			h.writeREST(w, perr)
			return
		}
		h.serveTenantCard(w, r, tenant)
		return
	}
	if _, perr := checkVersion(r); perr != nil {
		h.writeREST(w, perr)
		return
	}
	result, perr := h.routeREST(w, r, tenant, segs)
	switch {
	case perr != nil:
		h.writeREST(w, perr)
	case result != nil:
		h.writeJSON(w, http.StatusOK, result)
	}
}

// routeREST runs one REST request. A nil result with a nil error means the
// handler answered itself (a stream, or 405 for a known route asked with
// another method).
func (h *Handler) routeREST(w http.ResponseWriter, r *http.Request, tenant string, segs []string) (any, *Error) {
	ctx := r.Context()
	q := r.URL.Query()
	// allow reports whether the request's method is one of methods, and
	// answers 405 with Allow if it is not.
	allow := func(methods ...string) bool {
		e := methodNotAllowed(w, r, methods)
		if e != nil {
			h.writeRESTStatus(w, http.StatusMethodNotAllowed, e)
		}
		return e == nil
	}
	notFound := &Error{Code: codeMethodNotFound, Message: fmt.Sprintf("Method not found: %s %s", r.Method, truncate(r.URL.Path, 100))}
	switch {
	case len(segs) == 1 && (segs[0] == "message:send" || segs[0] == "message:stream"):
		if !allow(http.MethodPost) {
			return nil, nil
		}
		var p a2a.SendMessageRequest
		if perr := h.restBody(w, r, &p, true); perr != nil {
			return nil, perr
		}
		p.Tenant = tenant
		if segs[0] == "message:send" {
			return h.sendMessage(ctx, &p)
		}
		h.sendStreamingMessage(w, r, reply{rest: true}, &p)
		return nil, nil
	case len(segs) == 1 && segs[0] == "extendedAgentCard":
		if !allow(http.MethodGet) {
			return nil, nil
		}
		return nil, &Error{Code: codeUnsupportedOperation, Message: "This operation is not supported: this agent has no extended agent card"}
	case len(segs) == 1 && segs[0] == "tasks":
		if !allow(http.MethodGet) {
			return nil, nil
		}
		p := a2a.ListTasksRequest{Tenant: tenant, ContextID: q.Get("contextId"), PageToken: q.Get("pageToken")}
		if st := q.Get("status"); st != "" && st != a2a.TaskStateUnspecified.String() {
			p.Status = a2a.TaskState(st)
		}
		if perr := listQuery(q, &p, "statusTimestampAfter"); perr != nil {
			return nil, perr
		}
		return h.listTasks(ctx, &p)
	case len(segs) == 2 && segs[0] == "tasks":
		id, verb, _ := strings.Cut(segs[1], ":")
		switch verb {
		case "":
			if !allow(http.MethodGet) {
				return nil, nil
			}
			hl, perr := queryIntPtr(q.Get("historyLength"), "historyLength")
			if perr != nil {
				return nil, perr
			}
			return h.getTask(ctx, &a2a.GetTaskRequest{Tenant: tenant, ID: a2a.TaskID(id), HistoryLength: hl})
		case "cancel":
			if !allow(http.MethodPost) {
				return nil, nil
			}
			var p a2a.CancelTaskRequest
			if perr := h.restBody(w, r, &p, false); perr != nil {
				return nil, perr
			}
			p.Tenant, p.ID = tenant, a2a.TaskID(id)
			return h.cancelTask(ctx, &p)
		case "subscribe":
			if !allow(http.MethodGet, http.MethodPost) {
				return nil, nil
			}
			p := subscribeParams{Tenant: tenant, ID: a2a.TaskID(id)}
			if r.Method == http.MethodPost {
				var body subscribeParams
				if perr := h.restBody(w, r, &body, false); perr != nil {
					return nil, perr
				}
				p.LastEventID = body.LastEventID
			}
			h.subscribeToTask(w, r, reply{rest: true}, &p)
			return nil, nil
		}
	case len(segs) == 3 && segs[0] == "tasks" && segs[2] == "pushNotificationConfigs":
		if !allow(http.MethodGet, http.MethodPost) {
			return nil, nil
		}
		task := a2a.TaskID(segs[1])
		if r.Method == http.MethodGet {
			size, perr := queryInt(q.Get("pageSize"), "pageSize")
			if perr != nil {
				return nil, perr
			}
			return h.listPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{Tenant: tenant, TaskID: task, PageSize: size, PageToken: q.Get("pageToken")})
		}
		var p a2a.PushConfig
		if perr := h.restBody(w, r, &p, true); perr != nil {
			return nil, perr
		}
		if p.TaskID != "" && p.TaskID != task {
			return nil, invalidParams("taskId in the body differs from the path")
		}
		p.Tenant, p.TaskID = tenant, task
		return h.createPushConfig(ctx, &p)
	case len(segs) == 4 && segs[0] == "tasks" && segs[2] == "pushNotificationConfigs":
		if !allow(http.MethodGet, http.MethodDelete) {
			return nil, nil
		}
		task := a2a.TaskID(segs[1])
		if r.Method == http.MethodGet {
			return h.getPushConfig(ctx, &a2a.GetTaskPushConfigRequest{Tenant: tenant, TaskID: task, ID: segs[3]})
		}
		return h.deletePushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{Tenant: tenant, TaskID: task, ID: segs[3]})
	}
	return nil, notFound
}

// methodNotAllowed returns nil if r's method is one of methods, and
// otherwise sets the Allow header and returns the error of the 405 answer.
func methodNotAllowed(w http.ResponseWriter, r *http.Request, methods []string) *Error {
	if slices.Contains(methods, r.Method) {
		return nil
	}
	allowed := strings.Join(methods, ", ")
	w.Header().Set("Allow", allowed)
	return &Error{Code: codeMethodNotFound,
		Message: fmt.Sprintf("Method not allowed: %s %s (allowed: %s)", r.Method, truncate(r.URL.Path, 100), allowed)}
}

// restBody decodes a JSON request body into v. An empty body is an empty
// object unless required.
func (h *Handler) restBody(w http.ResponseWriter, r *http.Request, v any, required bool) *Error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return invalidRequest(fmt.Sprintf("request body exceeds %d bytes", h.cfg.MaxBodyBytes))
		}
		return &Error{Code: codeParseError, Message: "Parse error: could not read the request body"}
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		if required {
			return invalidParams("a JSON body is required")
		}
		return nil
	}
	if !json.Valid(body) {
		return &Error{Code: codeParseError, Message: "Parse error: the body is not valid JSON"}
	}
	return decodeObject(bytes.TrimSpace(body), v)
}

func queryInt(s, name string) (int, *Error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, invalidParams("%s must be an integer", name)
	}
	return n, nil
}

func queryIntPtr(s, name string) (*int, *Error) {
	if s == "" {
		return nil, nil
	}
	n, perr := queryInt(s, name)
	if perr != nil {
		return nil, perr
	}
	return &n, nil
}

// listQuery reads the ListTasks query parameters both REST bindings share
// into p: pageSize, historyLength, includeArtifacts, and the status time
// bound, named after (or lastUpdatedAfter, as a2a-go's REST clients send
// it).
func listQuery(q url.Values, p *a2a.ListTasksRequest, after string) *Error {
	var perr *Error
	if p.PageSize, perr = queryInt(q.Get("pageSize"), "pageSize"); perr != nil {
		return perr
	}
	if p.HistoryLength, perr = queryIntPtr(q.Get("historyLength"), "historyLength"); perr != nil {
		return perr
	}
	v := q.Get(after)
	if v == "" {
		v = q.Get("lastUpdatedAfter")
	}
	if v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return invalidParams("%s %q is not an RFC 3339 time", after, truncate(v, 40))
		}
		p.StatusTimestampAfter = &t
	}
	if v := q.Get("includeArtifacts"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return invalidParams("includeArtifacts must be true or false")
		}
		p.IncludeArtifacts = b
	}
	return nil
}
