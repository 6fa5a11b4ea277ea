package edge

import (
	"errors"
	"fmt"

	"github.com/a2abus/a2abus/engine"
	"github.com/a2abus/a2abus/events"
	"github.com/a2abus/a2abus/projections"
)

// JSON-RPC and A2A error codes.
const (
	codeParseError                = -32700
	codeInvalidRequest            = -32600
	codeMethodNotFound            = -32601
	codeInvalidParams             = -32602
	codeInternal                  = -32603
	codeTaskNotFound              = -32001
	codeTaskNotCancelable         = -32002
	codePushNotSupported          = -32003
	codeUnsupportedOperation      = -32004
	codeContentTypeNotSupport     = -32005
	codeExtendedCardNotConfigured = -32007
	codeVersionNotSupported       = -32009
)

var reasons = map[int]string{
	codeParseError:                "PARSE_ERROR",
	codeInvalidRequest:            "INVALID_REQUEST",
	codeMethodNotFound:            "METHOD_NOT_FOUND",
	codeInvalidParams:             "INVALID_PARAMS",
	codeInternal:                  "INTERNAL_ERROR",
	codeTaskNotFound:              "TASK_NOT_FOUND",
	codeTaskNotCancelable:         "TASK_NOT_CANCELABLE",
	codePushNotSupported:          "PUSH_NOTIFICATION_NOT_SUPPORTED",
	codeUnsupportedOperation:      "UNSUPPORTED_OPERATION",
	codeContentTypeNotSupport:     "CONTENT_TYPE_NOT_SUPPORTED",
	codeVersionNotSupported:       "VERSION_NOT_SUPPORTED",
	codeExtendedCardNotConfigured: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
}

// Error is a protocol error: a code, a message for the client and
// ErrorInfo metadata.
type Error struct {
	Code     int
	Message  string
	Metadata map[string]string
	// Err is the cause, for logs; it is not sent.
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message) }
func (e *Error) Unwrap() error { return e.Err }

// errorInfo is google.rpc.ErrorInfo as A2A sends it.
type errorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

func (e *Error) info() []errorInfo {
	return []errorInfo{{
		Type:     "type.googleapis.com/google.rpc.ErrorInfo",
		Reason:   reasons[e.Code],
		Domain:   "a2a-protocol.org",
		Metadata: e.Metadata,
	}}
}

func invalidParams(format string, args ...any) *Error {
	return &Error{Code: codeInvalidParams, Message: "Invalid params: " + fmt.Sprintf(format, args...)}
}

func invalidRequest(msg string) *Error {
	return &Error{Code: codeInvalidRequest, Message: "Invalid request: " + msg}
}

func taskNotFound(id string) *Error {
	return &Error{Code: codeTaskNotFound, Message: "Task not found", Metadata: map[string]string{"taskId": id}}
}

// toError maps an error from the engine or the projections to the
// protocol error the client gets. Unknown errors become -32603; the caller
// logs them.
func toError(err error, taskID string) *Error {
	var pe *Error
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.Is(err, events.ErrTaskNotFound):
		return taskNotFound(taskID)
	case errors.Is(err, engine.ErrTaskNotCancelable):
		return &Error{Code: codeTaskNotCancelable, Message: "Task cannot be canceled: it is in a terminal state", Metadata: map[string]string{"taskId": taskID}, Err: err}
	case errors.Is(err, engine.ErrTaskTerminal):
		return &Error{Code: codeUnsupportedOperation, Message: "This operation is not supported: the task is in a terminal state; send a new message without taskId to start a new task in the same context", Metadata: map[string]string{"taskId": taskID}, Err: err}
	case errors.Is(err, engine.ErrContextMismatch):
		return &Error{Code: codeInvalidParams, Message: "Invalid params: message.contextId does not match the task's contextId", Metadata: map[string]string{"taskId": taskID}, Err: err}
	case errors.Is(err, events.ErrInvalidTenant):
		return invalidParams("tenant must be 1 to 64 of [A-Za-z0-9_-]")
	case errors.Is(err, projections.ErrInvalidPageToken):
		return invalidParams("pageToken was not issued by this server")
	}
	return &Error{Code: codeInternal, Message: "Internal error", Err: err}
}
