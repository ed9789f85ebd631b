package warmpool

import (
	"context"
	"fmt"
	"math"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// updateStrategies are the values of spec.updateStrategy.type.
var updateStrategies = []string{string(extv1beta1.RecreateSandboxWarmPoolUpdateStrategyType), string(extv1beta1.OnReplenishSandboxWarmPoolUpdateStrategyType)}

// defaultReplicas is the API server's default for spec.replicas; the
// provider plans it explicitly so that the plan shows what will run.
const defaultReplicas = 1

func resourceSchema(ctx context.Context) schema.Schema {
	attrs := object.MetadataAttributes(extv1beta1.SandboxWarmPoolKind)
	attrs["template"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Name of the SandboxTemplate, in the same namespace, that the pool's sandboxes are made " +
			"from. It must exist when the pool is created (reference an `agentsandbox_sandbox_template`'s `name` so " +
			"that Terraform creates it first): the apply refuses to write the pool if it does not. Changing it updates the pool in place; how the sandboxes already in " +
			"the pool are replaced is `update_strategy`.",
		Validators: []validator.String{validators.DNSSubdomainName()},
	}
	attrs["replicas"] = schema.Int64Attribute{
		Optional: true,
		Computed: true,
		MarkdownDescription: fmt.Sprintf("Number of pre-started sandboxes to keep ready, from 0 up. Defaults to %d "+
			"(the API's default). Changing it scales the pool in place. Must not be set with "+
			"`replicas_managed_externally = true`; then it reports the pool's current `spec.replicas`.", defaultReplicas),
		Validators: []validator.Int64{int64validator.Between(0, math.MaxInt32)},
	}
	attrs["replicas_managed_externally"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
		MarkdownDescription: "Leave the replica count to another controller, typically a HorizontalPodAutoscaler " +
			"targeting the pool's scale subresource. The provider then never writes `spec.replicas` and never " +
			"reports its changes as drift; `replicas` shows the current value. When switched on for an existing " +
			"pool, the current count is kept (ownership of the field is handed over, not dropped). A new pool starts " +
			"at the API's default of 1 until the autoscaler scales it. Defaults to `false`.",
	}
	attrs["update_strategy"] = schema.StringAttribute{
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(string(extv1beta1.OnReplenishSandboxWarmPoolUpdateStrategyType)),
		MarkdownDescription: "What happens to unclaimed sandboxes when their template changes: `OnReplenish` " +
			"(default) replaces a stale sandbox only once it is claimed or deleted; `Recreate` deletes stale " +
			"sandboxes at once so that the pool refills from the current template.",
		Validators: []validator.String{stringvalidator.OneOf(updateStrategies...)},
	}
	attrs["wait_for_ready"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after creating or changing the pool, until the controller has acted on the " +
			"change and as many sandboxes are ready as the pool wants (`status.readyReplicas` equal to " +
			"`spec.replicas`), within the `create`/`update` timeout. The wait watches the pool, so it ends as soon as " +
			"the pool is ready, and logs its progress. On timeout the error names each sandbox that is not ready " +
			"with its Ready condition. Defaults to `true`.",
	}
	attrs["ready_replicas"] = schema.Int64Attribute{
		Computed:            true,
		MarkdownDescription: "Number of the pool's sandboxes that are ready (`status.readyReplicas`) when last read.",
	}
	attrs["selector"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: fmt.Sprintf("Label selector of the pool's unclaimed sandboxes and their pods, e.g. "+
			"`%s=<hash of the pool name>`: what the pool reports in `status.selector` and exposes through its scale "+
			"subresource. Known at plan time, so an autoscaler or a NetworkPolicy can use it in the same apply.",
			agentsv1beta1.SandboxWarmPoolLabel),
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	return schema.Schema{
		MarkdownDescription: "A `SandboxWarmPool` (`extensions.agents.x-k8s.io/v1beta1`): sandboxes pre-started from " +
			"a SandboxTemplate so that a `SandboxClaim` gets one in well under a second instead of waiting 5-30 s for " +
			"a cold start. The controller keeps `replicas` unclaimed sandboxes and replaces each one a claim takes.\n\n" +
			"By default the apply waits until every sandbox of the pool is ready. To let a HorizontalPodAutoscaler " +
			"(or KEDA) size the pool, set `replicas_managed_externally = true` and target the pool's scale " +
			"subresource (`apiVersion: extensions.agents.x-k8s.io/v1beta1`, `kind: SandboxWarmPool`): the autoscaler's " +
			"changes then never show in a plan.\n\n" +
			"The template must exist when the pool is created or pointed at it; the apply fails before writing anything " +
			"otherwise. Destroying the pool removes its unclaimed sandboxes and waits until they are gone; sandboxes " +
			"already claimed belong to their claims and stay. Default timeouts: 10 minutes to create or update, 5 to delete.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}
