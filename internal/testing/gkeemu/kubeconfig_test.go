package gkeemu_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
)

const kubeconfigCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func TestAccessFromKubeconfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte(kubeconfigCA), 0o600); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "kubeconfig")
	// Two contexts: the current one with a CA file given relative to the
	// kubeconfig, the other with embedded CA data and an http server.
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:16443/", certificate-authority: ca.crt}
- name: plain
  cluster: {server: "http://127.0.0.1:8080", certificate-authority-data: "`+b64(kubeconfigCA)+`"}
contexts:
- name: local
  context: {cluster: local, user: u}
- name: plain
  context: {cluster: plain, user: u}
- name: dangling
  context: {cluster: missing, user: u}
current-context: local
users:
- name: u
  user: {token: x}
`), 0o600); err != nil {
		t.Fatal(err)
	}

	var spec gkeemu.ClusterSpec
	if err := gkeemu.AccessFromKubeconfig(&spec, kc, ""); err != nil {
		t.Fatal(err)
	}
	if spec.Endpoint != "127.0.0.1:16443" || string(spec.CACertificatePEM) != kubeconfigCA {
		t.Errorf("current context: endpoint %q, CA %q", spec.Endpoint, spec.CACertificatePEM)
	}

	spec = gkeemu.ClusterSpec{}
	if err := gkeemu.AccessFromKubeconfig(&spec, kc, "plain"); err != nil {
		t.Fatal(err)
	}
	if spec.Endpoint != "http://127.0.0.1:8080" || string(spec.CACertificatePEM) != kubeconfigCA {
		t.Errorf("plain: endpoint %q, CA %q", spec.Endpoint, spec.CACertificatePEM)
	}

	for ctx, want := range map[string]string{
		"nope":     `has no context "nope"`,
		"dangling": `names cluster "missing", which it does not define`,
	} {
		err := gkeemu.AccessFromKubeconfig(&spec, kc, ctx)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("context %s: err = %v, want %q", ctx, err, want)
		}
	}
	if err := gkeemu.AccessFromKubeconfig(&spec, filepath.Join(dir, "absent"), ""); err == nil {
		t.Error("missing kubeconfig accepted")
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
