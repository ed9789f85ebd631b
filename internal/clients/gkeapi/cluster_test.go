package gkeapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// ClusterCredentials plugs straight into the Kubernetes side.
var _ = kube.Config{GKECredentials: (&Client{}).ClusterCredentials}

func clusterServer(t *testing.T, cl *container.Cluster) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/projects/p/locations/l/clusters/c" {
			writeAPIError(w, http.StatusNotFound, "NOT_FOUND", "Not found: "+r.URL.Path)
			return
		}
		writeJSON(w, http.StatusOK, cl)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClusterCredentials(t *testing.T) {
	caPEM, caDER := testCACert(t)
	b64PEM := base64.StdEncoding.EncodeToString([]byte(caPEM))
	cases := []struct {
		name     string
		cluster  *container.Cluster
		wantHost string
		wantCA   string
	}{
		{"emulator endpoint with scheme", &container.Cluster{Endpoint: "https://127.0.0.1:6443",
			MasterAuth: &container.MasterAuth{ClusterCaCertificate: b64PEM}}, "https://127.0.0.1:6443", caPEM},
		{"public IP", &container.Cluster{Endpoint: "34.1.2.3",
			MasterAuth: &container.MasterAuth{ClusterCaCertificate: b64PEM}}, "https://34.1.2.3", caPEM},
		{"IPv6", &container.Cluster{Endpoint: "2001:db8::1",
			MasterAuth: &container.MasterAuth{ClusterCaCertificate: b64PEM}}, "https://[2001:db8::1]", caPEM},
		{"DER CA", &container.Cluster{Endpoint: "34.1.2.3",
			MasterAuth: &container.MasterAuth{ClusterCaCertificate: base64.StdEncoding.EncodeToString(caDER)}}, "https://34.1.2.3", caPEM},
		{"private endpoint only", &container.Cluster{PrivateClusterConfig: &container.PrivateClusterConfig{PrivateEndpoint: "10.0.0.2"},
			MasterAuth: &container.MasterAuth{ClusterCaCertificate: b64PEM}}, "https://10.0.0.2", caPEM},
		{"DNS endpoint only", &container.Cluster{ControlPlaneEndpointsConfig: &container.ControlPlaneEndpointsConfig{
			DnsEndpointConfig: &container.DNSEndpointConfig{Endpoint: "gke-abc.us-central1.gke.goog"}}}, "https://gke-abc.us-central1.gke.goog", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClient(t, clusterServer(t, tc.cluster).URL)
			creds, err := c.ClusterCredentials(context.Background(), "projects/p/locations/l/clusters/c")
			if err != nil {
				t.Fatalf("ClusterCredentials: %v", err)
			}
			if creds.Host != tc.wantHost {
				t.Errorf("Host = %q, want %q", creds.Host, tc.wantHost)
			}
			if creds.ClusterCACertificate != tc.wantCA {
				t.Errorf("CA = %q, want %q", creds.ClusterCACertificate, tc.wantCA)
			}
			tok, err := creds.TokenSource.Token()
			if err != nil || tok.AccessToken != "test-token" {
				t.Errorf("token = %v, %v; want the client's own credentials", tok, err)
			}
		})
	}
}

func TestClusterCredentialsUseServiceAccountToken(t *testing.T) {
	caPEM, _ := testCACert(t)
	tokens := newTokenServer(t, "sa-token")
	srv := clusterServer(t, &container.Cluster{Endpoint: "https://127.0.0.1:6443",
		MasterAuth: &container.MasterAuth{ClusterCaCertificate: base64.StdEncoding.EncodeToString([]byte(caPEM))}})
	c, err := NewService(context.Background(), Config{Credentials: string(serviceAccountJSON(tokens.URL, "sp")), Endpoint: srv.URL, AllowCredentialsOverHTTP: true}, fast...)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := c.ClusterCredentials(context.Background(), "projects/p/locations/l/clusters/c")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := creds.TokenSource.Token()
	if err != nil || tok.AccessToken != "sa-token" {
		t.Errorf("token = %v, %v", tok, err)
	}
}

func TestClusterCredentialsErrors(t *testing.T) {
	cases := []struct {
		name    string
		cluster *container.Cluster
		want    string
	}{
		{"no endpoint yet", &container.Cluster{Status: "PROVISIONING"}, "no endpoint yet (status PROVISIONING)"},
		{"no CA", &container.Cluster{Endpoint: "34.1.2.3"}, "no cluster CA certificate"},
		{"bad base64", &container.Cluster{Endpoint: "34.1.2.3", MasterAuth: &container.MasterAuth{ClusterCaCertificate: "!!!"}}, "not valid base64"},
		{"not a certificate", &container.Cluster{Endpoint: "34.1.2.3",
			MasterAuth: &container.MasterAuth{ClusterCaCertificate: base64.StdEncoding.EncodeToString([]byte("hello"))}}, "neither PEM nor a DER"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClient(t, clusterServer(t, tc.cluster).URL)
			_, err := c.ClusterCredentials(context.Background(), "projects/p/locations/l/clusters/c")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
	c := newTestClient(t, clusterServer(t, &container.Cluster{}).URL)
	_, err := c.ClusterCredentials(context.Background(), "projects/p/locations/l/clusters/other")
	if !IsNotFound(err) {
		t.Errorf("err = %v, want a NOT_FOUND visible through the wrapping", err)
	}
	if _, err := c.ClusterCredentials(context.Background(), "my-cluster"); err == nil ||
		!strings.Contains(err.Error(), ClusterNameShape) {
		t.Errorf("err = %v, want the expected shape", err)
	}
}

func TestAgentSandboxAddonEnabled(t *testing.T) {
	cases := []struct {
		cl   *container.Cluster
		want bool
	}{
		{nil, false},
		{&container.Cluster{}, false},
		{&container.Cluster{AddonsConfig: &container.AddonsConfig{}}, false},
		{&container.Cluster{AddonsConfig: &container.AddonsConfig{AgentSandboxConfig: &container.AgentSandboxConfig{}}}, false},
		{&container.Cluster{AddonsConfig: &container.AddonsConfig{AgentSandboxConfig: &container.AgentSandboxConfig{Enabled: true}}}, true},
	}
	for i, tc := range cases {
		if got := AgentSandboxAddonEnabled(tc.cl); got != tc.want {
			t.Errorf("case %d: got %v", i, got)
		}
	}
}

func TestPodSnapshotsEnabled(t *testing.T) {
	cases := []struct {
		cl   *container.Cluster
		want bool
	}{
		{nil, false},
		{&container.Cluster{}, false},
		{&container.Cluster{AddonsConfig: &container.AddonsConfig{}}, false},
		{&container.Cluster{AddonsConfig: &container.AddonsConfig{AgentSandboxConfig: &container.AgentSandboxConfig{Enabled: true}}}, false},
		{&container.Cluster{AddonsConfig: &container.AddonsConfig{PodSnapshotConfig: &container.PodSnapshotConfig{}}}, false},
		{&container.Cluster{AddonsConfig: &container.AddonsConfig{PodSnapshotConfig: &container.PodSnapshotConfig{Enabled: true}}}, true},
	}
	for i, tc := range cases {
		if got := PodSnapshotsEnabled(tc.cl); got != tc.want {
			t.Errorf("case %d: got %v", i, got)
		}
	}
}
