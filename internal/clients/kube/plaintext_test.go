package kube

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// wireRecorder is a loopback TCP listener that records every byte any
// client sends it. It answers what looks like an HTTP request with a small
// JSON object (so that a request that does get through succeeds, which the
// positive controls rely on) and hangs up on anything else (a TLS
// ClientHello).
type wireRecorder struct {
	ln    net.Listener
	mu    sync.Mutex
	bytes bytes.Buffer
	conns int
}

func newWireRecorder(t *testing.T) *wireRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &wireRecorder{ln: ln}
	go w.serve()
	t.Cleanup(func() { _ = ln.Close() })
	return w
}

func (w *wireRecorder) addr() string { return w.ln.Addr().String() }

func (w *wireRecorder) serve() {
	for {
		c, err := w.ln.Accept()
		if err != nil {
			return
		}
		w.mu.Lock()
		w.conns++
		w.mu.Unlock()
		go w.handle(c)
	}
}

func (w *wireRecorder) handle(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	var got []byte
	for {
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		w.mu.Lock()
		w.bytes.Write(buf[:n])
		w.mu.Unlock()
		if bytes.Contains(got, []byte("\r\n\r\n")) && bytes.HasPrefix(got, []byte("GET ")) {
			body := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			return
		}
		if err != nil || (len(got) > 0 && got[0] == 0x16) { // 0x16: a TLS handshake record
			return
		}
	}
}

func (w *wireRecorder) seen() (string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bytes.String(), w.conns
}

// secretsOnWire fails the test if any of the secrets, or an Authorization
// header, crossed the wire.
func (w *wireRecorder) assertNothingSecret(t *testing.T, secrets ...string) {
	t.Helper()
	wire, _ := w.seen()
	if strings.Contains(strings.ToLower(wire), "authorization:") {
		t.Errorf("an Authorization header was sent in clear text:\n%q", wire)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(wire, s) {
			t.Errorf("secret %q was sent in clear text", s)
		}
	}
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// tryGet builds a client from cfg and makes one request. It returns the
// configuration error or the request error.
func tryGet(t *testing.T, cfg Config) error {
	t.Helper()
	c, err := NewClient(context.Background(), cfg)
	if err != nil {
		return err
	}
	// client-go itself retries a GET that ends in EOF (the TLS cases below
	// end that way) until the context ends; 2 s is plenty for a refusal.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = c.Get(ctx, namespacesGVR, "", "default")
	return err
}

// TestNoCredentialsOverPlainHTTP proves, on the wire, that no credential
// form reaches a plain-HTTP server: the provider refuses at configuration
// with an error that names the credential and the fix, and the listener
// receives no Authorization header, token, password, certificate or key.
func TestNoCredentialsOverPlainHTTP(t *testing.T) {
	fastRetries(t)
	certPEM, keyPEM := selfSignedPEM(t, "client")
	certDER, _ := pem.Decode([]byte(certPEM))
	plugin := writeFile(t, "plugin.sh", `#!/bin/sh
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-secret-token"}}'
`, 0o755)
	tokenFile := writeFile(t, "token", "file-secret-token", 0o600)

	kubeconfig := func(server, user string) string {
		return writeFile(t, "config", fmt.Sprintf(`apiVersion: v1
kind: Config
current-context: c
clusters:
- name: c
  cluster: {server: %q}
users:
- name: u
  user:
%s
contexts:
- name: c
  context: {cluster: c, user: u}
`, server, user), 0o600)
	}

	tests := []struct {
		name    string
		cfg     func(addr string) Config
		secrets []string
		// want is in the configuration error; nil means the request may be
		// attempted (TLS to a plain listener) and must fail without leaking.
		want []string
		// anonymous: the request may succeed, without any credential.
		anonymous bool
	}{
		{"explicit token, http host", func(a string) Config {
			return Config{Host: "http://" + a, Token: "explicit-secret-token"}
		}, []string{"explicit-secret-token"}, []string{"a bearer token", "http://127.0.0.1:", "kubernetes.host", "allow_credentials_over_http", "insecure = true does not"}, false},
		{"explicit token, host without scheme means https", func(a string) Config {
			return Config{Host: a, Token: "bare-secret-token", ClusterCACertificate: certPEM}
		}, []string{"bare-secret-token"}, nil, false},
		{"explicit token, host without scheme and no CA", func(a string) Config {
			// client-go alone picks http here: the reported bug.
			return Config{Host: a, Token: "noca-secret-token"}
		}, []string{"noca-secret-token"}, nil, false},
		{"exec plugin", func(a string) Config {
			return Config{Host: "http://" + a, Exec: &ExecConfig{APIVersion: ExecAPIVersionV1, Command: plugin}}
		}, []string{"exec-secret-token"}, []string{"exec credential plugin", plugin}, false},
		{"client certificate", func(a string) Config {
			return Config{Host: "http://" + a, ClientCertificate: certPEM, ClientKey: keyPEM}
		}, []string{string(certDER.Bytes), keyPEM, base64.StdEncoding.EncodeToString(certDER.Bytes)}, []string{"client certificate"}, false},
		{"client certificate, host without scheme", func(a string) Config {
			return Config{Host: a, ClientCertificate: certPEM, ClientKey: keyPEM, Insecure: true}
		}, []string{string(certDER.Bytes), keyPEM}, nil, false},
		// clientcmd reads a kubeconfig user only for a TLS server, so with
		// an http:// server these go out anonymous (and the server says 401).
		{"kubeconfig token, http server", func(a string) Config {
			return Config{ConfigPaths: []string{kubeconfig("http://"+a, "    token: kubeconfig-secret-token")}}
		}, []string{"kubeconfig-secret-token"}, nil, true},
		{"kubeconfig token file, http server", func(a string) Config {
			return Config{ConfigPaths: []string{kubeconfig("http://"+a, "    tokenFile: "+tokenFile)}}
		}, []string{"file-secret-token"}, nil, true},
		{"kubeconfig basic auth, http server", func(a string) Config {
			return Config{ConfigPaths: []string{kubeconfig("http://"+a, "    username: admin\n    password: basic-secret-password")}}
		}, []string{"basic-secret-password", base64.StdEncoding.EncodeToString([]byte("admin:basic-secret-password"))}, nil, true},
		{"kubeconfig exec plugin, http server", func(a string) Config {
			return Config{ConfigPaths: []string{kubeconfig("http://"+a,
				"    exec: {apiVersion: client.authentication.k8s.io/v1, command: "+plugin+", interactiveMode: Never}")}}
		}, []string{"exec-secret-token"}, nil, true},
		// A server without a scheme means https: the credentials are kept
		// (not silently dropped) and go only into TLS.
		{"kubeconfig token, server without scheme", func(a string) Config {
			return Config{ConfigPaths: []string{kubeconfig(a, "    token: schemeless-secret-token")}}
		}, []string{"schemeless-secret-token"}, nil, false},
		// An explicit token over a kubeconfig whose server is http://.
		{"explicit token, kubeconfig http server", func(a string) Config {
			return Config{ConfigPaths: []string{kubeconfig("http://"+a, "    username: x")}, Token: "layered-secret-token"}
		}, []string{"layered-secret-token"}, []string{"a bearer token", `the server of context "c"`}, false},
		{"GKE token", func(a string) Config {
			return Config{GKECluster: "projects/p/locations/l/clusters/c", GKECredentials: func(context.Context, string) (*ClusterCredentials, error) {
				return &ClusterCredentials{Host: "http://" + a, TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "gke-secret-token"})}, nil
			}}
		}, []string{"gke-secret-token"}, []string{"Google access token", "projects/p/locations/l/clusters/c"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWireRecorder(t)
			err := tryGet(t, tt.cfg(w.addr()))
			if err == nil && !tt.anonymous {
				t.Fatal("the request succeeded against a plain-HTTP listener")
			}
			if tt.want != nil {
				var pe *PlainHTTPError
				if !errors.As(err, &pe) {
					t.Fatalf("want the refusal at configuration, got %v", err)
				}
				for _, s := range tt.want {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error does not say %q:\n%v", s, err)
					}
				}
				for _, s := range tt.secrets {
					if strings.Contains(err.Error(), s) {
						t.Errorf("the error shows the secret %q", s)
					}
				}
				if _, conns := w.seen(); conns != 0 {
					t.Errorf("%d connections were made although the configuration was refused", conns)
				}
			}
			w.assertNothingSecret(t, tt.secrets...)
		})
	}
}

// TestCredentialsOverPlainHTTP_optIn is the positive control of the test
// above (the recorder does see a token when one is sent) and checks that
// the explicit opt-in, and only it, allows clear text.
func TestCredentialsOverPlainHTTP_optIn(t *testing.T) {
	w := newWireRecorder(t)
	if err := tryGet(t, Config{Host: "http://" + w.addr(), Token: "opted-in-token", AllowCredentialsOverHTTP: true}); err != nil {
		t.Fatal(err)
	}
	if wire, _ := w.seen(); !strings.Contains(wire, "Authorization: Bearer opted-in-token") {
		t.Fatalf("with the opt-in the token should be sent; the recorder saw:\n%q", wire)
	}

	// insecure = true is not the opt-in.
	w = newWireRecorder(t)
	var pe *PlainHTTPError
	if err := tryGet(t, Config{Host: "http://" + w.addr(), Token: "insecure-token", Insecure: true}); !errors.As(err, &pe) {
		t.Fatalf("insecure = true must not allow clear text: %v", err)
	}
	w.assertNothingSecret(t, "insecure-token")

	// Without any credential an http:// server is fine (kubectl proxy).
	w = newWireRecorder(t)
	if err := tryGet(t, Config{Host: "http://" + w.addr()}); err != nil {
		t.Fatalf("no credentials over http: %v", err)
	}
	w.assertNothingSecret(t)
}

// TestPlainHTTPGuard_redirect covers what the configuration check cannot
// see: an https server that redirects to an http:// URL. client-go's bearer
// wrapper adds the token to the redirected request too; the guard under it
// stops the request before it is sent.
func TestPlainHTTPGuard_redirect(t *testing.T) {
	fastRetries(t)
	w := newWireRecorder(t)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "http://"+w.addr()+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	err := tryGet(t, Config{Host: srv.URL, Token: "redirected-secret-token", ClusterCACertificate: serverCAPEM(srv)})
	if err == nil || !strings.Contains(err.Error(), "refusing to send credentials over plain HTTP") {
		t.Fatalf("want the guard's refusal, got %v", err)
	}
	w.assertNothingSecret(t, "redirected-secret-token")
	if _, conns := w.seen(); conns != 0 {
		t.Errorf("%d connections reached the plain-HTTP listener", conns)
	}
}

// TestPlainHTTPGuard_unit checks the guard alone, including that it never
// touches https requests or requests without credentials.
func TestPlainHTTPGuard_unit(t *testing.T) {
	var sent int
	next := roundTripFunc(func(*http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(""))}, nil
	})
	guard := plainHTTPGuard(false)(next)
	for _, tc := range []struct {
		url, auth string
		ok        bool
	}{
		{"https://h/api", "Bearer x", true},
		{"http://h/api", "", true},
		{"http://h/api", "Bearer x", false},
		{"HTTP://h/api", "Basic eA==", false},
	} {
		req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		before := sent
		resp, err := guard.RoundTrip(req)
		if resp != nil {
			_ = resp.Body.Close()
		}
		if (err == nil) != tc.ok || (sent > before) != tc.ok {
			t.Errorf("%s with %q: err %v, sent %v; want allowed=%v", tc.url, tc.auth, err, sent > before, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), tc.auth) {
			t.Errorf("the error shows the credential: %v", err)
		}
	}
	if _, wrapped := plainHTTPGuard(true)(next).(*plainHTTPGuardTransport); wrapped {
		t.Error("with the opt-in the guard must not wrap the transport")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
