package gkeapi

import (
	"fmt"
	"net/http"
	"strings"
)

// The Google access token never travels in clear text unless the user said
// so (Config.AllowCredentialsOverHTTP), as for the Kubernetes connection
// (kube.PlainHTTPError). Every container API request carries the token, so
// an http:// endpoint is refused when the client is built, before anything
// is sent; and plainHTTPGuard, below the OAuth2 transport, refuses any
// request with an Authorization header to a URL that is not https, however
// it was reached (a redirect, a later change of configuration).

// PlainHTTPError is the refusal to send the Google access token without TLS.
type PlainHTTPError struct {
	Endpoint string
}

func (e *PlainHTTPError) Error() string {
	return fmt.Sprintf("refusing to send the Google access token to %s over plain HTTP: the GKE endpoint has the http "+
		"scheme, so the connection would not be encrypted and anyone on the network path could read and reuse the "+
		"token. Use an https:// endpoint. Only for an emulator on a network "+
		"you trust, set allow_credentials_over_http = true in the provider's gke block", e.Endpoint)
}

// plainHTTPGuard wraps rt, the transport below the OAuth2 one, unless allow.
func plainHTTPGuard(rt http.RoundTripper, allow bool) http.RoundTripper {
	if allow {
		return rt
	}
	return &plainHTTPGuardTransport{next: rt}
}

type plainHTTPGuardTransport struct{ next http.RoundTripper }

func (t *plainHTTPGuardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.EqualFold(req.URL.Scheme, "https") && req.Header.Get("Authorization") != "" {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("refusing to send the Google access token over plain HTTP to %s (%s %s): use an "+
			"https:// endpoint, or set allow_credentials_over_http = true in the provider's gke block only for an "+
			"emulator on a network you trust", req.URL.Host, req.Method, req.URL.Path)
	}
	return t.next.RoundTrip(req)
}
