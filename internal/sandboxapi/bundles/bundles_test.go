package bundles_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
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

// The releases the Go module proxy serves from v0.5.0 on, and their shapes.
var (
	allVersions = []string{"v0.5.0", "v0.5.2", "v0.5.3", "v0.5.5", "v0.5.6", "v1.0.1", "v1.0.3"}
	// allInOne are the releases whose tool published sandbox-with-extensions.yaml.
	allInOne = allVersions[1:]
)

// webhook reports whether a release is of the v0.5.x shape (conversion
// webhook, v1alpha1 served).
func webhook(version string) bool { return strings.HasPrefix(version, "v0.") }

// doc is one parsed document of an asset.
type doc struct {
	u   *unstructured.Unstructured
	raw []byte
}

func (d doc) key() string { return d.u.GetKind() + "/" + d.u.GetNamespace() + "/" + d.u.GetName() }

// parse splits an asset into documents and decodes each one both as
// unstructured data and, strictly, as its typed API object (so a field
// unknown to this module's Kubernetes libraries fails the test). Empty
// documents (upstream's concatenated files have some: a file that starts
// with "---" after the "---" the release tool writes) are skipped, as
// kubectl apply skips them.
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
			continue
		}
		if _, _, err := strict.Decode(raw, nil, nil); err != nil {
			t.Errorf("%s: %s does not decode strictly: %v", name, u.GetKind(), err)
		}
		out = append(out, doc{u: u, raw: raw})
	}
	return out
}

// parsed caches read's results: the assets are megabytes of YAML, and
// several tests read each one.
var parsed sync.Map // "<version>/<asset>" -> []doc

// read parses an asset (once per test binary; the first reader reports its
// problems) and returns its documents. Callers must not modify them.
func read(t *testing.T, version, asset string) []doc {
	t.Helper()
	key := version + "/" + asset
	if docs, ok := parsed.Load(key); ok {
		return docs.([]doc)
	}
	data, err := bundles.Read(version, asset)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("ko://")) {
		t.Errorf("%s still holds a ko:// image placeholder", key)
	}
	docs := parse(t, key, data)
	parsed.Store(key, docs)
	return docs
}

// readFlat returns the documents of the core and the extensions asset.
func readFlat(t *testing.T, version string) (core, ext []doc) {
	t.Helper()
	coreAsset := bundles.AssetSandbox
	if !slices.Contains(allInOne, version) {
		coreAsset = bundles.AssetManifest
	}
	return read(t, version, coreAsset), read(t, version, bundles.AssetExtensions)
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
	if got := bundles.Versions(); !slices.Equal(got, allVersions) {
		t.Errorf("Versions = %v, want %v", got, allVersions)
	}
	for _, v := range allVersions {
		want := []string{bundles.AssetExtensions, bundles.AssetAll, bundles.AssetSandbox}
		if v == "v0.5.0" {
			want = []string{bundles.AssetExtensions, bundles.AssetManifest}
		}
		got, err := bundles.Assets(v)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Assets(%s) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"v0.5.1", "v0.5.4", "v1.0.0", "v1.0.2", "v9.9.9"} {
		if _, err := bundles.Assets(v); err == nil {
			t.Errorf("Assets(%s) succeeded: the proxy does not serve that release", v)
		}
		if _, err := bundles.CRDs(v); err == nil {
			t.Errorf("CRDs(%s) succeeded", v)
		}
	}
	if _, err := bundles.Read("v0.5.0", bundles.AssetAll); err == nil {
		t.Error("v0.5.0 has no all-in-one asset, but Read found one")
	}
}

// TestObjectSets checks which objects each release's assets declare: the
// flat assets applied in upstream's order (core, then extensions: the later
// Deployment wins) and the all-in-one hold the same set.
func TestObjectSets(t *testing.T) {
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
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			want := slices.Clone(common)
			if webhook(v) {
				want = append(want, webhookOnly...)
			}
			slices.Sort(want)

			core, ext := readFlat(t, v)
			applied := map[string]bool{}
			for _, d := range append(slices.Clone(core), ext...) {
				applied[d.key()] = true
			}
			if got := slices.Sorted(maps.Keys(applied)); !slices.Equal(got, want) {
				t.Errorf("flat assets:\n got %v\nwant %v", got, want)
			}
			if got := keys(core); got[0] != "Namespace//"+ns {
				t.Errorf("the core asset must declare the namespace first, got %s", got[0])
			}
			if !slices.Contains(allInOne, v) {
				return
			}
			all := read(t, v, bundles.AssetAll)
			got := keys(all)
			if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, want) {
				t.Errorf("all-in-one:\n got %v\nwant %v", sorted, want)
			}
			if got[0] != "Namespace//"+ns {
				t.Errorf("the namespace must come first, got %s", got[0])
			}
			for _, d := range all {
				if d.u.GetKind() == "Secret" || d.u.GetKind() == "ConfigMap" {
					t.Errorf("bundle ships a %s %s", d.u.GetKind(), d.u.GetName())
				}
			}
		})
	}
}

// TestCRDs checks CRDs against the assets and the release's shape.
func TestCRDs(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			crds, err := bundles.CRDs(v)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range crds {
				names = append(names, c.GetName())
			}
			if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(sandboxapi.CRDNames()))) {
				t.Fatalf("CRDs(%s) = %v", v, names)
			}
			// Fresh objects every call.
			crds[0].SetName("changed")
			again, _ := bundles.CRDs(v)
			if again[0].GetName() == "changed" {
				t.Error("CRDs returns shared objects")
			}

			// The same CRDs as the flat assets declare, field for field
			// (for the all-in-one: kustomize kept them as they are).
			core, ext := readFlat(t, v)
			flat := append(slices.Clone(core), ext...)
			for _, c := range again {
				d := find(t, flat, "CustomResourceDefinition", c.GetName())
				if !reflect.DeepEqual(normalize(t, d.u.Object), normalize(t, c.Object)) {
					t.Errorf("%s differs between CRDs() and the flat assets", c.GetName())
				}
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.Object, crd); err != nil {
					t.Fatal(err)
				}
				checkCRD(t, crd, webhook(v))
			}
		})
	}
}

// normalize round-trips through JSON so int64 and float64 numbers compare.
func normalize(t *testing.T, o map[string]any) map[string]any {
	t.Helper()
	js, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(js, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, webhook bool) {
	t.Helper()
	name := crd.Name
	if problems, err := crdcheck.Validate(crd); err != nil || problems != "" {
		t.Errorf("%s: the API server would reject it: %v %s", name, err, problems)
	}
	var versions []string
	for _, v := range crd.Spec.Versions {
		versions = append(versions, v.Name)
	}
	if !webhook {
		if !slices.Equal(versions, []string{"v1beta1"}) || crd.Spec.Conversion != nil {
			t.Errorf("%s: v1.0 serves only v1beta1 without conversion, got %v %+v", name, versions, crd.Spec.Conversion)
		}
		return
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
		svc.Path == nil || *svc.Path != "/convert" || (svc.Port != nil && *svc.Port != 443) {
		t.Errorf("%s: webhook service %+v", name, svc)
	}
	if len(cc.CABundle) != 0 || cc.URL != nil {
		t.Errorf("%s: the caBundle is the controller's to set; the release does not carry one", name)
	}
	if !slices.Equal(conv.Webhook.ConversionReviewVersions, []string{"v1", "v1beta1"}) {
		t.Errorf("%s: conversionReviewVersions %v", name, conv.Webhook.ConversionReviewVersions)
	}
}

// TestSchemaHistory pins what the releases' v1beta1 schemas gained when
// (DESIGN.md, "Real releases"): the Sandbox's volumeClaimTemplates CEL rule
// from v0.5.3, the warm pool's status.observedGeneration from v0.5.6, the
// claim's status.sandbox.serviceFQDN from v1.0.1.
func TestSchemaHistory(t *testing.T) {
	schema := func(t *testing.T, version, crdName string) apiextensionsv1.JSONSchemaProps {
		t.Helper()
		crds, err := bundles.CRDs(version)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range crds {
			if c.GetName() != crdName {
				continue
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.Object, crd); err != nil {
				t.Fatal(err)
			}
			for _, v := range crd.Spec.Versions {
				if v.Name == "v1beta1" {
					return *v.Schema.OpenAPIV3Schema
				}
			}
		}
		t.Fatalf("%s: no v1beta1 %s", version, crdName)
		return apiextensionsv1.JSONSchemaProps{}
	}
	after := func(version, first string) bool {
		return slices.Index(allVersions, version) >= slices.Index(allVersions, first)
	}
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			sandbox := schema(t, v, "sandboxes.agents.x-k8s.io")
			var rules []string
			for _, r := range sandbox.Properties["spec"].XValidations {
				rules = append(rules, r.Message)
			}
			if got, want := slices.ContainsFunc(rules, func(m string) bool { return strings.Contains(m, "volumeClaimTemplates is immutable") }), after(v, "v0.5.3"); got != want {
				t.Errorf("Sandbox volumeClaimTemplates immutability rule: %v, want %v (rules %q)", got, want, rules)
			}
			pool := schema(t, v, "sandboxwarmpools.extensions.agents.x-k8s.io")
			if _, got := pool.Properties["status"].Properties["observedGeneration"]; got != after(v, "v0.5.6") {
				t.Errorf("warm pool status.observedGeneration present = %v", got)
			}
			claim := schema(t, v, "sandboxclaims.extensions.agents.x-k8s.io")
			if _, got := claim.Properties["status"].Properties["sandbox"].Properties["serviceFQDN"]; got != after(v, "v1.0.1") {
				t.Errorf("claim status.sandbox.serviceFQDN present = %v", got)
			}
		})
	}
}

// TestControllerDeployment checks the controller Deployment of each asset:
// upstream's image for the tag, --extensions where the extensions run, the
// ports, and the optional agent-sandbox-config ConfigMap mounted wherever
// the extensions run.
func TestControllerDeployment(t *testing.T) {
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			core, ext := readFlat(t, v)
			checkDeployment(t, find(t, core, "Deployment", "agent-sandbox-controller"), v, false, webhook(v))
			// v0.5.0's k8s/extensions.controller.yaml declares no webhook
			// port (its controller.yaml does): applied second, its
			// Deployment drops containerPort 9443. The webhook Service's
			// numeric targetPort reaches the pod all the same. v0.5.2 added
			// the port.
			extDep := checkDeployment(t, find(t, ext, "Deployment", "agent-sandbox-controller"), v, true, webhook(v) && v != "v0.5.0")
			if !slices.Contains(allInOne, v) {
				return
			}
			allDep := checkDeployment(t, find(t, read(t, v, bundles.AssetAll), "Deployment", "agent-sandbox-controller"), v, true, webhook(v))
			// k8s/kustomization.yaml's patch makes the core Deployment
			// "equivalent to extensions.controller.yaml: same args, same
			// volumes" (its own comment); check the whole container and
			// volumes, not just those.
			if !reflect.DeepEqual(extDep.Spec.Template.Spec, allDep.Spec.Template.Spec) {
				t.Errorf("the all-in-one's controller pod differs from extensions.yaml's:\n%+v\n%+v", allDep.Spec.Template.Spec, extDep.Spec.Template.Spec)
			}
		})
	}
}

func checkDeployment(t *testing.T, d doc, version string, extensions, webhookPort bool) *appsv1.Deployment {
	t.Helper()
	dep := typed[appsv1.Deployment](t, d)
	if dep.Namespace != ns || dep.Labels["app"] != "agent-sandbox-controller" || dep.Spec.Template.Labels["app"] != "agent-sandbox-controller" ||
		dep.Spec.Selector.MatchLabels["app"] != "agent-sandbox-controller" {
		t.Errorf("Deployment %s labels %v / %v", dep.Namespace, dep.Labels, dep.Spec.Template.Labels)
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
	if webhookPort {
		wantPorts = append(wantPorts, 9443)
	}
	if !slices.Equal(ports, wantPorts) {
		t.Errorf("container ports %v, want %v", ports, wantPorts)
	}
	mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == "config-volume" && m.MountPath == "/etc/sandbox-config" && m.ReadOnly
	}) && slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
		return v.Name == "config-volume" && v.ConfigMap != nil && v.ConfigMap.Name == "agent-sandbox-config" &&
			v.ConfigMap.Optional != nil && *v.ConfigMap.Optional
	})
	if mounted != extensions {
		t.Errorf("agent-sandbox-config mounted at /etc/sandbox-config: %v, want %v", mounted, extensions)
	}
	return dep
}

// TestRBAC checks the controller's rights in every release: what its
// reconcilers need, and the webhook's extras (CRD patch rights, the
// certificate Secret's Role) only on v0.5.x.
func TestRBAC(t *testing.T) {
	allows := func(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
		for _, r := range rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for _, v := range allVersions {
		t.Run(v, func(t *testing.T) {
			core, ext := readFlat(t, v)
			docs := append(slices.Clone(core), ext...)
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
			if got := allows(rules, "apiextensions.k8s.io", "customresourcedefinitions", "patch"); got != webhook(v) {
				t.Errorf("CRD patch rights = %v, want %v (only the webhook needs them)", got, webhook(v))
			}
			if !webhook(v) {
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
		})
	}
}

// TestFlatAssetsConvergeOnAllInOne applies the flat files in upstream's
// documented order (core, then extensions; the later object wins) on paper
// and checks the result is the all-in-one, object for object.
func TestFlatAssetsConvergeOnAllInOne(t *testing.T) {
	for _, v := range allInOne {
		t.Run(v, func(t *testing.T) {
			applied := map[string]doc{}
			core, ext := readFlat(t, v)
			for _, d := range append(slices.Clone(core), ext...) {
				applied[d.key()] = d
			}
			all := read(t, v, bundles.AssetAll)
			if len(applied) != len(all) {
				t.Errorf("flat assets hold %d objects, all-in-one %d", len(applied), len(all))
			}
			for _, d := range all {
				got, ok := applied[d.key()]
				if !ok {
					t.Errorf("%s missing from the flat assets", d.key())
					continue
				}
				if !reflect.DeepEqual(normalize(t, got.u.Object), normalize(t, d.u.Object)) {
					t.Errorf("%s differs between the flat assets and the all-in-one", d.key())
				}
			}
			if got := keys(core); !slices.Contains(got, "CustomResourceDefinition//sandboxes.agents.x-k8s.io") ||
				slices.ContainsFunc(got, func(k string) bool { return strings.Contains(k, "extensions.agents.x-k8s.io") }) {
				t.Errorf("core asset CRDs: %v", got)
			}
		})
	}
}
