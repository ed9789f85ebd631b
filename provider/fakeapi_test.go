package provider

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeAPIServer is the smallest Kubernetes API server the provider's own
// tests need: discovery, /version and one RuntimeClass, over TLS signed by a
// test CA, optionally demanding a bearer token and a client certificate. It
// records every request so tests can prove what was (not) sent.
type fakeAPIServer struct {
	*httptest.Server
	CAPEM      string
	ClientCert string // PEM, signed by the CA, for client-certificate tests
	ClientKey  string // PEM

	wantToken string
	tokens    map[string]bool
	requests  atomic.Int64
	mu        sync.Mutex
	paths     []string
}

func newFakeAPIServer(t *testing.T, wantToken string) *fakeAPIServer {
	t.Helper()
	ca, caKey := newCA(t)
	f := &fakeAPIServer{wantToken: wantToken}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	serverCert := issue(t, ca, caKey, x509.ExtKeyUsageServerAuth, "127.0.0.1")
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	f.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	f.StartTLS()
	t.Cleanup(f.Close)
	f.CAPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}))
	clientCert := issue(t, ca, caKey, x509.ExtKeyUsageClientAuth, "")
	f.ClientCert = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: clientCert.Certificate[0]}))
	keyDER, err := x509.MarshalECPrivateKey(clientCert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	f.ClientKey = string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	return f
}

func (f *fakeAPIServer) Requests() int64 { return f.requests.Load() }

func (f *fakeAPIServer) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.mu.Unlock()
	if f.denied(r.Header.Get("Authorization")) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Unauthorized", "code": 401, "message": "Unauthorized"})
		return
	}
	switch r.URL.Path {
	case "/version":
		writeJSON(w, 200, map[string]any{"major": "1", "minor": "37", "gitVersion": "v1.37.2-fake"})
	case "/api":
		writeJSON(w, 200, map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
	case "/apis":
		group := func(name string, versions ...string) map[string]any {
			var vs []map[string]any
			for _, v := range versions {
				vs = append(vs, map[string]any{"groupVersion": name + "/" + v, "version": v})
			}
			return map[string]any{"name": name, "versions": vs, "preferredVersion": vs[0]}
		}
		writeJSON(w, 200, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{
			group("apps", "v1"),
			group("agents.x-k8s.io", "v1beta1", "v1alpha1"),
			group("extensions.agents.x-k8s.io", "v1beta1"),
			group("node.k8s.io", "v1"),
		}})
	case "/apis/node.k8s.io/v1/runtimeclasses/gvisor":
		writeJSON(w, 200, map[string]any{"kind": "RuntimeClass", "apiVersion": "node.k8s.io/v1", "metadata": map[string]any{"name": "gvisor"}, "handler": "runsc"})
	default:
		writeJSON(w, 404, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": r.URL.Path + " not found"})
	}
}

// acceptTokens makes the server accept any of these bearer tokens.
func (f *fakeAPIServer) acceptTokens(tokens ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tokens == nil {
		f.tokens = map[string]bool{}
	}
	for _, tok := range tokens {
		f.tokens[tok] = true
	}
}

func (f *fakeAPIServer) denied(authorization string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	tok, hasBearer := strings.CutPrefix(authorization, "Bearer ")
	switch {
	case f.wantToken != "":
		return !hasBearer || tok != f.wantToken
	case len(f.tokens) > 0:
		return !hasBearer || !f.tokens[tok]
	}
	return false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func newCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fake-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

func issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage, ip string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "fake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if ip != "" {
		tmpl.IPAddresses = []net.IP{net.ParseIP(ip)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
