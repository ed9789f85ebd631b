package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"
)

// Client-side rate limits used when neither the provider configuration nor
// the kubeconfig sets one. They are a guard against a runaway loop, not a
// throttle: the API server's priority and fairness protects it far better
// than a client guess can, and the transport honours 429 + Retry-After.
// Terraform already bounds the provider's concurrency (-parallelism, 10 by
// default, one request in flight per resource operation), so a bucket only
// adds waiting: at 50 QPS and burst 100 a refresh of N objects waited at
// least (N-100)/50 s, measured (issue 17, 600 objects, local control plane)
// 11.9 s for apply -refresh-only against 6.2 s at 1000 QPS, and 33.7 s
// against 26.8 s for the apply. client-go's own defaults (5 QPS, burst 10)
// would make such a refresh take minutes.
const (
	DefaultQPS   float32 = 1000
	DefaultBurst int     = 2000
)

// The ExecCredential API versions a credential plugin may speak.
const (
	ExecAPIVersionV1      = "client.authentication.k8s.io/v1"
	ExecAPIVersionV1beta1 = "client.authentication.k8s.io/v1beta1"
)

// ErrNotConfigured is returned (wrapped) by RESTConfig when no setting at all
// says where the cluster is. Its message names every attribute and
// environment variable that would.
var ErrNotConfigured = errors.New("no Kubernetes connection is configured: set `config_path` " +
	"(environment KUBE_CONFIG_PATH, KUBE_CONFIG_PATHS or KUBECONFIG) to a kubeconfig file, optionally with " +
	"`config_context` (KUBE_CTX); or set `host` (KUBE_HOST) with `cluster_ca_certificate` (KUBE_CLUSTER_CA_CERT_DATA) " +
	"and credentials: `token` (KUBE_TOKEN), `client_certificate` and `client_key` (KUBE_CLIENT_CERT_DATA, " +
	"KUBE_CLIENT_KEY_DATA) or an `exec` block; `tls_server_name` (KUBE_TLS_SERVER_NAME), `proxy_url` (KUBE_PROXY_URL) " +
	"and `insecure` (KUBE_INSECURE) refine the connection; or set `gke_cluster` to reach a GKE cluster")

// RESTConfig builds the client-go configuration. The base comes from GKE
// (when GKECluster is set) or from the kubeconfig files; every explicit
// field then wins over the base, field by field. The result verifies the
// server's certificate (against the configured CA, or the system roots when
// there is none) unless Insecure is true or the kubeconfig itself says
// insecure-skip-tls-verify, and every request made with it goes through the
// retrying, counting transport (WrapTransport).
func (c Config) RESTConfig(ctx context.Context) (*rest.Config, error) {
	b, err := c.baseRESTConfig(ctx)
	if err != nil {
		return nil, err
	}
	rc := b.rc
	if err := c.layerExplicit(rc); err != nil {
		return nil, err
	}
	if rc.Host == "" {
		if b.whyEmpty != nil {
			return nil, b.whyEmpty
		}
		return nil, ErrNotConfigured
	}
	// A host without a scheme means https (see plaintext.go), never
	// client-go's guess from the TLS settings.
	rc.Host = normalizeHost(rc.Host)
	if err := c.refuseCredentialsOverHTTP(rc, b); err != nil {
		return nil, err
	}

	if rc.Insecure {
		// client-go refuses a CA together with insecure, and kubectl's
		// --insecure-skip-tls-verify drops the kubeconfig's CA the same way:
		// the explicit opt-out wins, but the user should know what was lost.
		if len(rc.CAData) > 0 || rc.CAFile != "" {
			tflog.Warn(ctx, "Kubernetes TLS verification is off (insecure = true): the cluster CA certificate is ignored")
			rc.CAData, rc.CAFile = nil, ""
		} else {
			tflog.Warn(ctx, "Kubernetes TLS verification is off (insecure = true)")
		}
	}

	if rc.QPS == 0 {
		rc.QPS = DefaultQPS
	}
	if rc.Burst == 0 {
		rc.Burst = DefaultBurst
	}
	// Deprecation and admission warnings reach the user's log instead of
	// client-go's stderr, which Terraform would otherwise swallow or mangle.
	rc.WarningHandlerWithContext = tflogWarningHandler{}
	// The guard goes innermost, under every wrapper that adds credentials
	// (GKE's token source here, client-go's bearer and exec wrappers later),
	// so it sees each request exactly as it would leave the process.
	rc.WrapTransport = transport.Wrappers(plainHTTPGuard(c.AllowCredentialsOverHTTP), rc.WrapTransport)
	rc.Wrap(WrapTransport)
	return rc, nil
}

// baseConfig is what GKE or the kubeconfig says, before explicit fields.
type baseConfig struct {
	rc *rest.Config
	// whyEmpty is set when a kubeconfig was read but names no context to
	// use: the error to report if explicit fields do not make up for it.
	whyEmpty error
	// gkeToken is set when GKE's token source authenticates requests.
	gkeToken bool
	// context is the kubeconfig context used, for messages.
	context string
}

func (c Config) baseRESTConfig(ctx context.Context) (baseConfig, error) {
	switch {
	case c.GKECluster != "":
		if len(c.ConfigPaths) > 0 {
			tflog.Debug(ctx, "gke_cluster is set: the kubeconfig files are not read")
		}
		rc, token, err := c.gkeRESTConfig(ctx)
		return baseConfig{rc: rc, gkeToken: token}, err
	case len(c.ConfigPaths) > 0:
		return c.kubeconfigRESTConfig(ctx)
	default:
		return baseConfig{rc: &rest.Config{}}, nil
	}
}

func (c Config) gkeRESTConfig(ctx context.Context) (*rest.Config, bool, error) {
	if c.GKECredentials == nil {
		// A wiring mistake in the provider, not something a user can fix.
		return nil, false, fmt.Errorf("gke_cluster %q is set but the provider has no way to ask GKE for its credentials", c.GKECluster)
	}
	creds, err := c.GKECredentials(ctx, c.GKECluster)
	if err != nil {
		return nil, false, fmt.Errorf("getting the endpoint and credentials of GKE cluster %s: %w", c.GKECluster, err)
	}
	if creds == nil || creds.Host == "" {
		return nil, false, fmt.Errorf("GKE cluster %s has no endpoint yet (is it still being created?)", c.GKECluster)
	}
	host := creds.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	rc := &rest.Config{Host: host}
	if creds.ClusterCACertificate != "" {
		ca, err := decodeCertPEM("the CA certificate reported by GKE", creds.ClusterCACertificate)
		if err != nil {
			return nil, false, err
		}
		rc.CAData = ca
	}
	// An explicit token or exec plugin replaces GKE's token; installing the
	// token source anyway would overwrite their Authorization header, since
	// WrapTransport sits inside client-go's bearer wrapper.
	if creds.TokenSource != nil && c.Token == "" && c.Exec == nil {
		// The cache avoids a token fetch per request; the resettable wrapper
		// drops a token the server rejected with 401 so the next request gets
		// a fresh one.
		rc.Wrap(transport.ResettableTokenSourceWrapTransport(transport.NewCachedTokenSource(creds.TokenSource)))
		return rc, true, nil
	}
	return rc, false, nil
}

// kubeconfigRESTConfig merges the kubeconfig files as kubectl does and
// builds the configuration of the selected context.
func (c Config) kubeconfigRESTConfig(ctx context.Context) (baseConfig, error) {
	var existing, missing []string
	for _, p := range c.ConfigPaths {
		p, err := expandHome(p)
		if err != nil {
			return baseConfig{}, err
		}
		switch _, err := os.Stat(p); {
		case err == nil:
			existing = append(existing, p)
		case errors.Is(err, os.ErrNotExist):
			missing = append(missing, p)
		default:
			return baseConfig{}, fmt.Errorf("reading kubeconfig %s: %w", p, err)
		}
	}
	if len(existing) == 0 {
		return baseConfig{}, fmt.Errorf("kubeconfig file not found: %s (set config_path, or KUBE_CONFIG_PATH, KUBE_CONFIG_PATHS or KUBECONFIG, to an existing file)",
			strings.Join(missing, ", "))
	}
	if len(missing) > 0 {
		// kubectl skips missing files of a KUBECONFIG list too.
		tflog.Debug(ctx, "skipping kubeconfig files that do not exist", map[string]any{"missing": missing})
	}
	files := strings.Join(existing, ", ")

	rules := &clientcmd.ClientConfigLoadingRules{Precedence: existing}
	raw, err := rules.Load()
	if err != nil {
		return baseConfig{}, fmt.Errorf("loading kubeconfig %s: %w", files, err)
	}

	name := c.ConfigContext
	if name == "" {
		name = raw.CurrentContext
	}
	if name == "" {
		noContext := fmt.Errorf("kubeconfig %s has no current-context: set config_context (KUBE_CTX) to one of: %s",
			files, contextList(raw))
		return baseConfig{rc: &rest.Config{}, whyEmpty: noContext}, nil
	}
	kctx, ok := raw.Contexts[name]
	if !ok {
		how := "config_context (KUBE_CTX)"
		if c.ConfigContext == "" {
			how = "the kubeconfig's current-context"
		}
		return baseConfig{}, fmt.Errorf("context %q, named by %s, does not exist in kubeconfig %s; available contexts: %s",
			name, how, files, contextList(raw))
	}
	// A cluster entry without a server is legitimate when host is given
	// explicitly, but clientcmd would reject it before we can layer host on.
	if cl := raw.Clusters[kctx.Cluster]; cl != nil && cl.Server == "" && c.Host != "" {
		cl.Server = c.Host
	}
	// A server without a scheme means https here too. clientcmd would guess
	// http when the entry has no CA, and then drop the user's credentials
	// (it reads them only for TLS servers): the user would silently be
	// anonymous.
	if cl := raw.Clusters[kctx.Cluster]; cl != nil {
		cl.Server = normalizeHost(cl.Server)
	}

	rc, err := clientcmd.NewNonInteractiveClientConfig(*raw, name, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return baseConfig{}, fmt.Errorf("using context %q of kubeconfig %s: %w", name, files, err)
	}
	return baseConfig{rc: rc, context: name}, nil
}

func contextList(raw *clientcmdapi.Config) string {
	if len(raw.Contexts) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(raw.Contexts))
	for n := range raw.Contexts {
		names = append(names, fmt.Sprintf("%q", n))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expanding ~ in kubeconfig path %s: %w", p, err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}

// layerExplicit puts every explicitly set field over the base. Credentials
// are replaced as a set where mixing would be wrong: a token or exec plugin
// replaces every other kind of bearer credential of the kubeconfig user.
func (c Config) layerExplicit(rc *rest.Config) error {
	if c.Host != "" {
		if strings.Contains(c.Host, "://") {
			u, err := url.Parse(c.Host)
			if err != nil {
				return fmt.Errorf("host %q is not a valid URL: %w", c.Host, err)
			}
			if u.Scheme != "https" && u.Scheme != "http" {
				return fmt.Errorf("host %q: the scheme must be https or http", c.Host)
			}
		}
		rc.Host = c.Host
	}
	if c.TLSServerName != "" {
		rc.ServerName = c.TLSServerName
	}
	if c.ClusterCACertificate != "" {
		ca, err := decodeCertPEM("cluster_ca_certificate", c.ClusterCACertificate)
		if err != nil {
			return err
		}
		rc.CAData, rc.CAFile = ca, ""
	}

	if (c.ClientCertificate == "") != (c.ClientKey == "") {
		// Mixing an explicit certificate with the kubeconfig's key (or the
		// reverse) can only produce a key mismatch deep inside TLS.
		return errors.New("client_certificate and client_key must be set together")
	}
	if c.ClientCertificate != "" {
		cert, err := decodeCertPEM("client_certificate", c.ClientCertificate)
		if err != nil {
			return err
		}
		key, err := decodePEM("client_key", c.ClientKey)
		if err != nil {
			return err
		}
		if _, err := tls.X509KeyPair(cert, key); err != nil {
			// The error of X509KeyPair never includes key material.
			return fmt.Errorf("client_certificate and client_key do not form a valid pair: %w", err)
		}
		rc.CertData, rc.CertFile = cert, ""
		rc.KeyData, rc.KeyFile = key, ""
	}

	if c.Token != "" && c.Exec != nil {
		return errors.New("token and exec cannot both be set: choose one way to authenticate")
	}
	if c.Token != "" {
		clearBearerCredentials(rc)
		rc.BearerToken = c.Token
	}
	if c.Exec != nil {
		ec, err := c.Exec.toClientcmd()
		if err != nil {
			return err
		}
		clearBearerCredentials(rc)
		rc.ExecProvider = ec
	}

	if c.ProxyURL != "" {
		u, err := url.Parse(c.ProxyURL)
		if err != nil {
			return fmt.Errorf("proxy_url %q is not a valid URL: %w", redactURL(c.ProxyURL), err)
		}
		switch u.Scheme {
		case "http", "https", "socks5":
		default:
			return fmt.Errorf("proxy_url %q: the scheme must be http, https or socks5", redactURL(c.ProxyURL))
		}
		rc.Proxy = http.ProxyURL(u)
	}
	if c.Insecure {
		rc.Insecure = true
	}

	if c.QPS != 0 {
		rc.QPS = c.QPS
	}
	if c.Burst != 0 {
		rc.Burst = c.Burst
	}
	if c.UserAgent != "" {
		rc.UserAgent = c.UserAgent
	}
	if c.Timeout != 0 {
		rc.Timeout = c.Timeout
	}
	return nil
}

// clearBearerCredentials removes every credential that would compete with
// an explicit token or exec plugin for the Authorization header. Client
// certificates stay: they authenticate at the TLS layer and coexist.
func clearBearerCredentials(rc *rest.Config) {
	rc.BearerToken, rc.BearerTokenFile = "", ""
	rc.Username, rc.Password = "", ""
	rc.ExecProvider = nil
	rc.AuthProvider = nil
}

func (e *ExecConfig) toClientcmd() (*clientcmdapi.ExecConfig, error) {
	if e.Command == "" {
		return nil, errors.New("exec: command must be set")
	}
	version := e.APIVersion
	switch version {
	case "":
		version = ExecAPIVersionV1beta1
	case ExecAPIVersionV1, ExecAPIVersionV1beta1:
	default:
		return nil, fmt.Errorf("exec: api_version %q is not supported; use %s or %s", e.APIVersion, ExecAPIVersionV1, ExecAPIVersionV1beta1)
	}
	env := make([]clientcmdapi.ExecEnvVar, 0, len(e.Env))
	for k, v := range e.Env {
		env = append(env, clientcmdapi.ExecEnvVar{Name: k, Value: v})
	}
	// Deterministic order: client-go caches authenticators by their config.
	sort.Slice(env, func(i, j int) bool { return env[i].Name < env[j].Name })
	return &clientcmdapi.ExecConfig{
		APIVersion: version,
		Command:    e.Command,
		Args:       append([]string(nil), e.Args...),
		Env:        env,
		// Terraform runs providers without a terminal: a plugin that wants to
		// prompt must fail fast instead of hanging the apply.
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}, nil
}

// decodePEM accepts PEM as is, or base64-encoded PEM as kubeconfig files and
// the GKE API carry it, so a user who pastes either gets what they meant.
func decodePEM(what, s string) ([]byte, error) {
	if b := []byte(s); bytes.Contains(b, []byte("-----BEGIN ")) {
		return b, nil
	}
	dec, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err == nil && bytes.Contains(dec, []byte("-----BEGIN ")) {
		return dec, nil
	}
	return nil, fmt.Errorf("%s is not PEM-encoded (expected a block starting with -----BEGIN)", what)
}

func decodeCertPEM(what, s string) ([]byte, error) {
	b, err := decodePEM(what, s)
	if err != nil {
		return nil, err
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no valid PEM certificate", what)
	}
	return b, nil
}

// redactURL drops user info (a proxy password) before a URL goes into an error.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if i := strings.LastIndex(s, "@"); i >= 0 {
			return "…" + s[i:]
		}
		return s
	}
	return u.Redacted()
}

// tflogWarningHandler sends API warnings (deprecations, admission warnings)
// to the Terraform log.
type tflogWarningHandler struct{}

func (tflogWarningHandler) HandleWarningHeaderWithContext(ctx context.Context, code int, agent, text string) {
	if code != 299 || text == "" {
		return
	}
	tflog.Warn(ctx, "Kubernetes API warning", map[string]any{"warning": text})
}
