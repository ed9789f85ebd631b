package sandboxtemplate

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// Enum values, as the CRD has them.
var (
	managementValues = []string{string(extv1beta1.NetworkPolicyManagementManaged), string(extv1beta1.NetworkPolicyManagementUnmanaged)}
	envVarsValues    = []string{string(extv1beta1.EnvVarsInjectionPolicyAllowed), string(extv1beta1.EnvVarsInjectionPolicyOverrides), string(extv1beta1.EnvVarsInjectionPolicyDisallowed)}
	vctPolicyValues  = []string{string(extv1beta1.VolumeClaimTemplatesPolicyDisallowed), string(extv1beta1.VolumeClaimTemplatesPolicyAllowed), string(extv1beta1.VolumeClaimTemplatesPolicyOverrides)}
)

func resourceSchema(ctx context.Context) schema.Schema {
	attrs := object.MetadataAttributes("SandboxTemplate")
	pt := podtemplate.Attribute()
	pt.MarkdownDescription = "The pod of every sandbox made from this template: labels, annotations and a typed, " +
		"hardened subset of the PodSpec. Security-relevant fields default to the hardened value (visible in the plan), " +
		"and loosening one produces a plan-time warning naming the risk."
	attrs["pod_template"] = pt
	attrs["volume_claim_templates"] = blueprint.VolumeClaimTemplatesAttribute("PersistentVolumeClaims created for each sandbox " +
		"made from this template, kept while the sandbox is suspended and deleted with it. Omit the attribute for none.")
	attrs["service"] = blueprint.ServiceAttribute("sandboxes made from this template")
	attrs["network_policy"] = schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "Custom rules for the NetworkPolicy the controller manages for this template (with " +
			"`network_policy_management = \"Managed\"`), in the same terms as `agentsandbox_network_policy`: unset " +
			"attributes inside take that resource's defaults (ingress only from the sandbox router, no DNS, no internet, " +
			"the metadata server blocked). Leave the whole attribute unset for the controller's own default, which allows " +
			"egress to the public internet (private, link-local and cluster DNS addresses blocked) and makes sandboxes " +
			"without a `dns_policy` use public resolvers.",
		Attributes: netrules.Attributes(),
	}
	attrs["network_policy_management"] = schema.StringAttribute{
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(string(extv1beta1.NetworkPolicyManagementManaged)),
		MarkdownDescription: fmt.Sprintf("`Managed` (default, as upstream): the controller creates and owns a "+
			"NetworkPolicy named `<template>-network-policy` (here `%s` for a template named `python`) selecting the "+
			"template's sandboxes, from `network_policy` or its own default. `Unmanaged`: the controller creates none "+
			"(and deletes its own); isolate the sandboxes with `agentsandbox_network_policy` (`template = <name>`), the "+
			"stricter alternative: its defaults deny all egress, Terraform sees and repairs drift of the policy itself, "+
			"and it can stay in place while templates change.", sandboxapi.TemplateNetworkPolicyName("python")),
		Validators: []validator.String{stringvalidator.OneOf(managementValues...)},
	}
	attrs["env_vars_injection_policy"] = schema.StringAttribute{
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(string(extv1beta1.EnvVarsInjectionPolicyDisallowed)),
		MarkdownDescription: "Whether claims may set environment variables on sandboxes made from this template: " +
			"`Disallowed` (default: a claim with `env` is rejected), `Allowed` (claims may add variables the template " +
			"does not define) or `Overrides` (claims may also override the template's).",
		Validators: []validator.String{stringvalidator.OneOf(envVarsValues...)},
	}
	attrs["volume_claim_templates_policy"] = schema.StringAttribute{
		Optional: true,
		Computed: true,
		Default:  stringdefault.StaticString(string(extv1beta1.VolumeClaimTemplatesPolicyDisallowed)),
		MarkdownDescription: "Whether claims may bring volume claim templates: `Disallowed` (default), `Allowed` " +
			"(claims may add templates with new names) or `Overrides` (claims may also replace this template's).",
		Validators: []validator.String{stringvalidator.OneOf(vctPolicyValues...)},
	}
	attrs["network_policy_rendered"] = schemaRendered()
	return schema.Schema{
		MarkdownDescription: "A SandboxTemplate (`extensions.agents.x-k8s.io/v1beta1`): the hardened blueprint " +
			"warm pools and claims make sandboxes from. The pod runs under gVisor, non-root, without a service account " +
			"token, with every capability dropped and resource limits on every container unless loosened explicitly " +
			"(each loosening is a plan-time warning). Every attribute updates in place.\n\n" +
			"## Network isolation\n\n" +
			"With `network_policy_management = \"Managed\"` (the default, as upstream) the agent-sandbox controller " +
			"creates and owns a NetworkPolicy named `<template>-network-policy` that selects the template's sandboxes. " +
			"Without `network_policy` it holds the controller's default: ingress only from the sandbox router, egress to " +
			"the public internet (private, link-local and cluster DNS addresses blocked), and sandboxes that set no " +
			"`dns_policy` are given public resolvers. `network_policy` replaces those rules, in the terms of " +
			"`agentsandbox_network_policy`. The stricter alternative is `network_policy_management = \"Unmanaged\"` " +
			"plus an `agentsandbox_network_policy` with `template = <name>`: its defaults deny all egress, and Terraform " +
			"(not the controller) owns the policy, so its drift shows in the plan. Policies are enforced only where the " +
			"cluster's network plugin implements NetworkPolicy.\n\n" +
			"## Drift\n\n" +
			"The provider declares the whole `spec`: a field changed out of band shows in the plan and is put back, and a " +
			"field added out of band (a container, an environment variable, a toleration, a network rule) is removed by " +
			"the next apply, even when another field manager added it. Pod spec fields the typed schema does not model " +
			"are shown only while `pod_template.pod_spec_overrides` declares them; added out of band they are not shown " +
			"in the plan, but any apply of the template removes them. Labels and annotations the controller or other " +
			"tools add to the template object itself are left alone.",
		Attributes: attrs,
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

func schemaRendered() schema.StringAttribute {
	return schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "The template's `spec.networkPolicy` as canonical JSON (`ingress` and `egress` rules), " +
			"null when `network_policy` is unset: computed from the configuration when planning and read back from the " +
			"cluster on refresh, so a plan shows the exact rules a reviewer approves and an out-of-band edit of them " +
			"shows as a diff here.",
	}
}
