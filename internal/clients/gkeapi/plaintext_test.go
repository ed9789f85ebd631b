package gkeapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// authRecorder is a loopback listener over plain HTTP that records the
// Authorization header of every request that reaches it.
type authRecorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newAuthRecorder(t *testing.T) *authRecorder {
	t.Helper()
	r := &authRecorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Header.Get("Authorization"))
		r.mu.Unlock()
		writeAPIError(w, http.StatusNotFound, "NOT_FOUND", "recorder")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *authRecorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// TestPlainHTTPEndpointRefused: an http:// gke.endpoint without the opt-in
// is refused when the client is built, naming the endpoint and the way
// out, and the listener behind it receives nothing; with
// AllowCredentialsOverHTTP the same listener receives the token (so the
// listener would have seen it).
func TestPlainHTTPEndpointRefused(t *testing.T) {
	for _, cfg := range []Config{
		{AccessToken: "secret-token"},
		{Credentials: string(serviceAccountJSON(newTokenServer(t, "sa-token").URL, "sp"))},
	} {
		rec := newAuthRecorder(t)
		cfg.Endpoint = rec.URL
		_, err := NewService(context.Background(), cfg, fast...)
		var pe *PlainHTTPError
		if !errors.As(err, &pe) {
			t.Fatalf("NewService(%s) = %v, want a PlainHTTPError", rec.URL, err)
		}
		for _, want := range []string{rec.URL, "plain HTTP", "https://", "allow_credentials_over_http = true", "gke block"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not mention %q: %v", want, err)
			}
		}
		if strings.Contains(err.Error(), "secret-token") {
			t.Errorf("error quotes the token: %v", err)
		}
		if got := rec.requests(); len(got) != 0 {
			t.Errorf("the listener received %d requests: %q", len(got), got)
		}

		cfg.AllowCredentialsOverHTTP = true
		c, err := NewService(context.Background(), cfg, fast...)
		if err != nil {
			t.Fatalf("NewService with the opt-in: %v", err)
		}
		_, _ = c.GetCluster(context.Background(), "projects/p/locations/l/clusters/c")
		if got := rec.requests(); len(got) == 0 || !strings.HasPrefix(got[0], "Bearer ") {
			t.Errorf("with the opt-in the listener saw %q, want a bearer token", got)
		}
	}
}

// TestPlainHTTPGuardOnRedirect: an https endpoint that redirects to an
// http:// address does not get the token sent there: the guard below the
// OAuth2 transport refuses the request before it leaves.
func TestPlainHTTPGuardOnRedirect(t *testing.T) {
	rec := newAuthRecorder(t)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, rec.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(tlsSrv.Close)
	c, err := NewService(context.Background(), Config{AccessToken: "secret-token", Endpoint: tlsSrv.URL},
		append(fast, WithHTTPTransport(tlsSrv.Client().Transport))...)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	_, err = c.GetCluster(context.Background(), "projects/p/locations/l/clusters/c")
	if err == nil || !strings.Contains(err.Error(), "refusing to send the Google access token over plain HTTP") {
		t.Errorf("GetCluster through a redirect to http = %v, want the guard's refusal", err)
	}
	if got := rec.requests(); len(got) != 0 {
		t.Errorf("the http listener received %d requests (Authorization %q)", len(got), got)
	}
}
