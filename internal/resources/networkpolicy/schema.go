package networkpolicy

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/labelselector"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

func resourceSchema(ctx context.Context) schema.Schema {
	attrs := object.MetadataAttributes("NetworkPolicy")
	attrs["template"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Name of a SandboxTemplate in the same namespace: the policy selects the pods of every " +
			"sandbox made from it (warm pool members and claimed sandboxes), by the `agents.x-k8s.io/sandbox-template-ref-hash` " +
			"label the agent-sandbox controller puts on them. The template does not have to exist yet. Exactly one of " +
			"`template` and `pod_selector` is required.",
		Validators: []validator.String{validators.DNSSubdomainName()},
	}
	attrs["pod_selector"] = labelselector.Attribute("The pods in this namespace the policy applies to. `{}` selects every pod "+
		"of the namespace. Exactly one of `template` and `pod_selector` is required.", "pod")
	for name, a := range netrules.Attributes() {
		attrs[name] = a
	}
	attrs["rendered"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "The NetworkPolicy `spec` this resource enforces, as canonical JSON: computed from the " +
			"configuration when planning and read back from the cluster on refresh, so that a plan shows the exact " +
			"policy change a reviewer approves, and an out-of-band edit of the policy shows as a diff here.",
	}
	return schema.Schema{
		MarkdownDescription: "A `networking.k8s.io/v1` NetworkPolicy isolating sandboxes: ingress only from the " +
			"sandbox router, all egress denied unless allowed here, and the cloud metadata server carved out of every " +
			"allowed range. Enforced only where the cluster's network plugin implements NetworkPolicy.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}
