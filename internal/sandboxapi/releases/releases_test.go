package releases

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

func TestLookup(t *testing.T) {
	for name, want := range map[string]string{
		"": "v0.5.6", "v0.5.0": "v0.5.0", "v0.5.2": "v0.5.0", "v0.5.4": "v0.5.3", "v0.5.5": "v0.5.3",
		"v0.5.6": "v0.5.6", "v1.0": "v1.0",
	} {
		p, err := Lookup(name)
		if err != nil || p.Name != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", name, p.Name, err, want)
		}
	}
	if _, err := Lookup("v0.4.6"); err == nil {
		t.Error("Lookup(v0.4.6): want an error naming the known profiles")
	}
}

func byName(t *testing.T, crds []*apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	for _, c := range crds {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no CRD %s", name)
	return nil
}

func TestCRDs(t *testing.T) {
	wh := &Webhook{URL: "https://127.0.0.1:1/convert", CABundle: []byte("pem")}
	for _, p := range All() {
		t.Run(p.Name, func(t *testing.T) {
			var arg *Webhook
			if p.ServesV1alpha1 {
				arg = wh
			}
			got, err := p.CRDs(arg)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 4 {
				t.Fatalf("got %d CRDs, want 4", len(got))
			}
			for _, crd := range got {
				var versions []string
				stored := 0
				for _, v := range crd.Spec.Versions {
					versions = append(versions, v.Name)
					if v.Storage {
						stored++
						if v.Name != "v1beta1" {
							t.Errorf("%s stores %s, want v1beta1", crd.Name, v.Name)
						}
					}
				}
				if stored != 1 {
					t.Errorf("%s: %d stored versions", crd.Name, stored)
				}
				if p.ServesV1alpha1 {
					if len(versions) != 2 || versions[1] != "v1alpha1" {
						t.Errorf("%s serves %v, want [v1beta1 v1alpha1]", crd.Name, versions)
					}
					c := crd.Spec.Conversion
					if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil ||
						c.Webhook.ClientConfig == nil || c.Webhook.ClientConfig.URL == nil || *c.Webhook.ClientConfig.URL != wh.URL {
						t.Errorf("%s: conversion %+v, want Webhook to %s", crd.Name, c, wh.URL)
					}
				} else if len(versions) != 1 || crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
					t.Errorf("%s serves %v with conversion %+v, want v1beta1 only, no webhook", crd.Name, versions, crd.Spec.Conversion)
				}
			}
			sb := byName(t, got, agentsv1beta1.SandboxCRDName).Spec.Versions[0].Schema.OpenAPIV3Schema
			if has := len(sb.Properties["spec"].XValidations) > 0; has != p.SandboxVCTImmutableRule {
				t.Errorf("Sandbox spec CEL rule present = %v, want %v", has, p.SandboxVCTImmutableRule)
			}
			wp := byName(t, got, extv1beta1.SandboxWarmPoolCRDName).Spec.Versions[0].Schema.OpenAPIV3Schema
			if _, has := wp.Properties["status"].Properties["observedGeneration"]; has != p.WarmPoolObservedGeneration {
				t.Errorf("warm pool status.observedGeneration present = %v, want %v", has, p.WarmPoolObservedGeneration)
			}
		})
	}
}

func TestCRDsWebhookRequiredExactlyForV1alpha1(t *testing.T) {
	if _, err := V056.CRDs(nil); err == nil {
		t.Error("v0.5.6 without a webhook: want an error")
	}
	if _, err := V10.CRDs(&Webhook{URL: "https://x"}); err == nil {
		t.Error("v1.0 with a webhook: want an error")
	}
}

// TestCRDsWebhookService: the release's Service form is what the v0.5.6
// bundle's CRDs name (the bundle that agentsandbox_controller's tests apply
// over the profile's CRDs), so the two merge into one address; a URL and a
// Service in one clientConfig are refused by the API server.
func TestCRDsWebhookService(t *testing.T) {
	svc := UpstreamWebhookService
	got, err := V056.CRDs(&Webhook{Service: &svc, CABundle: []byte("pem")})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bundles.Read("v0.5.6", bundles.AssetAll)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil || o["kind"] != "CustomResourceDefinition" {
			continue
		}
		name, _, _ := unstructured.NestedString(o, "metadata", "name")
		want[name], _, _ = unstructured.NestedMap(o, "spec", "conversion", "webhook", "clientConfig", "service")
	}
	if len(want) != 4 {
		t.Fatalf("found %d CRDs with a conversion webhook service in the v0.5.6 bundle, want 4", len(want))
	}
	for _, crd := range got {
		cc := crd.Spec.Conversion.Webhook.ClientConfig
		if cc.URL != nil || cc.Service == nil || string(cc.CABundle) != "pem" {
			t.Fatalf("%s: clientConfig %+v, want the Service and the CA bundle only", crd.Name, cc)
		}
		w := want[crd.Name]
		port := int32(443)
		if p, ok := w["port"].(float64); ok { // sigs.k8s.io/yaml decodes numbers as JSON does
			port = int32(p)
		}
		if cc.Service.Namespace != w["namespace"] || cc.Service.Name != w["name"] || *cc.Service.Path != w["path"] || *cc.Service.Port != port {
			t.Errorf("%s: service %s/%s:%d%s, the v0.5.6 bundle names %v", crd.Name, cc.Service.Namespace, cc.Service.Name,
				*cc.Service.Port, *cc.Service.Path, w)
		}
	}
	if got, want := svc.DNSName(), "agent-sandbox-webhook-service.agent-sandbox-system.svc"; got != want {
		t.Errorf("DNSName() = %q, want %q", got, want)
	}
}

// TestCRDsServeTheReleasesPodSpec: the pod template schema of each profile
// is the PodSpec of the k8s.io/api its release was built with: fields added
// by Kubernetes 1.37 (evictionResponders, emptyDir.mode, volume mount
// bindMountOptions) are not served by any v0.5.x profile, fields added by
// 1.36 (schedulingGroup) not by v0.5.0, and v1.0 serves the project's own.
func TestCRDsServeTheReleasesPodSpec(t *testing.T) {
	svc := UpstreamWebhookService
	built := map[string][]*apiextensionsv1.CustomResourceDefinition{}
	has := func(p Profile, crdName string, path ...string) bool {
		t.Helper()
		got, ok := built[p.Name]
		if !ok {
			var wh *Webhook
			if p.ServesV1alpha1 {
				wh = &Webhook{Service: &svc}
			}
			var err error
			if got, err = p.CRDs(wh); err != nil {
				t.Fatal(err)
			}
			built[p.Name] = got
		}
		crd := byName(t, got, crdName)
		found := true
		for _, v := range crd.Spec.Versions {
			s := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["podTemplate"].Properties["spec"]
			for _, name := range path {
				if s.Type == "array" {
					s = *s.Items.Schema
				}
				c, ok := s.Properties[name]
				if !ok {
					found = false
					break
				}
				s = c
			}
		}
		return found
	}
	for _, tc := range []struct {
		path                  []string
		v050, v053, v056, v10 bool
	}{
		{[]string{"containers"}, true, true, true, true},
		{[]string{"containers", "securityContext", "runAsNonRoot"}, true, true, true, true},
		{[]string{"schedulingGroup"}, false, true, true, true},
		{[]string{"evictionResponders"}, false, false, false, true},
		{[]string{"volumes", "emptyDir", "mode"}, false, false, false, true},
		{[]string{"volumes", "emptyDir", "sizeLimit"}, true, true, true, true},
		{[]string{"containers", "volumeMounts", "bindMountOptions"}, false, false, false, true},
		{[]string{"initContainers", "readinessProbe", "httpGet", "protocol"}, false, false, false, true},
	} {
		for _, c := range []struct {
			p    Profile
			want bool
		}{{V050, tc.v050}, {V053, tc.v053}, {V056, tc.v056}, {V10, tc.v10}} {
			for _, crd := range []string{agentsv1beta1.SandboxCRDName, extv1beta1.SandboxTemplateCRDName} {
				if got := has(c.p, crd, tc.path...); got != c.want {
					t.Errorf("%s %s serves spec.podTemplate.spec.%s = %v, want %v", c.p.Name, crd, strings.Join(tc.path, "."), got, c.want)
				}
			}
		}
	}
}
