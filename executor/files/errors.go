package files

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Codes carried by ErrorResponse.Code; they are stable, unlike the messages.
const (
	CodeBadRequest       = "bad_request"
	CodeUnauthorized     = "unauthorized"
	CodePathEscape       = "path_escape"
	CodeForbidden        = "forbidden"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeInternal         = "internal"
	CodeUnavailable      = "unavailable"
)

// ErrorResponse is the JSON body of every error reply.
type ErrorResponse struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// apiError is a refused or failed request: the status and body to answer
// with, and the cause to log (never sent to the client).
type apiError struct {
	status int
	code   string
	msg    string
	cause  error
}

func (e *apiError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %v", e.msg, e.cause)
	}
	return e.msg
}

func (e *apiError) Unwrap() error { return e.cause }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: CodeBadRequest, msg: fmt.Sprintf(format, args...)}
}

func pathEscape(msg string) *apiError {
	return &apiError{status: http.StatusForbidden, code: CodePathEscape, msg: msg}
}

func internalError(msg string, cause error) *apiError {
	return &apiError{status: http.StatusInternalServerError, code: CodeInternal, msg: msg, cause: cause}
}

// writeJSON encodes body before writing anything, so an encoding failure
// is a clean 500 rather than a truncated 200.
func writeJSON(w http.ResponseWriter, status int, body any) {
	data, err := json.Marshal(body)
	if err != nil {
		status = http.StatusInternalServerError
		data, _ = json.Marshal(ErrorResponse{Error: "encode response", Code: CodeInternal})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// writeError answers with e as an ErrorResponse.
func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, ErrorResponse{Error: e.msg, Code: e.code})
}
