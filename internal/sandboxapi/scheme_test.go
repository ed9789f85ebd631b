package sandboxapi

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"

	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

func TestAddToSchemeRegistersAllKinds(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{
		agentsv1beta1.SandboxGVK,
		agentsv1beta1.GroupVersion.WithKind(agentsv1beta1.SandboxListKind),
		extv1beta1.SandboxTemplateGVK,
		extv1beta1.GroupVersion.WithKind(extv1beta1.SandboxTemplateListKind),
		extv1beta1.SandboxWarmPoolGVK,
		extv1beta1.GroupVersion.WithKind(extv1beta1.SandboxWarmPoolListKind),
		extv1beta1.SandboxClaimGVK,
		extv1beta1.GroupVersion.WithKind(extv1beta1.SandboxClaimListKind),
	} {
		if !s.Recognizes(gvk) {
			t.Errorf("scheme does not know %s", gvk)
		}
	}
	if s.Recognizes(agentsv1beta1.GroupVersion.WithKind("SandboxTemplate")) {
		t.Error("SandboxTemplate registered in the agents group")
	}
}

func TestGVRs(t *testing.T) {
	if got := agentsv1beta1.SandboxGVR.String(); got != "agents.x-k8s.io/v1beta1, Resource=sandboxes" {
		t.Errorf("SandboxGVR = %s", got)
	}
	if got := extv1beta1.SandboxWarmPoolGVR.String(); got != "extensions.agents.x-k8s.io/v1beta1, Resource=sandboxwarmpools" {
		t.Errorf("SandboxWarmPoolGVR = %s", got)
	}
	want := []string{
		"sandboxes.agents.x-k8s.io",
		"sandboxclaims.extensions.agents.x-k8s.io",
		"sandboxtemplates.extensions.agents.x-k8s.io",
		"sandboxwarmpools.extensions.agents.x-k8s.io",
	}
	got := CRDNames()
	if len(got) != len(want) {
		t.Fatalf("CRDNames = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("CRDNames[%d] = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestJSONNames pins the wire names of every spec and status field: they must
// be exactly what upstream serves. A decoded object must re-encode to the
// same JSON, so no field is lost or renamed.
func TestJSONNames(t *testing.T) {
	cases := []struct {
		name string
		obj  runtime.Object
		json string
	}{
		{"Sandbox", &agentsv1beta1.Sandbox{}, `{
			"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
			"metadata": {"name": "s", "namespace": "ns"},
			"spec": {
				"podTemplate": {"metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}},
					"spec": {"containers": [{"name": "c", "image": "i", "resources": {}}]}},
				"volumeClaimTemplates": [{"metadata": {"name": "data"},
					"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
				"service": true,
				"operatingMode": "Suspended",
				"shutdownTime": "2030-01-02T03:04:05Z",
				"shutdownPolicy": "Delete"
			},
			"status": {
				"serviceFQDN": "s.ns.svc.cluster.local", "service": "s",
				"conditions": [{"type": "Ready", "status": "True", "reason": "DependenciesReady", "message": "",
					"lastTransitionTime": "2030-01-01T00:00:00Z", "observedGeneration": 1}],
				"selector": "agents.x-k8s.io/sandbox-name-hash=ab179450",
				"podIPs": ["10.0.0.1"], "nodeName": "n1"
			}}`},
		{"SandboxTemplate", &extv1beta1.SandboxTemplate{}, `{
			"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxTemplate",
			"metadata": {"name": "t"},
			"spec": {
				"podTemplate": {"spec": {"containers": [{"name": "c", "resources": {}}]}},
				"service": false,
				"networkPolicy": {"ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "r"}}}]}],
					"egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}]}]},
				"networkPolicyManagement": "Unmanaged",
				"envVarsInjectionPolicy": "Overrides",
				"volumeClaimTemplatesPolicy": "Allowed"
			}}`},
		{"SandboxWarmPool", &extv1beta1.SandboxWarmPool{}, `{
			"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxWarmPool",
			"metadata": {"name": "p"},
			"spec": {"replicas": 0, "sandboxTemplateRef": {"name": "t"}, "updateStrategy": {"type": "Recreate"}},
			"status": {"replicas": 2, "readyReplicas": 1, "selector": "agents.x-k8s.io/warm-pool-sandbox=034dafb4",
				"observedGeneration": 3}}`},
		{"SandboxClaim", &extv1beta1.SandboxClaim{}, `{
			"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxClaim",
			"metadata": {"name": "c"},
			"spec": {
				"warmPoolRef": {"name": "p"},
				"lifecycle": {"shutdownTime": "2030-01-02T03:04:05Z", "ttlSecondsAfterFinished": 0,
					"shutdownPolicy": "DeleteForeground"},
				"additionalPodMetadata": {"labels": {"team": "x"}},
				"env": [{"name": "K", "value": "V", "containerName": "c"}],
				"volumeClaimTemplates": [{"metadata": {"name": "scratch"}, "spec": {"resources": {}}}]
			},
			"status": {
				"conditions": [{"type": "Finished", "status": "True", "reason": "PodSucceeded", "message": "",
					"lastTransitionTime": "2030-01-01T00:00:00Z"}],
				"sandbox": {"name": "p-abcde", "podIPs": ["10.0.0.2"]}
			}}`},
	}
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(s, serializer.EnableStrict)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Strict decoding fails on any JSON name our types do not know.
			obj, _, err := codecs.UniversalDeserializer().Decode([]byte(c.json), nil, nil)
			if err != nil {
				t.Fatalf("strict decode: %v", err)
			}
			out, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if err := json.Unmarshal([]byte(c.json), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if w, g := mustJSON(t, want), mustJSON(t, got); w != g {
				t.Errorf("round trip changed the object:\nwant %s\ngot  %s", w, g)
			}
		})
	}
}

// TestZeroValuesAreOmitted checks that an object built in Go with only the
// required fields encodes without empty status or metadata blocks, so what
// a client sends is what the server stores.
func TestZeroValuesAreOmitted(t *testing.T) {
	sb := agentsv1beta1.Sandbox{Spec: agentsv1beta1.SandboxSpec{}}
	sb.Spec.Service = ptr.To(true)
	out, err := json.Marshal(&sb)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{},"spec":{"podTemplate":{"spec":{"containers":null}},"service":true}}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
