package gkeapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/api/googleapi"
)

// apiStatus is what GKE said in an error answer, in the shape of
// google.rpc.Status plus the HTTP details googleapi keeps.
type apiStatus struct {
	HTTPCode int
	// Status is the canonical code name (FAILED_PRECONDITION, ...). GKE
	// sends it in the JSON body; googleapi.Error does not keep it, so we
	// parse the body again.
	Status  string
	Message string
	Reasons []string
	Details []map[string]any
	// Attempts is how many times the transport sent the request (0 or 1
	// when it was not retried).
	Attempts int
}

// statusOf extracts the API status from an error chain holding a
// *googleapi.Error.
func statusOf(err error) (*apiStatus, bool) {
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return nil, false
	}
	st := &apiStatus{HTTPCode: ge.Code, Message: ge.Message}
	for _, it := range ge.Errors {
		if it.Reason != "" {
			st.Reasons = append(st.Reasons, it.Reason)
		}
	}
	var body struct {
		Error struct {
			Status  string            `json:"status"`
			Message string            `json:"message"`
			Details []json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(ge.Body), &body) == nil {
		st.Status = body.Error.Status
		if st.Message == "" {
			st.Message = body.Error.Message
		}
		for _, raw := range body.Error.Details {
			var m map[string]any
			if json.Unmarshal(raw, &m) == nil {
				st.Details = append(st.Details, m)
			}
		}
	}
	if st.Status == "" {
		st.Status = statusFromReasons(st.Reasons, ge.Code)
	}
	if st.Message == "" && ge.Body != "" && !strings.HasPrefix(strings.TrimSpace(ge.Body), "{") {
		// A proxy or load balancer answered with text or HTML; keep a
		// little of it, it is often the only clue.
		st.Message = truncate(strings.TrimSpace(ge.Body), 300)
	}
	if ge.Header != nil {
		st.Attempts, _ = strconv.Atoi(ge.Header.Get(attemptsHeader))
	}
	return st, true
}

// statusFromReasons guesses the canonical code when the body had none (older
// error format: {"errors":[{"reason":"failedPrecondition"}]}).
func statusFromReasons(reasons []string, httpCode int) string {
	for _, r := range reasons {
		switch r {
		case "failedPrecondition":
			return "FAILED_PRECONDITION"
		case "alreadyExists", "duplicate":
			return "ALREADY_EXISTS"
		case "notFound":
			return "NOT_FOUND"
		case "forbidden", "insufficientPermissions", "accessNotConfigured":
			return "PERMISSION_DENIED"
		case "rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded":
			return "RESOURCE_EXHAUSTED"
		case "invalid", "badRequest", "invalidParameter", "required":
			return "INVALID_ARGUMENT"
		}
	}
	switch httpCode {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusInternalServerError:
		return "INTERNAL"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	}
	return ""
}

// busyPhrases are how GKE words "another operation is running on this
// cluster" (seen across API versions; matched case-insensitively):
//
//	Operation operation-123 is currently upgrading cluster c. Please wait and try again once it is done.
//	Cluster is running incompatible operation operation-123.
//	Operation already in progress on the cluster.
var busyPhrases = []string{
	"please wait and try again",
	"incompatible operation",
	"already in progress",
}

// IsClusterBusy reports whether err is GKE refusing a request because
// another operation is running on the cluster: HTTP 400 with status
// FAILED_PRECONDITION, or HTTP 409 (other than ALREADY_EXISTS), with one of
// GKE's "busy" messages. Other precondition failures (a pool that cannot be
// deleted, an unsupported feature) are not busy: retrying them would only
// delay the real error until the timeout.
func IsClusterBusy(err error) bool {
	st, ok := statusOf(err)
	if !ok {
		return false
	}
	switch {
	case st.HTTPCode == http.StatusBadRequest && st.Status == "FAILED_PRECONDITION":
	case st.HTTPCode == http.StatusConflict && st.Status != "ALREADY_EXISTS":
	default:
		return false
	}
	return hasBusyPhrase(st.Message)
}

func hasBusyPhrase(msg string) bool {
	msg = strings.ToLower(msg)
	for _, p := range busyPhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	// "Operation operation-123 is currently upgrading cluster c."
	return strings.Contains(msg, "operation") && strings.Contains(msg, "is currently")
}

// IsNotFound reports whether err is a 404 from GKE. Read treats it as the
// object being gone, Delete as already done.
func IsNotFound(err error) bool {
	st, ok := statusOf(err)
	return ok && st.HTTPCode == http.StatusNotFound
}

// IsAlreadyExists reports whether err is GKE saying the object exists (409
// ALREADY_EXISTS). After a create that was replayed because its connection
// broke, this means the first attempt succeeded.
func IsAlreadyExists(err error) bool {
	st, ok := statusOf(err)
	return ok && st.HTTPCode == http.StatusConflict && !hasBusyPhrase(st.Message) &&
		(st.Status == "ALREADY_EXISTS" || st.Status == "")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
