package controller

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// liveCRD builds a CRD as the API server returns it: with managed fields of
// the provider (Apply) and of the controller (Update, the caBundle).
func liveCRD(caBundle, servicePort string, mine string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "sandboxes.agents.x-k8s.io", "resourceVersion": "7", "generation": int64(2)},
		"spec": map[string]any{
			"group": "agents.x-k8s.io",
			"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{"clientConfig": map[string]any{
				"caBundle": caBundle,
				"service":  map[string]any{"name": "agent-sandbox-webhook-service", "port": servicePort},
			}}},
		},
		"status": map[string]any{"storedVersions": []any{"v1beta1"}},
	}}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(mine)},
		{Manager: "agent-sandbox-controller", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:conversion":{"f:webhook":{"f:clientConfig":{"f:caBundle":{}}}}}}`)},
	})
	return u
}

const ownsSpec = `{"f:spec":{"f:group":{},"f:conversion":{"f:strategy":{},"f:webhook":{"f:clientConfig":{"f:service":{"f:name":{},"f:port":{}}}}}}}`

// TestUnchanged_ControllerFieldsAreNotChanges: a dry run that differs from
// the live CRD only in the conversion webhook's client config (the
// controller's caBundle and service) must not trigger a write.
func TestUnchanged_ControllerFieldsAreNotChanges(t *testing.T) {
	ignore := ignoreFor("apiextensions.k8s.io", "CustomResourceDefinition")
	live := liveCRD("Q0E=", "443", ownsSpec)
	dry := liveCRD("", "443", ownsSpec)
	dry.SetResourceVersion("8")
	dry.SetGeneration(3)
	same, err := unchanged(live, dry, "agentsandbox", ignore)
	if err != nil || !same {
		t.Errorf("caBundle-only difference: unchanged = %v, %v; want true", same, err)
	}
	dry = liveCRD("Q0E=", "8443", ownsSpec) // the controller rewrote the service
	if same, _ := unchanged(live, dry, "agentsandbox", ignore); !same {
		t.Error("a service port difference inside clientConfig must not count either")
	}
	dry = liveCRD("Q0E=", "443", ownsSpec)
	_ = unstructured.SetNestedField(dry.Object, "other.group", "spec", "group")
	if same, _ := unchanged(live, dry, "agentsandbox", ignore); same {
		t.Error("a real spec change was reported unchanged")
	}
	dry = liveCRD("Q0E=", "443", `{"f:spec":{"f:group":{},"f:names":{}}}`)
	if same, _ := unchanged(live, dry, "agentsandbox", ignore); same {
		t.Error("taking over more fields (ownership change) was reported unchanged")
	}
	// Without the CRD rule the caBundle difference is a change.
	if same, _ := unchanged(live, liveCRD("", "443", ownsSpec), "agentsandbox", nil); same {
		t.Error("for other kinds every field counts")
	}
}

func TestIgnoreFor(t *testing.T) {
	ig := ignoreFor("apiextensions.k8s.io", "CustomResourceDefinition")
	if ig == nil || !ig(".spec.conversion.webhook.clientConfig.caBundle") || ig(".spec.conversion.strategy") {
		t.Error("CRDs ignore exactly the webhook client config")
	}
	if ignoreFor("apps", "Deployment") != nil {
		t.Error("Deployments ignore nothing")
	}
}

// TestDigestIgnoresControllerFields: the drift fingerprint of a CRD does
// not change when the controller patches its caBundle and service.
func TestDigestIgnoresControllerFields(t *testing.T) {
	ignore := ignoreFor("apiextensions.k8s.io", "CustomResourceDefinition")
	a, err := kube.ManagedDigest(liveCRD("", "443", ownsSpec), "agentsandbox", ignore)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := kube.ManagedDigest(liveCRD("Q0E=", "8443", ownsSpec), "agentsandbox", ignore)
	if a != b {
		t.Error("controller-written fields changed the digest")
	}
	changed := liveCRD("", "443", ownsSpec)
	_ = unstructured.SetNestedField(changed.Object, "None", "spec", "conversion", "strategy")
	c, _ := kube.ManagedDigest(changed, "agentsandbox", ignore)
	if c == a {
		t.Error("a change to a field the provider owns did not change the digest")
	}
}

func fakeKube(objs ...runtime.Object) *kube.Client {
	listKinds := map[schema.GroupVersionResource]string{kube.CRDGVR: "CustomResourceDefinitionList"}
	return kube.NewClientFromDynamic(dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...), nil)
}

func TestDetectManagedAddon(t *testing.T) {
	ctx := context.Background()
	meta := conn.ForClients("agentsandbox", nil, nil)
	crd := func(labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": sandboxCRDName},
		}}
		u.SetLabels(labels)
		return u
	}
	for _, c := range []struct {
		name   string
		objs   []runtime.Object
		expect string
	}{
		{"no CRD", nil, ""},
		{"CRD of a release bundle", []runtime.Object{crd(map[string]string{"app": "x"})}, ""},
		{"add-on manager label", []runtime.Object{crd(map[string]string{"addonmanager.kubernetes.io/mode": "Reconcile"})}, "addonmanager.kubernetes.io/mode=Reconcile"},
		{"GKE component label", []runtime.Object{crd(map[string]string{"components.gke.io/component-name": "agent-sandbox"})}, "components.gke.io/component-name=agent-sandbox"},
	} {
		t.Run(c.name, func(t *testing.T) {
			evidence, diags := detectManagedAddon(ctx, meta, fakeKube(c.objs...))
			if diags.HasError() {
				t.Fatal(diags)
			}
			if c.expect == "" && evidence != "" || c.expect != "" && !strings.Contains(evidence, c.expect) {
				t.Errorf("evidence %q, want %q", evidence, c.expect)
			}
		})
	}
	d := managedAddonDiagnostic("because")
	if !strings.Contains(d.Detail(), "because") || !strings.Contains(d.Detail(), "agentsandbox_gke_addon") {
		t.Errorf("the refusal must give the evidence and how to choose: %s", d.Detail())
	}
}
