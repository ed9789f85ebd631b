package gkeapi

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain makes sure no test can reach anything but 127.0.0.1:
//   - every HTTP request through http.DefaultTransport (which the clients
//     and the oauth2 token fetches use) is refused unless it is loopback;
//   - Application Default Credentials resolve to a fake service account
//     whose token endpoint is a closed local port, and the gcloud config and
//     metadata server lookups are pointed at nothing real.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gke-test-")
	if err != nil {
		panic(err)
	}
	adc := filepath.Join(dir, "adc.json")
	if err := os.WriteFile(adc, serviceAccountJSON("http://127.0.0.1:9/token", "adc-project"), 0o600); err != nil {
		panic(err)
	}
	for k, v := range map[string]string{
		"GOOGLE_APPLICATION_CREDENTIALS":    adc,
		"HOME":                              dir,
		"CLOUDSDK_CONFIG":                   dir,
		"GCE_METADATA_HOST":                 "127.0.0.1:9",
		"GOOGLE_API_USE_CLIENT_CERTIFICATE": "false",
		"GOOGLE_API_USE_MTLS_ENDPOINT":      "never",
		"HTTPS_PROXY":                       "",
		"HTTP_PROXY":                        "",
	} {
		os.Setenv(k, v)
	}
	http.DefaultTransport = loopbackOnly{next: http.DefaultTransport}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type loopbackOnly struct{ next http.RoundTripper }

func (l loopbackOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if !isLoopback(r.URL.Hostname()) {
		return nil, fmt.Errorf("test tried to reach non-loopback host %q", r.URL.Host)
	}
	return l.next.RoundTrip(r)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// fast makes every backoff of a test client a few milliseconds.
var fast = []Option{
	WithRetry(4, Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}),
	WithBusyBackoff(Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond}),
	WithPollBackoff(Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond}),
}

// newTestClient builds a client with an access token against srv.
func newTestClient(t *testing.T, endpoint string, opts ...Option) *Client {
	t.Helper()
	c, err := NewService(context.Background(), Config{
		Project:     "p",
		AccessToken: "test-token",
		Endpoint:    endpoint,
		UserAgent:   "terraform-provider-agentsandbox/test",
		// httptest servers speak plain HTTP on loopback.
		AllowCredentialsOverHTTP: true,
	}, append(append([]Option{}, fast...), opts...)...)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	return c
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeAPIError answers in Google's JSON error format.
func writeAPIError(w http.ResponseWriter, code int, status, message string, details ...any) {
	e := map[string]any{"code": code, "message": message, "status": status}
	if len(details) > 0 {
		e["details"] = details
	}
	writeJSON(w, code, map[string]any{"error": e})
}

// apiError returns the error a real call gets for the given answer.
func apiError(t *testing.T, code int, status, message string, details ...any) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, code, status, message, details...)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, WithRetry(1, Backoff{}))
	_, err := c.GetCluster(context.Background(), "projects/p/locations/l/clusters/c")
	if err == nil {
		t.Fatal("expected an error")
	}
	return err
}

var (
	saKeyOnce sync.Once
	saKey     *rsa.PrivateKey
)

// testKey is an RSA key generated once per test binary.
func testKey() *rsa.PrivateKey {
	saKeyOnce.Do(func() {
		var err error
		if saKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return saKey
}

// serviceAccountJSON is a fake service-account key file whose token_uri is
// tokenURL.
func serviceAccountJSON(tokenURL, project string) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(testKey())
	if err != nil {
		panic(err)
	}
	doc := map[string]string{
		"type":                        "service_account",
		"project_id":                  project,
		"private_key_id":              "kid-1",
		"private_key":                 string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":                "tf@" + project + ".iam.gserviceaccount.com",
		"client_id":                   "1234567890",
		"auth_uri":                    "http://127.0.0.1:9/auth",
		"token_uri":                   tokenURL,
		"auth_provider_x509_cert_url": "http://127.0.0.1:9/certs",
	}
	b, _ := json.Marshal(doc)
	return b
}

// tokenServer is an OAuth2 token endpoint that accepts JWT-bearer grants
// signed with testKey and hands out token.
type tokenServer struct {
	*httptest.Server
	token  string
	calls  atomic.Int32
	scopes atomic.Value // string: the scope claim of the last grant
}

func newTokenServer(t *testing.T, token string) *tokenServer {
	t.Helper()
	ts := &tokenServer{token: token}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.calls.Add(1)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		if g := r.PostForm.Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type", "error_description": g})
			return
		}
		claims, err := verifyJWT(r.PostForm.Get("assertion"), &testKey().PublicKey)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": err.Error()})
			return
		}
		ts.scopes.Store(fmt.Sprint(claims["scope"]))
		writeJSON(w, http.StatusOK, map[string]any{"access_token": ts.token, "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(ts.Close)
	return ts
}

// verifyJWT checks an RS256 JWT's signature and returns its claims.
func verifyJWT(tok string, pub *rsa.PublicKey) (map[string]any, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("assertion is not a JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		return nil, fmt.Errorf("bad signature: %w", err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	return claims, json.Unmarshal(payload, &claims)
}

// testCACert returns a self-signed CA certificate as PEM and DER.
func testCACert(t *testing.T) (string, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test-cluster-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), der
}
