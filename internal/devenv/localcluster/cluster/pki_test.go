package cluster

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/client-go/util/keyutil"
)

func TestGeneratePKI(t *testing.T) {
	p, err := GeneratePKI(net.ParseIP("10.96.0.1"))
	if err != nil {
		t.Fatal(err)
	}

	roots := x509.NewCertPool()
	roots.AddCert(p.CA.Cert())
	etcdRoots := x509.NewCertPool()
	etcdRoots.AddCert(p.EtcdCA.Cert())

	// The serving certificate must verify for every name clients use.
	for _, name := range []string{"127.0.0.1", "::1", "localhost", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "10.96.0.1"} {
		if _, err := p.APIServer.Cert().Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
			t.Errorf("apiserver certificate does not verify for %s: %v", name, err)
		}
	}
	// ...and only as a server certificate from the cluster CA.
	if _, err := p.APIServer.Cert().Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: etcdRoots}); err == nil {
		t.Error("apiserver certificate verifies against the etcd CA")
	}

	clients := map[string]struct {
		kp     *KeyPair
		roots  *x509.CertPool
		cn     string
		groups []string
	}{
		"admin":              {p.Admin, roots, AdminUser, []string{"system:masters"}},
		"controller-manager": {p.ControllerManager, roots, ControllerManagerUser, []string{"system:masters"}},
		"scheduler":          {p.Scheduler, roots, SchedulerUser, nil},
		"kwok":               {p.Kwok, roots, KwokUser, []string{"system:masters"}},
		"apiserver-etcd":     {p.APIServerEtcdCli, etcdRoots, "kube-apiserver-etcd-client", nil},
	}
	for name, c := range clients {
		cert := c.kp.Cert()
		if _, err := cert.Verify(x509.VerifyOptions{Roots: c.roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s: client certificate does not verify: %v", name, err)
		}
		if cert.Subject.CommonName != c.cn {
			t.Errorf("%s: CN %q, want %q", name, cert.Subject.CommonName, c.cn)
		}
		if !slices.Equal(cert.Subject.Organization, c.groups) {
			t.Errorf("%s: groups %q, want %q", name, cert.Subject.Organization, c.groups)
		}
		// Certificate and key must belong together.
		if _, err := tls.X509KeyPair(c.kp.CertPEM, c.kp.KeyPEM); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := p.Admin.Cert().Verify(x509.VerifyOptions{Roots: etcdRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("the admin certificate must not be accepted by etcd")
	}
	if _, err := p.EtcdServer.Cert().Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: etcdRoots}); err != nil {
		t.Errorf("etcd serving certificate: %v", err)
	}

	// The service-account key pair must parse the way the apiserver and the
	// controller manager parse it, and the halves must match.
	priv, err := keyutil.ParsePrivateKeyPEM(p.ServiceAccountKeyPEM)
	if err != nil {
		t.Fatalf("service-account private key: %v", err)
	}
	pubs, err := keyutil.ParsePublicKeysPEM(p.ServiceAccountPubKeyPEM)
	if err != nil || len(pubs) != 1 {
		t.Fatalf("service-account public key: %v (%d keys)", err, len(pubs))
	}
	if signer, ok := priv.(crypto.Signer); !ok || !keysEqual(signer.Public(), pubs[0]) {
		t.Error("service-account public key does not match the private key")
	}

	if len(p.AdminToken) < 32 {
		t.Errorf("admin token too short: %q", p.AdminToken)
	}
}

func keysEqual(a, b any) bool {
	ka, ok := a.(interface{ Equal(x crypto.PublicKey) bool })
	return ok && ka.Equal(b)
}

func TestGeneratePKIIsFresh(t *testing.T) {
	a, err := GeneratePKI(net.ParseIP("10.96.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := GeneratePKI(net.ParseIP("10.96.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	if string(a.CA.KeyPEM) == string(b.CA.KeyPEM) || a.AdminToken == b.AdminToken {
		t.Error("two clusters share credentials")
	}
}

func TestPKIWrite(t *testing.T) {
	p, err := GeneratePKI(net.ParseIP("10.96.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	l := Layout{Dir: t.TempDir()}
	if err := p.Write(l); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(l.PKIDir())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("pki dir mode %v, want 0700", fi.Mode().Perm())
	}
	for _, name := range []string{"ca.key", "sa.key", "admin.key", "etcd-ca.key"} {
		fi, err := os.Stat(filepath.Join(l.PKIDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	data, err := os.ReadFile(l.PKI("apiserver.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := pem.Decode(data); b == nil || b.Type != "CERTIFICATE" {
		t.Errorf("apiserver.crt is not a PEM certificate")
	}
	tokens, err := os.ReadFile(l.PKI("tokens.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := p.AdminToken + "," + AdminUser + "," + AdminUser + `,"system:masters"` + "\n"
	if string(tokens) != want {
		t.Errorf("tokens.csv = %q, want %q", tokens, want)
	}
}
