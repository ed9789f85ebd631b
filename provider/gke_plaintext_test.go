package provider

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestProvider_gkeTokenNeverOverPlainHTTP proves on the wire that the
// Google access token does not go to an http:// container API endpoint
// taken from the environment (which validate cannot see): the read fails
// when the GKE client is built, saying why and what to do, and a loopback
// listener at that endpoint receives no request at all. The same listener
// receives the token once allow_credentials_over_http = true.
func TestProvider_gkeTokenNeverOverPlainHTTP(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	listener := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, `{"error":{"code":404,"message":"listener","status":"NOT_FOUND"}}`, http.StatusNotFound)
	}))
	t.Cleanup(listener.Close)
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), auth...)
	}
	env := map[string]string{
		"GOOGLE_CONTAINER_CUSTOM_ENDPOINT": listener.URL + "/",
		"GOOGLE_OAUTH_ACCESS_TOKEN":        "secret-google-token",
	}
	factories := map[string]func() (tfprotov6.ProviderServer, error){
		"agentsandbox": providerserver.NewProtocol6WithError(&agentSandboxProvider{
			version:   "test",
			lookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		}),
	}
	const read = `
data "agentsandbox_gke_cluster" "c" {
  project  = "my-project"
  location = "us-central1"
  name     = "agents"
}
`
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config:      `provider "agentsandbox" {}` + read,
			ExpectError: regexp.MustCompile(`(?s)refusing to send the Google access token to\s+http://127\.0\.0\.1:\d+/ over\s+plain\s+HTTP.*allow_credentials_over_http\s+=\s+true`),
		}},
	})
	if got := seen(); len(got) != 0 {
		t.Fatalf("the http listener received %d requests without the opt-in (Authorization %q)", len(got), got)
	}

	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config:      `provider "agentsandbox" {` + "\n  gke {\n    allow_credentials_over_http = true\n  }\n}\n" + read,
			ExpectError: regexp.MustCompile(`listener`),
		}},
	})
	if got := seen(); len(got) == 0 || got[0] != "Bearer secret-google-token" {
		t.Errorf("with the opt-in the listener saw %q, want the bearer token (else the first half proves nothing)", got)
	}
}
