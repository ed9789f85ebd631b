package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// conversionWebhook serves the CRDs' v1alpha1 <-> v1beta1 conversion on
// 127.0.0.1 for a v0.5.x profile, as upstream's controller does in-cluster
// (it generates a self-signed certificate and patches the CA into the CRDs
// at start-up: --manage-webhook-certs, cmd/agent-sandbox-controller/main.go
// at v0.5.6). Here the CA is made per run and the CRDs name a URL, because
// the local control plane has no Service routing.
type conversionWebhook struct {
	srv *http.Server
	wh  releases.Webhook
	// reviews counts the ConversionReviews served (a test can check the
	// API server really called it).
	reviews chan struct{}
}

// startConversionWebhook listens on a random loopback port. Its certificate
// is valid for 127.0.0.1 and for the DNS name of the release's webhook
// Service, the name the API server checks when it reaches the webhook
// through that Service (see serviceRoute).
func startConversionWebhook() (*conversionWebhook, error) {
	certPEM, keyPEM, caPEM, err := selfSignedLoopbackCert(releases.UpstreamWebhookService.DNSName())
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &conversionWebhook{reviews: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("/convert", c.serve)
	c.srv = &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	c.wh = releases.Webhook{URL: "https://" + ln.Addr().String() + "/convert", CABundle: caPEM}
	go func() { _ = c.srv.ServeTLS(ln, "", "") }()
	return c, nil
}

func (c *conversionWebhook) stop(ctx context.Context) error {
	if c == nil {
		return nil
	}
	return c.srv.Shutdown(ctx)
}

func (c *conversionWebhook) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not a ConversionReview: %v", err), http.StatusBadRequest)
		return
	}
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for _, raw := range review.Request.Objects {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw.Raw); err != nil {
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			break
		}
		if err := convertObject(obj, review.Request.DesiredAPIVersion); err != nil {
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			break
		}
		out, err := obj.MarshalJSON()
		if err != nil {
			resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}
			break
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
	}
	if resp.Result.Status != metav1.StatusSuccess {
		resp.ConvertedObjects = nil
	}
	review.Request, review.Response = nil, resp
	select {
	case c.reviews <- struct{}{}:
	default:
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// convertObject converts an agent-sandbox object between v1alpha1 and
// v1beta1 in place. Only the Sandbox differs in shape: v1alpha1 has
// spec.replicas (0 or 1) and status.replicas where v1beta1 has
// spec.operatingMode (Suspended or Running) and status.nodeName
// (api/v1alpha1/sandbox_conversion.go:120-205 at v0.5.6). The extension
// kinds convert field for field (extensions/api/v1alpha1/*_conversion.go).
// Unlike upstream, no annotation keeps v1alpha1-only values across a
// round trip: the provider never writes v1alpha1.
func convertObject(obj *unstructured.Unstructured, desired string) error {
	group, from, ok := strings.Cut(obj.GetAPIVersion(), "/")
	wantGroup, to, ok2 := strings.Cut(desired, "/")
	if !ok || !ok2 || group != wantGroup {
		return fmt.Errorf("cannot convert %s to %s", obj.GetAPIVersion(), desired)
	}
	if from != "v1alpha1" && from != "v1beta1" || to != "v1alpha1" && to != "v1beta1" {
		return fmt.Errorf("unknown version in %s -> %s", obj.GetAPIVersion(), desired)
	}
	obj.SetAPIVersion(desired)
	if from == to || obj.GetKind() != "Sandbox" {
		return nil
	}
	if to == "v1beta1" {
		mode := "Running"
		if r, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); found && r == 0 {
			mode = "Suspended"
		}
		unstructured.RemoveNestedField(obj.Object, "spec", "replicas")
		if _, has := obj.Object["spec"]; has {
			_ = unstructured.SetNestedField(obj.Object, mode, "spec", "operatingMode")
		}
		unstructured.RemoveNestedField(obj.Object, "status", "replicas")
		return nil
	}
	mode, _, _ := unstructured.NestedString(obj.Object, "spec", "operatingMode")
	unstructured.RemoveNestedField(obj.Object, "spec", "operatingMode")
	replicas := int64(1)
	if mode == "Suspended" {
		replicas = 0
	}
	if _, has := obj.Object["spec"]; has {
		_ = unstructured.SetNestedField(obj.Object, replicas, "spec", "replicas")
	}
	unstructured.RemoveNestedField(obj.Object, "status", "nodeName")
	if _, has := obj.Object["status"]; has {
		_ = unstructured.SetNestedField(obj.Object, replicas, "status", "replicas")
	}
	return nil
}

// selfSignedLoopbackCert makes a CA and a serving certificate for 127.0.0.1
// and dnsNames signed by it, valid for a day.
func selfSignedLoopbackCert(dnsNames ...string) (certPEM, keyPEM, caPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "agentsandbox-testenv conversion CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     dnsNames,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	if len(certPEM) == 0 || len(keyPEM) == 0 || len(caPEM) == 0 {
		return nil, nil, nil, errors.New("encoding the webhook certificate failed")
	}
	return certPEM, keyPEM, caPEM, nil
}
