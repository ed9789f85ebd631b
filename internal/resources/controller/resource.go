// Package controller implements agentsandbox_controller: it installs and
// upgrades the open-source agent-sandbox controller from a release bundle
// (upstream's release assets, a mirror, or an inline manifest) with a
// staged server-side apply, keeps the inventory of applied objects in
// state, prunes what an upgrade drops (including v0.5's conversion-webhook
// objects and stale CRD storedVersions), and detects drift with one GET
// per object.
package controller

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/resourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	shared "github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

var (
	_ resource.Resource                     = (*controllerResource)(nil)
	_ resource.ResourceWithConfigure        = (*controllerResource)(nil)
	_ resource.ResourceWithImportState      = (*controllerResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*controllerResource)(nil)
	_ resource.ResourceWithConfigValidators = (*controllerResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*controllerResource)(nil)
)

// Default bounds of the operations; the timeouts block overrides them.
const (
	defaultCreateTimeout = 10 * time.Minute
	defaultUpdateTimeout = 10 * time.Minute
	defaultDeleteTimeout = 10 * time.Minute
	// planFetchTimeout bounds downloading the manifest while planning,
	// which has no timeouts of its own.
	planFetchTimeout = 5 * time.Minute
)

// userAgent identifies manifest downloads in mirror and proxy logs.
const userAgent = "terraform-provider-agentsandbox (agentsandbox_controller)"

// NewResource is registered in the provider.
func NewResource() resource.Resource {
	r := &controllerResource{}
	r.installation = installation[controllerModel, *controllerModel]{
		typeSuffix: "_controller",
		what:       "agent-sandbox controller",
		apply: func(ctx context.Context, plan, state *controllerModel, prior []inventoryEntry) ([]inventoryEntry, diag.Diagnostics) {
			// The installed version decides the upgrade steps; for an
			// imported installation (no inventory) it is not known for sure.
			priorVersion := ""
			if state != nil && len(prior) > 0 {
				priorVersion = state.Version.ValueString()
			}
			return r.apply(ctx, plan, prior, priorVersion)
		},
		readImported: r.readImported,
		unapplied: func(_ context.Context, state *controllerModel, diags *diag.Diagnostics) []inventoryEntry {
			diags.AddWarning("Nothing to delete",
				fmt.Sprintf("%s was imported and never applied, so this resource does not know which objects belong to "+
					"the installation; nothing was deleted. Remove them with the release's manifest (kubectl delete -f ...).", state.ID.ValueString()))
			return nil
		},
		keepCRDs: func(state *controllerModel) bool { return orTrue(state.KeepCRDsOnDestroy) },
	}
	return r
}

type controllerResource struct {
	installation[controllerModel, *controllerModel]
}

var (
	versionRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	sha256RE  = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	urlRE     = regexp.MustCompile(`^https?://[^\s/]+(/\S*)?$`)
)

func (r *controllerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Installs and upgrades the open-source " +
			"[agent-sandbox](https://github.com/kubernetes-sigs/agent-sandbox) controller and its CRDs from a release " +
			"bundle, with a staged server-side apply (namespaces and CRDs first, then RBAC, then workloads), and waits " +
			"until the controller is available.\n\n" +
			"The state keeps the inventory of applied objects; an upgrade prunes the objects the new release no longer " +
			"has (for v0.5 → v1.0: the conversion webhook Service, its certificate Secret, Role and RoleBinding) and " +
			"removes versions the new CRDs no longer serve from `status.storedVersions` after migrating the stored " +
			"objects. A refresh costs one GET per object and reports objects deleted or changed outside Terraform; the " +
			"next apply repairs them. Fields the controller writes at run time (the CRDs' conversion webhook " +
			"`caBundle` and `service`) never show as drift.\n\n" +
			"Do not use it on a GKE cluster that runs GKE's managed Agent Sandbox add-on (`agentsandbox_gke_addon`): " +
			"it refuses to install there. See the guide *Installing and upgrading the agent-sandbox controller*.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`<namespace>/<version>`, e.g. `agent-sandbox-system/v1.0.3`; also the import ID.",
			},
			"version": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Release tag to install, e.g. `v1.0.3`. Chooses the release assets (releases up to " +
					"v0.5.1 publish `manifest.yaml` + `extensions.yaml`, later ones `sandbox-with-extensions.yaml`) and " +
					"decides upgrade steps; with `manifest_url` or `manifest` it must name the release that manifest is. " +
					"Changing it upgrades (or downgrades) in place.",
				Validators: []validator.String{stringvalidator.RegexMatches(versionRE, "must be a release tag such as v1.0.3")},
			},
			"release_base_url": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Where release assets are downloaded from, as `<release_base_url>/<version>/<asset>`. " +
					"Defaults to `" + DefaultReleaseBaseURL + "`; point it at a mirror of the release assets for air-gapped " +
					"installs. Conflicts with `manifest_url` and `manifest`.",
				Validators: []validator.String{stringvalidator.RegexMatches(urlRE, "must be an http:// or https:// URL")},
			},
			"manifest_url": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Download the manifest from this URL instead of the release assets. It is installed " +
					"as is (plus `image_registry` and `controller`).",
				Validators: []validator.String{stringvalidator.RegexMatches(urlRE, "must be an http:// or https:// URL")},
			},
			"manifest": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The manifest itself, e.g. `file(\"sandbox-with-extensions.yaml\")`: multi-document " +
					"YAML. It is stored in state and a plan prints it whole (a release manifest is thousands of lines): for a large manifest prefer `manifest_file` or `manifest_url` on a mirror.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"manifest_file": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Path of a local manifest file (multi-document YAML), e.g. a downloaded " +
					"`sandbox-with-extensions.yaml`. Unlike `manifest`, the plan shows the path, the digest of the " +
					"content (`applied_manifest_sha256`) and the objects it holds (`inventory`), not the text, and the " +
					"state keeps no copy of it. The file is read when planning and again when applying; a change to " +
					"its content is a change to the resource. Pin it with `manifest_sha256`.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"manifest_sha256": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Expected SHA-256 (hex) of the manifest exactly as downloaded (for the two-file " +
					"releases up to v0.5.1: of `manifest.yaml` followed by `extensions.yaml`, as `cat manifest.yaml " +
					"extensions.yaml | sha256sum` prints). Checked while planning and again before anything is applied; " +
					"a mismatch applies nothing. `applied_manifest_sha256` shows the digest of what was installed.",
				Validators: []validator.String{stringvalidator.RegexMatches(sha256RE, "must be 64 hexadecimal characters")},
			},
			"extensions": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Install the extensions (SandboxTemplate, SandboxWarmPool, SandboxClaim and the " +
					"controller's `--extensions` mode). Default `true`. Only for release downloads; `manifest_url` and " +
					"`manifest` are installed as they are.",
			},
			"image_registry": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Rewrite every container image of the manifest to this registry (host, optional " +
					"port and path), keeping repository and tag: with `mirror.example.com/k8s`, " +
					"`registry.k8s.io/agent-sandbox/agent-sandbox-controller:v1.0.3` becomes " +
					"`mirror.example.com/k8s/agent-sandbox/agent-sandbox-controller:v1.0.3`. Images without a registry " +
					"are Docker Hub's (`busybox` becomes `<registry>/library/busybox`).",
				Validators: []validator.String{stringvalidator.RegexMatches(imageRegistryRE,
					"must be a registry host with an optional port and path, without scheme or tag, e.g. mirror.example.com:5000/k8s")},
			},
			"controller": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Settings of the controller Deployment (`" + ControllerDeploymentName + "`) " +
					"and its container. Unset attributes keep the release's values.",
				Attributes: withChartFlags(withPodSettings(map[string]schema.Attribute{
					"args": schema.ListAttribute{
						Optional:    true,
						ElementType: types.StringType,
						MarkdownDescription: "Extra controller flags, e.g. `[\"--sandbox-warm-pool-concurrent-workers=4\", \"--leader-elect=false\"]`. " +
							"A flag the release already sets is replaced, others are appended (the chart's `controller.extraArgs`). A flag one of " +
							"the typed attributes below sets (e.g. `--leader-elect` with `leader_elect`) is refused here: set it in one place.",
						Validators: []validator.List{listvalidator.ValueStringsAre(
							stringvalidator.RegexMatches(regexp.MustCompile(`^--?[A-Za-z0-9][A-Za-z0-9-]*(=.*)?$`), "must be a flag such as --leader-elect=false"))},
					},
					"replicas": schema.Int64Attribute{
						Optional:            true,
						MarkdownDescription: "Number of controller replicas (leader election keeps one active).",
						Validators:          []validator.Int64{int64validator.Between(0, 100)},
					},
					"resources":     resourcesAttribute("Replaces the controller container's resource requests and limits."),
					"node_selector": labelsAttribute("Node labels the controller pods must run on; replaces the release's."),
					"tolerations":   tolerationsAttribute("Tolerations of the controller pods; replaces the release's."),
				})),
			},
			"metrics": metricsAttribute(),
			"allowed_label_domains": schema.SetAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Label domains a sandbox claim's `additional_pod_metadata.labels` may use, e.g. " +
					"`[\"sandbox.users.io\", \"agents.example.com\"]`: a label key's domain (the part before `/`) must equal " +
					"one of them or be a subdomain of one. Unset, the controller allows only `" + sandboxapi.DefaultAllowedLabelDomain +
					"`; the list replaces that default rather than adding to it. Rendered as the controller's optional " +
					"ConfigMap `" + sandboxapi.ConfigMapName + "` (key `" + sandboxapi.ConfigKeyAllowedLabelDomains + "`) in the " +
					"controller's namespace. The controller reads it only when it starts, so the controller Deployment's " +
					"pod template carries a digest of it (annotation `" + sandboxConfigAnnotation + "`) and every change " +
					"rolls the controller; removing the attribute deletes the ConfigMap and rolls it again. Refused at plan " +
					"when the installed controller does not mount the ConfigMap (the core-only install, `extensions = false`, " +
					"or a manifest without the mount). Annotations are not restricted by it.",
				Validators: []validator.Set{
					setvalidator.SizeAtLeast(1),
					setvalidator.ValueStringsAre(validators.Valid("Invalid label domain",
						"is not a label domain: it must be a lower-case DNS subdomain such as example.com or "+
							"team.example.com (letters, digits, '-' and '.', at most 253 characters), the part of a label key before the '/'",
						func(s string) bool { return len(k8svalidation.IsDNS1123Subdomain(s)) == 0 })),
				},
			},
			"keep_crds_on_destroy": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Leave the CRDs in the cluster on destroy (and when an upgrade drops one). Default " +
					"`true`, because deleting a CRD deletes every object of its kind: every Sandbox, template, warm pool " +
					"and claim in the cluster. Set `false` (and apply) before destroying to remove them.",
			},
			"wait": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Wait until the controller's Deployments are available (and pruned objects are gone). " +
					"Default `true`. CRDs and namespaces are always awaited, since the rest depends on them.",
			},
			"namespace": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Namespace the controller runs in, as the manifest defines it (`agent-sandbox-system` for upstream releases).",
			},
			"applied_manifest_sha256": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "SHA-256 of the manifest that was applied, computed like `manifest_sha256`; copy it there to pin the bundle.",
			},
			"inventory": schema.MapNestedAttribute{
				Computed: true,
				MarkdownDescription: "The objects applied, keyed `Kind[.group]/[namespace/]name` (e.g. " +
					"`Deployment.apps/agent-sandbox-system/agent-sandbox-controller`). A refresh sets `drift` on objects " +
					"deleted or changed outside Terraform, and the next apply repairs them.",
				NestedObject: schema.NestedAttributeObject{Attributes: inventoryAttributes},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// inventoryAttributes are the attributes of one inventory entry, shared by
// the schema and the type of its values (derived from them).
var inventoryAttributes = map[string]schema.Attribute{
	"api_version": schema.StringAttribute{Computed: true, MarkdownDescription: "API version, e.g. `apps/v1`."},
	"kind":        schema.StringAttribute{Computed: true, MarkdownDescription: "Kind, e.g. `Deployment`."},
	"namespace":   schema.StringAttribute{Computed: true, MarkdownDescription: "Namespace; empty for cluster-scoped objects."},
	"name":        schema.StringAttribute{Computed: true, MarkdownDescription: "Name."},
	"digest": schema.StringAttribute{
		Computed: true,
		MarkdownDescription: "SHA-256 of the fields this provider's field manager owns in the object, " +
			"with their values, right after the apply.",
	},
	"drift": schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: "Empty, or `deleted` / `changed` when the last refresh found the object deleted or changed outside Terraform.",
	},
}

func (r *controllerResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{
		resourcevalidator.Conflicting(path.MatchRoot("manifest"), path.MatchRoot("manifest_file"), path.MatchRoot("manifest_url"), path.MatchRoot("release_base_url")),
	}
}

func (r *controllerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m controllerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	custom := !m.Manifest.IsNull() || !m.ManifestFile.IsNull() || !m.ManifestURL.IsNull()
	if custom && !m.Extensions.IsNull() && !m.Extensions.IsUnknown() && !m.Extensions.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("extensions"), "extensions only selects release assets",
			"`extensions = false` chooses the release's core-only asset (sandbox.yaml), but with `manifest_url` or "+
				"`manifest` the given manifest is installed as it is. Give a manifest without the extensions instead, "+
				"or remove `extensions`.")
	}
	if !custom && !m.AllowedLabelDomains.IsNull() && !m.Extensions.IsNull() && !m.Extensions.IsUnknown() && !m.Extensions.ValueBool() {
		resp.Diagnostics.AddAttributeError(path.Root("allowed_label_domains"), "allowed_label_domains needs the extensions",
			"With `extensions = false` the release's core-only asset is installed: its controller runs no SandboxClaim "+
				"controller and does not mount the "+sandboxapi.ConfigMapName+" ConfigMap, so the allowed label domains "+
				"would never be read. Remove `extensions = false`, or remove allowed_label_domains.")
	}
	if m.Controller.IsNull() || m.Controller.IsUnknown() {
		return
	}
	s, _, diags := m.settings(ctx)
	if diags.HasError() {
		return
	}
	validateFlags(&m, s, &resp.Diagnostics)
	ctl := path.Root("controller")
	if _, ok := s.Pod.PodLabels[controllerPodLabel]; ok {
		resp.Diagnostics.AddAttributeError(ctl.AtName("pod_labels").AtMapKey(controllerPodLabel), "Label the release selects its pods by",
			"The controller Deployment selects its pods by the label `"+controllerPodLabel+"` (the release's k8s/controller.yaml); "+
				"a pod label cannot change it. Use another key.")
	}
	// The kubelet judges the container's effective settings: each of
	// runAsNonRoot and runAsUser is the container's where it sets it, else
	// the pod's. So the pod's run_as_non_root with the container's root
	// user (or the other way round) is refused as well.
	// A value known only after apply is judged then, not taken as unset.
	pod, _ := m.Controller.Attributes()["pod_security_context"].(types.Object)
	ctr, _ := m.Controller.Attributes()["container_security_context"].(types.Object)
	nonRoot, nonRootAt, knownNonRoot := effectiveSetting(pod, ctr, "run_as_non_root")
	user, userAt, knownUser := effectiveSetting(pod, ctr, "run_as_user")
	if knownNonRoot && knownUser && nonRoot != nil && user != nil &&
		nonRoot.Equal(types.BoolValue(true)) && user.Equal(types.Int64Value(0)) {
		resp.Diagnostics.AddAttributeError(ctl.AtName(userAt).AtName("run_as_user"), "Root user with run_as_non_root",
			fmt.Sprintf("run_as_user = 0 (%s) is root, and run_as_non_root = true (%s) makes the kubelet refuse to start "+
				"such a container (the container's settings win over the pod's): the controller would never run. Use a "+
				"non-zero UID (upstream's image runs as 65532), or remove run_as_user.", userAt, nonRootAt))
	}
	if o, ok := m.Controller.Attributes()["resources"].(types.Object); ok {
		if rm, ok := resourcesOf(ctx, o); ok {
			podtemplate.CheckRequestsWithinLimits(rm, ctl.AtName("resources"), &resp.Diagnostics)
		}
	}
	if l, ok := m.Controller.Attributes()["tolerations"].(types.List); ok {
		checkTolerations(ctx, ctl.AtName("tolerations"), l, &resp.Diagnostics)
	}
}

// ModifyPlan decides whether an apply has work to do and, when it has,
// downloads and expands the manifest so that the plan already shows the
// objects that will be installed (and pruned), and so that a bad checksum,
// an unreachable URL or a malformed manifest fails the plan, before any
// request to the cluster. The cluster itself is not contacted.
func (r *controllerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	plan, _, state, ok := shared.PlanInputs[controllerModel](ctx, req, &resp.Diagnostics)
	if !ok {
		return // destroy, or unreadable
	}

	if !plan.inputsKnown() {
		plan.ID, plan.Namespace = types.StringUnknown(), types.StringUnknown()
		plan.AppliedManifestSHA256 = types.StringUnknown()
		plan.Inventory = types.MapUnknown(inventoryElemType)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		return
	}

	var prior []inventoryEntry
	if state != nil {
		var d diag.Diagnostics
		prior, d = state.inventory(ctx)
		resp.Diagnostics.Append(d...)
	}
	if state != nil && len(prior) > 0 && inputsEqual(&plan, state) {
		// The same objects as last time: keep what state knows, and plan
		// to re-apply only what a refresh found deleted or changed.
		plan.ID, plan.Namespace, plan.AppliedManifestSHA256 = state.ID, state.Namespace, state.AppliedManifestSHA256
		if drift := driftSummary(prior); len(drift) > 0 {
			tflog.Info(ctx, "objects changed outside Terraform will be re-applied", map[string]any{"objects": strings.Join(drift, "; ")})
		}
		setInventory(ctx, &plan, replanned(prior), &resp.Plan, &resp.Diagnostics)
		return
	}

	ms, d := plan.metrics(ctx)
	resp.Diagnostics.Append(d...)
	r.checkMonitoringServed(ctx, ms, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	fetchCtx, cancel := context.WithTimeout(ctx, planFetchTimeout)
	defer cancel()
	bundle, diags := prepare(fetchCtx, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.AppliedManifestSHA256 = types.StringValue(bundle.SHA256)
	plan.Namespace = types.StringValue(bundle.Namespace)
	plan.ID = types.StringValue(importID(bundle.Namespace, plan.Version.ValueString()))
	setInventory(ctx, &plan, bundleEntries(bundle.Objects), &resp.Plan, &resp.Diagnostics)
}

// readImported checks that an imported installation exists: its namespace
// does. The first apply after the import applies the bundle (adopting the
// objects) and records the inventory.
func (r *controllerResource) readImported(ctx context.Context, c *kube.Client, state *controllerModel, resp *resource.ReadResponse) {
	ns := state.Namespace.ValueString()
	m, _ := kube.WellKnownMapping(namespaceGVK)
	_, err := c.Get(ctx, m.GVR, "", ns)
	if kube.IsNotFound(err) {
		tflog.Warn(ctx, "the controller's namespace does not exist; removing the resource from state", map[string]any{"namespace": ns})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostics(err, "get", kube.ObjectRef{GVR: m.GVR, Kind: "Namespace", Name: ns})...)
		return
	}
	// The controller's optional ConfigMap is what allowed_label_domains
	// renders: an imported installation that has one is read as setting it.
	cm, err := c.Get(ctx, configMapGVR, ns, sandboxapi.ConfigMapName)
	switch {
	case kube.IsNotFound(err):
	case err != nil:
		resp.Diagnostics.Append(kube.Diagnostics(err, "get", kube.ObjectRef{GVR: configMapGVR, Kind: "ConfigMap", Namespace: ns, Name: sandboxapi.ConfigMapName})...)
		return
	default:
		value, _, _ := unstructured.NestedString(cm.Object, "data", sandboxapi.ConfigKeyAllowedLabelDomains)
		if domains := sandboxapi.ParseAllowedLabelDomains(value); len(domains) > 0 {
			slices.Sort(domains)
			set, d := types.SetValueFrom(ctx, types.StringType, slices.Compact(domains))
			resp.Diagnostics.Append(d...)
			state.AllowedLabelDomains = set
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// configMapGVR is core/v1 ConfigMap.
var configMapGVR = k8sschema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func (r *controllerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ns, version, ok := strings.Cut(req.ID, "/")
	if !ok || ns == "" || !versionRE.MatchString(version) {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected <namespace>/<version>, e.g. agent-sandbox-system/v1.0.3; got %q.", req.ID))
		return
	}
	setImported(ctx, resp, map[string]any{
		"id": req.ID, "namespace": ns, "version": version,
		"extensions": true, "keep_crds_on_destroy": true, "wait": true,
	})
}

// apply is Create's and Update's common path: refuse next to GKE's managed
// add-on, fetch and check the manifest again, then install it. It returns
// the inventory of what was applied (possibly partial, with errors).
func (r *controllerResource) apply(ctx context.Context, plan *controllerModel, prior []inventoryEntry, priorVersion string) ([]inventoryEntry, diag.Diagnostics) {
	var diags diag.Diagnostics
	// Everything that can fail without the cluster fails first, so that a
	// bad manifest or checksum never leads to a single request.
	bundle, d := prepare(ctx, plan)
	diags.Append(d...)
	if diags.HasError() {
		return nil, diags
	}
	if want := plan.AppliedManifestSHA256; !want.IsNull() && !want.IsUnknown() && want.ValueString() != bundle.SHA256 {
		diags.AddAttributeError(plan.source().attrPath(), "Manifest changed since the plan",
			fmt.Sprintf("The manifest from %s had SHA-256 %s when this plan was made (or when it was last applied) and "+
				"now has %s; nothing was applied. Plan again to see what the new manifest installs, and pin it with "+
				"manifest_sha256.",
				plan.source().describe(), want.ValueString(), bundle.SHA256))
		return nil, diags
	}
	c, d := r.Meta.Kube(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return nil, diags
	}
	evidence, d := detectManagedAddon(ctx, r.Meta, c)
	diags.Append(d...)
	if diags.HasError() {
		return nil, diags
	}
	if evidence != "" {
		diags.Append(managedAddonDiagnostic(evidence))
		return nil, diags
	}
	in := &installer{
		c: c, manager: r.Meta.FieldManager(),
		wait: orTrue(plan.Wait), keepCRDs: orTrue(plan.KeepCRDsOnDestroy),
	}
	tflog.Info(ctx, "installing agent-sandbox controller", map[string]any{
		"version": plan.Version.ValueString(), "source": bundle.Source, "objects": len(bundle.Objects),
		"prior_version": priorVersion, "prior_objects": len(prior),
	})
	entries, d := in.install(ctx, bundle.Objects, prior, priorVersion, plan.Version.ValueString(), bundle.Namespace)
	diags.Append(d...)
	return entries, diags
}

// effectiveSetting is the security-context attribute name the kubelet
// applies to the controller's container: the container's where
// container_security_context sets it, else the pod's (nil when neither
// does), with the attribute that sets it. known is false while an
// unknown value (or object) could still decide it.
func effectiveSetting(pod, ctr types.Object, name string) (v attr.Value, at string, known bool) {
	for _, level := range []struct {
		o  types.Object
		at string
	}{{ctr, "container_security_context"}, {pod, "pod_security_context"}} {
		if level.o.IsUnknown() {
			return nil, "", false
		}
		if level.o.IsNull() {
			continue
		}
		switch a := level.o.Attributes()[name]; {
		case a == nil || a.IsNull():
			continue
		case a.IsUnknown():
			return nil, "", false
		default:
			return a, level.at, true
		}
	}
	return nil, "", true
}
