package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/projections"
)

// Config is the edge's configuration. The zero value of each field but
// Card has a usable default.
type Config struct {
	// Card is the agent card served at /.well-known/agent-card.json. An
	// interface URL left empty is filled from the request's host.
	Card a2a.AgentCard
	// Agents holds the cards workers registered per tenant (nil: none).
	// A tenant's card is served at /{tenant}/.well-known/agent-card.json,
	// the default tenant's also at the root.
	Agents AgentCards
	// MaxBodyBytes bounds a request body; default 1 MiB.
	MaxBodyBytes int64
	// Logger receives request errors; default slog.Default().
	Logger *slog.Logger
	// KeepAlive is how often an idle SSE stream gets a comment; default
	// [DefaultKeepAlive].
	KeepAlive time.Duration
	// StreamBuffer is how many events an SSE stream may fall behind the
	// live feed before it is cut off (the client resumes with
	// Last-Event-ID); default [DefaultStreamBuffer].
	StreamBuffer int
	// KeepOpenOnAuthRequired keeps streams open through AUTH_REQUIRED,
	// for agents that get credentials out of band. By default streams end
	// at every interrupted state.
	KeepOpenOnAuthRequired bool
}

// AgentCards looks up the card registered for a tenant.
type AgentCards interface {
	Card(tenant string) (a2a.AgentCard, bool)
}

// encodedCacheSize is how many stream item encodings an edge keeps.
const encodedCacheSize = 4096

// DefaultMaxBodyBytes is the request size limit when Config leaves it 0.
const DefaultMaxBodyBytes = 1 << 20

// Handler serves the A2A API over HTTP.
type Handler struct {
	cfg    Config
	engine *engine.Engine
	views  *projections.Views
	feed   *projections.Feed
	index  *projections.Index
	push   *Push
	// encoded caches stream item encodings for all streams.
	encoded *encodedCache
	mux     *http.ServeMux
	logger  *slog.Logger
}

var _ http.Handler = (*Handler)(nil)

// New returns the edge handler. push may be nil: push notifications are
// then off.
func New(cfg Config, eng *engine.Engine, views *projections.Views, feed *projections.Feed, index *projections.Index, push *Push) *Handler {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.StreamBuffer <= 0 {
		cfg.StreamBuffer = DefaultStreamBuffer
	}
	h := &Handler{cfg: cfg, engine: eng, views: views, feed: feed, index: index, push: push, logger: cfg.Logger,
		encoded: newEncodedCache(encodedCacheSize)}
	h.mux = http.NewServeMux()
	h.mux.HandleFunc("POST /{$}", h.serveJSONRPC)
	h.mux.HandleFunc("GET /.well-known/agent-card.json", h.serveCard)
	h.mux.HandleFunc("OPTIONS /.well-known/agent-card.json", h.serveCard)
	h.mux.HandleFunc("GET /.well-known/jwks.json", h.serveJWKS)
	h.mux.HandleFunc("GET /.well-known/agent.json", h.serveV01Card)
	h.mux.HandleFunc("/v1/", h.serveV03REST)
	h.mux.HandleFunc("/", h.serveREST)
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) serveCard(w http.ResponseWriter, r *http.Request) {
	h.serveTenantCard(w, r, "")
}

// serveTenantCard serves the card of tenant ("" is the root: the default
// tenant's card without a tenant on its interfaces).
func (h *Handler) serveTenantCard(w http.ResponseWriter, r *http.Request, tenant string) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Headers", "*")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	card := h.card(r, tenant)
	var b []byte
	var err error
	if tenant == "" {
		b, err = unionCard(card)
	} else { // v0.x clients cannot name a tenant: no legacy fields
		b, err = json.Marshal(card)
	}
	if err != nil {
		h.logger.Error("encode agent card", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=60")
	_, _ = w.Write(b)
}

// unionCard renders the card for v1.0 and v0.3 clients at once, as the
// spec's backward-compatibility guidance allows: the v1.0 card plus the v0.3
// top-level fields (protocolVersion, url, preferredTransport,
// additionalInterfaces) that v0.3 clients read. supportedInterfaces also
// lists the v0.3 JSON-RPC and HTTP+JSON interfaces.
func unionCard(card a2a.AgentCard) ([]byte, error) {
	if len(card.SupportedInterfaces) == 0 {
		return json.Marshal(card)
	}
	first := card.SupportedInterfaces[0]
	card.SupportedInterfaces = append(card.SupportedInterfaces,
		&a2a.AgentInterface{URL: first.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
		&a2a.AgentInterface{URL: first.URL, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "0.3"})
	b, err := json.Marshal(card)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["protocolVersion"] = "0.3"
	m["url"] = first.URL
	m["preferredTransport"] = "JSONRPC"
	// The v0.3 HTTP+JSON binding's routes are under /v1/ of this URL.
	m["additionalInterfaces"] = []map[string]string{{"url": first.URL, "transport": "JSONRPC"}, {"url": first.URL, "transport": "HTTP+JSON"}}
	m["supportsAuthenticatedExtendedCard"] = false
	return json.Marshal(m)
}

// card returns the card of tenant ("" for the root): the configured card,
// described by the card a worker registered for the tenant if there is one,
// with empty interface URLs filled from the request and the tenant set on
// every interface.
func (h *Handler) card(r *http.Request, tenant string) a2a.AgentCard {
	card := h.cfg.Card
	lookup := tenant
	if lookup == "" {
		lookup = events.DefaultTenant
	}
	if h.cfg.Agents != nil {
		if reg, ok := h.cfg.Agents.Card(lookup); ok {
			card = describe(card, reg)
		}
	}
	ifaces := make([]*a2a.AgentInterface, len(card.SupportedInterfaces))
	for i, in := range card.SupportedInterfaces {
		c := *in
		if c.URL == "" {
			c.URL = baseURL(r) + "/"
		}
		c.Tenant = tenant
		ifaces[i] = &c
	}
	card.SupportedInterfaces = ifaces
	return card
}

// describe returns card with the descriptive fields of a registered card:
// what the agent is and does comes from its worker; how to reach it, what
// the server can do and its security stay the server's.
func describe(card, reg a2a.AgentCard) a2a.AgentCard {
	card.Name, card.Description, card.Skills = reg.Name, reg.Description, reg.Skills
	if card.Skills == nil {
		card.Skills = []a2a.AgentSkill{}
	}
	if reg.Version != "" {
		card.Version = reg.Version
	}
	if reg.Provider != nil {
		card.Provider = reg.Provider
	}
	if reg.DocumentationURL != "" {
		card.DocumentationURL = reg.DocumentationURL
	}
	if reg.IconURL != "" {
		card.IconURL = reg.IconURL
	}
	if len(reg.DefaultInputModes) > 0 {
		card.DefaultInputModes = reg.DefaultInputModes
	}
	if len(reg.DefaultOutputModes) > 0 {
		card.DefaultOutputModes = reg.DefaultOutputModes
	}
	return card
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host
}

// rpcRequest is a JSON-RPC 2.0 request envelope.
type rpcRequest struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data is []errorInfo in v1.0 and an errorInfo object in v0.x.
	Data any `json:"data,omitempty"`
}

var nullID = json.RawMessage("null")

func (h *Handler) serveJSONRPC(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			h.writeError(w, nullID, invalidRequest(fmt.Sprintf("request body exceeds %d bytes", h.cfg.MaxBodyBytes)))
			return
		}
		h.writeError(w, nullID, &Error{Code: codeParseError, Message: "Parse error: could not read the request body", Err: err})
		return
	}
	trimmed := bytes.TrimSpace(body)
	if !json.Valid(trimmed) {
		h.writeError(w, nullID, &Error{Code: codeParseError, Message: "Parse error: the body is not valid JSON"})
		return
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		h.writeError(w, nullID, invalidRequest("the body must be one JSON-RPC request object (batches are not supported)"))
		return
	}
	var req rpcRequest
	if err := json.Unmarshal(trimmed, &req); err != nil {
		h.writeError(w, nullID, invalidRequest(err.Error()))
		return
	}
	id, perr := checkID(req.ID)
	if perr != nil {
		h.writeError(w, nullID, perr)
		return
	}
	if string(req.JSONRPC) != `"2.0"` {
		h.writeError(w, id, invalidRequest(`"jsonrpc" must be "2.0"`))
		return
	}
	var method string
	if len(req.Method) == 0 || json.Unmarshal(req.Method, &method) != nil || method == "" {
		h.writeError(w, id, invalidRequest(`"method" must be a non-empty string`))
		return
	}
	version, perr := checkVersion(r)
	if perr != nil {
		h.writeError(w, id, perr)
		return
	}
	legacy01 := v01Methods[method] || (sharedMethods[method] && h.taskDialect(r, req.Params) == dialect01)
	if legacy01 && version != "1.0" {
		if method == "tasks/sendSubscribe" || method == "tasks/resubscribe" {
			h.streamV01(w, r, id, method, req.Params)
			return
		}
		result, perr := h.callV01(r, method, req.Params)
		if perr != nil {
			h.writeErrorV03(w, id, perr)
			return
		}
		h.write(w, rpcResponse{JSONRPC: "2.0", ID: id, Result: result})
		return
	}
	if v03Methods[method] || v01Methods[method] {
		if version == "1.0" {
			h.writeError(w, id, &Error{Code: codeMethodNotFound, Message: "Method not found: " + method + " is a v0.x method; A2A-Version 1.0 names it in PascalCase"})
			return
		}
		switch method {
		case "message/stream", "tasks/resubscribe":
			h.streamV03(w, r, id, method, req.Params)
			return
		}
		result, perr := h.callV03(r, method, req.Params)
		if perr != nil {
			h.writeErrorV03(w, id, perr)
			return
		}
		h.write(w, rpcResponse{JSONRPC: "2.0", ID: id, Result: result})
		return
	}
	pascal := method[0] >= 'A' && method[0] <= 'Z'
	// A v0.x request (by header, or by a method name that is not v1.0)
	// gets v0.x error data.
	writeErr := h.writeError
	if version == "0.3" || (version == "" && !pascal) {
		writeErr = h.writeErrorV03
	}
	if version == "0.3" && pascal {
		writeErr(w, id, &Error{Code: codeMethodNotFound, Message: "Method not found: " + truncate(method, 100) + " is a v1.0 method; send A2A-Version 1.0"})
		return
	}
	switch method {
	case "SendStreamingMessage":
		var p a2a.SendMessageRequest
		if perr := decodeObject(req.Params, &p); perr != nil {
			h.writeError(w, id, perr)
			return
		}
		h.sendStreamingMessage(w, r, reply{id: id}, &p)
		return
	case "SubscribeToTask":
		var p subscribeParams
		if perr := decodeObject(req.Params, &p); perr != nil {
			h.writeError(w, id, perr)
			return
		}
		h.subscribeToTask(w, r, reply{id: id}, &p)
		return
	}
	result, perr := h.call(r, method, req.Params)
	if perr != nil {
		writeErr(w, id, perr)
		return
	}
	h.write(w, rpcResponse{JSONRPC: "2.0", ID: id, Result: result})
}

// checkID accepts a string or number id.
func checkID(raw json.RawMessage) (json.RawMessage, *Error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil, invalidRequest(`"id" is required (notifications are not supported)`)
	}
	switch t[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return t, nil
	}
	return nil, invalidRequest(`"id" must be a string or a number`)
}

// checkVersion returns the requested A2A-Version as Major.Minor ("" when
// none is given) and answers -32009 for a version this edge does not
// serve. A patch part is ignored; 0.2 is served as 0.3, its superset.
func checkVersion(r *http.Request) (string, *Error) {
	v := r.Header.Get(a2a.SvcParamVersion)
	if v == "" {
		v = r.URL.Query().Get(a2a.SvcParamVersion)
	}
	if v == "" {
		return "", nil
	}
	parts := strings.SplitN(strings.TrimSpace(v), ".", 3)
	mm := parts[0]
	if len(parts) > 1 {
		mm += "." + parts[1]
	}
	switch mm {
	case "1.0", "1":
		return "1.0", nil
	case "0.3", "0.2":
		return "0.3", nil
	}
	return "", &Error{Code: codeVersionNotSupported, Message: fmt.Sprintf("This version is not supported: A2A-Version %q; this server speaks 1.0 and 0.3", v),
		Metadata: map[string]string{"requestedVersion": v, "supportedVersions": "1.0,0.3"}}
}

// writeErrorV03 answers with a v0.x JSON-RPC error, whose data is a
// free-form object: here the ErrorInfo.
func (h *Handler) writeErrorV03(w http.ResponseWriter, id json.RawMessage, e *Error) {
	if e.Code == codeInternal {
		h.logger.Error("request failed", "err", e.Err)
	}
	h.write(w, rpcResponse{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: e.Code, Message: e.Message, Data: e.info()[0]}})
}

func (h *Handler) writeError(w http.ResponseWriter, id json.RawMessage, e *Error) {
	if e.Code == codeInternal {
		h.logger.Error("request failed", "err", e.Err)
	}
	h.write(w, rpcResponse{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: e.Code, Message: e.Message, Data: e.info()}})
}

func (h *Handler) write(w http.ResponseWriter, resp rpcResponse) {
	b, err := json.Marshal(resp)
	if err != nil {
		h.logger.Error("encode response", "err", err)
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
