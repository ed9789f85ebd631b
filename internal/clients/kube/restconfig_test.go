package kube

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"golang.org/x/oauth2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// twoContextKubeconfig has contexts "alpha" (current) and "beta", each
// with its own server, CA and token; beta's user also has an exec plugin
// only to check that an explicit token replaces it.
func twoContextKubeconfig(t *testing.T, caPEM string) string {
	t.Helper()
	ca := base64.StdEncoding.EncodeToString([]byte(caPEM))
	return writeFile(t, "config", fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: alpha
clusters:
- name: alpha
  cluster:
    server: https://alpha.example:6443
    certificate-authority-data: %[1]s
    proxy-url: http://proxy.alpha:3128
- name: beta
  cluster:
    server: https://beta.example:6443
    certificate-authority-data: %[1]s
    tls-server-name: beta.internal
users:
- name: alpha
  user:
    token: alpha-token
- name: beta
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: beta-login
contexts:
- name: alpha
  context: {cluster: alpha, user: alpha}
- name: beta
  context: {cluster: beta, user: beta}
`, ca), 0o600)
}

func TestRESTConfig_kubeconfigCurrentContext(t *testing.T) {
	ca, _ := selfSignedPEM(t, "ca")
	rc, err := Config{ConfigPaths: []string{twoContextKubeconfig(t, ca)}}.RESTConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rc.Host != "https://alpha.example:6443" || rc.BearerToken != "alpha-token" {
		t.Errorf("got host %q token %q, want the alpha context", rc.Host, rc.BearerToken)
	}
	if string(rc.CAData) != ca {
		t.Errorf("CA from kubeconfig not used")
	}
	if rc.QPS != DefaultQPS || rc.Burst != DefaultBurst {
		t.Errorf("QPS/Burst = %v/%v, want defaults", rc.QPS, rc.Burst)
	}
}

func TestRESTConfig_kubeconfigSelectedContext(t *testing.T) {
	ca, _ := selfSignedPEM(t, "ca")
	rc, err := Config{ConfigPaths: []string{twoContextKubeconfig(t, ca)}, ConfigContext: "beta"}.RESTConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rc.Host != "https://beta.example:6443" || rc.ServerName != "beta.internal" {
		t.Errorf("got host %q server name %q, want the beta context", rc.Host, rc.ServerName)
	}
	if rc.ExecProvider == nil || rc.ExecProvider.Command != "beta-login" {
		t.Errorf("exec plugin of the beta user not used: %+v", rc.ExecProvider)
	}
}

func TestRESTConfig_missingContextListsAvailable(t *testing.T) {
	ca, _ := selfSignedPEM(t, "ca")
	_, err := Config{ConfigPaths: []string{twoContextKubeconfig(t, ca)}, ConfigContext: "gamma"}.RESTConfig(context.Background())
	if err == nil {
		t.Fatal("want an error for a context that does not exist")
	}
	for _, want := range []string{`"gamma"`, "KUBE_CTX", `available contexts: "alpha", "beta"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestRESTConfig_noCurrentContext(t *testing.T) {
	path := writeFile(t, "config", `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://c.example"}
users:
- name: u
  user: {token: t}
contexts:
- name: only
  context: {cluster: c, user: u}
`, 0o600)
	_, err := Config{ConfigPaths: []string{path}}.RESTConfig(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no current-context") || !strings.Contains(err.Error(), `"only"`) {
		t.Fatalf("want an error naming the missing current-context and the available ones, got %v", err)
	}
	// Explicit settings make up for it.
	rc, err := Config{ConfigPaths: []string{path}, Host: "https://explicit.example", Token: "x"}.RESTConfig(context.Background())
	if err != nil || rc.Host != "https://explicit.example" {
		t.Fatalf("explicit host with a context-less kubeconfig: %v, %v", rc, err)
	}
}

func TestRESTConfig_mergesFilesLikeKubectl(t *testing.T) {
	first := writeFile(t, "first", `apiVersion: v1
kind: Config
current-context: shared
clusters:
- name: shared
  cluster: {server: "https://first.example"}
users:
- name: u
  user: {token: first-token}
contexts:
- name: shared
  context: {cluster: shared, user: u}
`, 0o600)
	second := writeFile(t, "second", `apiVersion: v1
kind: Config
current-context: other
clusters:
- name: shared
  cluster: {server: "https://second.example"}
- name: other
  cluster: {server: "https://other.example"}
users:
- name: u
  user: {token: second-token}
contexts:
- name: shared
  context: {cluster: shared, user: u}
- name: other
  context: {cluster: other, user: u}
`, 0o600)
	missing := first + ".does-not-exist"

	rc, err := Config{ConfigPaths: []string{missing, first, second}}.RESTConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The first file to define a name, or the current-context, wins.
	if rc.Host != "https://first.example" || rc.BearerToken != "first-token" {
		t.Errorf("got %q/%q, want the first file's definitions", rc.Host, rc.BearerToken)
	}
	rc, err = Config{ConfigPaths: []string{first, second}, ConfigContext: "other"}.RESTConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rc.Host != "https://other.example" {
		t.Errorf("context only in the second file: host %q", rc.Host)
	}

	_, err = Config{ConfigPaths: []string{missing}}.RESTConfig(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not found") || !strings.Contains(err.Error(), missing) {
		t.Errorf("all files missing: want an error naming them, got %v", err)
	}
}

func TestRESTConfig_explicitWinsOverKubeconfig(t *testing.T) {
	kubeCA, _ := selfSignedPEM(t, "kube-ca")
	explicitCA, _ := selfSignedPEM(t, "explicit-ca")
	clientCert, clientKey := selfSignedPEM(t, "client")
	kubeconfig := twoContextKubeconfig(t, kubeCA)

	tests := []struct {
		name  string
		cfg   Config
		check func(t *testing.T, rc *restConfigView)
	}{
		{"host", Config{Host: "https://explicit.example"}, func(t *testing.T, rc *restConfigView) {
			want(t, "host", rc.Host, "https://explicit.example")
			want(t, "token kept", rc.BearerToken, "alpha-token")
			want(t, "CA kept", rc.CA, kubeCA)
		}},
		{"token", Config{Token: "explicit-token", ConfigContext: "beta"}, func(t *testing.T, rc *restConfigView) {
			want(t, "token", rc.BearerToken, "explicit-token")
			want(t, "exec cleared", rc.ExecCommand, "")
		}},
		{"ca", Config{ClusterCACertificate: explicitCA}, func(t *testing.T, rc *restConfigView) {
			want(t, "CA", rc.CA, explicitCA)
		}},
		{"ca as base64", Config{ClusterCACertificate: base64.StdEncoding.EncodeToString([]byte(explicitCA))}, func(t *testing.T, rc *restConfigView) {
			want(t, "CA", rc.CA, explicitCA)
		}},
		{"client certificate", Config{ClientCertificate: clientCert, ClientKey: clientKey}, func(t *testing.T, rc *restConfigView) {
			want(t, "cert", rc.Cert, clientCert)
			want(t, "key", rc.Key, clientKey)
			want(t, "token kept (TLS auth coexists)", rc.BearerToken, "alpha-token")
		}},
		{"tls server name", Config{TLSServerName: "explicit.internal", ConfigContext: "beta"}, func(t *testing.T, rc *restConfigView) {
			want(t, "server name", rc.ServerName, "explicit.internal")
		}},
		{"proxy", Config{ProxyURL: "socks5://127.0.0.1:1080"}, func(t *testing.T, rc *restConfigView) {
			want(t, "proxy", rc.Proxy, "socks5://127.0.0.1:1080")
		}},
		{"exec", Config{Exec: &ExecConfig{Command: "login", Args: []string{"--x"}, Env: map[string]string{"B": "2", "A": "1"}}}, func(t *testing.T, rc *restConfigView) {
			want(t, "exec", rc.ExecCommand, "login")
			want(t, "exec api version default", rc.ExecAPIVersion, ExecAPIVersionV1beta1)
			want(t, "exec env sorted", rc.ExecEnv, "A=1,B=2")
			want(t, "token cleared", rc.BearerToken, "")
		}},
		{"insecure drops the CA", Config{Insecure: true}, func(t *testing.T, rc *restConfigView) {
			want(t, "insecure", fmt.Sprint(rc.Insecure), "true")
			want(t, "CA", rc.CA, "")
		}},
		{"rate limits, user agent, timeout", Config{QPS: 7, Burst: 9, UserAgent: "tf/1", Timeout: 3 * time.Second}, func(t *testing.T, rc *restConfigView) {
			want(t, "qps", fmt.Sprint(rc.QPS), "7")
			want(t, "burst", fmt.Sprint(rc.Burst), "9")
			want(t, "user agent", rc.UserAgent, "tf/1")
			want(t, "timeout", rc.Timeout.String(), "3s")
		}},
		{"nothing explicit keeps the kubeconfig", Config{}, func(t *testing.T, rc *restConfigView) {
			want(t, "host", rc.Host, "https://alpha.example:6443")
			want(t, "proxy", rc.Proxy, "http://proxy.alpha:3128")
			want(t, "insecure", fmt.Sprint(rc.Insecure), "false")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.ConfigPaths = []string{kubeconfig}
			rc, err := cfg.RESTConfig(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, view(t, rc))
		})
	}
}

func TestRESTConfig_explicitOnly(t *testing.T) {
	ca, _ := selfSignedPEM(t, "ca")
	rc, err := Config{Host: "https://10.0.0.1", Token: "tok", ClusterCACertificate: ca}.RESTConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rc.Host != "https://10.0.0.1" || rc.BearerToken != "tok" || string(rc.CAData) != ca || rc.Insecure {
		t.Errorf("unexpected config %s", rc)
	}
}

func TestRESTConfig_nothingConfigured(t *testing.T) {
	_, err := Config{}.RESTConfig(context.Background())
	if !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("want ErrNotConfigured, got %v", err)
	}
	for _, v := range []string{"KUBE_CONFIG_PATH", "KUBE_CONFIG_PATHS", "KUBECONFIG", "KUBE_CTX", "KUBE_HOST", "KUBE_TOKEN",
		"KUBE_CLUSTER_CA_CERT_DATA", "KUBE_CLIENT_CERT_DATA", "KUBE_CLIENT_KEY_DATA", "KUBE_INSECURE", "KUBE_TLS_SERVER_NAME",
		"KUBE_PROXY_URL", "gke_cluster", "config_path", "host"} {
		if !strings.Contains(err.Error(), v) {
			t.Errorf("error does not mention %s", v)
		}
	}
}

func TestRESTConfig_rejectsContradictions(t *testing.T) {
	cert, key := selfSignedPEM(t, "client")
	otherCert, _ := selfSignedPEM(t, "other")
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"token and exec", Config{Host: "https://h", Token: "t", Exec: &ExecConfig{Command: "x"}}, "token and exec"},
		{"cert without key", Config{Host: "https://h", ClientCertificate: cert}, "must be set together"},
		{"mismatched pair", Config{Host: "https://h", ClientCertificate: otherCert, ClientKey: key}, "valid pair"},
		{"CA not PEM", Config{Host: "https://h", ClusterCACertificate: "not a cert"}, "cluster_ca_certificate is not PEM"},
		{"exec api version", Config{Host: "https://h", Exec: &ExecConfig{Command: "x", APIVersion: "client.authentication.k8s.io/v1alpha1"}}, "not supported"},
		{"proxy scheme", Config{Host: "https://h", ProxyURL: "ftp://user:secret@p"}, "scheme must be"},
		{"host scheme", Config{Host: "ftp://h"}, "scheme must be https or http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.cfg.RESTConfig(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want an error containing %q, got %v", tt.want, err)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error leaks a password: %v", err)
			}
		})
	}
}

// TestRESTConfig_tlsVerification checks that verification is on unless
// asked otherwise: a self-signed server fails without its CA (system roots
// do not know it), works with it, and works with insecure.
func TestRESTConfig_tlsVerification(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`)
	}))
	defer srv.Close()
	once := func(cfg Config) error {
		c, err := NewClient(context.Background(), cfg)
		if err != nil {
			return err
		}
		_, err = c.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "x")
		return err
	}
	// A TLS handshake timeout (10 s) says nothing about verification: it
	// happened once in CI on a machine loaded by parallel test packages.
	// Asked again, up to three times.
	get := func(cfg Config) error {
		err := once(cfg)
		for attempt := 1; attempt < 3; attempt++ {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				break
			}
			t.Logf("attempt %d timed out, asking again: %v", attempt, err)
			err = once(cfg)
		}
		return err
	}

	err := get(Config{Host: srv.URL, Token: "t"})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without a CA: want a certificate error, got %v", err)
	}
	if d := Diagnostics(err, "get", ObjectRef{}); len(d) != 1 || d[0].Summary() != "Kubernetes API server certificate not trusted" {
		t.Errorf("certificate error diagnostic: %v", d)
	}
	if err := get(Config{Host: srv.URL, Token: "t", ClusterCACertificate: serverCAPEM(srv)}); err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	if err := get(Config{Host: srv.URL, Token: "t", Insecure: true}); err != nil {
		t.Fatalf("with insecure: %v", err)
	}
	// Insecure with a CA: the CA is dropped rather than failing.
	if err := get(Config{Host: srv.URL, Token: "t", Insecure: true, ClusterCACertificate: serverCAPEM(srv)}); err != nil {
		t.Fatalf("with insecure and a CA: %v", err)
	}
}

// TestRESTConfig_execPlugin runs a tiny credential plugin and checks the
// token it prints is what the server receives, for both API versions.
func TestRESTConfig_execPlugin(t *testing.T) {
	plugin := writeFile(t, "plugin.sh", `#!/bin/sh
# Prints an ExecCredential of the requested version with the token from the env.
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"%s"}}' "$API_VERSION" "$PLUGIN_TOKEN"
`, 0o755)

	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"}}`)
	}))
	defer srv.Close()

	for _, version := range []string{ExecAPIVersionV1, ExecAPIVersionV1beta1} {
		t.Run(version, func(t *testing.T) {
			token := "exec-token-" + version[strings.LastIndex(version, "/")+1:]
			c, err := NewClient(context.Background(), Config{Host: srv.URL, AllowCredentialsOverHTTP: true, Exec: &ExecConfig{
				APIVersion: version,
				Command:    plugin,
				Env:        map[string]string{"API_VERSION": version, "PLUGIN_TOKEN": token},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "default", "x"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := seen[len(seen)-1]; got != "Bearer "+token {
				t.Errorf("Authorization = %q, want the plugin's token", got)
			}
		})
	}
}

func TestRESTConfig_gke(t *testing.T) {
	var auth string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	var asked string
	cfg := Config{
		GKECluster: "projects/p/locations/l/clusters/c",
		// Ignored: GKE replaces the kubeconfig.
		ConfigPaths: []string{"/does/not/exist"},
		GKECredentials: func(_ context.Context, cluster string) (*ClusterCredentials, error) {
			asked = cluster
			return &ClusterCredentials{
				Host:                 u.Host, // a bare address, as the container API reports it
				ClusterCACertificate: base64.StdEncoding.EncodeToString([]byte(serverCAPEM(srv))),
				TokenSource:          oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "gke-token"}),
			}, nil
		},
	}
	c, err := NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "default"); err != nil {
		t.Fatal(err)
	}
	if asked != cfg.GKECluster || auth != "Bearer gke-token" {
		t.Errorf("asked for %q, server saw Authorization %q", asked, auth)
	}

	// An explicit token wins over GKE's token source.
	cfg.Token = "explicit"
	c, err = NewClient(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "default"); err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer explicit" {
		t.Errorf("Authorization = %q, want the explicit token", auth)
	}

	cfg.GKECredentials = func(context.Context, string) (*ClusterCredentials, error) {
		return nil, errors.New("permission denied")
	}
	if _, err := cfg.RESTConfig(context.Background()); err == nil || !strings.Contains(err.Error(), "projects/p/locations/l/clusters/c") {
		t.Errorf("GKE failure: want an error naming the cluster, got %v", err)
	}
}

func TestRESTConfig_proxy(t *testing.T) {
	// The proxy answers for the (unresolvable) API host itself, so the test
	// proves the request went through it.
	var target string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target = r.URL.String()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`)
	}))
	defer proxy.Close()
	c, err := NewClient(context.Background(), Config{Host: "http://kube.invalid:6443", Token: "t", AllowCredentialsOverHTTP: true, ProxyURL: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "default"); err != nil {
		t.Fatal(err)
	}
	if target != "http://kube.invalid:6443/api/v1/namespaces/default" {
		t.Errorf("proxy saw %q", target)
	}
}

// restConfigView flattens the parts of a rest.Config the precedence tests
// compare.
type restConfigView struct {
	Host, BearerToken, CA, Cert, Key, ServerName, Proxy, UserAgent string
	ExecCommand, ExecAPIVersion, ExecEnv                           string
	Insecure                                                       bool
	QPS                                                            float32
	Burst                                                          int
	Timeout                                                        time.Duration
}

func view(t *testing.T, r *rest.Config) *restConfigView {
	t.Helper()
	v := &restConfigView{
		Host: r.Host, BearerToken: r.BearerToken, CA: string(r.CAData), Cert: string(r.CertData), Key: string(r.KeyData),
		ServerName: r.ServerName, UserAgent: r.UserAgent, Insecure: r.Insecure, QPS: r.QPS, Burst: r.Burst, Timeout: r.Timeout,
	}
	if r.Proxy != nil {
		u, err := r.Proxy(&http.Request{URL: &url.URL{Scheme: "https", Host: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		if u != nil {
			v.Proxy = u.String()
		}
	}
	if e := r.ExecProvider; e != nil {
		v.ExecCommand, v.ExecAPIVersion = e.Command, e.APIVersion
		var env []string
		for _, kv := range e.Env {
			env = append(env, kv.Name+"="+kv.Value)
		}
		v.ExecEnv = strings.Join(env, ",")
	}
	return v
}

func want(t *testing.T, what, got, wantValue string) {
	t.Helper()
	if got != wantValue {
		t.Errorf("%s = %q, want %q", what, got, wantValue)
	}
}

func TestRESTConfig_insecureWithCAWarns(t *testing.T) {
	ca, _ := selfSignedPEM(t, "ca")
	var logs bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &logs)
	rc, err := Config{Host: "https://h.example", Token: "t", ClusterCACertificate: ca, Insecure: true}.RESTConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rc.Insecure || len(rc.CAData) != 0 {
		t.Errorf("insecure %v with CA %d bytes; want insecure and the CA dropped", rc.Insecure, len(rc.CAData))
	}
	if !strings.Contains(logs.String(), `"@level":"warn"`) || !strings.Contains(logs.String(), "CA certificate is ignored") {
		t.Errorf("no warning logged: %s", logs.String())
	}
}

func TestWarningHandlerLogsServerWarnings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Warning", `299 - "agents.x-k8s.io/v1alpha1 Sandbox is deprecated; use v1beta1"`)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`)
	}))
	defer srv.Close()
	var logs bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &logs)
	c, err := NewClient(ctx, Config{Host: srv.URL, Token: "t", AllowCredentialsOverHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "default"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "is deprecated; use v1beta1") {
		t.Errorf("server warning not logged: %s", logs.String())
	}
}
