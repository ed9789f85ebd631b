package bundles_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/internal/crdcheck"
)

// doc is one parsed document of an asset.
type doc struct {
	u   *unstructured.Unstructured
	raw []byte
}

func (d doc) key() string { return d.u.GetKind() + "/" + d.u.GetNamespace() + "/" + d.u.GetName() }

// parse splits an asset into documents and decodes each one both as
// unstructured data and, strictly, as its typed API object (so a misspelt
// field anywhere fails the test).
func parse(t *testing.T, name string, data []byte) []doc {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	strict := serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()

	var out []doc
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(u.Object) == 0 {
			t.Fatalf("%s: empty document", name)
		}
		if _, _, err := strict.Decode(raw, nil, nil); err != nil {
			t.Errorf("%s: %s does not decode strictly: %v", name, u.GetKind(), err)
		}
		out = append(out, doc{u: u, raw: raw})
	}
	return out
}

func read(t *testing.T, version, asset string) []doc {
	t.Helper()
	data, err := bundles.Read(version, asset)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("# Offline stand-in for the agent-sandbox "+version+" release asset \""+asset+"\".")) ||
		!bytes.Contains(data, []byte("NOT upstream's file")) {
		t.Errorf("%s/%s: missing the stand-in header comment", version, asset)
	}
	return parse(t, version+"/"+asset, data)
}

func keys(docs []doc) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.key())
	}
	return out
}

func find(t *testing.T, docs []doc, kind, name string) doc {
	t.Helper()
	for _, d := range docs {
		if d.u.GetKind() == kind && d.u.GetName() == name {
			return d
		}
	}
	t.Fatalf("no %s %s in %v", kind, name, keys(docs))
	return doc{}
}

func typed[T any](t *testing.T, d doc) *T {
	t.Helper()
	out := new(T)
	if err := yaml.UnmarshalStrict(d.raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}

const ns = "agent-sandbox-system"

var crdKeys = func() []string {
	var out []string
	for _, n := range sandboxapi.CRDNames() {
		out = append(out, "CustomResourceDefinition//"+n)
	}
	return out
}()

func TestVersionsAndAssets(t *testing.T) {
	if got := bundles.Versions(); !slices.Equal(got, []string{"v0.5.1", "v0.5.6", "v1.0.7"}) {
		t.Errorf("Versions = %v", got)
	}
	want := map[string][]string{
		"v0.5.1": {bundles.AssetExtensions, bundles.AssetManifest},
		"v0.5.6": {bundles.AssetExtensions, bundles.AssetAll, bundles.AssetSandbox},
		"v1.0.7": {bundles.AssetExtensions, bundles.AssetAll, bundles.AssetSandbox},
	}
	for v, w := range want {
		got, err := bundles.Assets(v)
		if err != nil || !slices.Equal(got, w) {
			t.Errorf("Assets(%s) = %v, %v; want %v", v, got, err, w)
		}
	}
	if _, err := bundles.Read("v9.9.9", bundles.AssetAll); err == nil {
		t.Error("Read of an unknown version succeeded")
	}
	if _, err := bundles.Read("v0.5.1", bundles.AssetAll); err == nil {
		t.Error("v0.5.1 has no all-in-one asset, but Read found one")
	}
}

// TestAllInOne checks the object set of the all-in-one asset of both shapes.
func TestAllInOne(t *testing.T) {
	common := append([]string{"Namespace//" + ns}, crdKeys...)
	common = append(common,
		"ServiceAccount/"+ns+"/agent-sandbox-controller",
		"ClusterRole//agent-sandbox-controller",
		"ClusterRole//agent-sandbox-controller-extensions",
		"ClusterRoleBinding//agent-sandbox-controller",
		"ClusterRoleBinding//agent-sandbox-controller-extensions",
		"Service/"+ns+"/agent-sandbox-controller",
		"Deployment/"+ns+"/agent-sandbox-controller",
	)
	webhookOnly := []string{
		"Role/" + ns + "/agent-sandbox-controller",
		"RoleBinding/" + ns + "/agent-sandbox-controller",
		"Service/" + ns + "/agent-sandbox-webhook-service",
	}
	for _, c := range []struct {
		version string
		webhook bool
	}{{"v0.5.6", true}, {"v1.0.7", false}} {
		t.Run(c.version, func(t *testing.T) {
			docs := read(t, c.version, bundles.AssetAll)
			want := slices.Clone(common)
			if c.webhook {
				want = append(want, webhookOnly...)
			}
			got := keys(docs)
			slices.Sort(want)
			sorted := slices.Sorted(slices.Values(got))
			if !slices.Equal(sorted, want) {
				t.Errorf("objects:\n got %v\nwant %v", sorted, want)
			}
			if got[0] != "Namespace//"+ns {
				t.Errorf("the namespace must come first, got %s", got[0])
			}
			for _, d := range docs {
				if d.u.GetKind() == "Secret" {
					t.Errorf("bundle ships a Secret %s: the controller creates its own", d.u.GetName())
				}
			}
			checkCRDs(t, docs, c.webhook)
			checkDeployment(t, find(t, docs, "Deployment", "agent-sandbox-controller"), c.version, c.webhook, true)
			checkRBAC(t, docs, c.webhook)
		})
	}
}

func checkCRDs(t *testing.T, docs []doc, webhook bool) {
	t.Helper()
	for _, name := range sandboxapi.CRDNames() {
		crd := typed[apiextensionsv1.CustomResourceDefinition](t, find(t, docs, "CustomResourceDefinition", name))
		if problems, err := crdcheck.Validate(crd); err != nil || problems != "" {
			t.Errorf("%s: the API server would reject it: %v %s", name, err, problems)
		}
		var versions []string
		for _, v := range crd.Spec.Versions {
			versions = append(versions, v.Name)
		}
		if !webhook {
			if !slices.Equal(versions, []string{"v1beta1"}) || crd.Spec.Conversion != nil {
				t.Errorf("%s: v1.0 shape serves only v1beta1 without conversion, got %v %+v", name, versions, crd.Spec.Conversion)
			}
			continue
		}
		if !slices.Equal(versions, []string{"v1beta1", "v1alpha1"}) {
			t.Fatalf("%s: versions %v", name, versions)
		}
		beta, alpha := crd.Spec.Versions[0], crd.Spec.Versions[1]
		if !beta.Served || !beta.Storage || beta.Deprecated {
			t.Errorf("%s v1beta1: served=%v storage=%v deprecated=%v", name, beta.Served, beta.Storage, beta.Deprecated)
		}
		if !alpha.Served || alpha.Storage || !alpha.Deprecated || alpha.DeprecationWarning == nil {
			t.Errorf("%s v1alpha1: served=%v storage=%v deprecated=%v", name, alpha.Served, alpha.Storage, alpha.Deprecated)
		}
		conv := crd.Spec.Conversion
		if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
			t.Fatalf("%s: conversion %+v", name, conv)
		}
		cc := conv.Webhook.ClientConfig
		svc := cc.Service
		if svc == nil || svc.Name != "agent-sandbox-webhook-service" || svc.Namespace != ns ||
			svc.Path == nil || *svc.Path != "/convert" || svc.Port == nil || *svc.Port != 443 {
			t.Errorf("%s: webhook service %+v", name, svc)
		}
		if len(cc.CABundle) != 0 || cc.URL != nil {
			t.Errorf("%s: the caBundle is the controller's to set; the bundle must not carry one", name)
		}
		if !slices.Equal(conv.Webhook.ConversionReviewVersions, []string{"v1", "v1beta1"}) {
			t.Errorf("%s: conversionReviewVersions %v", name, conv.Webhook.ConversionReviewVersions)
		}
	}
}

func checkDeployment(t *testing.T, d doc, version string, webhook, extensions bool) {
	t.Helper()
	dep := typed[appsv1.Deployment](t, d)
	if dep.Labels["app"] != "agent-sandbox-controller" || dep.Spec.Template.Labels["app"] != "agent-sandbox-controller" ||
		dep.Spec.Selector.MatchLabels["app"] != "agent-sandbox-controller" {
		t.Errorf("Deployment labels %v / %v", dep.Labels, dep.Spec.Template.Labels)
	}
	pod := dep.Spec.Template.Spec
	if pod.ServiceAccountName != "agent-sandbox-controller" || len(pod.Containers) != 1 {
		t.Fatalf("pod spec %+v", pod)
	}
	c := pod.Containers[0]
	if want := "registry.k8s.io/agent-sandbox/agent-sandbox-controller:" + version; c.Image != want {
		t.Errorf("image %s, want %s", c.Image, want)
	}
	wantArgs := []string{"--leader-elect=true"}
	if extensions {
		wantArgs = append(wantArgs, "--extensions")
	}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("args %v, want %v", c.Args, wantArgs)
	}
	var ports []int32
	for _, p := range c.Ports {
		ports = append(ports, p.ContainerPort)
	}
	wantPorts := []int32{8080, 8081}
	if webhook {
		wantPorts = append(wantPorts, 9443)
	}
	if !slices.Equal(ports, wantPorts) {
		t.Errorf("container ports %v, want %v", ports, wantPorts)
	}
	for probe, path := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != path || probe.HTTPGet.Port.String() != "healthz" {
			t.Errorf("probe for %s: %+v", path, probe)
		}
	}
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container securityContext not hardened: %+v", sc)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
		psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext not hardened: %+v", psc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
}

func checkRBAC(t *testing.T, docs []doc, webhook bool) {
	t.Helper()
	allows := func(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
		for _, r := range rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	var rules []rbacv1.PolicyRule
	for _, name := range []string{"agent-sandbox-controller", "agent-sandbox-controller-extensions"} {
		rules = append(rules, typed[rbacv1.ClusterRole](t, find(t, docs, "ClusterRole", name)).Rules...)
		crb := typed[rbacv1.ClusterRoleBinding](t, find(t, docs, "ClusterRoleBinding", name))
		if crb.RoleRef.Name != name || len(crb.Subjects) != 1 || crb.Subjects[0].Name != "agent-sandbox-controller" || crb.Subjects[0].Namespace != ns {
			t.Errorf("ClusterRoleBinding %s: %+v", name, crb)
		}
	}
	for _, need := range [][3]string{
		{"", "pods", "create"}, {"", "services", "delete"}, {"", "persistentvolumeclaims", "create"}, {"", "events", "create"},
		{"agents.x-k8s.io", "sandboxes", "watch"}, {"agents.x-k8s.io", "sandboxes/status", "update"},
		{"extensions.agents.x-k8s.io", "sandboxtemplates", "watch"}, {"extensions.agents.x-k8s.io", "sandboxwarmpools/status", "patch"},
		{"extensions.agents.x-k8s.io", "sandboxclaims/status", "patch"}, {"networking.k8s.io", "networkpolicies", "create"},
		{"coordination.k8s.io", "leases", "update"},
	} {
		if !allows(rules, need[0], need[1], need[2]) {
			t.Errorf("the controller may not %s %s.%s", need[2], need[1], need[0])
		}
	}
	if got := allows(rules, "apiextensions.k8s.io", "customresourcedefinitions", "patch"); got != webhook {
		t.Errorf("CRD patch rights = %v, want %v (only the webhook needs them)", got, webhook)
	}
	if !webhook {
		return
	}
	role := typed[rbacv1.Role](t, find(t, docs, "Role", "agent-sandbox-controller"))
	if role.Namespace != ns || !allows(role.Rules, "", "secrets", "create") {
		t.Errorf("Role %+v", role)
	}
	for _, r := range role.Rules {
		if slices.Contains(r.Verbs, "get") && !slices.Equal(r.ResourceNames, []string{"agent-sandbox-webhook-certs"}) {
			t.Errorf("Role grants get on secrets beyond the webhook certificate: %+v", r)
		}
	}
	svc := typed[corev1.Service](t, find(t, docs, "Service", "agent-sandbox-webhook-service"))
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.IntValue() != 9443 ||
		svc.Spec.Selector["app"] != "agent-sandbox-controller" {
		t.Errorf("webhook Service %+v", svc.Spec)
	}
}

// TestFlatAssetsConvergeOnAllInOne applies the flat files in upstream's
// documented order (core, then extensions; the later object wins) on paper
// and checks the result is the all-in-one bundle, object for object.
func TestFlatAssetsConvergeOnAllInOne(t *testing.T) {
	for _, version := range []string{"v0.5.6", "v1.0.7"} {
		t.Run(version, func(t *testing.T) {
			applied := map[string]doc{}
			for _, asset := range []string{bundles.AssetSandbox, bundles.AssetExtensions} {
				for _, d := range read(t, version, asset) {
					applied[d.key()] = d
				}
			}
			all := read(t, version, bundles.AssetAll)
			if len(applied) != len(all) {
				t.Errorf("flat assets hold %d objects, all-in-one %d", len(applied), len(all))
			}
			for _, d := range all {
				got, ok := applied[d.key()]
				if !ok {
					t.Errorf("%s missing from the flat assets", d.key())
					continue
				}
				if !reflect.DeepEqual(got.u.Object, d.u.Object) {
					t.Errorf("%s differs between the flat assets and the all-in-one", d.key())
				}
			}
			// The core file alone runs the controller without extensions.
			core := read(t, version, bundles.AssetSandbox)
			checkDeployment(t, find(t, core, "Deployment", "agent-sandbox-controller"), version, version == "v0.5.6", false)
			if got := keys(core); !slices.Contains(got, "CustomResourceDefinition//sandboxes.agents.x-k8s.io") ||
				slices.ContainsFunc(got, func(k string) bool { return strings.Contains(k, "extensions.agents.x-k8s.io") }) {
				t.Errorf("core asset CRDs: %v", got)
			}
		})
	}
}

// TestOlderRelease checks the ≤ v0.5.1 shape: old asset names, v0.5 webhook
// wiring, and the v1beta1 schema before v0.5.2 added the volumeClaimTemplates
// immutability rule and the warm pool's status.observedGeneration.
func TestOlderRelease(t *testing.T) {
	manifest := read(t, "v0.5.1", bundles.AssetManifest)
	ext := read(t, "v0.5.1", bundles.AssetExtensions)
	docs := append(slices.Clone(manifest), ext...)
	checkCRDs(t, docs, true)
	checkDeployment(t, find(t, manifest, "Deployment", "agent-sandbox-controller"), "v0.5.1", true, false)
	checkDeployment(t, find(t, ext, "Deployment", "agent-sandbox-controller"), "v0.5.1", true, true)
	find(t, manifest, "Service", "agent-sandbox-webhook-service")
	find(t, manifest, "Role", "agent-sandbox-controller")

	sandbox := typed[apiextensionsv1.CustomResourceDefinition](t, find(t, docs, "CustomResourceDefinition", "sandboxes.agents.x-k8s.io"))
	if rules := sandbox.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XValidations; len(rules) != 0 {
		t.Errorf("v0.5.1 Sandbox v1beta1 has CEL rules %v", rules)
	}
	pool := typed[apiextensionsv1.CustomResourceDefinition](t, find(t, docs, "CustomResourceDefinition", "sandboxwarmpools.extensions.agents.x-k8s.io"))
	if _, ok := pool.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["observedGeneration"]; ok {
		t.Error("v0.5.1 warm pool status has observedGeneration")
	}
	// v0.5.6 has both.
	newer := read(t, "v0.5.6", bundles.AssetAll)
	sandbox = typed[apiextensionsv1.CustomResourceDefinition](t, find(t, newer, "CustomResourceDefinition", "sandboxes.agents.x-k8s.io"))
	if rules := sandbox.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].XValidations; len(rules) != 1 {
		t.Errorf("v0.5.6 Sandbox v1beta1 CEL rules %v", rules)
	}
}
