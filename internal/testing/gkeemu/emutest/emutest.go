// Package emutest is what tests that talk to the GKE emulator share: a
// TestMain guard that keeps every request on 127.0.0.1 and away from
// Google's credentials machinery, fast GKE client backoffs, and an emulator
// with one seeded cluster per test.
package emutest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/apidoc"
)

// Seeded cluster of every Env.
const (
	Project  = "emu-project"
	Location = "us-central1"
	Cluster  = "emu-cluster"
)

// ClusterName is the full resource name of the seeded cluster.
const ClusterName = "projects/" + Project + "/locations/" + Location + "/clusters/" + Cluster

// Isolate makes the process unable to reach anything but loopback over
// http.DefaultTransport (which the GKE client and oauth2 token fetches use)
// and points Application Default Credentials, the gcloud configuration and
// the metadata server at nothing real, so that a test which forgets to
// configure credentials fails instead of reaching Google. Call it from
// TestMain before m.Run. It returns a cleanup function.
func Isolate() func() {
	dir, err := os.MkdirTemp("", "gkeemu-test-")
	if err != nil {
		panic(err)
	}
	for k, v := range map[string]string{
		// A missing file: ADC fails fast instead of trying the metadata server.
		"GOOGLE_APPLICATION_CREDENTIALS":    filepath.Join(dir, "no-adc.json"),
		"CLOUDSDK_CONFIG":                   dir,
		"GCE_METADATA_HOST":                 "127.0.0.1:9",
		"GCE_METADATA_IP":                   "127.0.0.1:9",
		"NO_GCE_CHECK":                      "True",
		"GOOGLE_API_USE_CLIENT_CERTIFICATE": "false",
		"GOOGLE_API_USE_MTLS_ENDPOINT":      "never",
		"HTTPS_PROXY":                       "",
		"HTTP_PROXY":                        "",
		"GOOGLE_CONTAINER_CUSTOM_ENDPOINT":  "",
		"GOOGLE_CREDENTIALS":                "",
		"GOOGLE_OAUTH_ACCESS_TOKEN":         "",
	} {
		os.Setenv(k, v)
	}
	http.DefaultTransport = loopbackOnly{next: http.DefaultTransport}
	return func() { os.RemoveAll(dir) }
}

type loopbackOnly struct{ next http.RoundTripper }

func (l loopbackOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	host := r.URL.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("test tried to reach non-loopback host %q (only 127.0.0.1 is allowed in tests)", r.URL.Host)
	}
	return l.next.RoundTrip(r)
}

// FastGKEClient shortens the GKE client's default backoffs so that tests
// running the provider in-process poll operations every few tens of
// milliseconds instead of every second. Call it from TestMain.
func FastGKEClient() {
	gkeapi.DefaultRetryBackoff = gkeapi.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}
	gkeapi.DefaultBusyBackoff = gkeapi.Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond}
	gkeapi.DefaultPollBackoff = gkeapi.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}
}

// Env is one emulator with one seeded cluster, served on 127.0.0.1.
type Env struct {
	*gkeemu.Server
	// API is GKE's published container/v1 API, which the emulator holds
	// every request and answer to (see Start).
	API       *apidoc.Document
	invalidOK atomic.Bool
	// URL is the base URL to give clients ("http://127.0.0.1:port/").
	URL string
	// ClusterName is the seeded cluster's full name (emutest.ClusterName).
	ClusterName string
}

// Start serves a fresh emulator for t (closed at its end) with the cluster
// emutest.ClusterName seeded from spec (Project, Location and Name are
// filled in when empty).
//
// The emulator is held to GKE's published API, the container/v1 discovery
// document of the google.golang.org/api module this repository requires:
// a request the document does not allow (a field it does not have, a value
// of the wrong type or outside an enum, a query parameter, verb or path it
// does not know) is refused as GKE refuses it, and it fails t, naming the
// field, unless the test called ExpectInvalidRequests; an answer of the
// emulator that the document does not allow always fails t.
func Start(t testing.TB, opts gkeemu.Options, spec gkeemu.ClusterSpec) *Env {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	env := &Env{}
	var revision string
	guard, err := gkeemu.NewGuard(&opts, func(v apidoc.Violation) {
		if v.Where == "request" && env.invalidOK.Load() {
			t.Logf("gkeemu: request outside the published API (expected by this test): %s", v)
			return
		}
		t.Errorf("gkeemu: not in GKE's published API (container/v1 discovery document, revision %s): %s", revision, v)
	})
	if err != nil {
		t.Fatalf("the GKE emulator's guard needs the container/v1 discovery document: %v", err)
	}
	env.API, revision = opts.API, guard.Revision
	emu := gkeemu.New(opts)
	if spec.Project == "" {
		spec.Project = Project
	}
	if spec.Location == "" {
		spec.Location = Location
	}
	if spec.Name == "" {
		spec.Name = Cluster
	}
	name, err := emu.AddCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	env.Server, env.URL, env.ClusterName = emu, srv.URL+"/", name
	return env
}

// ExpectInvalidRequests is for tests that send what GKE's published API
// does not allow on purpose, to see the emulator refuse it: such requests
// are then logged instead of failing the test. Answers are still checked.
func (e *Env) ExpectInvalidRequests() { e.invalidOK.Store(true) }
