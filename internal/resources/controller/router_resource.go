package controller

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"golang.org/x/mod/semver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	shared "github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/router"
)

var (
	_ resource.Resource                   = (*routerResource)(nil)
	_ resource.ResourceWithConfigure      = (*routerResource)(nil)
	_ resource.ResourceWithImportState    = (*routerResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*routerResource)(nil)
	_ resource.ResourceWithValidateConfig = (*routerResource)(nil)
)

// NewRouterResource is agentsandbox_sandbox_router, registered in the
// provider. It lives with agentsandbox_controller because it installs a
// component of the same upstream release with the same installer
// (install.go: staged server-side apply, inventory, prune, drift).
func NewRouterResource() resource.Resource {
	r := &routerResource{}
	r.installation = installation[routerModel, *routerModel]{
		typeSuffix: "_sandbox_router",
		what:       "sandbox router",
		apply: func(ctx context.Context, plan, _ *routerModel, prior []inventoryEntry) ([]inventoryEntry, diag.Diagnostics) {
			return r.apply(ctx, plan, prior)
		},
		readImported: r.readImported,
		// Imported and never applied: the objects are the rendering of
		// the imported configuration.
		unapplied: func(ctx context.Context, state *routerModel, diags *diag.Diagnostics) []inventoryEntry {
			c, d := state.config(ctx)
			if diags.Append(d...); diags.HasError() {
				return nil
			}
			objs, err := renderRouter(c)
			if err != nil {
				diags.AddError("Cannot render the sandbox router", err.Error())
				return nil
			}
			return bundleEntries(objs)
		},
		keepCRDs: func(*routerModel) bool { return true },
	}
	return r
}

type routerResource struct {
	installation[routerModel, *routerModel]
}

// ValidateConfig refuses combinations the router would refuse at start
// (sandbox-router/config/config.go Validate) or that would have no
// effect, and warns about every loosening of the defaults.
func (r *routerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m routerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	diags := &resp.Diagnostics
	mode := m.AuthzMode.ValueString()
	modeKnown := !m.AuthzMode.IsUnknown()
	if m.AuthzMode.IsNull() {
		mode = authzTokenReview
	}
	if modeKnown {
		if mode != authzTokenReview {
			if !m.AuthzRequireToken.IsNull() && !m.AuthzRequireToken.IsUnknown() {
				diags.AddAttributeError(path.Root("authz_require_token"), "authz_require_token needs authz_mode = \"tokenreview\"",
					fmt.Sprintf("authz_require_token sets --authz-tokenreview-require-token, which only the tokenreview mode reads; "+
						"authz_mode is %q. Remove authz_require_token.", mode))
			}
			if !m.AuthzAudiences.IsNull() {
				diags.AddAttributeError(path.Root("authz_audiences"), "authz_audiences needs authz_mode = \"tokenreview\"",
					fmt.Sprintf("authz_audiences sets --authz-tokenreview-audiences, which only the tokenreview mode reads; "+
						"authz_mode is %q. Remove authz_audiences.", mode))
			}
		}
		if mode != authzScopedToken {
			for _, a := range []string{"authz_scoped_token_secret", "authz_scoped_token_verification_keys_secret"} {
				v := m.AuthzScopedTokenSecret
				if a != "authz_scoped_token_secret" {
					v = m.AuthzScopedTokenVerificationKey
				}
				if !v.IsNull() {
					diags.AddAttributeError(path.Root(a), a+" needs authz_mode = \"scoped-token\"",
						fmt.Sprintf("Only the scoped-token mode verifies scoped tokens; authz_mode is %q. Set authz_mode = "+
							"\"scoped-token\" or remove %s.", mode, a))
				}
			}
		}
		if mode == authzScopedToken && m.AuthzScopedTokenSecret.IsNull() && m.AuthzScopedTokenVerificationKey.IsNull() {
			diags.AddAttributeError(path.Root("authz_mode"), "Scoped tokens without a key",
				"With authz_mode = \"scoped-token\" the router needs the secret that verifies the tokens "+
					"(--authz-scoped-token-secret-file), or from v1.0.3 the public keys of v2 tokens: set "+
					"authz_scoped_token_secret or authz_scoped_token_verification_keys_secret. The router refuses to start without.")
		}
		if mode == authzAllowAll {
			diags.AddAttributeWarning(path.Root("authz_mode"), "Sandbox router without authorization",
				"authz_mode = \"allow-all\": the router forwards every request, with or without a token, to any sandbox it "+
					"is asked for. Anyone who can reach the router (see allowed_clients and the NetworkPolicy) can run code "+
					"in every sandbox. Remove authz_mode to require a Kubernetes token checked with a TokenReview.")
		}
	}
	if mode == authzTokenReview && !m.AuthzRequireToken.IsNull() && !m.AuthzRequireToken.IsUnknown() && !m.AuthzRequireToken.ValueBool() {
		diags.AddAttributeWarning(path.Root("authz_require_token"), "Sandbox router lets tokenless requests through",
			"authz_require_token = false: requests without an Authorization header are forwarded unchecked (upstream "+
				"meant it for client roll-outs), so the TokenReview only stops requests with a wrong token. Remove "+
				"authz_require_token once every client sends a token.")
	}
	if !m.AuthzScopedTokenVerificationKey.IsNull() {
		if v := m.Version.ValueString(); !m.Version.IsUnknown() && v != "" && semver.Compare(v, firstRouterWithV2Tokens) < 0 {
			diags.AddAttributeError(path.Root("authz_scoped_token_verification_keys_secret"), "v2 scoped tokens need v1.0.3",
				fmt.Sprintf("The router of %s has no --authz-scoped-token-verification-keys-file (its sandbox-router/config/flags.go); "+
					"it arrived in %s. Use authz_scoped_token_secret (v1 tokens), or version = %q.", v, firstRouterWithV2Tokens, firstRouterWithV2Tokens))
		}
		if !m.CacheEnabled.IsNull() && !m.CacheEnabled.IsUnknown() && !m.CacheEnabled.ValueBool() {
			diags.AddAttributeError(path.Root("cache_enabled"), "v2 scoped tokens need the Pod-IP cache",
				"The router verifies v2 scoped tokens against the sandbox pods its cache watches, and refuses to start with "+
					"--authz-scoped-token-verification-keys-file and --cache-enabled=false. Remove cache_enabled = false.")
		}
	}
	if !m.CacheNamespace.IsNull() && !m.CacheEnabled.IsNull() && !m.CacheEnabled.IsUnknown() && !m.CacheEnabled.ValueBool() {
		diags.AddAttributeError(path.Root("cache_namespace"), "cache_namespace without the cache",
			"cache_namespace narrows the Pod-IP cache, and cache_enabled = false turns it off. Remove one of them.")
	}
	npOff := !m.NetworkPolicy.IsNull() && !m.NetworkPolicy.IsUnknown() && !m.NetworkPolicy.ValueBool()
	if npOff {
		diags.AddAttributeWarning(path.Root("network_policy"), "Sandbox router without a NetworkPolicy",
			"network_policy = false: every pod of the cluster can reach the router, and the router can reach every pod "+
				"and address (including the cloud metadata server). Remove network_policy to install the router's policy.")
		for _, a := range []struct {
			name string
			set  bool
		}{
			{"allowed_clients", !m.AllowedClients.IsNull()},
			{"allow_clients_from_all_namespaces", !m.AllowClientsFromAllNamespaces.IsNull() && m.AllowClientsFromAllNamespaces.ValueBool()},
			{"metrics_namespace", !m.MetricsNamespace.IsNull()},
			{"sandbox_namespaces", !m.SandboxNamespaces.IsNull()},
			{"sandbox_ports", !m.SandboxPorts.IsNull()},
			{"api_server_cidrs", !m.APIServerCIDRs.IsNull()},
			{"dns_cidrs", !m.DNSCIDRs.IsNull()},
		} {
			if a.set {
				diags.AddAttributeError(path.Root(a.name), a.name+" needs the NetworkPolicy",
					a.name+" is a rule of the router's NetworkPolicy, and network_policy = false installs none. Remove one of them.")
			}
		}
	}
	if !m.AllowClientsFromAllNamespaces.IsNull() && !m.AllowClientsFromAllNamespaces.IsUnknown() && m.AllowClientsFromAllNamespaces.ValueBool() {
		if !m.AllowedClients.IsNull() {
			diags.AddAttributeError(path.Root("allowed_clients"), "allowed_clients with every namespace allowed",
				"allow_clients_from_all_namespaces = true admits every pod, so allowed_clients would narrow nothing. Remove one of them.")
		} else if !npOff {
			diags.AddAttributeWarning(path.Root("allow_clients_from_all_namespaces"), "Sandbox router reachable from every namespace",
				"allow_clients_from_all_namespaces = true: every pod of every namespace, sandboxes included, can reach the "+
					"router's proxy port; only authz_mode stands between them and every sandbox. Name the clients in "+
					"allowed_clients instead.")
		}
	}
	if rm, ok := resourcesOf(ctx, m.Resources); ok {
		if rm.Limits.IsNull() {
			diags.AddAttributeWarning(path.Root("resources").AtName("limits"), "Sandbox router without resource limits",
				"resources sets no limits: the router's containers may use all of their node's CPU and memory. Set limits, "+
					"e.g. { cpu = \"2\", memory = \"1Gi\" } (the release's).")
		}
		podtemplate.CheckRequestsWithinLimits(rm, path.Root("resources"), diags)
	}
	checkTolerations(ctx, path.Root("tolerations"), m.Tolerations, diags)
}

// ModifyPlan renders the objects (no cluster involved) so the plan shows
// the inventory, and keeps state's when nothing but drift changed.
func (r *routerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, _, state, ok := shared.PlanInputs[routerModel](ctx, req, &resp.Diagnostics)
	if !ok {
		return
	}
	if !plan.inputsKnown() {
		plan.ID, plan.ServicePort, plan.URL = types.StringUnknown(), types.Int64Unknown(), types.StringUnknown()
		plan.ServiceName = types.StringValue(routerServiceName)
		plan.Inventory = types.MapUnknown(inventoryElemType)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}
	c, d := plan.config(ctx)
	if resp.Diagnostics.Append(d...); resp.Diagnostics.HasError() {
		return
	}
	plan.setComputed(c)
	var prior []inventoryEntry
	if state != nil {
		prior, d = state.inventory(ctx)
		resp.Diagnostics.Append(d...)
	}
	if state != nil && len(prior) > 0 && routerInputsEqual(&plan, state) {
		setInventory(ctx, &plan, replanned(prior), &resp.Plan, &resp.Diagnostics)
		return
	}
	objs, err := renderRouter(c)
	if err != nil {
		resp.Diagnostics.AddError("Cannot render the sandbox router", err.Error())
		return
	}
	setInventory(ctx, &plan, bundleEntries(objs), &resp.Plan, &resp.Diagnostics)
}

// apply renders and installs; it returns what was applied, even partly.
func (r *routerResource) apply(ctx context.Context, plan *routerModel, prior []inventoryEntry) ([]inventoryEntry, diag.Diagnostics) {
	var diags diag.Diagnostics
	c, d := plan.config(ctx)
	if diags.Append(d...); diags.HasError() {
		return nil, diags
	}
	objs, err := renderRouter(c)
	if err != nil {
		diags.AddError("Cannot render the sandbox router", err.Error())
		return nil, diags
	}
	kc, d := r.Meta.Kube(ctx)
	if diags.Append(d...); diags.HasError() {
		return nil, diags
	}
	in := &installer{c: kc, manager: r.Meta.FieldManager(), wait: orTrue(plan.Wait), keepCRDs: true}
	tflog.Info(ctx, "installing the sandbox router", map[string]any{"version": c.Version, "namespace": c.Namespace, "objects": len(objs)})
	// No versions: the controller's v0.5 → v1.0 clean-up (webhook
	// leftovers) is not the router's business.
	entries, d := in.install(ctx, objs, prior, "", "", c.Namespace)
	diags.Append(d...)
	return entries, diags
}

var (
	deploymentGVR = k8sschema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	netpolGVR     = k8sschema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	pdbGVR        = k8sschema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
)

// readImported reads an imported router's configuration from its live
// Deployment, NetworkPolicy and PodDisruptionBudget. The first apply then
// adopts the objects and records the inventory.
func (r *routerResource) readImported(ctx context.Context, kc *kube.Client, state *routerModel, resp *resource.ReadResponse) {
	ns, version := state.Namespace.ValueString(), state.Version.ValueString()
	get := func(gvr k8sschema.GroupVersionResource, kind string) (*unstructured.Unstructured, bool) {
		u, err := kc.Get(ctx, gvr, ns, routerName)
		if kube.IsNotFound(err) {
			return nil, true
		}
		if err != nil {
			resp.Diagnostics.Append(kube.Diagnostics(err, "get", kube.ObjectRef{GVR: gvr, Kind: kind, Namespace: ns, Name: routerName})...)
			return nil, false
		}
		return u, true
	}
	dep, ok := get(deploymentGVR, "Deployment")
	if !ok {
		return
	}
	if dep == nil {
		tflog.Warn(ctx, "the sandbox router Deployment does not exist; removing the resource from state", map[string]any{"namespace": ns})
		resp.State.RemoveResource(ctx)
		return
	}
	np, ok := get(netpolGVR, "NetworkPolicy")
	if !ok {
		return
	}
	pdb, ok := get(pdbGVR, "PodDisruptionBudget")
	if !ok {
		return
	}
	c, err := flattenRouter(version, ns, dep, np, pdb)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the sandbox router", fmt.Sprintf("Deployment %s/%s: %v", ns, routerName, err))
		return
	}
	resp.Diagnostics.Append(state.setConfig(ctx, c)...)
	state.setComputed(c)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *routerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ns, version, ok := strings.Cut(req.ID, "/")
	if !ok || ns == "" || !router.Has(version) {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected <namespace>/<version> with a release that has a router (%s), e.g. %s/%s; got %q.",
				strings.Join(router.Versions(), ", "), routerDefaultNamespace, router.DefaultVersion, req.ID))
		return
	}
	setImported(ctx, resp, map[string]any{"id": req.ID, "namespace": ns, "version": version, "wait": true})
}
