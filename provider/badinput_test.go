package provider

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
)

// The provider block's bad-input table: what a newcomer gets wrong in the
// provider block (typos, wrong encodings, values of the wrong kind) is
// refused by `terraform validate`, on the attribute, before any request.

func isolated(t *testing.T) *pt.Server {
	return pt.New(t, func() fwprovider.Provider {
		return &agentSandboxProvider{version: "test", lookupEnv: func(string) (string, bool) { return "", false }}
	})
}

func testCertPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func kubeBlock(kv map[string]any) map[string]any { return map[string]any{"kubernetes": kv} }

func TestProviderBadInputRefusedAtValidate(t *testing.T) {
	ca := testCertPEM(t)
	keyPEM := "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n"
	exec := func(kv map[string]any) map[string]any { return kubeBlock(map[string]any{"exec": kv}) }
	v1 := "client.authentication.k8s.io/v1"
	cases := []pt.BadInput{
		pt.Refused("host with a space", kubeBlock(map[string]any{"host": "https://my cluster"}), "kubernetes.host", "whitespace"),
		pt.Refused("host with ftp scheme", kubeBlock(map[string]any{"host": "ftp://10.0.0.1"}), "kubernetes.host", `"ftp"`),
		pt.Refused("host with a mistyped scheme", kubeBlock(map[string]any{"host": "htps://10.0.0.1"}), "kubernetes.host", `"htps"`),
		pt.Refused("host scheme only", kubeBlock(map[string]any{"host": "https://"}), "kubernetes.host", "no host name"),
		pt.Refused("host with a query", kubeBlock(map[string]any{"host": "https://10.0.0.1?x=1"}), "kubernetes.host", "query"),
		pt.Refused("empty host", kubeBlock(map[string]any{"host": ""}), "kubernetes.host", "empty"),
		pt.Refused("token over plain http", kubeBlock(map[string]any{"host": "http://10.0.0.1", "token": "t"}), "kubernetes.host", "clear text"),
		pt.Refused("CA that is not PEM", kubeBlock(map[string]any{"cluster_ca_certificate": "my-ca"}), "kubernetes.cluster_ca_certificate", "not PEM", "BEGIN CERTIFICATE"),
		pt.Refused("CA base64-encoded", kubeBlock(map[string]any{"cluster_ca_certificate": base64.StdEncoding.EncodeToString([]byte(ca))}), "kubernetes.cluster_ca_certificate", "base64decode"),
		pt.Refused("CA is a key", kubeBlock(map[string]any{"cluster_ca_certificate": keyPEM}), "kubernetes.cluster_ca_certificate", `"EC PRIVATE KEY"`),
		pt.Refused("CA block of garbage", kubeBlock(map[string]any{"cluster_ca_certificate": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"}), "kubernetes.cluster_ca_certificate", "X.509"),
		pt.Refused("client certificate not PEM", kubeBlock(map[string]any{"client_certificate": "cert", "client_key": keyPEM}), "kubernetes.client_certificate", "not PEM"),
		pt.Refused("client key not PEM", kubeBlock(map[string]any{"client_certificate": ca, "client_key": "key"}), "kubernetes.client_key", "not PEM"),
		pt.Refused("client key is a certificate", kubeBlock(map[string]any{"client_certificate": ca, "client_key": ca}), "kubernetes.client_key", `"CERTIFICATE"`),
		pt.Refused("client certificate without key", kubeBlock(map[string]any{"client_certificate": ca}), "kubernetes.client_key", "together"),
		pt.Refused("proxy without scheme", kubeBlock(map[string]any{"proxy_url": "proxy:3128"}), "kubernetes.proxy_url", "scheme"),
		pt.Refused("proxy with ftp", kubeBlock(map[string]any{"proxy_url": "ftp://proxy:21"}), "kubernetes.proxy_url", "socks5"),
		pt.Refused("empty kubeconfig path", kubeBlock(map[string]any{"config_path": " "}), "kubernetes.config_path", "empty"),
		pt.Refused("exec and gke_cluster", kubeBlock(map[string]any{"gke_cluster": "projects/p/locations/l/clusters/c",
			"exec": map[string]any{"command": "gke-gcloud-auth-plugin", "api_version": v1}}), "kubernetes.gke_cluster", "remove the exec block or gke_cluster"),
		pt.Refused("exec without command", exec(map[string]any{"api_version": v1}), "kubernetes.exec.command", "command"),
		pt.Refused("exec without api_version", exec(map[string]any{"command": "gke-gcloud-auth-plugin"}), "kubernetes.exec.api_version", "api_version"),
		pt.Refused("exec api_version v1", exec(map[string]any{"command": "x", "api_version": "v1"}), "kubernetes.exec.api_version", "client.authentication.k8s.io/v1"),
		pt.Refused("exec empty command", exec(map[string]any{"command": "", "api_version": v1}), "kubernetes.exec.command", "at least 1"),
		pt.Refused("gke_cluster short name", kubeBlock(map[string]any{"gke_cluster": "my-cluster"}), "kubernetes.gke_cluster", "projects/PROJECT/locations/LOCATION/clusters/NAME"),
		pt.Refused("gke_cluster with host", kubeBlock(map[string]any{"gke_cluster": "projects/p/locations/l/clusters/c", "host": "https://x"}), "kubernetes.gke_cluster", "host"),
		pt.Refused("qps zero", kubeBlock(map[string]any{"qps": 0}), "kubernetes.qps", "between 1"),
		pt.Refused("burst zero", kubeBlock(map[string]any{"burst": 0}), "kubernetes.burst", "between 1"),
		pt.Refused("gke endpoint without scheme", map[string]any{"gke": map[string]any{"endpoint": "container.googleapis.com"}}, "gke.endpoint", "URL"),
		pt.Refused("gke endpoint over plain http", map[string]any{"gke": map[string]any{"endpoint": "http://127.0.0.1:8080/", "access_token": "t"}}, "gke.endpoint", "clear text", "allow_credentials_over_http = true"),
		pt.Refused("gke endpoint over plain http, opt-in false", map[string]any{"gke": map[string]any{"endpoint": "HTTP://gke.example.com/", "allow_credentials_over_http": false}}, "gke.endpoint", "clear text"),
		pt.Refused("gke request timeout without unit", map[string]any{"gke": map[string]any{"request_timeout": "30"}}, "gke.request_timeout", "30"),
		pt.Refused("gke credentials and token", map[string]any{"gke": map[string]any{"credentials": "{}", "access_token": "t"}}, "gke.credentials", "access_token"),
		pt.Refused("empty field manager", map[string]any{"field_manager": ""}, "field_manager", "length"),
	}
	pt.ExpectProviderRefused(t, isolated, cases)
	t.Logf("%d provider cases refused at validate", len(cases))
}

// TestProviderGoodInputPasses: the spellings people use are accepted.
func TestProviderGoodInputPasses(t *testing.T) {
	ca := testCertPEM(t)
	for name, cfg := range map[string]map[string]any{
		"host without scheme": kubeBlock(map[string]any{"host": "10.0.0.1:6443", "cluster_ca_certificate": ca, "token": "t"}),
		"host with a path":    kubeBlock(map[string]any{"host": "https://rancher.example.com/k8s/clusters/c-1"}),
		"CA with blank lines": kubeBlock(map[string]any{"cluster_ca_certificate": "\n" + ca + "\n"}),
		"socks proxy":         kubeBlock(map[string]any{"proxy_url": "socks5://127.0.0.1:1080"}),
		"unknowns":            kubeBlock(map[string]any{"host": pt.Unknown, "cluster_ca_certificate": pt.Unknown, "token": pt.Unknown}),
		"emulator endpoint":   {"gke": map[string]any{"endpoint": "http://127.0.0.1:8080/", "allow_credentials_over_http": true}},
		"opt-in unknown":      {"gke": map[string]any{"endpoint": "http://127.0.0.1:8080/", "allow_credentials_over_http": pt.Unknown}},
	} {
		t.Run(name, func(t *testing.T) {
			if errs := pt.Errors(isolated(t).ValidateProvider(t, cfg)); len(errs) > 0 {
				t.Error(pt.Describe(errs))
			}
		})
	}
}

// TestProviderKubeconfigCheckedAtConfigure: a kubeconfig path that does
// not exist, or a context the file lacks, is reported when the provider is
// configured (plan), as a warning on the attribute: a resource of the same
// apply may still write the file.
func TestProviderKubeconfigCheckedAtConfigure(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config")
	if err := os.WriteFile(cfgFile, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: dev, context: {cluster: c, user: u}}]
current-context: dev
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		cfg        map[string]any
		words      []string
	}{
		{"missing file", "kubernetes.config_path", kubeBlock(map[string]any{"config_path": filepath.Join(dir, "confg")}), []string{"confg", "not found"}},
		{"missing context", "kubernetes.config_context", kubeBlock(map[string]any{"config_path": cfgFile, "config_context": "prod"}), []string{`"prod"`, "dev"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := isolated(t)
			if errs := pt.Errors(s.ValidateProvider(t, tc.cfg)); len(errs) > 0 {
				t.Fatal(pt.Describe(errs))
			}
			diags := s.ConfigureProvider(t, tc.cfg)
			found := false
			for _, d := range diags {
				if d.Severity == tfprotov6.DiagnosticSeverityWarning && pt.AttributePath(d.Attribute) == tc.path {
					found = true
					for _, w := range tc.words {
						if !strings.Contains(d.Summary+" "+d.Detail, w) {
							t.Errorf("%q lacks %q", d.Detail, w)
						}
					}
				}
			}
			if !found || len(pt.Errors(diags)) > 0 {
				t.Errorf("want one warning at %s, no error:\n  %s", tc.path, pt.Describe(diags))
			}
		})
	}
	t.Run("existing file and context", func(t *testing.T) {
		if diags := isolated(t).ConfigureProvider(t, kubeBlock(map[string]any{"config_path": cfgFile, "config_context": "dev"})); len(diags) > 0 {
			t.Error(pt.Describe(diags))
		}
	})
}

// TestProviderEnvironmentCheckedAtConfigure: a boolean environment
// variable that is not a boolean is refused when the provider is
// configured, at the attribute it stands in for, naming the variable.
func TestProviderEnvironmentCheckedAtConfigure(t *testing.T) {
	for attr, name := range map[string]string{"insecure": "KUBE_INSECURE", "allow_credentials_over_http": "KUBE_ALLOW_CREDENTIALS_OVER_HTTP"} {
		t.Run(name, func(t *testing.T) {
			s := pt.New(t, func() fwprovider.Provider {
				return &agentSandboxProvider{version: "test", lookupEnv: func(k string) (string, bool) {
					if k == name {
						return "yes please", true
					}
					return "", false
				}}
			})
			pt.ExpectErrorAt(t, s.ConfigureProvider(t, map[string]any{}), "kubernetes."+attr, "Invalid "+name, "yes please")
		})
	}
}
