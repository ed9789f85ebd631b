package podtemplate

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	tfresource "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
)

// The end-to-end test runs the real Terraform CLI against a test resource
// that does what agentsandbox_sandbox will do with this package: Expand the
// plan, "write" it through the CRD admission into an in-memory store (the
// API server's defaulting and normalisation included), and Flatten what the
// store holds. Terraform core then checks what no unit test can: that the
// state after apply is consistent with the plan, and that a refresh plans
// nothing.

const e2eTypeName = "agentsandbox_test_sandbox"

// store is the stand-in for the API server: name -> stored pod template.
var store sync.Map

type e2eResource struct{}

type e2eModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	PodTemplate types.Object `tfsdk:"pod_template"`
}

func (e2eResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = e2eTypeName
}

func (e2eResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "test sandbox",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, MarkdownDescription: "id",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name":         schema.StringAttribute{Required: true, MarkdownDescription: "name"},
			"pod_template": Attribute(),
		},
	}
}

func (e2eResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m e2eModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(Validate(ctx, path.Root("pod_template"), m.PodTemplate, Options{})...)
	}
}

func (r e2eResource) write(ctx context.Context, m *e2eModel) error {
	pt, diags := Expand(ctx, m.PodTemplate)
	if diags.HasError() {
		return fmt.Errorf("%v", diags)
	}
	live, err := storeSandbox(pt)
	if err != nil {
		return err
	}
	store.Store(m.Name.ValueString(), live)
	m.ID = m.Name
	m.PodTemplate, diags = Flatten(ctx, live, m.PodTemplate)
	if diags.HasError() {
		return fmt.Errorf("%v", diags)
	}
	return nil
}

func (r e2eResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m e2eModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if err := r.write(ctx, &m); err != nil {
		resp.Diagnostics.AddError("write", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (r e2eResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m e2eModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if err := r.write(ctx, &m); err != nil {
		resp.Diagnostics.AddError("write", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (e2eResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m e2eModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	live, ok := store.Load(m.ID.ValueString())
	if !ok {
		resp.State.RemoveResource(ctx)
		return
	}
	if m.Name.IsNull() {
		m.Name = m.ID // after import
	}
	pt, diags := Flatten(ctx, live.(agentsv1beta1.PodTemplate), m.PodTemplate)
	resp.Diagnostics.Append(diags...)
	m.PodTemplate = pt
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (e2eResource) Delete(_ context.Context, req resource.DeleteRequest, _ *resource.DeleteResponse) {
	var id types.String
	req.State.GetAttribute(context.Background(), path.Root("id"), &id)
	store.Delete(id.ValueString())
}

func (e2eResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
}

var (
	_ resource.ResourceWithValidateConfig = e2eResource{}
	_ resource.ResourceWithImportState    = e2eResource{}
)

func e2eFactories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"agentsandbox": providerserver.NewProtocol6WithError(testProvider{}),
	}
}

func needTerraform(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Skip("terraform CLI not on PATH")
	}
}

// e2eConfig is what a user writes: the hardened defaults left implicit,
// quantities in their own spelling, some empty collections, an override.
const e2eConfig = `
resource "agentsandbox_test_sandbox" "agent" {
  name = "agent"
  pod_template = {
    labels = { app = "agent" }
    annotations = {}
    containers = [{
      name  = "main"
      image = "python:3.12-slim"
      args  = []
      env = [
        { name = "MODE", value = "sandbox" },
        { name = "TOKEN", value_from = { secret_key_ref = { name = "api", key = "token" } } },
      ]
      ports = [{ name = "http", container_port = 8888 }]
      resources = {
        limits   = { cpu = "1000m", memory = "1024Mi" }
        requests = { cpu = "0.25", memory = "256Mi" }
      }
      volume_mounts = [{ name = "scratch", mount_path = "/tmp" }]
      readiness_probe = {
        http_get       = { path = "/healthz", port = "http" }
        period_seconds = 5
      }
      liveness_probe = { grpc = { port = 9000 } }
      security_context = { run_as_user = 1000, read_only_root_filesystem = true }
    }]
    volumes = [{ name = "scratch", empty_dir = { size_limit = "512Mi" } }]
    tolerations = [{ key = "sandbox.gke.io/runtime", operator = "Equal", value = "gvisor", effect = "NoSchedule" }]
    node_selector = {}
    pod_spec_overrides = yamlencode({
      containers = [{ name = "main", lifecycle = { preStop = { exec = { command = ["/drain"] } } } }]
      hostname   = "agent"
    })
  }
}
`

// TestEndToEndNoPerpetualDiff: apply, then an empty plan; an out-of-band
// edit is planned as an update and repaired; import reads the object back.
func TestEndToEndNoPerpetualDiff(t *testing.T) {
	needTerraform(t)
	addr := e2eTypeName + ".agent"
	tmpl := tfjsonpath.New("pod_template")
	main := tmpl.AtMapKey("containers").AtSliceIndex(0)
	tfresource.UnitTest(t, tfresource.TestCase{
		ProtoV6ProviderFactories: e2eFactories(),
		Steps: []tfresource.TestStep{
			{
				Config: e2eConfig,
				ConfigPlanChecks: tfresource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
						// The hardened defaults are in the plan the user reviews.
						plancheck.ExpectKnownValue(addr, tmpl.AtMapKey("runtime_class_name"), knownvalue.StringExact("gvisor")),
						plancheck.ExpectKnownValue(addr, tmpl.AtMapKey("automount_service_account_token"), knownvalue.Bool(false)),
						plancheck.ExpectKnownValue(addr, tmpl.AtMapKey("security_context").AtMapKey("run_as_non_root"), knownvalue.Bool(true)),
						plancheck.ExpectKnownValue(addr, tmpl.AtMapKey("security_context").AtMapKey("seccomp_profile").AtMapKey("type"),
							knownvalue.StringExact("RuntimeDefault")),
						plancheck.ExpectKnownValue(addr, main.AtMapKey("security_context").AtMapKey("allow_privilege_escalation"), knownvalue.Bool(false)),
						plancheck.ExpectKnownValue(addr, main.AtMapKey("security_context").AtMapKey("capabilities").AtMapKey("drop"),
							knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("ALL")})),
						plancheck.ExpectKnownValue(addr, main.AtMapKey("ports").AtSliceIndex(0).AtMapKey("protocol"), knownvalue.StringExact("TCP")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					PostApplyPreRefresh:  []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Someone loosens the sandbox by hand: the plan repairs it.
				PreConfig: func() {
					v, _ := store.Load("agent")
					pt := v.(agentsv1beta1.PodTemplate)
					on := true
					pt.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &on
					pt.Spec.Containers[0].Image = "python:latest"
					pt.Spec.RuntimeClassName = nil
					store.Store("agent", pt)
				},
				Config: e2eConfig,
				ConfigPlanChecks: tfresource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					v, _ := store.Load("agent")
					pt := v.(agentsv1beta1.PodTemplate)
					c := pt.Spec.Containers[0]
					if c.Image != "python:3.12-slim" || *c.SecurityContext.AllowPrivilegeEscalation || pt.Spec.RuntimeClassName == nil {
						return fmt.Errorf("drift not repaired: %+v", pt.Spec)
					}
					if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || pt.Spec.Hostname != "agent" {
						return fmt.Errorf("override lost: %+v", pt.Spec)
					}
					if c.Ports[0].Protocol != corev1.ProtocolTCP {
						return fmt.Errorf("protocol not defaulted: %+v", c.Ports)
					}
					return nil
				},
			},
			{
				ResourceName:      addr,
				ImportState:       true,
				ImportStateVerify: true,
				// Import reports the server's spelling of quantities, and the
				// override as canonical JSON: equal in meaning, not in text.
				// Empty collections the server dropped read back as null.
				ImportStateVerifyIgnore: []string{
					"pod_template.containers.0.resources.limits.cpu",
					"pod_template.containers.0.resources.limits.memory",
					"pod_template.containers.0.resources.requests.cpu",
					"pod_template.pod_spec_overrides",
					"pod_template.containers.0.args",
					"pod_template.annotations",
					"pod_template.node_selector",
				},
			},
		},
	})
}
