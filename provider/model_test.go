package provider

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func envFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestResolvePrecedenceAttributeOverEnvironment(t *testing.T) {
	env := envFrom(map[string]string{
		"KUBE_CONFIG_PATH":                 "/env/kubeconfig",
		"KUBE_CTX":                         "env-ctx",
		"KUBE_HOST":                        "https://env:6443",
		"KUBE_TOKEN":                       "env-token",
		"KUBE_CLUSTER_CA_CERT_DATA":        "env-ca",
		"KUBE_TLS_SERVER_NAME":             "env.example",
		"KUBE_PROXY_URL":                   "http://env-proxy:3128",
		"KUBE_INSECURE":                    "true",
		"GOOGLE_PROJECT":                   "env-project",
		"GOOGLE_OAUTH_ACCESS_TOKEN":        "env-access-token",
		"GOOGLE_CONTAINER_CUSTOM_ENDPOINT": "http://env-endpoint",
		"AGENTSANDBOX_FIELD_MANAGER":       "env-manager",
	})
	m := providerModel{
		FieldManager: types.StringValue("attr-manager"),
		Kubernetes: &kubernetesModel{
			ConfigPath:    types.StringValue("/attr/kubeconfig"),
			ConfigContext: types.StringValue("attr-ctx"),
			Host:          types.StringValue("https://attr:6443"),
			Token:         types.StringValue("attr-token"),
			Insecure:      types.BoolValue(false),
			TLSServerName: types.StringNull(),
			ProxyURL:      types.StringNull(),
		},
		GKE: &gkeModel{
			Project:        types.StringValue("attr-project"),
			RequestTimeout: types.StringValue("45s"),
		},
	}
	s, diags := m.resolve(env, "1.2.3")
	if diags.HasError() {
		t.Fatal(diags)
	}
	k := s.Kube
	checks := []struct{ name, got, want string }{
		{"field_manager", s.FieldManager, "attr-manager"},
		{"config_path", strings.Join(k.ConfigPaths, ","), "/attr/kubeconfig"},
		{"config_context", k.ConfigContext, "attr-ctx"},
		{"host", k.Host, "https://attr:6443"},
		{"token", k.Token, "attr-token"},
		// Not set as attributes: the environment fills them.
		{"cluster_ca_certificate", k.ClusterCACertificate, "env-ca"},
		{"tls_server_name", k.TLSServerName, "env.example"},
		{"proxy_url", k.ProxyURL, "http://env-proxy:3128"},
		{"project", s.GKE.Project, "attr-project"},
		{"access_token", s.GKE.AccessToken, "env-access-token"},
		{"endpoint", s.GKE.Endpoint, "http://env-endpoint"},
		{"user_agent", k.UserAgent, "terraform-provider-agentsandbox/1.2.3"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	// insecure = false given explicitly beats KUBE_INSECURE=true.
	if k.Insecure {
		t.Error("an explicit insecure = false must win over KUBE_INSECURE=true")
	}
	if s.GKE.RequestTimeout.String() != "45s" {
		t.Errorf("request_timeout = %s", s.GKE.RequestTimeout)
	}
	if s.KubeUnknown || s.GKEUnknown {
		t.Error("nothing was unknown")
	}
}

func TestResolveEnvironmentFallbacks(t *testing.T) {
	sep := string(filepath.ListSeparator)
	for _, tc := range []struct {
		name      string
		env       map[string]string
		wantPaths string
	}{
		{"KUBE_CONFIG_PATH first", map[string]string{"KUBE_CONFIG_PATH": "/a", "KUBE_CONFIG_PATHS": "/b", "KUBECONFIG": "/c"}, "/a"},
		{"then KUBE_CONFIG_PATHS", map[string]string{"KUBE_CONFIG_PATHS": "/b1" + sep + "/b2", "KUBECONFIG": "/c"}, "/b1,/b2"},
		{"then KUBECONFIG", map[string]string{"KUBECONFIG": "/c1" + sep + "/c2"}, "/c1,/c2"},
		{"nothing: no implicit ~/.kube/config", map[string]string{"HOME": "/root"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, diags := providerModel{}.resolve(envFrom(tc.env), "dev")
			if diags.HasError() {
				t.Fatal(diags)
			}
			if got := strings.Join(s.Kube.ConfigPaths, ","); got != tc.wantPaths {
				t.Errorf("config paths = %q, want %q", got, tc.wantPaths)
			}
			if s.FieldManager != "agentsandbox" {
				t.Errorf("default field manager = %q", s.FieldManager)
			}
			if s.Kube.Insecure {
				t.Error("insecure must never be on by default")
			}
		})
	}
}

func TestResolveGoogleEnvironmentOrder(t *testing.T) {
	s, _ := providerModel{}.resolve(envFrom(map[string]string{
		"GOOGLE_CLOUD_PROJECT": "second", "GCLOUD_PROJECT": "third",
		"GOOGLE_CLOUD_KEYFILE_JSON": "{\"type\":\"x\"}",
	}), "dev")
	if s.GKE.Project != "second" {
		t.Errorf("project = %q, want GOOGLE_CLOUD_PROJECT's value", s.GKE.Project)
	}
	if s.GKE.Credentials != "{\"type\":\"x\"}" {
		t.Errorf("credentials = %q", s.GKE.Credentials)
	}
}

func TestResolveInsecureEnvironment(t *testing.T) {
	s, diags := providerModel{}.resolve(envFrom(map[string]string{"KUBE_INSECURE": "true"}), "dev")
	if diags.HasError() || !s.Kube.Insecure {
		t.Fatalf("KUBE_INSECURE=true is an explicit opt-in: insecure=%v diags=%v", s.Kube.Insecure, diags)
	}
	_, diags = providerModel{}.resolve(envFrom(map[string]string{"KUBE_INSECURE": "yes please"}), "dev")
	if !diags.HasError() {
		t.Fatal("a malformed KUBE_INSECURE must be an error, not silently false or true")
	}
	if !strings.Contains(diags[0].Detail(), "KUBE_INSECURE") {
		t.Errorf("error should name the variable: %s", diags[0].Detail())
	}
}

func TestResolveUnknownMakesConnectionUnknown(t *testing.T) {
	m := providerModel{Kubernetes: &kubernetesModel{Host: types.StringUnknown()}}
	s, diags := m.resolve(envFrom(nil), "dev")
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !s.KubeUnknown {
		t.Error("an unknown host must mark the Kubernetes connection unknown")
	}
	if s.GKEUnknown {
		t.Error("the GKE connection does not depend on the host")
	}

	m = providerModel{
		Kubernetes: &kubernetesModel{GKECluster: types.StringValue("projects/p/locations/l/clusters/c")},
		GKE:        &gkeModel{AccessToken: types.StringUnknown()},
	}
	s, _ = m.resolve(envFrom(nil), "dev")
	if !s.KubeUnknown {
		t.Error("gke_cluster with an unknown Google credential leaves the Kubernetes connection unknown")
	}
}

func TestResolveExec(t *testing.T) {
	args, _ := types.ListValue(types.StringType, []attr.Value{types.StringValue("get-token"), types.StringValue("--cluster=x")})
	env, _ := types.MapValue(types.StringType, map[string]attr.Value{"AWS_PROFILE": types.StringValue("dev")})
	m := providerModel{Kubernetes: &kubernetesModel{Exec: &execModel{
		APIVersion: types.StringValue("client.authentication.k8s.io/v1"),
		Command:    types.StringValue("aws"),
		Args:       args,
		Env:        env,
	}}}
	s, diags := m.resolve(envFrom(nil), "dev")
	if diags.HasError() {
		t.Fatal(diags)
	}
	e := s.Kube.Exec
	if e == nil || e.Command != "aws" || strings.Join(e.Args, " ") != "get-token --cluster=x" || e.Env["AWS_PROFILE"] != "dev" || e.APIVersion != "client.authentication.k8s.io/v1" {
		t.Fatalf("exec = %+v", e)
	}
}

func TestValidateCombinations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		model    providerModel
		wantPath string
	}{
		{"exec without command", providerModel{Kubernetes: &kubernetesModel{Exec: &execModel{APIVersion: types.StringValue("client.authentication.k8s.io/v1"), Command: types.StringNull(), Args: types.ListNull(types.StringType), Env: types.MapNull(types.StringType)}}}, "kubernetes.exec.command"},
		{"exec without api_version", providerModel{Kubernetes: &kubernetesModel{Exec: &execModel{APIVersion: types.StringNull(), Command: types.StringValue("x"), Args: types.ListNull(types.StringType), Env: types.MapNull(types.StringType)}}}, "kubernetes.exec.api_version"},
		{"client cert without key", providerModel{Kubernetes: &kubernetesModel{ClientCertificate: types.StringValue("pem"), ClientKey: types.StringNull()}}, "kubernetes.client_key"},
		{"exec with gke_cluster", providerModel{Kubernetes: &kubernetesModel{GKECluster: types.StringValue("projects/p/locations/l/clusters/c"), Exec: &execModel{APIVersion: types.StringValue("client.authentication.k8s.io/v1"), Command: types.StringValue("x"), Args: types.ListNull(types.StringType), Env: types.MapNull(types.StringType)}}}, "kubernetes.gke_cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := tc.model.validate()
			if !diags.HasError() {
				t.Fatal("expected an error")
			}
			found := false
			for _, d := range diags {
				if wp, ok := d.(diag.DiagnosticWithPath); ok && wp.Path().String() == tc.wantPath {
					found = true
				}
			}
			if !found {
				t.Errorf("no diagnostic at %s: %v", tc.wantPath, diags)
			}
		})
	}
}

func TestValidatePlainHTTPHost(t *testing.T) {
	httpHost := types.StringValue("http://10.0.0.1:8080")
	exec := &execModel{APIVersion: types.StringValue("client.authentication.k8s.io/v1"), Command: types.StringValue("x"),
		Args: types.ListNull(types.StringType), Env: types.MapNull(types.StringType)}
	for _, tc := range []struct {
		name    string
		k       kubernetesModel
		refused bool
	}{
		{"token", kubernetesModel{Host: httpHost, Token: types.StringValue("t")}, true},
		{"upper-case scheme", kubernetesModel{Host: types.StringValue("HTTP://10.0.0.1"), Token: types.StringValue("t")}, true},
		{"exec", kubernetesModel{Host: httpHost, Exec: exec}, true},
		{"client certificate", kubernetesModel{Host: httpHost, ClientCertificate: types.StringValue("c"), ClientKey: types.StringValue("k")}, true},
		{"insecure is not the opt-in", kubernetesModel{Host: httpHost, Token: types.StringValue("t"), Insecure: types.BoolValue(true)}, true},
		{"explicit opt-in", kubernetesModel{Host: httpHost, Token: types.StringValue("t"), AllowCredsOverHTTP: types.BoolValue(true)}, false},
		{"opt-in unknown", kubernetesModel{Host: httpHost, Token: types.StringValue("t"), AllowCredsOverHTTP: types.BoolUnknown()}, false},
		{"https", kubernetesModel{Host: types.StringValue("https://10.0.0.1"), Token: types.StringValue("t")}, false},
		{"no scheme means https", kubernetesModel{Host: types.StringValue("10.0.0.1:8080"), Token: types.StringValue("t")}, false},
		{"no credential (kubectl proxy)", kubernetesModel{Host: types.StringValue("http://127.0.0.1:8001")}, false},
		{"token unknown", kubernetesModel{Host: httpHost, Token: types.StringUnknown()}, false},
		{"host unknown", kubernetesModel{Host: types.StringUnknown(), Token: types.StringValue("t")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := tc.k
			diags := providerModel{Kubernetes: &k}.validate()
			if diags.HasError() != tc.refused {
				t.Fatalf("refused = %v, want %v: %v", diags.HasError(), tc.refused, diags)
			}
			if !tc.refused {
				return
			}
			d := diags.Errors()[0]
			wp, ok := d.(diag.DiagnosticWithPath)
			if !ok || wp.Path().String() != "kubernetes.host" {
				t.Errorf("diagnostic not at kubernetes.host: %v", d)
			}
			for _, s := range []string{"https://", "allow_credentials_over_http = true", "insecure = true does not"} {
				if !strings.Contains(d.Detail(), s) {
					t.Errorf("detail does not say %q: %s", s, d.Detail())
				}
			}
		})
	}
}

func TestResolveAllowCredentialsOverHTTP(t *testing.T) {
	s, diags := providerModel{}.resolve(envFrom(map[string]string{"KUBE_ALLOW_CREDENTIALS_OVER_HTTP": "true"}), "test")
	if diags.HasError() || !s.Kube.AllowCredentialsOverHTTP {
		t.Fatalf("KUBE_ALLOW_CREDENTIALS_OVER_HTTP=true: allow=%v diags=%v", s.Kube.AllowCredentialsOverHTTP, diags)
	}
	s, _ = providerModel{Kubernetes: &kubernetesModel{AllowCredsOverHTTP: types.BoolValue(false)}}.resolve(
		envFrom(map[string]string{"KUBE_ALLOW_CREDENTIALS_OVER_HTTP": "true"}), "test")
	if s.Kube.AllowCredentialsOverHTTP {
		t.Error("an explicit false must win over the environment")
	}
	if s, _ := (providerModel{}).resolve(envFrom(nil), "test"); s.Kube.AllowCredentialsOverHTTP {
		t.Error("the opt-in must be off by default")
	}
	_, diags = providerModel{}.resolve(envFrom(map[string]string{"KUBE_ALLOW_CREDENTIALS_OVER_HTTP": "yes please"}), "test")
	if !diags.HasError() {
		t.Error("a malformed KUBE_ALLOW_CREDENTIALS_OVER_HTTP must be an error")
	}
}
