package testenv

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestConvertObject(t *testing.T) {
	for _, tc := range []struct {
		name, desired string
		in, want      map[string]any
	}{
		{
			name: "suspended sandbox to v1beta1", desired: "agents.x-k8s.io/v1beta1",
			in:   map[string]any{"apiVersion": "agents.x-k8s.io/v1alpha1", "kind": "Sandbox", "spec": map[string]any{"replicas": int64(0), "podTemplate": map[string]any{}}, "status": map[string]any{"replicas": int64(0)}},
			want: map[string]any{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "spec": map[string]any{"operatingMode": "Suspended", "podTemplate": map[string]any{}}, "status": map[string]any{}},
		},
		{
			name: "running sandbox to v1alpha1", desired: "agents.x-k8s.io/v1alpha1",
			in:   map[string]any{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "spec": map[string]any{"operatingMode": "Running"}, "status": map[string]any{"nodeName": "n1"}},
			want: map[string]any{"apiVersion": "agents.x-k8s.io/v1alpha1", "kind": "Sandbox", "spec": map[string]any{"replicas": int64(1)}, "status": map[string]any{"replicas": int64(1)}},
		},
		{
			name: "claim field for field", desired: "extensions.agents.x-k8s.io/v1alpha1",
			in:   map[string]any{"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxClaim", "spec": map[string]any{"warmPoolRef": map[string]any{"name": "p"}}},
			want: map[string]any{"apiVersion": "extensions.agents.x-k8s.io/v1alpha1", "kind": "SandboxClaim", "spec": map[string]any{"warmPoolRef": map[string]any{"name": "p"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: tc.in}
			if err := convertObject(obj, tc.desired); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(obj.Object)
			want, _ := json.Marshal(tc.want)
			if !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	if err := convertObject(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox"}}, "extensions.agents.x-k8s.io/v1alpha1"); err == nil {
		t.Error("converting across groups: want an error")
	}
}

// TestConversionWebhookServes checks the server end to end as the API
// server calls it: TLS verified with the CA bundle the CRDs carry.
func TestConversionWebhookServes(t *testing.T) {
	c, err := startConversionWebhook()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.stop(t.Context()) }()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.wh.CABundle) {
		t.Fatal("CA bundle is not PEM")
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	obj, _ := json.Marshal(map[string]any{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "spec": map[string]any{"operatingMode": "Suspended"}})
	review := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  &apiextensionsv1.ConversionRequest{UID: "u1", DesiredAPIVersion: "agents.x-k8s.io/v1alpha1", Objects: []runtime.RawExtension{{Raw: obj}}},
	}
	body, _ := json.Marshal(review)
	resp, err := hc.Post(c.wh.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out apiextensionsv1.ConversionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Response == nil || out.Response.UID != "u1" || out.Response.Result.Status != metav1.StatusSuccess || len(out.Response.ConvertedObjects) != 1 {
		t.Fatalf("response %+v", out.Response)
	}
	var conv map[string]any
	_ = json.Unmarshal(out.Response.ConvertedObjects[0].Raw, &conv)
	if conv["apiVersion"] != "agents.x-k8s.io/v1alpha1" || conv["spec"].(map[string]any)["replicas"] != float64(0) {
		t.Errorf("converted %v", conv)
	}
}
