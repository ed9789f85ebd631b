package kube

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// Credentials never travel in clear text unless the user said so
// (Config.AllowCredentialsOverHTTP). Two layers enforce it:
//
//   - RESTConfig refuses a configuration whose server address has the http
//     scheme while any credential is configured, naming the credential and
//     where the address came from, before anything is sent;
//   - plainHTTPGuard, the innermost transport wrapper, refuses any request
//     to an http:// URL that carries an Authorization header, whatever put
//     it there (client-go's bearer and basic-auth wrappers, an exec plugin,
//     a GKE token source) and however the URL was reached (a redirect from
//     https, a later change of configuration).
//
// An address without a scheme means https, as documented, whatever client-go
// would have guessed from the TLS settings (it picks http when no CA, client
// certificate or insecure flag is set, which is how a token went over plain
// HTTP to "127.0.0.1:18080").

// normalizeHost makes an address without a scheme an https URL.
func normalizeHost(host string) string {
	if host == "" || strings.Contains(host, "://") {
		return host
	}
	return "https://" + host
}

// credentialKinds names, for people, every credential rc would send.
func credentialKinds(rc *rest.Config, gkeToken bool) []string {
	var kinds []string
	if rc.BearerToken != "" {
		kinds = append(kinds, "a bearer token")
	}
	if rc.BearerTokenFile != "" {
		kinds = append(kinds, "a bearer token file")
	}
	if rc.ExecProvider != nil {
		kinds = append(kinds, fmt.Sprintf("the output of the exec credential plugin %q", rc.ExecProvider.Command))
	}
	if rc.AuthProvider != nil {
		kinds = append(kinds, fmt.Sprintf("the token of auth provider %q", rc.AuthProvider.Name))
	}
	if rc.Username != "" || rc.Password != "" {
		kinds = append(kinds, "a basic-auth username and password")
	}
	if gkeToken {
		kinds = append(kinds, "the Google access token for the GKE cluster")
	}
	if len(rc.CertData) > 0 || rc.CertFile != "" || len(rc.KeyData) > 0 || rc.KeyFile != "" {
		// Not sent over http at all, but the user meant to authenticate:
		// requests would silently go out anonymous.
		kinds = append(kinds, "a client certificate (which authenticates only inside TLS)")
	}
	return kinds
}

// refuseCredentialsOverHTTP is the configuration-time check.
func (c Config) refuseCredentialsOverHTTP(rc *rest.Config, b baseConfig) error {
	if c.AllowCredentialsOverHTTP {
		return nil
	}
	u, err := url.Parse(rc.Host)
	if err != nil {
		// client-go refuses an unparsable host itself, before any request.
		return nil //nolint:nilerr // not this check's error to report
	}
	if !strings.EqualFold(u.Scheme, "http") {
		return nil
	}
	kinds := credentialKinds(rc, b.gkeToken)
	if len(kinds) == 0 {
		// Nothing secret to protect: e.g. `kubectl proxy` on localhost.
		return nil
	}
	return &PlainHTTPError{Host: u.Redacted(), HostFrom: c.hostSource(b), Credentials: kinds}
}

// hostSource says where the server address came from.
func (c Config) hostSource(b baseConfig) string {
	switch {
	case c.Host != "":
		return "kubernetes.host (or KUBE_HOST)"
	case c.GKECluster != "":
		return fmt.Sprintf("the endpoint GKE reports for cluster %s", c.GKECluster)
	case b.context != "":
		return fmt.Sprintf("the server of context %q in the kubeconfig", b.context)
	}
	return "the kubeconfig"
}

// PlainHTTPError is the refusal to send credentials without TLS.
type PlainHTTPError struct {
	Host        string
	HostFrom    string
	Credentials []string
}

func (e *PlainHTTPError) Error() string {
	return fmt.Sprintf("refusing to send %s to %s over plain HTTP: the address (from %s) has the http scheme, so "+
		"the connection would not be encrypted and anyone on the network path could read and reuse the credential. "+
		"Use an https:// address (an address without a scheme means https). Only for a throw-away cluster on a "+
		"network you trust, set allow_credentials_over_http = true in the provider's kubernetes block "+
		"(KUBE_ALLOW_CREDENTIALS_OVER_HTTP=true); insecure = true does not do this, it only skips certificate verification",
		joinWords(e.Credentials), e.Host, e.HostFrom)
}

func joinWords(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// plainHTTPGuard returns the innermost transport wrapper: a request to an
// http:// URL with an Authorization header fails before it is sent.
func plainHTTPGuard(allow bool) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		if allow {
			return rt
		}
		return &plainHTTPGuardTransport{next: rt}
	}
}

type plainHTTPGuardTransport struct{ next http.RoundTripper }

func (t *plainHTTPGuardTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t *plainHTTPGuardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.EqualFold(req.URL.Scheme, "https") && req.Header.Get("Authorization") != "" {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		u := *req.URL
		u.RawQuery, u.User = "", nil
		return nil, fmt.Errorf("refusing to send credentials over plain HTTP to %s (%s %s): use an https:// address, or set "+
			"allow_credentials_over_http = true in the provider's kubernetes block (KUBE_ALLOW_CREDENTIALS_OVER_HTTP=true) "+
			"only for a throw-away cluster on a network you trust", u.Host, req.Method, u.Path)
	}
	return t.next.RoundTrip(req)
}
