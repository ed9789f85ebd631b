package gkeapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// attemptsHeader is set on the final response of a request that was retried,
// so that the googleapi.Error built from it (which keeps the response header)
// tells diagnostics how hard we tried. It never leaves this process.
const attemptsHeader = "X-Agentsandbox-Attempts"

// maxDrain bounds how much of a discarded response we read to keep its
// connection reusable.
const maxDrain = 64 << 10

// retryTransport retries transient failures of single HTTP requests:
//
//   - 429 and 503 for every method: GKE answered without acting on the
//     request, so repeating it is safe;
//   - 500, 502 and 504 only for GET/HEAD: for a mutation GKE may have started
//     an operation already, and a blind repeat would only turn that into a
//     confusing "already exists" or "busy" answer;
//   - connection resets and similar broken connections for every method.
//     This is safe because every container/v1 mutation is keyed by a
//     resource name and GKE runs one operation per cluster at a time: a
//     replay cannot create a second object, it fails with ALREADY_EXISTS
//     (or NOT_FOUND for a delete), which callers treat as "done already";
//   - a per-attempt timeout (Config.RequestTimeout) only for GET/HEAD, for the
//     same reason as 500.
//
// The request context bounds everything: we never sleep past its deadline;
// when the next wait would cross it, the last answer is returned right away.
type retryTransport struct {
	next          http.RoundTripper
	attempts      int
	backoff       Backoff
	maxRetryAfter time.Duration
	timeout       time.Duration
	requests      *atomic.Int64
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	attempts := max(t.attempts, 1)
	for attempt := 1; ; attempt++ {
		r, err := t.attemptRequest(req, attempt)
		if err != nil {
			return nil, err
		}
		resp, err := t.roundTripOnce(r)
		if err != nil && req.Method != http.MethodGet && req.Method != http.MethodHead && isBrokenConnection(err) {
			markLostAnswer(ctx)
		}

		reason, retryable := classify(req.Method, resp, err, ctx)
		if !retryable || attempt >= attempts || !replayable(req) {
			return finish(resp, err, attempt)
		}

		wait := jitter(t.backoff.delay(attempt))
		if resp != nil {
			if ra, ok := retryAfter(resp.Header, time.Now()); ok {
				wait = min(ra, t.maxRetryAfter)
			}
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// Waiting would outlive the caller; its error is more useful
			// than a bare "context deadline exceeded".
			return finish(resp, err, attempt)
		}
		if resp != nil {
			// Release the connection (and the per-attempt timer) while
			// we wait; this answer is superseded by the next attempt.
			drainAndClose(resp)
		}

		tflog.Warn(ctx, "GKE API request failed transiently; retrying", map[string]any{
			"method":  req.Method,
			"path":    req.URL.Path,
			"reason":  reason,
			"attempt": attempt,
			"wait":    wait.String(),
		})
		if err := sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("waiting to retry %s %s after %s (attempt %d): %w",
				req.Method, req.URL.Path, reason, attempt, err)
		}
	}
}

// attemptRequest prepares the request for one attempt: replays get a clone
// with a fresh body, since the previous attempt consumed and closed it.
func (t *retryTransport) attemptRequest(req *http.Request, attempt int) (*http.Request, error) {
	r := req
	if attempt > 1 {
		r = req.Clone(req.Context())
		if req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("replaying request body of %s %s: %w", req.Method, req.URL.Path, err)
			}
			r.Body = body
		}
	}
	return r, nil
}

// roundTripOnce runs one attempt under the per-attempt timeout. The timeout
// must keep running while the caller reads the body, so its cancel function
// is tied to the body's Close rather than to the return of RoundTrip.
func (t *retryTransport) roundTripOnce(r *http.Request) (*http.Response, error) {
	t.requests.Add(1)
	if t.timeout <= 0 {
		return t.next.RoundTrip(r)
	}
	actx, cancel := context.WithTimeout(r.Context(), t.timeout)
	resp, err := t.next.RoundTrip(r.WithContext(actx))
	if err != nil {
		cancel()
		if errors.Is(actx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil {
			err = &attemptTimeoutError{timeout: t.timeout, err: err}
		}
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// classify says whether an attempt's outcome is worth repeating, and why
// (for the log).
func classify(method string, resp *http.Response, err error, ctx context.Context) (string, bool) {
	idempotent := method == http.MethodGet || method == http.MethodHead
	if err != nil {
		if ctx.Err() != nil {
			return "", false // the caller gave up; never retry that
		}
		var ate *attemptTimeoutError
		if errors.As(err, &ate) {
			return "request timeout", idempotent
		}
		if isBrokenConnection(err) {
			return "connection reset", true
		}
		return "", false
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return resp.Status, true
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return resp.Status, idempotent
	}
	return "", false
}

// replayable reports whether the request body can be produced again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// finish returns the last outcome, marking how many attempts it took.
func finish(resp *http.Response, err error, attempt int) (*http.Response, error) {
	if attempt > 1 {
		if err != nil {
			return nil, fmt.Errorf("after %d attempts: %w", attempt, err)
		}
		if resp != nil {
			resp.Header.Set(attemptsHeader, strconv.Itoa(attempt))
		}
	}
	return resp, err
}

// isBrokenConnection recognises a connection that died under a request:
// reset by the peer, closed before the answer, or an HTTP/2 GOAWAY.
func isBrokenConnection(err error) bool {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection reset by peer") ||
		strings.Contains(msg, "server sent GOAWAY") ||
		strings.Contains(msg, "http2: client connection lost")
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// jitter spreads d by ±20% so that many resources retrying together (a
// Terraform apply runs 10 in parallel) do not hit GKE in lockstep.
func jitter(d time.Duration) time.Duration {
	spread := d / 5
	if spread <= 0 {
		return d
	}
	return d - spread + rand.N(2*spread+1)
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// drainAndClose reads a bounded amount of a discarded body so that the
// connection can be reused, then closes it.
func drainAndClose(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	resp.Body.Close()
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// attemptTimeoutError marks an attempt that hit Config.RequestTimeout while
// the caller's own context was still alive.
type attemptTimeoutError struct {
	timeout time.Duration
	err     error
}

func (e *attemptTimeoutError) Error() string {
	return fmt.Sprintf("request timed out after %s: %v", e.timeout, e.err)
}

func (e *attemptTimeoutError) Unwrap() error { return e.err }
