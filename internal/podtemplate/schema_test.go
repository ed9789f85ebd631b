package podtemplate

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

func TestSchemaServes(t *testing.T) {
	// newHarness fails when the framework refuses the schema (for example a
	// Default without Computed, or a default value of the wrong type).
	newHarness(t)
}

// TestEveryAttributeDocumented walks the schema: every attribute has a
// MarkdownDescription, which becomes the registry documentation.
func TestEveryAttributeDocumented(t *testing.T) {
	var walk func(prefix string, attrs map[string]schema.Attribute)
	walk = func(prefix string, attrs map[string]schema.Attribute) {
		for name, a := range attrs {
			p := prefix + name
			if a.GetMarkdownDescription() == "" {
				t.Errorf("%s has no MarkdownDescription", p)
			}
			switch a := a.(type) {
			case schema.SingleNestedAttribute:
				walk(p+".", a.Attributes)
			case schema.ListNestedAttribute:
				walk(p+"[].", a.NestedObject.Attributes)
			}
		}
	}
	a := Attribute()
	if a.MarkdownDescription == "" {
		t.Error("pod_template has no MarkdownDescription")
	}
	walk("pod_template.", a.Attributes)
}

// TestDataSourceAttributeHasSameType: Flatten's value fits the data source
// attribute as well as the resource one.
func TestDataSourceAttributeHasSameType(t *testing.T) {
	if !DataSourceAttribute().GetType().Equal(Attribute().GetType()) {
		t.Fatal("the data source pod_template type differs from the resource one")
	}
	if !ObjectType().Equal(Attribute().GetType()) || !Null().Type(context.Background()).Equal(ObjectType()) {
		t.Fatal("ObjectType/Null disagree with the schema")
	}
}

// TestPlanShowsHardenedDefaults: a configuration that says nothing about
// security plans every hardened default, so `terraform plan` shows them.
func TestPlanShowsHardenedDefaults(t *testing.T) {
	h := newHarness(t)
	pod := with(minimalPod(), "containers.0.ports", []any{map[string]any{"container_port": 8888}})
	pod = with(pod, "init_containers", []any{container("setup")})
	planned := h.plan(pod)

	m := mustDecode[Model](t, planned)
	if got := m.RuntimeClassName.ValueString(); got != "gvisor" {
		t.Errorf("runtime_class_name = %q, want gvisor", got)
	}
	if m.AutomountServiceAccountToken.IsNull() || m.AutomountServiceAccountToken.ValueBool() {
		t.Errorf("automount_service_account_token = %v, want false", m.AutomountServiceAccountToken)
	}
	psc := mustDecode[PodSecurityContextModel](t, m.SecurityContext)
	if !psc.RunAsNonRoot.ValueBool() {
		t.Errorf("security_context.run_as_non_root = %v, want true", psc.RunAsNonRoot)
	}
	if got := mustDecode[SeccompProfileModel](t, psc.SeccompProfile).Type.ValueString(); got != "RuntimeDefault" {
		t.Errorf("security_context.seccomp_profile.type = %q, want RuntimeDefault", got)
	}
	for _, list := range []types.List{m.Containers, m.InitContainers} {
		for _, e := range list.Elements() {
			c := mustDecode[ContainerModel](t, e.(types.Object))
			sc := mustDecode[ContainerSecurityContextModel](t, c.SecurityContext)
			if sc.AllowPrivilegeEscalation.IsNull() || sc.AllowPrivilegeEscalation.ValueBool() {
				t.Errorf("%s: allow_privilege_escalation = %v, want false", c.Name, sc.AllowPrivilegeEscalation)
			}
			caps := mustDecode[CapabilitiesModel](t, sc.Capabilities)
			want := types.ListValueMust(types.StringType, []attr.Value{types.StringValue("ALL")})
			if !caps.Drop.Equal(want) {
				t.Errorf("%s: capabilities.drop = %v, want [ALL]", c.Name, caps.Drop)
			}
		}
	}
	c := mustDecode[ContainerModel](t, m.Containers.Elements()[0].(types.Object))
	port := mustDecode[PortModel](t, c.Ports.Elements()[0].(types.Object))
	if port.Protocol.ValueString() != "TCP" {
		t.Errorf("ports[0].protocol = %v, want TCP (the CRD default)", port.Protocol)
	}
}

// TestPlanKeepsNestedDefaultsWhenPartlySet: setting one attribute of a
// security context keeps the defaults of its siblings.
func TestPlanKeepsNestedDefaultsWhenPartlySet(t *testing.T) {
	h := newHarness(t)
	pod := with(minimalPod(), "containers.0.security_context", map[string]any{"read_only_root_filesystem": true})
	pod = with(pod, "security_context", map[string]any{"run_as_user": 1000})
	m := mustDecode[Model](t, h.plan(pod))
	psc := mustDecode[PodSecurityContextModel](t, m.SecurityContext)
	if !psc.RunAsNonRoot.ValueBool() || psc.RunAsUser.ValueInt64() != 1000 || psc.SeccompProfile.IsNull() {
		t.Errorf("pod security context = %v", m.SecurityContext)
	}
	c := mustDecode[ContainerModel](t, m.Containers.Elements()[0].(types.Object))
	sc := mustDecode[ContainerSecurityContextModel](t, c.SecurityContext)
	if sc.AllowPrivilegeEscalation.ValueBool() || sc.AllowPrivilegeEscalation.IsNull() || sc.Capabilities.IsNull() ||
		!sc.ReadOnlyRootFilesystem.ValueBool() {
		t.Errorf("container security context = %v", c.SecurityContext)
	}
}

func TestMinimalConfigHasNoDiagnostics(t *testing.T) {
	h := newHarness(t)
	if ds := h.validate(minimalPod()); len(ds) > 0 {
		t.Fatalf("diagnostics: %v %v", diagStrings(ds, tfprotov6.DiagnosticSeverityError), diagStrings(ds, tfprotov6.DiagnosticSeverityWarning))
	}
}

func mustDecode[T any](t *testing.T, o types.Object) T {
	t.Helper()
	var diags = new(diagList)
	m, ok := decode[T](context.Background(), o, &diags.d)
	if !ok {
		t.Fatalf("cannot decode %T from %v: %v", m, o, diags.d)
	}
	return m
}
