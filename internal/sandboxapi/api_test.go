package sandboxapi_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
)

func TestAddToSchemeRegistersAllKinds(t *testing.T) {
	s := runtime.NewScheme()
	if err := sandboxapi.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{
		sandboxapi.SandboxGVK,
		agentsv1beta1.GroupVersion.WithKind(sandboxapi.SandboxListKind),
		sandboxapi.SandboxTemplateGVK,
		extv1beta1.GroupVersion.WithKind(sandboxapi.SandboxTemplateListKind),
		sandboxapi.SandboxWarmPoolGVK,
		extv1beta1.GroupVersion.WithKind(sandboxapi.SandboxWarmPoolListKind),
		sandboxapi.SandboxClaimGVK,
		extv1beta1.GroupVersion.WithKind(sandboxapi.SandboxClaimListKind),
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
	if got := sandboxapi.SandboxGVR.String(); got != "agents.x-k8s.io/v1beta1, Resource=sandboxes" {
		t.Errorf("SandboxGVR = %s", got)
	}
	if got := sandboxapi.SandboxWarmPoolGVR.String(); got != "extensions.agents.x-k8s.io/v1beta1, Resource=sandboxwarmpools" {
		t.Errorf("SandboxWarmPoolGVR = %s", got)
	}
	want := []string{
		"sandboxes.agents.x-k8s.io",
		"sandboxclaims.extensions.agents.x-k8s.io",
		"sandboxtemplates.extensions.agents.x-k8s.io",
		"sandboxwarmpools.extensions.agents.x-k8s.io",
	}
	got := sandboxapi.CRDNames()
	if len(got) != len(want) {
		t.Fatalf("CRDNames = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("CRDNames[%d] = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestProviderImportsOnlyUpstreamAPI guards what the provider binary takes
// from upstream's module: its two API packages (plain types on
// k8s.io/apimachinery), never its controllers, clients or
// controller-runtime.
func TestProviderImportsOnlyUpstreamAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the provider; skipped with -short")
	}
	const provider = "github.com/agentsandbox/terraform-provider-agentsandbox"
	out, err := exec.Command("go", "list", "-deps", provider).Output()
	if err != nil {
		t.Skipf("go list -deps %s failed (is the module mid-edit?): %v", provider, err)
	}
	var got []string
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "sigs.k8s.io/agent-sandbox/") || strings.HasPrefix(dep, "sigs.k8s.io/controller-runtime/") {
			got = append(got, dep)
		}
	}
	want := []string{"sigs.k8s.io/agent-sandbox/api/v1beta1", "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("the provider imports %v from upstream, want only %v", got, want)
	}
}

// TestUpstreamTypesCoverEveryRelease checks that upstream's v1.0.3 Go types,
// which the provider decodes every object into, know every field of the
// v1beta1 schema that each supported release serves (its CRDs as its
// release assets have them, package bundles): the provider talks to v0.5.x
// clusters too, and a field such a release serves that the types lack would
// be dropped on read without a word. The names and kinds of the four
// CRDs are checked against sandboxapi's GVRs and CRD names on the way.
func TestUpstreamTypesCoverEveryRelease(t *testing.T) {
	types := map[string]reflect.Type{
		sandboxapi.SandboxCRDName:         reflect.TypeFor[agentsv1beta1.Sandbox](),
		sandboxapi.SandboxTemplateCRDName: reflect.TypeFor[extv1beta1.SandboxTemplate](),
		sandboxapi.SandboxWarmPoolCRDName: reflect.TypeFor[extv1beta1.SandboxWarmPool](),
		sandboxapi.SandboxClaimCRDName:    reflect.TypeFor[extv1beta1.SandboxClaim](),
	}
	gvrs := map[string]schema.GroupVersionResource{
		sandboxapi.SandboxCRDName:         sandboxapi.SandboxGVR,
		sandboxapi.SandboxTemplateCRDName: sandboxapi.SandboxTemplateGVR,
		sandboxapi.SandboxWarmPoolCRDName: sandboxapi.SandboxWarmPoolGVR,
		sandboxapi.SandboxClaimCRDName:    sandboxapi.SandboxClaimGVR,
	}
	gvks := map[string]schema.GroupVersionKind{
		sandboxapi.SandboxCRDName:         sandboxapi.SandboxGVK,
		sandboxapi.SandboxTemplateCRDName: sandboxapi.SandboxTemplateGVK,
		sandboxapi.SandboxWarmPoolCRDName: sandboxapi.SandboxWarmPoolGVK,
		sandboxapi.SandboxClaimCRDName:    sandboxapi.SandboxClaimGVK,
	}
	for _, version := range bundles.Versions() {
		objs, err := bundles.CRDs(version)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != len(types) {
			t.Errorf("%s: %d CRDs, want %d", version, len(objs), len(types))
		}
		for _, u := range objs {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
				t.Fatalf("%s: %s: %v", version, u.GetName(), err)
			}
			typ, ok := types[crd.Name]
			if !ok {
				t.Errorf("%s: unexpected CRD %s", version, crd.Name)
				continue
			}
			gvr, gvk := gvrs[crd.Name], gvks[crd.Name]
			if crd.Spec.Group != gvr.Group || crd.Spec.Names.Plural != gvr.Resource || crd.Spec.Names.Kind != gvk.Kind ||
				crd.Spec.Names.ListKind != gvk.Kind+"List" {
				t.Errorf("%s: %s names %s/%s %s (list %s), want %s", version, crd.Name, crd.Spec.Group,
					crd.Spec.Names.Plural, crd.Spec.Names.Kind, crd.Spec.Names.ListKind, gvr)
			}
			var served *apiextensionsv1.CustomResourceValidation
			for _, v := range crd.Spec.Versions {
				if v.Name == gvr.Version && v.Served {
					served = v.Schema
				}
			}
			if served == nil || served.OpenAPIV3Schema == nil {
				t.Errorf("%s: %s serves no %s schema", version, crd.Name, gvr.Version)
				continue
			}
			for _, missing := range uncovered(*served.OpenAPIV3Schema, typ, "") {
				t.Errorf("%s: %s serves %s, which %s does not have", version, crd.Name, missing, typ)
			}
		}
	}
}

// uncovered lists the property paths of s that Go type t has no JSON field
// for. It stops where the schema does not describe the value's fields
// (metadata, quantities, int-or-string, preserved unknown fields) and at
// Kubernetes' own types (the PodSpec, a PVC spec, NetworkPolicy rules): those
// follow the k8s.io/api version, not agent-sandbox's. (v0.5.0's CRDs, built
// with Kubernetes 1.35, serve the PodSpec's alpha workloadRef, which
// Kubernetes 1.36 replaced and k8s.io/api v0.37 no longer has: the
// project's former copies of the types used the same core/v1 PodSpec, so
// the provider never read that field.)
func uncovered(s apiextensionsv1.JSONSchemaProps, t reflect.Type, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && !strings.HasPrefix(t.PkgPath(), "sigs.k8s.io/agent-sandbox/") {
		return nil
	}
	var out []string
	switch {
	case len(s.Properties) > 0:
		if t.Kind() != reflect.Struct {
			return []string{fmt.Sprintf("%s (an object; the type has %s)", path, t)}
		}
		fields := jsonFields(t)
		for name, p := range s.Properties {
			f, ok := fields[name]
			if !ok {
				out = append(out, path+"."+name)
				continue
			}
			out = append(out, uncovered(p, f, path+"."+name)...)
		}
	case s.Items != nil && s.Items.Schema != nil:
		if t.Kind() != reflect.Slice {
			return []string{fmt.Sprintf("%s (a list; the type has %s)", path, t)}
		}
		out = append(out, uncovered(*s.Items.Schema, t.Elem(), path+"[]")...)
	case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		if t.Kind() != reflect.Map {
			return []string{fmt.Sprintf("%s (a map; the type has %s)", path, t)}
		}
		out = append(out, uncovered(*s.AdditionalProperties.Schema, t.Elem(), path+"{}")...)
	}
	return out
}

// jsonFields maps the JSON names of struct t's fields, inlined and embedded
// structs included, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(","+opts+",", ",inline,")) {
			for n, ft := range jsonFields(f.Type) {
				out[n] = ft
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// TestOmitEmptyMetadata: the empty metadata objects upstream's types encode
// are dropped, and only those.
func TestOmitEmptyMetadata(t *testing.T) {
	claim := extv1beta1.SandboxClaimSpec{
		WarmPoolRef:          extv1beta1.SandboxWarmPoolRef{Name: "p"},
		VolumeClaimTemplates: []agentsv1beta1.PersistentVolumeClaimTemplate{{}, {EmbeddedObjectMetadata: agentsv1beta1.EmbeddedObjectMetadata{Name: "data"}}},
	}
	sandbox := agentsv1beta1.SandboxSpec{}
	labelled := agentsv1beta1.SandboxSpec{}
	labelled.PodTemplate.ObjectMeta.Labels = map[string]string{"a": "b"}
	labelledClaim := extv1beta1.SandboxClaimSpec{AdditionalPodMetadata: agentsv1beta1.PodMetadata{Annotations: map[string]string{"c": "d"}}}
	for _, c := range []struct {
		name string
		spec any
		want string
	}{
		{"claim", claim, `{"volumeClaimTemplates":[{"spec":{"resources":{}}},{"metadata":{"name":"data"},"spec":{"resources":{}}}],"warmPoolRef":{"name":"p"}}`},
		{"sandbox", sandbox, `{"podTemplate":{"spec":{"containers":null}}}`},
		{"labelled sandbox", labelled, `{"podTemplate":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":null}}}`},
		{"labelled claim", labelledClaim, `{"additionalPodMetadata":{"annotations":{"c":"d"}},"warmPoolRef":{"name":""}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			sandboxapi.OmitEmptyMetadata(m)
			if b, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("got  %s\nwant %s", b, c.want)
			}
		})
	}
}
