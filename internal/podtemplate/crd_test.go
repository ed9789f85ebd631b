package podtemplate

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// crdAdmission does what the API server does with a custom resource write,
// from the CRDs of releases.Default as its release assets have them
// (package bundles: upstream's own files): drop unknown fields (reported, as
// strict field validation does), apply the schema's defaults, then validate
// against the OpenAPI schema, list-map keys and CEL rules. Reading back
// applies the defaults again, so the admitted object is what a GET returns.
// (internal/sandboxapi/internal/crdcheck validates CRDs, not objects, and is
// not importable from here.)
type crdAdmission struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

var admissions sync.Map // CRD name -> *crdAdmission

func admissionFor(t *testing.T, crdName string) *crdAdmission {
	t.Helper()
	a, err := loadAdmission(crdName)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func loadAdmission(crdName string) (*crdAdmission, error) {
	if a, ok := admissions.Load(crdName); ok {
		return a.(*crdAdmission), nil
	}
	all, err := releaseCRDs(releases.Default.Name)
	if err != nil {
		return nil, err
	}
	var crd *apiextensionsv1.CustomResourceDefinition
	for _, c := range all {
		if c.Name == crdName {
			crd = c
		}
	}
	if crd == nil {
		return nil, fmt.Errorf("no CRD %s in release %s", crdName, releases.Default.Name)
	}
	schema := v1beta1Schema(crd)
	if schema == nil {
		return nil, fmt.Errorf("CRD %s of release %s serves no %s schema", crdName, releases.Default.Name, agentsv1beta1.GroupVersion.Version)
	}
	var props apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(schema, &props, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(&props)
	if err != nil {
		return nil, err
	}
	v, _, err := apiservervalidation.NewSchemaValidator(&props)
	if err != nil {
		return nil, err
	}
	a := &crdAdmission{structural: s, validator: v, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}
	admissions.Store(crdName, a)
	return a, nil
}

// releaseCRDs returns the four CRDs of an agent-sandbox release as its
// release assets have them.
func releaseCRDs(version string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	objs, err := bundles.CRDs(version)
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(objs))
	for _, u := range objs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, fmt.Errorf("%s: CRD %s: %w", version, u.GetName(), err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// v1beta1Schema is the v1beta1 schema of crd (v0.5.x CRDs also serve
// v1alpha1, which the provider never writes), nil when it serves none.
func v1beta1Schema(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.JSONSchemaProps {
	for _, v := range crd.Spec.Versions {
		if v.Name == agentsv1beta1.GroupVersion.Version && v.Served && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return nil
}

// admit returns the object as stored and read back, and every problem the
// server would report (unknown fields included).
func (a *crdAdmission) admit(obj map[string]any) (map[string]any, []string) {
	var problems []string
	pruned := structuralpruning.PruneWithOptions(obj, a.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range pruned {
		problems = append(problems, "unknown field "+p)
	}
	structuraldefaulting.Default(obj, a.structural)
	for _, e := range apiservervalidation.ValidateCustomResource(nil, obj, a.validator) {
		problems = append(problems, e.Error())
	}
	for _, e := range listtype.ValidateListSetsAndMaps(nil, a.structural, obj) {
		problems = append(problems, e.Error())
	}
	if a.cel != nil {
		errs, _ := a.cel.Validate(context.Background(), nil, a.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		for _, e := range errs {
			problems = append(problems, e.Error())
		}
	}
	sort.Strings(problems)
	structuraldefaulting.Default(obj, a.structural)
	return obj, problems
}

// toUnstructured is the JSON tree of v.
func toUnstructured(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func sandboxWith(pt agentsv1beta1.PodTemplate) *agentsv1beta1.Sandbox {
	sb := &agentsv1beta1.Sandbox{}
	sb.APIVersion = agentsv1beta1.GroupVersion.String()
	sb.Kind = "Sandbox"
	sb.Name = "sb"
	sb.Namespace = "default"
	sb.Spec.PodTemplate = pt
	return sb
}

// serverRoundTrip writes pt as a Sandbox through the CRD admission and
// reads it back into the typed API, as the provider's Read will: defaults
// added, quantities canonical, empty values gone. Any admission problem
// fails the test.
func serverRoundTrip(t *testing.T, pt agentsv1beta1.PodTemplate) agentsv1beta1.PodTemplate {
	t.Helper()
	live, err := storeSandbox(pt)
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// storeSandbox is serverRoundTrip without a *testing.T, for the test
// resource of the end-to-end test.
func storeSandbox(pt agentsv1beta1.PodTemplate) (agentsv1beta1.PodTemplate, error) {
	a, err := loadAdmission("sandboxes.agents.x-k8s.io")
	if err != nil {
		return pt, err
	}
	b, err := json.Marshal(sandboxWith(pt))
	if err != nil {
		return pt, err
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return pt, err
	}
	stored, problems := a.admit(obj)
	if len(problems) > 0 {
		return pt, fmt.Errorf("the API server would refuse the Sandbox: %v", problems)
	}
	if b, err = json.Marshal(stored); err != nil {
		return pt, err
	}
	var sb agentsv1beta1.Sandbox
	if err := json.Unmarshal(b, &sb); err != nil {
		return pt, err
	}
	return sb.Spec.PodTemplate, nil
}

// TestExpandPassesCRDValidation: a pod template using every typed attribute
// (and an override) is accepted by the Sandbox and SandboxTemplate CRDs'
// validation, with no field pruned as unknown.
func TestExpandPassesCRDValidation(t *testing.T) {
	h := newHarness(t)
	pt, diags := Expand(context.Background(), h.plan(fullPod(), fullPodExtra))
	if diags.HasError() {
		t.Fatal(diags)
	}
	if _, problems := admissionFor(t, "sandboxes.agents.x-k8s.io").admit(toUnstructured(t, sandboxWith(pt))); len(problems) > 0 {
		t.Errorf("Sandbox: %v", problems)
	}
	tmpl := &extv1beta1.SandboxTemplate{}
	tmpl.APIVersion = extv1beta1.GroupVersion.String()
	tmpl.Kind = "SandboxTemplate"
	tmpl.Name = "tmpl"
	tmpl.Namespace = "default"
	tmpl.Spec.PodTemplate = pt
	if _, problems := admissionFor(t, "sandboxtemplates.extensions.agents.x-k8s.io").admit(toUnstructured(t, tmpl)); len(problems) > 0 {
		t.Errorf("SandboxTemplate: %v", problems)
	}
}

// TestCRDAdmissionCatchesProblems proves the admission helper is not a
// rubber stamp: the problems it must find are found.
func TestCRDAdmissionCatchesProblems(t *testing.T) {
	a := admissionFor(t, "sandboxes.agents.x-k8s.io")
	good := toUnstructured(t, sandboxWith(agentsv1beta1.PodTemplate{}))
	spec := good["spec"].(map[string]any)["podTemplate"].(map[string]any)["spec"].(map[string]any)
	spec["containers"] = []any{
		map[string]any{"name": "a", "image": "x", "bogus": true},
		map[string]any{"name": "a", "image": "y"},
	}
	_, problems := a.admit(good)
	want := map[string]bool{"unknown field": false, "Duplicate value": false}
	for _, p := range problems {
		for w := range want {
			if strings.Contains(p, w) {
				want[w] = true
			}
		}
	}
	for w, found := range want {
		if !found {
			t.Errorf("admission did not report %q; got %v", w, problems)
		}
	}
}

// fullPodExtra declares the volume claim template fullPod mounts.
var fullPodExtra = map[string]any{"claim_templates": []any{"workspace"}}

// fullPod uses every typed attribute at least once.
func fullPod() map[string]any {
	main := container("main")
	main["image_pull_policy"] = "IfNotPresent"
	main["command"] = []any{"python", "-m", "http.server"}
	main["args"] = []any{"8888"}
	main["working_dir"] = "/work"
	main["env"] = []any{
		map[string]any{"name": "MODE", "value": "sandbox"},
		map[string]any{"name": "TOKEN", "value_from": map[string]any{"secret_key_ref": map[string]any{"name": "api", "key": "token", "optional": true}}},
		map[string]any{"name": "CONF", "value_from": map[string]any{"config_map_key_ref": map[string]any{"name": "conf", "key": "mode"}}},
		map[string]any{"name": "POD_IP", "value_from": map[string]any{"field_ref": map[string]any{"field_path": "status.podIP"}}},
	}
	main["ports"] = []any{
		map[string]any{"name": "http", "container_port": 8888},
		map[string]any{"name": "metrics", "container_port": 9090, "protocol": "UDP"},
	}
	main["resources"] = map[string]any{
		"limits":   map[string]any{"cpu": "1000m", "memory": "1024Mi", "ephemeral-storage": "2Gi"},
		"requests": map[string]any{"cpu": "250m", "memory": "512Mi"},
	}
	main["volume_mounts"] = []any{
		map[string]any{"name": "scratch", "mount_path": "/tmp"},
		map[string]any{"name": "conf", "mount_path": "/etc/app", "read_only": true, "sub_path": "app"},
		map[string]any{"name": "workspace", "mount_path": "/work"},
	}
	main["readiness_probe"] = map[string]any{
		"http_get":          map[string]any{"path": "/healthz", "port": "http", "scheme": "HTTP", "http_headers": []any{map[string]any{"name": "X-Probe", "value": "1"}}},
		"period_seconds":    5,
		"failure_threshold": 3,
	}
	main["liveness_probe"] = map[string]any{
		"tcp_socket":            map[string]any{"port": 8888},
		"initial_delay_seconds": 10,
		"timeout_seconds":       2,
	}
	main["startup_probe"] = map[string]any{
		"grpc":              map[string]any{"port": 9090},
		"success_threshold": 1,
	}
	main["security_context"] = map[string]any{
		"read_only_root_filesystem": true,
		"run_as_user":               1000,
		"run_as_group":              1000,
		"seccomp_profile":           map[string]any{"type": "RuntimeDefault"},
	}
	sidecar := container("proxy")
	sidecar["readiness_probe"] = map[string]any{"exec": map[string]any{"command": []any{"/bin/true"}}}
	setup := container("setup")
	setup["command"] = []any{"sh", "-c", "echo ready"}
	return map[string]any{
		"labels":      map[string]any{"app": "agent", "example.com/team": "ml"},
		"annotations": map[string]any{"example.com/owner": "platform"},
		"containers":  []any{main},
		"init_containers": []any{
			setup,
			sidecar,
		},
		"volumes": []any{
			map[string]any{"name": "scratch", "empty_dir": map[string]any{"medium": "Memory", "size_limit": "512Mi"}},
			map[string]any{"name": "conf", "config_map": map[string]any{"name": "app-conf", "items": []any{map[string]any{"key": "app.yaml", "path": "app/app.yaml"}}, "default_mode": "0440"}},
			map[string]any{"name": "creds", "secret": map[string]any{"secret_name": "creds", "optional": true}},
			map[string]any{"name": "data", "persistent_volume_claim": map[string]any{"claim_name": "shared-data", "read_only": true}},
		},
		"service_account_name": "sandbox",
		"node_selector":        map[string]any{"sandbox.gke.io/runtime": "gvisor"},
		"tolerations": []any{
			map[string]any{"key": "sandbox.gke.io/runtime", "operator": "Equal", "value": "gvisor", "effect": "NoSchedule"},
			map[string]any{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "toleration_seconds": 30},
		},
		"affinity": map[string]any{
			"node_affinity": map[string]any{"required": []any{map[string]any{"match_expressions": []any{
				map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64", "arm64"}},
			}}}},
			"pod_anti_affinity": map[string]any{"preferred": []any{map[string]any{
				"weight": 100, "topology_key": "kubernetes.io/hostname",
				"label_selector": map[string]any{
					"match_labels":      map[string]any{"app": "agent"},
					"match_expressions": []any{map[string]any{"key": "tier", "operator": "Exists"}},
				},
			}}},
		},
		"dns_policy": "None",
		"dns_config": map[string]any{
			"nameservers": []any{"8.8.8.8", "1.1.1.1"},
			"searches":    []any{"example.com"},
			"options":     []any{map[string]any{"name": "ndots", "value": "2"}, map[string]any{"name": "edns0"}},
		},
		"image_pull_secrets":               []any{"registry"},
		"priority_class_name":              "sandbox-high",
		"termination_grace_period_seconds": 5,
		"security_context": map[string]any{
			"run_as_user": 1000, "run_as_group": 1000, "fs_group": 2000, "supplemental_groups": []any{3000},
		},
		"pod_spec_overrides": `{"initContainers":[{"name":"proxy","restartPolicy":"Always"}],` +
			`"containers":[{"name":"main","lifecycle":{"preStop":{"exec":{"command":["/drain"]}}}}],` +
			`"volumes":[{"name":"token","projected":{"sources":[{"serviceAccountToken":{"path":"token","audience":"vault"}}]}}],` +
			`"hostname":"agent","enableServiceLinks":false}`,
	}
}
