package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ECDSA P-256 everywhere: key generation takes microseconds instead of the
// hundreds of milliseconds of RSA, and every component (etcd, kube-apiserver,
// kube-controller-manager, client-go) accepts it, including for signing
// service-account tokens (ES256).

// certValidity is long enough that a cluster left running never expires, short
// enough that nobody mistakes these for long-lived credentials.
const certValidity = 365 * 24 * time.Hour

// KeyPair is a certificate with its private key, both PEM encoded.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte

	cert *x509.Certificate
	key  crypto.Signer
}

// Cert returns the parsed certificate.
func (k *KeyPair) Cert() *x509.Certificate { return k.cert }

// certRequest describes one certificate to issue.
type certRequest struct {
	commonName   string
	organization []string
	dnsNames     []string
	ips          []net.IP
	server       bool
	client       bool
}

// newCA creates a self-signed certificate authority.
func newCA(commonName string) (*KeyPair, error) {
	return sign(&x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"localcluster"}},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil)
}

// issue signs a leaf certificate with the CA.
func (ca *KeyPair) issue(req certRequest) (*KeyPair, error) {
	if ca.cert == nil || !ca.cert.IsCA {
		return nil, errors.New("issuer is not a certificate authority")
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: req.commonName, Organization: req.organization},
		DNSNames:    req.dnsNames,
		IPAddresses: req.ips,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	if req.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if req.client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	return sign(tmpl, ca)
}

// sign gives tmpl a new P-256 key, a random serial number and the validity
// of every certificate here, and signs it with issuer's key, or with its
// own when issuer is nil (a self-signed CA).
func sign(tmpl *x509.Certificate, issuer *KeyPair) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if tmpl.SerialNumber, err = randomSerial(); err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl.NotBefore = now.Add(-time.Hour) // tolerate small clock skew between processes
	tmpl.NotAfter = now.Add(certValidity)
	parent, parentKey := tmpl, crypto.Signer(key)
	if issuer != nil {
		parent, parentKey = issuer.cert, issuer.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, err
	}
	return newKeyPair(der, key)
}

func newKeyPair(der []byte, key *ecdsa.PrivateKey) (*KeyPair, error) {
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &KeyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		cert:    cert,
		key:     key,
	}, nil
}

func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// PKI is every credential a localcluster needs. Two CAs keep etcd access
// separate from Kubernetes access: a certificate handed to a Kubernetes
// client (the admin one in the kubeconfig) cannot talk to etcd directly.
type PKI struct {
	CA        *KeyPair // cluster CA: apiserver serving cert, client certs, KCM CSR signing
	APIServer *KeyPair // serving cert for 127.0.0.1, localhost and kubernetes.default.*

	Admin             *KeyPair // system:masters, written to D/kubeconfig
	ControllerManager *KeyPair
	Scheduler         *KeyPair
	Kwok              *KeyPair

	EtcdCA           *KeyPair
	EtcdServer       *KeyPair
	APIServerEtcdCli *KeyPair // the apiserver's client cert for etcd

	// ServiceAccountKey signs service-account tokens (KCM's token controller
	// and the apiserver's TokenRequest) and verifies them (apiserver).
	ServiceAccountKeyPEM    []byte
	ServiceAccountPubKeyPEM []byte

	// AdminToken is a static bearer token in system:masters, for clients that
	// want to test token authentication rather than client certificates.
	AdminToken string
}

// Identities of the control-plane clients. The controller manager is in
// system:masters because --use-service-account-credentials=false makes every
// controller act with its own identity, and the bootstrap
// system:kube-controller-manager role is not enough for that. The scheduler
// gets the standard bootstrap identity.
const (
	AdminUser             = "localcluster-admin"
	ControllerManagerUser = "system:kube-controller-manager"
	SchedulerUser         = "system:kube-scheduler"
	KwokUser              = "localcluster-kwok"
	mastersGroup          = "system:masters"
)

// GeneratePKI creates a fresh set of credentials. serviceIP is the first IP of
// the service CIDR (the in-cluster address of the kubernetes Service), which
// the serving certificate must cover.
func GeneratePKI(serviceIP net.IP) (*PKI, error) {
	var p PKI
	var err error
	if p.CA, err = newCA("localcluster-ca"); err != nil {
		return nil, fmt.Errorf("cluster CA: %w", err)
	}
	if p.EtcdCA, err = newCA("localcluster-etcd-ca"); err != nil {
		return nil, fmt.Errorf("etcd CA: %w", err)
	}
	issue := func(dst **KeyPair, ca *KeyPair, req certRequest) {
		if err != nil {
			return
		}
		*dst, err = ca.issue(req)
		if err != nil {
			err = fmt.Errorf("certificate %q: %w", req.commonName, err)
		}
	}
	loopbackIPs := []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}
	issue(&p.APIServer, p.CA, certRequest{
		commonName: "kube-apiserver",
		dnsNames: []string{
			"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local",
		},
		ips:    append(loopbackIPs, serviceIP),
		server: true,
	})
	issue(&p.Admin, p.CA, certRequest{commonName: AdminUser, organization: []string{mastersGroup}, client: true})
	issue(&p.ControllerManager, p.CA, certRequest{commonName: ControllerManagerUser, organization: []string{mastersGroup}, client: true})
	issue(&p.Scheduler, p.CA, certRequest{commonName: SchedulerUser, client: true})
	issue(&p.Kwok, p.CA, certRequest{commonName: KwokUser, organization: []string{mastersGroup}, client: true})
	// etcd uses its serving cert as a client cert too (for its own health
	// probes), so it carries both usages.
	issue(&p.EtcdServer, p.EtcdCA, certRequest{commonName: "etcd", dnsNames: []string{"localhost"}, ips: loopbackIPs, server: true, client: true})
	issue(&p.APIServerEtcdCli, p.EtcdCA, certRequest{commonName: "kube-apiserver-etcd-client", client: true})
	if err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	p.ServiceAccountKeyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saDER})
	p.ServiceAccountPubKeyPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER})

	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	p.AdminToken = hex.EncodeToString(tok)
	return &p, nil
}

// Write stores the PKI in the layout's pki directory. Private keys are 0600;
// the directory is 0700 so other local users cannot read them.
func (p *PKI) Write(l Layout) error {
	dir := l.PKIDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files := map[string][]byte{
		"ca.crt":                    p.CA.CertPEM,
		"ca.key":                    p.CA.KeyPEM,
		"apiserver.crt":             p.APIServer.CertPEM,
		"apiserver.key":             p.APIServer.KeyPEM,
		"etcd-ca.crt":               p.EtcdCA.CertPEM,
		"etcd-ca.key":               p.EtcdCA.KeyPEM,
		"etcd-server.crt":           p.EtcdServer.CertPEM,
		"etcd-server.key":           p.EtcdServer.KeyPEM,
		"apiserver-etcd-client.crt": p.APIServerEtcdCli.CertPEM,
		"apiserver-etcd-client.key": p.APIServerEtcdCli.KeyPEM,
		"sa.key":                    p.ServiceAccountKeyPEM,
		"sa.pub":                    p.ServiceAccountPubKeyPEM,
		"tokens.csv":                []byte(fmt.Sprintf("%s,%s,%s,%q\n", p.AdminToken, AdminUser, AdminUser, mastersGroup)),
		"admin.crt":                 p.Admin.CertPEM,
		"admin.key":                 p.Admin.KeyPEM,
		"controller-manager.crt":    p.ControllerManager.CertPEM,
		"controller-manager.key":    p.ControllerManager.KeyPEM,
		"scheduler.crt":             p.Scheduler.CertPEM,
		"scheduler.key":             p.Scheduler.KeyPEM,
		"kwok.crt":                  p.Kwok.CertPEM,
		"kwok.key":                  p.Kwok.KeyPEM,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
