package sandbox

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

var (
	operatingModes   = []string{string(agentsv1beta1.SandboxOperatingModeRunning), string(agentsv1beta1.SandboxOperatingModeSuspended)}
	shutdownPolicies = []string{string(agentsv1beta1.ShutdownPolicyDelete), string(agentsv1beta1.ShutdownPolicyRetain)}
)

func resourceSchema(ctx context.Context) schema.Schema {
	attrs := object.MetadataAttributes("Sandbox")
	pt := podtemplate.Attribute()
	pt.MarkdownDescription = "The sandbox's pod: labels, annotations and a typed, hardened subset of the PodSpec. " +
		"Security-relevant fields default to the hardened value (visible in the plan), and loosening one produces a " +
		"plan-time warning naming the risk. Changes update the Sandbox in place; the running pod takes new labels and " +
		"annotations at once, and the rest the next time the controller creates it (after a suspend and resume), which " +
		"the plan points out."
	attrs["pod_template"] = pt
	vct := blueprint.VolumeClaimTemplatesAttribute("PersistentVolumeClaims created for the sandbox, named " +
		"`<template name>-<sandbox>`, kept while it is suspended and deleted with it. The API makes them immutable, so " +
		"any change replaces the sandbox (and its volumes). Omit the attribute for none.")
	vct.PlanModifiers = []planmodifier.List{listplanmodifier.RequiresReplaceIf(
		func(ctx context.Context, req planmodifier.ListRequest, resp *listplanmodifier.RequiresReplaceIfFuncResponse) {
			resp.RequiresReplace = blueprint.VolumeClaimTemplatesChanged(ctx, req.StateValue, req.PlanValue)
		},
		"Changing the claims replaces the sandbox (the API makes them immutable).",
		"Changing the claims replaces the sandbox (the API makes them immutable).",
	)}
	attrs["volume_claim_templates"] = vct
	attrs["service"] = blueprint.ServiceAttribute("the sandbox should")
	attrs["operating_mode"] = schema.StringAttribute{
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(string(agentsv1beta1.SandboxOperatingModeRunning)),
		MarkdownDescription: "`Running` (default) or `Suspended`, changeable in place. Suspending deletes the pod and " +
			"keeps the Sandbox, its volume claims and its Service; resuming starts a new pod (memory is not kept, files on " +
			"the volumes are).",
		Validators: []validator.String{stringvalidator.OneOf(operatingModes...)},
	}
	attrs["shutdown_time"] = schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "RFC 3339 time at which the sandbox expires, e.g. `2030-01-02T15:04:05Z`: the controller " +
			"then removes its pod and Service and applies `shutdown_policy`. Unset: never. A new sandbox cannot have a " +
			"time in the past.",
		Validators: []validator.String{validators.RFC3339()},
	}
	attrs["shutdown_policy"] = schema.StringAttribute{
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(string(agentsv1beta1.ShutdownPolicyRetain)),
		MarkdownDescription: "What happens to the Sandbox object at `shutdown_time`: `Retain` (default) keeps it, not " +
			"ready with reason `SandboxExpired`; `Delete` deletes it (the next plan then proposes to create it again).",
		Validators: []validator.String{stringvalidator.OneOf(shutdownPolicies...)},
	}
	attrs["wait_for_ready"] = schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(true),
		MarkdownDescription: "Wait, by watching the Sandbox, until its `Ready` condition is true (or, with " +
			"`operating_mode = \"Suspended\"`, until its `Suspended` condition is), bounded by the `timeouts`. A timeout " +
			"names the sandbox and the reasons of its conditions. Defaults to `true`.",
	}
	attrs["ready"] = schema.BoolAttribute{
		Computed:            true,
		MarkdownDescription: "Whether the sandbox's `Ready` condition was true when last read.",
	}
	attrs["service_fqdn"] = schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "The stable DNS name of the sandbox's headless Service " +
			"(`<name>.<namespace>.svc.<cluster domain>`), empty without `service = true`.",
	}
	attrs["pod_ips"] = schema.ListAttribute{
		Computed:            true,
		ElementType:         types.StringType,
		MarkdownDescription: "Addresses of the sandbox's pod; empty while it has none (suspended, starting).",
	}
	attrs["node_name"] = schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: "The node the pod runs on; empty while there is no pod.",
	}
	return schema.Schema{
		MarkdownDescription: "A Sandbox (`agents.x-k8s.io/v1beta1`): one long-lived, isolated, stateful pod with a " +
			"stable identity, optional persistent volumes and a headless Service. Hardened by default like a template " +
			"(gVisor, non-root, no service account token, capabilities dropped, limits required). It can be suspended " +
			"and resumed in place; creation waits until it is ready.\n\n" +
			"## Lifecycle\n\n" +
			"`operating_mode = \"Suspended\"` deletes the pod and keeps the Sandbox, its PVCs and its Service; the apply " +
			"waits for the `Suspended` condition. Back to `\"Running\"`, the controller creates a new pod (files on the " +
			"volumes are kept, memory is not) and the apply waits for `Ready`. The running pod takes changed labels and " +
			"annotations at once; other pod template changes reach it only when it is next created, which the plan points " +
			"out. `volume_claim_templates` cannot change in the API, so changing them replaces the sandbox, and its volumes " +
			"with it (a different spelling of the same size is no change).\n\n" +
			"A sandbox needs no NetworkPolicy to exist, and gets none from a template: isolate it with an " +
			"`agentsandbox_network_policy` whose `pod_selector` matches `pod_template.labels`.\n\n" +
			"## Drift\n\n" +
			"The provider declares the whole `spec`: a field changed out of band (including `operating_mode`) shows in the " +
			"plan and is put back, and a field added out of band (a container, an environment variable, a toleration) is " +
			"removed by the next apply, even when another field manager added it. Pod spec fields the typed schema does " +
			"not model are shown only while `pod_template.pod_spec_overrides` declares them. The controller's own " +
			"annotations and the status never show as a diff.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}
