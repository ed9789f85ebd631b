package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// retryPolicy bounds how the transport retries. It is a value so tests can
// shorten the delays without touching the process-wide default.
type retryPolicy struct {
	// maxAttempts counts the first attempt too.
	maxAttempts int
	// baseDelay doubles per attempt up to maxDelay; each delay is jittered
	// between half and all of it so that many clients do not retry in step.
	baseDelay time.Duration
	maxDelay  time.Duration
	// maxRetryAfter caps what a Retry-After header can make us wait: a
	// misbehaving proxy must not park an apply for an hour.
	maxRetryAfter time.Duration
}

var defaultRetryPolicy = retryPolicy{
	maxAttempts:   5,
	baseDelay:     250 * time.Millisecond,
	maxDelay:      8 * time.Second,
	maxRetryAfter: 60 * time.Second,
}

// WrapTransport is the HTTP layer every request to the API server goes
// through (RESTConfig installs it with rest.Config.Wrap). It
//
//   - retries 429 for every verb (the server says it did not process the
//     request), 502/503/504 for every verb but POST, 500 for idempotent
//     requests, connection refused for every verb (nothing was sent) and
//     connection reset for idempotent requests; only when the body can be
//     replayed, at most a few times, honouring Retry-After (seconds or an
//     HTTP date) or else backing off exponentially with jitter, and never
//     past the request context's deadline;
//   - counts every request (see RequestCounts);
//   - logs every attempt at TRACE with method, path, status, duration and
//     attempt number, never headers, query or bodies, which may hold tokens.
//
// client-go also retries responses carrying Retry-After, up to ten times.
// Two independent retry loops would multiply each other, so the response
// finally handed back has its Retry-After removed: this layer is the one
// place that decides.
func WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return &apiTransport{next: rt, policy: defaultRetryPolicy}
}

type apiTransport struct {
	next   http.RoundTripper
	policy retryPolicy
}

// WrappedRoundTripper lets client-go find the transports underneath (it
// looks for the TLS transport to cancel requests and to close idle
// connections).
func (t *apiTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t *apiTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	countRequest(req)
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil

	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, fmt.Errorf("replaying the request body for a retry: %w", err)
				}
				r.Body = body
			}
		}

		start := time.Now()
		resp, err := t.next.RoundTrip(r)
		logAttempt(ctx, r, attempt, resp, err, time.Since(start))

		delay, why, retry := t.shouldRetry(req, resp, err, attempt, replayable)
		if retry {
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
				// Sleeping would only end in the caller's deadline; handing
				// back the real answer now gives a better error.
				retry = false
			}
		}
		if !retry {
			stripRetryAfter(resp)
			return resp, err
		}

		if resp != nil {
			// Drain a little so the connection can be reused, then let go.
			_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
			_ = resp.Body.Close()
		}
		retryTotal.Add(1)
		tflog.Debug(ctx, "retrying Kubernetes API request", map[string]any{
			"http_method": req.Method,
			"http_path":   req.URL.Path,
			"attempt":     attempt,
			"reason":      why,
			"delay_ms":    delay.Milliseconds(),
		})
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("%s %s: gave up retrying (%s) after %d attempts: %w", req.Method, req.URL.Path, why, attempt, ctx.Err())
		case <-timer.C:
		}
	}
}

// shouldRetry decides whether attempt (1-based) is followed by another one,
// after what delay, and says why in words for the log.
func (t *apiTransport) shouldRetry(req *http.Request, resp *http.Response, err error, attempt int, replayable bool) (time.Duration, string, bool) {
	if attempt >= t.policy.maxAttempts || !replayable || req.Context().Err() != nil {
		return 0, "", false
	}
	if err != nil {
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return 0, "", false
		case errors.Is(err, syscall.ECONNREFUSED):
			// Nothing reached the server, so even a POST is safe to resend.
			return t.backoff(attempt), "connection refused", true
		case errors.Is(err, syscall.ECONNRESET) && idempotent(req):
			return t.backoff(attempt), "connection reset", true
		}
		return 0, "", false
	}

	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		// 429 means the request was not processed, whatever its verb.
	case (code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout) &&
		req.Method != http.MethodPost:
	case code == http.StatusInternalServerError && idempotent(req) && !deterministic500(resp):
	default:
		return 0, "", false
	}
	why := resp.Status
	if d, ok := retryAfter(resp, time.Now()); ok {
		return min(d, t.policy.maxRetryAfter), why + " with Retry-After", true
	}
	return t.backoff(attempt), why, true
}

// backoff is the delay after attempt: baseDelay doubling per attempt, capped,
// with "equal jitter" (half fixed, half random) so that the delay still
// grows while clients spread out.
func (t *apiTransport) backoff(attempt int) time.Duration {
	d := t.policy.baseDelay << (attempt - 1)
	if d <= 0 || d > t.policy.maxDelay {
		d = t.policy.maxDelay
	}
	half := d / 2
	return half + rand.N(half+1)
}

// idempotent reports whether resending req cannot do something twice. A
// POST creates; a JSON patch may append to a list; everything else the
// provider sends (GET, PUT with a resourceVersion, DELETE, server-side
// apply and merge patches) converges to the same state however often it is
// applied.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	case http.MethodPatch:
		return req.Header.Get("Content-Type") != "application/json-patch+json"
	}
	return false
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

func stripRetryAfter(resp *http.Response) {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) {
		resp.Header.Del("Retry-After")
	}
}

// logAttempt writes one TRACE line per attempt. Deliberately absent: request
// and response headers (Authorization, tokens from exec plugins, cookies),
// the query string and bodies (Secrets, ExecCredentials).
func logAttempt(ctx context.Context, req *http.Request, attempt int, resp *http.Response, err error, d time.Duration) {
	fields := map[string]any{
		"http_method": req.Method,
		"http_path":   req.URL.Path,
		"attempt":     attempt,
		"duration_ms": d.Milliseconds(),
	}
	if resp != nil {
		fields["http_status"] = resp.StatusCode
	}
	if err != nil {
		fields["error"] = err.Error()
	}
	tflog.Trace(ctx, "Kubernetes API request", fields)
}

// deterministic500 peeks at a 500 answer (restoring its body) and tells
// apart the one the API server gives for an object that does not fit its
// schema under server-side apply: repeating that request can only get the
// same answer, five times slower.
func deterministic500(resp *http.Response) bool {
	if resp == nil || resp.Body == nil {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	return isContentRejectedMessage(string(head))
}
