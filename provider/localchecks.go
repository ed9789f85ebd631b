package provider

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
)

// What the provider block shows that can be checked on this machine,
// without contacting anything, is checked at validate (values given in the
// block) or at configure (files): a CA that is not PEM, a host that is not
// a URL, a kubeconfig that does not exist or lacks the context. Until now
// these surfaced only when the first request was made, during apply.

// validateLocal checks the known values of the kubernetes and gke blocks.
// Secrets are never quoted in messages.
func (m providerModel) validateLocal() diag.Diagnostics {
	var diags diag.Diagnostics
	if k := m.Kubernetes; k != nil {
		kp := path.Root("kubernetes")
		if v, ok := knownString(k.Host); ok {
			if problem := hostProblem(v); problem != "" {
				diags.AddAttributeError(kp.AtName("host"), "Invalid Kubernetes host",
					fmt.Sprintf("host %q %s. Give the API server's address, for example https://203.0.113.10 or "+
						"https://my-cluster.example.com:6443 (an address without a scheme means https).", v, problem))
			}
		}
		if v, ok := knownString(k.ClusterCACertificate); ok {
			if problem := pemProblem(v, "CERTIFICATE"); problem != "" {
				diags.AddAttributeError(kp.AtName("cluster_ca_certificate"), "CA certificate is not PEM", problem)
			}
		}
		if v, ok := knownString(k.ClientCertificate); ok {
			if problem := pemProblem(v, "CERTIFICATE"); problem != "" {
				diags.AddAttributeError(kp.AtName("client_certificate"), "Client certificate is not PEM", problem)
			}
		}
		if v, ok := knownString(k.ClientKey); ok {
			if problem := pemProblem(v, "PRIVATE KEY"); problem != "" {
				diags.AddAttributeError(kp.AtName("client_key"), "Client key is not PEM", problem)
			}
		}
		if v, ok := knownString(k.ProxyURL); ok {
			if u, err := url.Parse(v); err != nil || u.Host == "" || !oneOf(u.Scheme, "http", "https", "socks5") {
				diags.AddAttributeError(kp.AtName("proxy_url"), "Invalid proxy URL",
					fmt.Sprintf("proxy_url %q must be a URL with scheme http, https or socks5 and a host, for example "+
						"http://proxy.example.com:3128.", v))
			}
		}
		if v, ok := knownString(k.ConfigPath); ok && strings.TrimSpace(v) == "" {
			diags.AddAttributeError(kp.AtName("config_path"), "Empty kubeconfig path",
				"config_path is empty; remove it or give the path of a kubeconfig file, such as \"~/.kube/config\".")
		}
	}
	if g := m.GKE; g != nil {
		if v, ok := knownString(g.Endpoint); ok {
			u, err := url.Parse(strings.TrimSpace(v))
			switch {
			case err != nil || u.Host == "" || !oneOf(strings.ToLower(u.Scheme), "http", "https"):
				diags.AddAttributeError(path.Root("gke").AtName("endpoint"), "Invalid GKE endpoint",
					fmt.Sprintf("endpoint %q must be a URL such as https://container.googleapis.com/.", v))
			case strings.EqualFold(u.Scheme, "http") && !g.AllowCredsHTTP.IsUnknown() && !g.AllowCredsHTTP.ValueBool():
				// Every container API request carries the Google access
				// token (gkeapi.PlainHTTPError refuses it again at configure,
				// for an endpoint from the environment).
				diags.AddAttributeError(path.Root("gke").AtName("endpoint"), "Credentials would be sent in clear text",
					fmt.Sprintf("endpoint %q uses plain http, so the Google access token sent with every request would "+
						"cross the network unencrypted, readable by anyone on the path. Use an https:// endpoint. Only "+
						"for an emulator on a network you trust, set "+
						"allow_credentials_over_http = true in the gke block.", u.Redacted()))
			}
		}
	}
	return diags
}

// checkKubeconfig warns, when the provider is configured, about a kubeconfig
// that does not exist or lacks the context asked for. These are warnings:
// the file may be written by a resource of the same apply (a cluster
// created together with what runs on it), so the plan must go on; without
// such a resource the first request fails with the same facts.
func checkKubeconfig(m providerModel, s conn.Settings) diag.Diagnostics {
	var diags diag.Diagnostics
	kc := s.Kube
	if s.KubeUnknown || kc.GKECluster != "" || len(kc.ConfigPaths) == 0 {
		return diags
	}
	var at path.Path
	if m.Kubernetes != nil && !m.Kubernetes.ConfigPath.IsNull() {
		at = path.Root("kubernetes").AtName("config_path")
	}
	var existing, missing []string
	for _, p := range kc.ConfigPaths {
		full := p
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				full = filepath.Join(home, p[2:])
			}
		}
		if _, err := os.Stat(full); errors.Is(err, os.ErrNotExist) {
			missing = append(missing, p)
		} else if err == nil {
			existing = append(existing, full)
		}
	}
	warn := func(summary, detail string) {
		if at.Equal(path.Empty()) {
			diags.AddWarning(summary, detail)
		} else {
			diags.AddAttributeWarning(at, summary, detail)
		}
	}
	if len(existing) == 0 {
		warn("Kubeconfig file not found",
			fmt.Sprintf("No kubeconfig file exists at %s. Every request to Kubernetes will fail unless a resource "+
				"of this apply writes it first; check the path (config_path, KUBE_CONFIG_PATH, KUBE_CONFIG_PATHS or "+
				"KUBECONFIG).", strings.Join(missing, ", ")))
		return diags
	}
	if kc.ConfigContext == "" {
		return diags
	}
	raw, err := (&clientcmd.ClientConfigLoadingRules{Precedence: existing}).Load()
	if err != nil {
		warn("Kubeconfig cannot be read", fmt.Sprintf("Loading %s: %v.", strings.Join(existing, ", "), err))
		return diags
	}
	if _, ok := raw.Contexts[kc.ConfigContext]; !ok {
		names := make([]string, 0, len(raw.Contexts))
		for n := range raw.Contexts {
			names = append(names, n)
		}
		sort.Strings(names)
		ctxAt := path.Root("kubernetes").AtName("config_context")
		detail := fmt.Sprintf("Context %q is not in kubeconfig %s, which has: %s. Every request to Kubernetes will "+
			"fail unless a resource of this apply adds it first.", kc.ConfigContext, strings.Join(existing, ", "),
			strings.Join(names, ", "))
		if m.Kubernetes != nil && !m.Kubernetes.ConfigContext.IsNull() {
			diags.AddAttributeWarning(ctxAt, "Kubeconfig context not found", detail)
		} else {
			diags.AddWarning("Kubeconfig context not found", detail)
		}
	}
	return diags
}

// hostProblem says why s cannot be an API server address ("" when it can).
func hostProblem(s string) string {
	if strings.TrimSpace(s) != s || strings.ContainsAny(s, " \t\n") {
		return "contains whitespace"
	}
	if s == "" {
		return "is empty"
	}
	full := s
	if !strings.Contains(s, "://") {
		full = "https://" + s
	}
	u, err := url.Parse(full)
	switch {
	case err != nil:
		return "is not a URL (" + err.Error() + ")"
	case !oneOf(u.Scheme, "https", "http"):
		return fmt.Sprintf("has the scheme %q; the API server is reached over https", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return "has no host name"
	case u.RawQuery != "" || u.Fragment != "":
		return "has a query or fragment, which an API server address cannot have"
	}
	return ""
}

// pemProblem says why s is not PEM holding a block of the given type (""
// when it is), and how to fix the usual mistakes. s is a credential or a
// CA: it is never quoted.
func pemProblem(s, want string) string {
	block, _ := pem.Decode([]byte(strings.TrimSpace(s)))
	if block == nil {
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s)); err == nil {
			if p, _ := pem.Decode(b); p != nil {
				return "The value is base64-encoded PEM, as in a kubeconfig's *-data fields; the provider takes the PEM " +
					"text itself. Wrap it in base64decode(...)."
			}
		}
		return fmt.Sprintf("The value is not PEM: expected a block beginning with \"-----BEGIN %s-----\". Give the "+
			"PEM text (for example file(\"ca.crt\") or base64decode(...) of a kubeconfig's *-data field).", want)
	}
	if !strings.Contains(block.Type, want) {
		return fmt.Sprintf("The PEM block is a %q; expected %q.", block.Type, want)
	}
	if want == "CERTIFICATE" {
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return "The PEM block does not hold a valid X.509 certificate: " + err.Error() + "."
		}
	}
	return ""
}

func knownString(v types.String) (string, bool) {
	if v.IsNull() || v.IsUnknown() {
		return "", false
	}
	return v.ValueString(), true
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if strings.EqualFold(s, o) {
			return true
		}
	}
	return false
}
