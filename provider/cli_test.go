package provider

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
)

// These tests run the real terraform CLI against the real provider binary
// through a dev_overrides CLI configuration, exactly as a user of a
// development build would.

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// providerBinaryDir builds the provider once per test process (so not in a
// per-test TempDir; TestMain removes it).
func providerBinaryDir(t *testing.T) string {
	t.Helper()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform CLI not on PATH")
	}
	_ = tf
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "agentsandbox-provider-") //nolint:usetesting // shared by every test of the process, removed by TestMain
		if buildErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(file))
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "terraform-provider-agentsandbox"), ".")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := (pt.Coverage{Provider: New("test"), ProviderSchema: true, Sources: []string{"."}}).Check(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

type tfRun struct {
	t       *testing.T
	workDir string
	env     []string
	logPath string
}

func newTFRun(t *testing.T, config string) *tfRun {
	bin := providerBinaryDir(t)
	dir := t.TempDir()
	rc := filepath.Join(dir, "dev.tfrc")
	if err := os.WriteFile(rc, fmt.Appendf(nil, `provider_installation {
  dev_overrides {
    %q = %q
  }
  direct {}
}
`, RegistryAddress, bin), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	config = `terraform {
  required_providers {
    agentsandbox = { source = "agentsandbox/agentsandbox" }
  }
}
` + config
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	// A clean environment: nothing of the machine's KUBECONFIG, KUBE_* or
	// GOOGLE_* settings may leak into what these tests prove.
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"TF_CLI_CONFIG_FILE=" + rc,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
		"GOOGLE_APPLICATION_CREDENTIALS=" + filepath.Join(dir, "no-adc.json"),
	}
	return &tfRun{t: t, workDir: work, env: env, logPath: filepath.Join(dir, "trace.log")}
}

func (r *tfRun) run(extraEnv []string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("terraform", args...)
	cmd.Dir = r.workDir
	cmd.Env = append(append([]string{}, r.env...), extraEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Every provider configuration attribute is documented, and every secret is
// marked sensitive, as `terraform providers schema -json` shows them.
func TestCLI_providerSchemaDocumentedAndSensitive(t *testing.T) {
	r := newTFRun(t, "")
	out := r.run(nil, "providers", "schema", "-json")
	var doc struct {
		ProviderSchemas map[string]struct {
			Provider struct {
				Block schemaBlock `json:"block"`
			} `json:"provider"`
		} `json:"provider_schemas"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &doc); err != nil {
		t.Fatalf("parsing schema JSON: %v\n%s", err, out)
	}
	ps, ok := doc.ProviderSchemas[RegistryAddress]
	if !ok {
		t.Fatalf("provider %s not listed; got %v", RegistryAddress, keys(doc.ProviderSchemas))
	}
	attrs := map[string]schemaAttribute{}
	ps.Provider.Block.walk("", attrs)
	want := []string{
		"field_manager",
		"kubernetes.config_path", "kubernetes.config_context", "kubernetes.host", "kubernetes.token",
		"kubernetes.cluster_ca_certificate", "kubernetes.client_certificate", "kubernetes.client_key",
		"kubernetes.insecure", "kubernetes.allow_credentials_over_http", "kubernetes.tls_server_name", "kubernetes.proxy_url", "kubernetes.gke_cluster",
		"kubernetes.qps", "kubernetes.burst",
		"kubernetes.exec.api_version", "kubernetes.exec.command", "kubernetes.exec.args", "kubernetes.exec.env",
		"gke.project", "gke.credentials", "gke.access_token", "gke.endpoint", "gke.request_timeout", "gke.allow_credentials_over_http",
	}
	for _, name := range want {
		a, ok := attrs[name]
		if !ok {
			t.Errorf("attribute %s missing from the schema", name)
			continue
		}
		if strings.TrimSpace(a.Description) == "" {
			t.Errorf("attribute %s has no description", name)
		}
		if !a.Optional {
			t.Errorf("attribute %s must be optional", name)
		}
	}
	for name := range attrs {
		if !contains(want, name) {
			t.Errorf("attribute %s is not covered by this test; add it to the list", name)
		}
	}
	for _, secret := range []string{"kubernetes.token", "kubernetes.client_key", "gke.credentials", "gke.access_token"} {
		if !attrs[secret].Sensitive {
			t.Errorf("%s must be sensitive", secret)
		}
	}
	for name, a := range attrs {
		if a.Sensitive && !contains([]string{"kubernetes.token", "kubernetes.client_key", "gke.credentials", "gke.access_token"}, name) {
			t.Errorf("%s is sensitive but not expected to be (update the test if that is deliberate)", name)
		}
	}
}

type schemaAttribute struct {
	Description string `json:"description"`
	Optional    bool   `json:"optional"`
	Sensitive   bool   `json:"sensitive"`
}

type schemaBlock struct {
	Attributes map[string]schemaAttribute `json:"attributes"`
	BlockTypes map[string]struct {
		Block schemaBlock `json:"block"`
	} `json:"block_types"`
}

func (b schemaBlock) walk(prefix string, out map[string]schemaAttribute) {
	for n, a := range b.Attributes {
		out[prefix+n] = a
	}
	for n, bt := range b.BlockTypes {
		bt.Block.walk(prefix+n+".", out)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Secrets given as token, client_key, credentials or access_token, and the
// tokens derived from them, never appear in TF_LOG=TRACE output (Terraform
// core and provider logs together) nor in the state, while being used for
// real requests.
func TestCLI_secretsNeverLoggedAtTrace(t *testing.T) {
	const (
		kubeToken   = "kube-token-SECRET-5b1f0c"
		accessToken = "google-access-token-SECRET-93ad17"
		saToken     = "sa-derived-token-SECRET-2c7e44"
	)
	kubeAPI := newFakeAPIServer(t, "")
	kubeAPI.acceptTokens(kubeToken, accessToken, saToken)

	// The container API emulation: one cluster whose endpoint is the fake
	// Kubernetes API, served only to callers with a Google token.
	gkeAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth != "Bearer "+accessToken && auth != "Bearer "+saToken {
			writeJSON(w, 401, map[string]any{"error": map[string]any{"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}})
			return
		}
		if !strings.HasSuffix(r.URL.Path, "projects/p/locations/l/clusters/c") {
			writeJSON(w, 404, map[string]any{"error": map[string]any{"code": 404, "message": "Not found: " + r.URL.Path, "status": "NOT_FOUND"}})
			return
		}
		writeJSON(w, 200, map[string]any{
			"name": "c", "status": "RUNNING", "endpoint": kubeAPI.URL,
			"masterAuth": map[string]any{"clusterCaCertificate": base64.StdEncoding.EncodeToString([]byte(kubeAPI.CAPEM))},
		})
	}))
	t.Cleanup(gkeAPI.Close)

	// A service-account key whose token endpoint is local and answers saToken.
	tokenAPI := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"access_token": saToken, "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(tokenAPI.Close)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: mustPKCS8(t, key)}))
	saJSON, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "p", "private_key_id": "key-id-SECRET-77",
		"private_key": keyPEM, "client_email": "tf@p.iam.gserviceaccount.com", "client_id": "1",
		"token_uri": tokenAPI.URL + "/token",
	})

	data := `
data "agentsandbox_cluster" "this" {}

output "version" {
  value = data.agentsandbox_cluster.this.server_version
}
`
	cases := []struct {
		name    string
		config  string
		secrets []string
	}{
		{
			name: "token and client certificate",
			config: fmt.Sprintf(`
provider "agentsandbox" {
  kubernetes {
    host                   = %q
    token                  = %q
    cluster_ca_certificate = %q
    client_certificate     = %q
    client_key             = %q
  }
}
`, kubeAPI.URL, kubeToken, kubeAPI.CAPEM, kubeAPI.ClientCert, kubeAPI.ClientKey) + data,
			secrets: append([]string{kubeToken}, pemBodyLines(kubeAPI.ClientKey)...),
		},
		{
			name: "gke access token",
			config: fmt.Sprintf(`
provider "agentsandbox" {
  gke {
    access_token = %q
    endpoint     = %q
    # The test's GKE stand-in speaks plain HTTP on loopback.
    allow_credentials_over_http = true
  }
  kubernetes {
    gke_cluster = "projects/p/locations/l/clusters/c"
  }
}
`, accessToken, gkeAPI.URL+"/") + data,
			secrets: []string{accessToken},
		},
		{
			name: "gke service account credentials",
			config: fmt.Sprintf(`
provider "agentsandbox" {
  gke {
    credentials = %q
    endpoint    = %q
    # The test's GKE stand-in speaks plain HTTP on loopback.
    allow_credentials_over_http = true
  }
  kubernetes {
    gke_cluster = "projects/p/locations/l/clusters/c"
  }
}
`, string(saJSON), gkeAPI.URL+"/") + data,
			secrets: append([]string{saToken, "key-id-SECRET-77"}, pemBodyLines(keyPEM)...),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := kubeAPI.Requests()
			r := newTFRun(t, tc.config)
			trace := []string{"TF_LOG=TRACE", "TF_LOG_PATH=" + r.logPath}
			out := r.run(trace, "apply", "-auto-approve", "-input=false", "-no-color")
			if !strings.Contains(out, "v1.37.2-fake") {
				t.Fatalf("the secret was not used for a successful read:\n%s", out)
			}
			if kubeAPI.Requests() == before {
				t.Fatal("no request reached the Kubernetes API")
			}
			logBytes, err := os.ReadFile(r.logPath)
			if err != nil {
				t.Fatal(err)
			}
			if len(logBytes) < 10000 || !strings.Contains(string(logBytes), "agentsandbox") {
				t.Fatalf("the TRACE log looks empty (%d bytes); the test would prove nothing", len(logBytes))
			}
			state, _ := os.ReadFile(filepath.Join(r.workDir, "terraform.tfstate"))
			for _, s := range tc.secrets {
				if strings.Contains(string(logBytes), s) {
					t.Errorf("secret %q appears in the TRACE log", s)
				}
				if strings.Contains(string(state), s) {
					t.Errorf("secret %q appears in the state", s)
				}
				if strings.Contains(out, s) {
					t.Errorf("secret %q appears in terraform's output", s)
				}
			}
		})
	}
}

func mustPKCS8(t *testing.T, key *rsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// pemBodyLines returns the base64 lines of a PEM block: any one of them in
// a log would leak part of the key.
func pemBodyLines(p string) []string {
	var out []string
	for _, l := range strings.Split(p, "\n") {
		if l != "" && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}
