package sandboxclaim

import (
	"context"
	"fmt"
	"math"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// defaultAllowedLabelDomain is upstream's default for the label domains a
// claim's pod labels may use (the controller's allowed-label-domains
// setting).
const defaultAllowedLabelDomain = sandboxapi.DefaultAllowedLabelDomain

// shutdownPolicies are the values of spec.lifecycle.shutdownPolicy.
var shutdownPolicies = []string{
	string(extv1beta1.ShutdownPolicyDelete), string(extv1beta1.ShutdownPolicyDeleteForeground), string(extv1beta1.ShutdownPolicyRetain),
}

func resourceSchema(ctx context.Context) schema.Schema {
	attrs := object.MetadataAttributes(extv1beta1.SandboxClaimKind)
	attrs["warm_pool"] = schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Name of the SandboxWarmPool, in the same namespace, to take a sandbox from (the template " +
			"comes from the pool). Reference an `agentsandbox_warm_pool`'s `name` so that Terraform creates the pool " +
			"first. Changing it replaces the claim: the API accepts the edit, but a claim keeps the sandbox it already " +
			"holds, so only a new claim gets one from the new pool.",
		Validators: []validator.String{validators.DNSSubdomainName()},
	}
	attrs["shutdown_time"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "RFC 3339 time at which the claim expires, e.g. `2030-01-02T15:04:05Z`. What then happens is " +
			"`shutdown_policy`. Changeable in place. The same instant written differently (another time zone offset) " +
			"is not a change.",
		Validators: []validator.String{validators.RFC3339()},
	}
	attrs["ttl_seconds_after_finished"] = schema.Int64Attribute{
		Optional: true,
		MarkdownDescription: "Seconds after the sandbox's pod has finished (its `Finished` condition) at which the claim " +
			"expires, like `shutdown_time` (whichever comes first). `0` expires it as soon as it finishes. Changeable in place.",
		Validators: []validator.Int64{int64validator.Between(0, math.MaxInt32)},
	}
	attrs["shutdown_policy"] = schema.StringAttribute{
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(string(extv1beta1.ShutdownPolicyRetain)),
		MarkdownDescription: "What happens when the claim expires. Its sandbox is removed in every case; `Retain` " +
			"(default) keeps the claim with `Ready=False` (reason `ClaimExpired`); `Delete` deletes the claim, and " +
			"`DeleteForeground` deletes it once the sandbox is gone. After a `Delete*` expiry the next plan creates " +
			"the claim again unless the configuration drops it. Changeable in place.",
		Validators: []validator.String{stringvalidator.OneOf(shutdownPolicies...)},
	}
	attrs["env"] = schema.ListNestedAttribute{
		Optional: true,
		MarkdownDescription: "Environment variables for the claim's sandbox. A claim with `env` never takes a warm " +
			"sandbox (a running pod's environment cannot change): the controller cold-starts one from the pool's " +
			"template, which must allow it (`env_vars_injection_policy` `Allowed`, or `Overrides` to replace the " +
			"template's own variables). Changing `env` replaces the claim, because the controller applies it only when " +
			"the sandbox is created.",
		NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"name": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "Name of the variable.",
					Validators:          []validator.String{validators.EnvVarName()},
				},
				"value": schema.StringAttribute{
					Required:            true,
					Sensitive:           true,
					MarkdownDescription: "Value of the variable. It is stored in the claim's spec in plain text, readable by whoever may read SandboxClaims; pass secrets through the template's secret references instead.",
				},
				"container_name": schema.StringAttribute{
					Optional:            true,
					MarkdownDescription: "Container to set it in; by default the pod's first container.",
					Validators:          []validator.String{validators.DNSLabelName()},
				},
			},
		},
		Validators: []validator.List{validators.UniqueEnv()},
	}
	attrs["additional_pod_metadata"] = schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "Labels and annotations added to the sandbox's pod (on top of the template's, which they " +
			"may not change). Changeable in place: the controller updates the running pod.",
		Attributes: map[string]schema.Attribute{
			"labels": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: fmt.Sprintf("Pod labels. Keys need a domain prefix the controller allows: by "+
					"default `%s` (e.g. `%s/team`) or a subdomain of it, or the domains set with `agentsandbox_controller`'s "+
					"`allowed_label_domains` (its `agent-sandbox-config` ConfigMap). When the cluster can be read while "+
					"planning, a new key outside the domains of the controller in `agent-sandbox-system` is refused at "+
					"plan; otherwise the controller refuses the claim (`InvalidMetadata`). Keys under `agents.x-k8s.io/` "+
					"and `app=sandbox-router` are refused.", defaultAllowedLabelDomain, defaultAllowedLabelDomain),
				Validators: []validator.Map{validators.Labels(object.ReservedPrefixes...), validators.ClaimPodLabels(defaultAllowedLabelDomain)},
			},
			"annotations": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Pod annotations. Keys in the `kubernetes.io`, `k8s.io` and `agents.x-k8s.io` " +
					"domains are refused, except `cluster-autoscaler.kubernetes.io/safe-to-evict`.",
				Validators: []validator.Map{validators.Annotations(object.ReservedPrefixes...), validators.ClaimPodAnnotations()},
			},
		},
	}
	attrs["volume_claim_templates"] = blueprint.VolumeClaimTemplatesAttribute("PersistentVolumeClaims created for the " +
		"claim's sandbox, on top of the template's (upstream's `spec.volumeClaimTemplates`, " +
		"extensions/api/v1beta1/sandboxclaim_types.go:131-135 at v0.5.6). Like `env`, they force a cold start (a warm " +
		"sandbox has no such volumes), and the pool's template must allow them: `volume_claim_templates_policy` " +
		"`Allowed` for new names, `Overrides` to also replace the template's own; otherwise the claim fails with " +
		"`VolumeClaimTemplatesError`. A container of the template mounts one by its name. Changing them replaces the " +
		"claim, because the controller applies them only when the sandbox is created.")
	attrs["wait_for_ready"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, after creating or changing the claim, until its `Ready` condition is true (a " +
			"sandbox is bound and running), within the `create`/`update` timeout. A reason the controller cannot get " +
			"past by itself (e.g. `WarmPoolNotFound`, `InvalidMetadata`, `EnvVarsInjectionRejected`, `ClaimExpired`) " +
			"fails the apply at once with the controller's message. Defaults to `true`.",
	}
	attrs["sandbox_name"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "Name of the Sandbox the claim holds (`status.sandbox.name`): a warm one adopted from the " +
			"pool keeps its pool-made name; a cold-started one is named like the claim. Empty until one is bound.",
	}
	attrs["pod_ips"] = schema.ListAttribute{
		Computed:            true,
		ElementType:         types.StringType,
		MarkdownDescription: "IP addresses of the sandbox's pod (`status.sandbox.podIPs`).",
	}
	attrs["service_fqdn"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "DNS name of the headless Service of the claim's sandbox " +
			"(`<sandbox name>.<namespace>.svc.<cluster domain>`), as the claim reports it " +
			"(`status.sandbox.serviceFQDN`, mirrored from the sandbox by agent-sandbox v1.0.1 and later). Null on " +
			"releases before v1.0.1, which do not report it, while no sandbox is bound, and when the sandbox has no " +
			"Service (the pool's template does not set `service = true`). Known once an apply that waits for the " +
			"claim (`wait_for_ready`) returns; an in-place update keeps it, as the claim keeps its sandbox.",
	}
	attrs["ready"] = schema.BoolAttribute{
		Computed:            true,
		MarkdownDescription: "Whether the claim's `Ready` condition was true when last read.",
	}
	return schema.Schema{
		MarkdownDescription: "A `SandboxClaim` (`extensions.agents.x-k8s.io/v1beta1`): one sandbox taken from a warm " +
			"pool, typically in well under a second, for a long-lived agent session managed with Terraform. The " +
			"controller adopts a ready sandbox from the pool (which then replenishes) or, when none is ready or the " +
			"claim sets `env`, cold-starts one from the pool's template. By default the apply waits until the sandbox " +
			"is ready and reports its name, pod IPs and (agent-sandbox v1.0.1 and later) service FQDN. Destroying the claim removes its sandbox.\n\n" +
			"Changing `warm_pool` or `env` in the configuration replaces the claim (and so its sandbox); everything else " +
			"changes in place. An edit made outside Terraform, even of those two, is drift that the next apply reverts " +
			"in place, keeping the sandbox. Default timeouts: 5 minutes each.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}
