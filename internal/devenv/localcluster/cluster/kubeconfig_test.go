package cluster

import (
	"net"
	"os"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestWriteKubeconfig(t *testing.T) {
	p, err := GeneratePKI(net.ParseIP("10.96.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/kubeconfig"
	if err := WriteKubeconfig(path, "https://127.0.0.1:6443", p.CA.CertPEM, p.Admin); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("kubeconfig mode %v readable by others", fi.Mode().Perm())
	}

	// Load it the way every client does (kubectl, client-go, the provider).
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" {
		t.Errorf("host %q", cfg.Host)
	}
	if string(cfg.CAData) != string(p.CA.CertPEM) || string(cfg.CertData) != string(p.Admin.CertPEM) || string(cfg.KeyData) != string(p.Admin.KeyPEM) {
		t.Error("credentials not embedded verbatim")
	}
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != ContextName {
		t.Errorf("current context %q, want %q", raw.CurrentContext, ContextName)
	}
}
