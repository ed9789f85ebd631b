package crds_test

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/crds"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/internal/crdcheck"
)

// want describes what upstream serves for one CRD.
type want struct {
	name, group, kind, shortName string
	status                       bool
	scale                        *apiextensionsv1.CustomResourceSubresourceScale
	columns                      []string
}

var selector = ".status.selector"

var wants = []want{
	{
		name: "sandboxes.agents.x-k8s.io", group: "agents.x-k8s.io", kind: "Sandbox", shortName: "sandbox",
		status: true, columns: []string{"Ready", "Reason", "Age"},
	},
	{
		name: "sandboxclaims.extensions.agents.x-k8s.io", group: "extensions.agents.x-k8s.io", kind: "SandboxClaim",
		shortName: "sandboxclaim", status: true, columns: []string{"Ready", "Sandbox", "Reason", "Age"},
	},
	{
		name: "sandboxtemplates.extensions.agents.x-k8s.io", group: "extensions.agents.x-k8s.io", kind: "SandboxTemplate",
		shortName: "sandboxtemplate",
	},
	{
		name: "sandboxwarmpools.extensions.agents.x-k8s.io", group: "extensions.agents.x-k8s.io", kind: "SandboxWarmPool",
		shortName: "swp", status: true, columns: []string{"Ready", "Desired", "Age"},
		scale: &apiextensionsv1.CustomResourceSubresourceScale{
			SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: &selector,
		},
	},
}

func TestV1beta1CRDs(t *testing.T) {
	got, err := crds.V1beta1()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(wants) {
		t.Fatalf("got %d CRDs, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		crd := got[i]
		t.Run(w.kind, func(t *testing.T) {
			checkCRD(t, crd, w, "v1beta1", false)
			if problems, err := crdcheck.Validate(crd); err != nil || problems != "" {
				t.Errorf("the API server would reject %s: %v %s", crd.Name, err, problems)
			}
		})
	}
}

func TestV1alpha1CRDs(t *testing.T) {
	got, err := crds.V1alpha1()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range wants {
		crd := got[i]
		t.Run(w.kind, func(t *testing.T) {
			if w.kind == "Sandbox" {
				// v1alpha1 Sandbox had spec.replicas (0 or 1) and a scale subresource.
				w.scale = &apiextensionsv1.CustomResourceSubresourceScale{
					SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: &selector,
				}
			}
			w.columns = map[string][]string{"SandboxWarmPool": {"Ready", "Desired", "Age"}}[w.kind]
			checkCRD(t, crd, w, "v1alpha1", true)
			if problems, err := crdcheck.Validate(crd); err != nil || problems != "" {
				t.Errorf("the API server would reject %s: %v %s", crd.Name, err, problems)
			}
		})
	}
}

func checkCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, w want, version string, deprecated bool) {
	t.Helper()
	if crd.Name != w.name || crd.Spec.Group != w.group || crd.Spec.Names.Kind != w.kind {
		t.Errorf("identity: %s %s %s", crd.Name, crd.Spec.Group, crd.Spec.Names.Kind)
	}
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("scope %s", crd.Spec.Scope)
	}
	if !slices.Equal(crd.Spec.Names.ShortNames, []string{w.shortName}) {
		t.Errorf("short names %v, want [%s]", crd.Spec.Names.ShortNames, w.shortName)
	}
	if crd.Spec.Conversion != nil {
		t.Errorf("generated CRDs carry no conversion block (the bundle generator adds it)")
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("versions: %d", len(crd.Spec.Versions))
	}
	v := crd.Spec.Versions[0]
	if v.Name != version || !v.Served || !v.Storage || v.Deprecated != deprecated {
		t.Errorf("version %s served=%v storage=%v deprecated=%v", v.Name, v.Served, v.Storage, v.Deprecated)
	}
	if deprecated && v.DeprecationWarning == nil {
		t.Error("deprecated version without a warning")
	}
	sub := v.Subresources
	if got := sub != nil && sub.Status != nil; got != w.status {
		t.Errorf("status subresource: %v, want %v", got, w.status)
	}
	switch {
	case w.scale == nil && sub != nil && sub.Scale != nil:
		t.Errorf("unexpected scale subresource %+v", sub.Scale)
	case w.scale != nil && (sub == nil || sub.Scale == nil):
		t.Errorf("missing scale subresource")
	case w.scale != nil:
		s := sub.Scale
		if s.SpecReplicasPath != w.scale.SpecReplicasPath || s.StatusReplicasPath != w.scale.StatusReplicasPath ||
			s.LabelSelectorPath == nil || *s.LabelSelectorPath != *w.scale.LabelSelectorPath {
			t.Errorf("scale subresource %+v", s)
		}
	}
	var cols []string
	for _, c := range v.AdditionalPrinterColumns {
		cols = append(cols, c.Name)
	}
	if !slices.Equal(cols, w.columns) {
		t.Errorf("printer columns %v, want %v", cols, w.columns)
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		t.Fatal("no schema")
	}
	if !slices.Contains(v.Schema.OpenAPIV3Schema.Required, "spec") {
		t.Error("spec is not required")
	}
}

// prop walks a schema by property names.
func prop(t *testing.T, s apiextensionsv1.JSONSchemaProps, path ...string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	for _, p := range path {
		next, ok := s.Properties[p]
		if !ok {
			t.Fatalf("no property %q on the way to %v", p, path)
		}
		s = next
	}
	return s
}

func enum(s apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	for _, e := range s.Enum {
		out = append(out, string(e.Raw))
	}
	return out
}

func def(s apiextensionsv1.JSONSchemaProps) string {
	if s.Default == nil {
		return ""
	}
	return string(s.Default.Raw)
}

// TestValidationAndDefaults pins the enums, defaults, minimums, required
// fields and CEL rule that upstream's v1beta1 schema has.
func TestValidationAndDefaults(t *testing.T) {
	all, err := crds.V1beta1()
	if err != nil {
		t.Fatal(err)
	}
	schema := func(i int) apiextensionsv1.JSONSchemaProps { return *all[i].Spec.Versions[0].Schema.OpenAPIV3Schema }
	sandbox, claim, template, pool := schema(0), schema(1), schema(2), schema(3)

	type check struct {
		what     string
		got      apiextensionsv1.JSONSchemaProps
		enum     []string
		def      string
		minimum  *float64
		required []string
	}
	zero := 0.0
	checks := []check{
		{what: "Sandbox spec", got: prop(t, sandbox, "spec"), required: []string{"podTemplate"}},
		{what: "Sandbox podTemplate", got: prop(t, sandbox, "spec", "podTemplate"), required: []string{"spec"}},
		{what: "Sandbox operatingMode", got: prop(t, sandbox, "spec", "operatingMode"), enum: []string{`"Running"`, `"Suspended"`}, def: `"Running"`},
		{what: "Sandbox shutdownPolicy", got: prop(t, sandbox, "spec", "shutdownPolicy"), enum: []string{`"Delete"`, `"Retain"`}, def: `"Retain"`},
		{what: "Template networkPolicyManagement", got: prop(t, template, "spec", "networkPolicyManagement"), enum: []string{`"Managed"`, `"Unmanaged"`}, def: `"Managed"`},
		{what: "Template envVarsInjectionPolicy", got: prop(t, template, "spec", "envVarsInjectionPolicy"), enum: []string{`"Allowed"`, `"Overrides"`, `"Disallowed"`}, def: `"Disallowed"`},
		{what: "Template volumeClaimTemplatesPolicy", got: prop(t, template, "spec", "volumeClaimTemplatesPolicy"), enum: []string{`"Disallowed"`, `"Allowed"`, `"Overrides"`}, def: `"Disallowed"`},
		{what: "Pool spec", got: prop(t, pool, "spec"), required: []string{"sandboxTemplateRef"}},
		{what: "Pool replicas", got: prop(t, pool, "spec", "replicas"), def: `1`, minimum: &zero},
		{what: "Pool updateStrategy.type", got: prop(t, pool, "spec", "updateStrategy", "type"), enum: []string{`"Recreate"`, `"OnReplenish"`}, def: `"OnReplenish"`},
		{what: "Pool observedGeneration", got: prop(t, pool, "status", "observedGeneration"), minimum: &zero},
		{what: "Claim spec", got: prop(t, claim, "spec"), required: []string{"warmPoolRef"}},
		{what: "Claim warmPoolRef", got: prop(t, claim, "spec", "warmPoolRef"), required: []string{"name"}},
		{what: "Claim shutdownPolicy", got: prop(t, claim, "spec", "lifecycle", "shutdownPolicy"), enum: []string{`"Delete"`, `"DeleteForeground"`, `"Retain"`}, def: `"Retain"`},
		{what: "Claim ttlSecondsAfterFinished", got: prop(t, claim, "spec", "lifecycle", "ttlSecondsAfterFinished"), minimum: &zero},
		{what: "Claim env item", got: *prop(t, claim, "spec", "env").Items.Schema, required: []string{"name", "value"}},
	}
	for _, c := range checks {
		if c.enum != nil && !slices.Equal(enum(c.got), c.enum) {
			t.Errorf("%s: enum %v, want %v", c.what, enum(c.got), c.enum)
		}
		if def(c.got) != c.def {
			t.Errorf("%s: default %q, want %q", c.what, def(c.got), c.def)
		}
		if c.minimum != nil && (c.got.Minimum == nil || *c.got.Minimum != *c.minimum) {
			t.Errorf("%s: minimum %v, want %v", c.what, c.got.Minimum, *c.minimum)
		}
		if c.required != nil && !slices.Equal(c.got.Required, c.required) {
			t.Errorf("%s: required %v, want %v", c.what, c.got.Required, c.required)
		}
	}
	if f := prop(t, sandbox, "spec", "shutdownTime").Format; f != "date-time" {
		t.Errorf("shutdownTime format %q", f)
	}
	for _, s := range []apiextensionsv1.JSONSchemaProps{
		prop(t, sandbox, "spec", "volumeClaimTemplates"), prop(t, claim, "spec", "volumeClaimTemplates"), prop(t, claim, "spec", "env"),
	} {
		if s.XListType == nil || *s.XListType != "atomic" {
			t.Errorf("list is not atomic: %+v", s.XListType)
		}
	}

	rules := prop(t, sandbox, "spec").XValidations
	if len(rules) != 1 || rules[0].Message != "volumeClaimTemplates is immutable" {
		t.Fatalf("Sandbox spec CEL rules: %+v", rules)
	}
	// The template shares the blueprint but may change its volume claim templates.
	if r := prop(t, template, "spec").XValidations; len(r) != 0 {
		t.Errorf("SandboxTemplate spec has CEL rules %+v", r)
	}
	// No status on templates, ever.
	if _, ok := template.Properties["status"]; ok {
		t.Error("SandboxTemplate has a status")
	}
	// The template's networkPolicy carries full NetworkPolicy rules.
	prop(t, template, "spec", "networkPolicy", "ingress")
	prop(t, template, "spec", "networkPolicy", "egress")
	prop(t, claim, "status", "sandbox", "podIPs")
	prop(t, sandbox, "status", "nodeName")
}

func TestFileName(t *testing.T) {
	if got := crds.FileName("sandboxwarmpools.extensions.agents.x-k8s.io"); got != "extensions.agents.x-k8s.io_sandboxwarmpools.yaml" {
		t.Errorf("FileName = %q", got)
	}
}
