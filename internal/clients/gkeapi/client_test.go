package gkeapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/api/container/v1"
)

// authServer answers cluster GETs and records the Authorization header.
func authServer(t *testing.T) (*httptest.Server, *atomic.Value) {
	t.Helper()
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		writeJSON(w, http.StatusOK, &container.Cluster{Name: "c"})
	}))
	t.Cleanup(srv.Close)
	return srv, &auth
}

func getCluster(t *testing.T, c *Client) {
	t.Helper()
	if _, err := c.GetCluster(context.Background(), "projects/p/locations/l/clusters/c"); err != nil {
		t.Fatalf("GetCluster: %v", err)
	}
}

func TestAccessTokenIsSentAsBearerWithUserAgent(t *testing.T) {
	var mu sync.Mutex
	var gotUA, gotPath, gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotUA, gotPath, gotAuth = r.UserAgent(), r.URL.Path, r.Header.Get("Authorization")
		mu.Unlock()
		writeJSON(w, http.StatusOK, &container.Cluster{Name: "c"})
	}))
	defer srv.Close()

	c := newTestClient(t, srv.URL)
	getCluster(t, c)
	mu.Lock()
	defer mu.Unlock()
	if gotAuth != "Bearer test-token" {
		t.Errorf("Authorization = %q, want the access token as bearer", gotAuth)
	}
	if gotPath != "/v1/projects/p/locations/l/clusters/c" {
		t.Errorf("path = %q", gotPath)
	}
	if !strings.Contains(gotUA, "terraform-provider-agentsandbox/test") {
		t.Errorf("User-Agent = %q, want it to carry Config.UserAgent", gotUA)
	}
	if c.CredentialSource != "access_token" || c.Project != "p" {
		t.Errorf("source=%q project=%q", c.CredentialSource, c.Project)
	}
	if c.RequestCount() != 1 {
		t.Errorf("RequestCount = %d, want 1", c.RequestCount())
	}
}

func TestAccessTokenWinsOverCredentialsAndADC(t *testing.T) {
	srv, auth := authServer(t)
	// The credentials value is a path that does not exist: with an access
	// token it must not even be looked at.
	c, err := NewService(context.Background(), Config{
		AccessToken:              "tok-wins",
		Credentials:              "/nonexistent/credentials.json",
		Endpoint:                 srv.URL,
		AllowCredentialsOverHTTP: true,
	}, fast...)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	getCluster(t, c)
	if got := auth.Load(); got != "Bearer tok-wins" {
		t.Errorf("Authorization = %v", got)
	}
}

func TestInlineJSONCredentials(t *testing.T) {
	tokens := newTokenServer(t, "sa-token")
	srv, auth := authServer(t)

	c, err := NewService(context.Background(), Config{
		Credentials:              "  \n" + string(serviceAccountJSON(tokens.URL, "sa-project")),
		Endpoint:                 srv.URL,
		AllowCredentialsOverHTTP: true,
	}, fast...)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	if tokens.calls.Load() != 0 {
		t.Errorf("NewService fetched a token; it must stay lazy")
	}
	getCluster(t, c)
	getCluster(t, c)
	if got := auth.Load(); got != "Bearer sa-token" {
		t.Errorf("Authorization = %v, want the token minted from the service-account key", got)
	}
	if n := tokens.calls.Load(); n != 1 {
		t.Errorf("token endpoint called %d times, want 1 (tokens are reused)", n)
	}
	scopes, _ := tokens.scopes.Load().(string)
	for _, s := range Scopes {
		if !strings.Contains(scopes, s) {
			t.Errorf("JWT scope %q lacks %s", scopes, s)
		}
	}
	if c.Project != "sa-project" || c.CredentialSource != "credentials JSON" {
		t.Errorf("project=%q source=%q; want the project of the key when Config.Project is empty", c.Project, c.CredentialSource)
	}
}

func TestCredentialsFilePath(t *testing.T) {
	tokens := newTokenServer(t, "file-token")
	srv, auth := authServer(t)
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, serviceAccountJSON(tokens.URL, "sa-project"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := NewService(context.Background(), Config{Project: "explicit", Credentials: path, Endpoint: srv.URL, AllowCredentialsOverHTTP: true}, fast...)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	getCluster(t, c)
	if got := auth.Load(); got != "Bearer file-token" {
		t.Errorf("Authorization = %v", got)
	}
	if c.Project != "explicit" || c.CredentialSource != "credentials file" {
		t.Errorf("project=%q source=%q; Config.Project must win", c.Project, c.CredentialSource)
	}
}

func TestApplicationDefaultCredentials(t *testing.T) {
	tokens := newTokenServer(t, "adc-token")
	srv, auth := authServer(t)
	path := filepath.Join(t.TempDir(), "adc.json")
	if err := os.WriteFile(path, serviceAccountJSON(tokens.URL, "adc-project"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)

	c, err := NewService(context.Background(), Config{Endpoint: srv.URL, AllowCredentialsOverHTTP: true}, fast...)
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	getCluster(t, c)
	if got := auth.Load(); got != "Bearer adc-token" {
		t.Errorf("Authorization = %v", got)
	}
	if c.CredentialSource != "application default credentials" || c.Project != "adc-project" {
		t.Errorf("source=%q project=%q", c.CredentialSource, c.Project)
	}
}

func TestCredentialErrorsDoNotEchoTheValue(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "not-json.txt")
	if err := os.WriteFile(notJSON, []byte("hunter2-file-content"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, value, want string
	}{
		{"missing path", "/no/such/dir/s3cr3t-key.json", "no such file exists"},
		{"token pasted as credentials", "ya29.s3cr3t-token-value", "no such file exists"},
		{"malformed inline JSON", `{"type": "service_account", s3cr3t`, "not valid JSON"},
		{"unsupported type", `{"type":"weird_kind","private_key":"s3cr3t"}`, "supported types are service_account"},
		{"file that is not JSON", notJSON, "not a JSON document"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewService(context.Background(), Config{Credentials: tc.value, Endpoint: "http://127.0.0.1:9", AllowCredentialsOverHTTP: true}, fast...)
			if err == nil {
				t.Fatal("expected an error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			for _, secret := range []string{"s3cr3t", "hunter2", notJSON} {
				if strings.Contains(msg, secret) {
					t.Errorf("error echoes %q: %s", secret, msg)
				}
			}
		})
	}
}

func TestEndpointOverrideWithPathPrefix(t *testing.T) {
	var gotPath atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath.Store(r.URL.Path)
		writeJSON(w, http.StatusOK, &container.Cluster{Name: "c"})
	}))
	defer srv.Close()
	// A custom endpoint written the way other providers take it, with the
	// API version, must not end up as /v1/v1/.
	c := newTestClient(t, srv.URL+"/gke-proxy/v1/")
	getCluster(t, c)
	if got := gotPath.Load(); got != "/gke-proxy/v1/projects/p/locations/l/clusters/c" {
		t.Errorf("path = %v", got)
	}
}

func TestNormalizeEndpoint(t *testing.T) {
	cases := map[string]string{
		"":                                     "",
		"http://127.0.0.1:8080":                "http://127.0.0.1:8080/",
		"http://127.0.0.1:8080/":               "http://127.0.0.1:8080/",
		"https://container.googleapis.com/v1/": "https://container.googleapis.com/",
		"container.example.com":                "https://container.example.com/",
		"https://psc.example.com/gke":          "https://psc.example.com/gke/",
	}
	for in, want := range cases {
		got, err := normalizeEndpoint(in)
		if err != nil || got != want {
			t.Errorf("normalizeEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://x/", "http://", "https://h/?q=1", "https://user:pw@h/"} {
		if _, err := normalizeEndpoint(bad); err == nil {
			t.Errorf("normalizeEndpoint(%q) accepted", bad)
		}
	}
}
