package gkeemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// apiError is an error answer in the shape Google APIs send:
//
//	{"error": {"code": 400, "message": "...", "status": "INVALID_ARGUMENT",
//	           "errors": [{"message": "...", "domain": "global", "reason": "badRequest"}],
//	           "details": [...]}}
//
// Both the canonical status (which the provider's gke package reads from the
// body) and the legacy "errors" list (which googleapi.Error parses into
// Errors) are sent, as GKE does, so that client code written against either
// keeps working against the emulator.
type apiError struct {
	status     string // canonical code name: INVALID_ARGUMENT, NOT_FOUND, ...
	message    string
	details    []map[string]any
	retryAfter time.Duration
}

// The canonical codes we answer with, their HTTP status, their numeric
// google.rpc.Code (used in Operation.error) and the legacy reason.
var canonicalCodes = map[string]struct {
	http   int
	rpc    int64
	reason string
}{
	"CANCELLED":           {499, 1, "cancelled"},
	"UNKNOWN":             {500, 2, "backendError"},
	"INVALID_ARGUMENT":    {400, 3, "badRequest"},
	"DEADLINE_EXCEEDED":   {504, 4, "deadlineExceeded"},
	"NOT_FOUND":           {404, 5, "notFound"},
	"ALREADY_EXISTS":      {409, 6, "alreadyExists"},
	"PERMISSION_DENIED":   {403, 7, "forbidden"},
	"RESOURCE_EXHAUSTED":  {429, 8, "rateLimitExceeded"},
	"FAILED_PRECONDITION": {400, 9, "failedPrecondition"},
	"ABORTED":             {409, 10, "aborted"},
	"OUT_OF_RANGE":        {400, 11, "outOfRange"},
	"UNIMPLEMENTED":       {501, 12, "notImplemented"},
	"INTERNAL":            {500, 13, "backendError"},
	"UNAVAILABLE":         {503, 14, "backendError"},
	"UNAUTHENTICATED":     {401, 16, "required"},
}

func (e *apiError) Error() string { return e.status + ": " + e.message }

// httpCode is the HTTP status of the answer.
func (e *apiError) httpCode() int {
	if c, ok := canonicalCodes[e.status]; ok {
		return c.http
	}
	return http.StatusInternalServerError
}

// rpcCode is the numeric google.rpc.Code, as Operation.error.code carries it.
func rpcCode(status string) int64 {
	if c, ok := canonicalCodes[status]; ok {
		return c.rpc
	}
	return 2 // UNKNOWN
}

func errorf(status, format string, args ...any) *apiError {
	return &apiError{status: status, message: fmt.Sprintf(format, args...)}
}

// invalidArgument is a 400 that names the offending request field, with a
// google.rpc.BadRequest detail as GKE adds for field validation errors.
func invalidArgument(field, format string, args ...any) *apiError {
	msg := fmt.Sprintf(format, args...)
	e := &apiError{status: "INVALID_ARGUMENT", message: msg}
	if field != "" {
		e.details = []map[string]any{{
			"@type": "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": []map[string]any{{
				"field":       field,
				"description": msg,
			}},
		}}
	}
	return e
}

func notFound(name string) *apiError {
	// GKE's wording, including the trailing period.
	return errorf("NOT_FOUND", "Not found: %s.", name)
}

func alreadyExists(name string) *apiError {
	return errorf("ALREADY_EXISTS", "Already exists: %s.", name)
}

// writeError sends e as Google does. Every error answer also says it comes
// from the emulator (header set by ServeHTTP).
func writeError(w http.ResponseWriter, e *apiError) {
	code := e.httpCode()
	reason := "backendError"
	if c, ok := canonicalCodes[e.status]; ok {
		reason = c.reason
	}
	body := map[string]any{
		"code":    code,
		"message": e.message,
		"status":  e.status,
		"errors": []map[string]any{{
			"message": e.message,
			"domain":  "global",
			"reason":  reason,
		}},
	}
	if len(e.details) > 0 {
		body["details"] = e.details
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.retryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, code, map[string]any{"error": body})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "gkeemu: encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}
