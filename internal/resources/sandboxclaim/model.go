package sandboxclaim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// resourceModel is the resource's plan and state.
type resourceModel struct {
	object.Metadata
	claimModel
	WaitForReady types.Bool     `tfsdk:"wait_for_ready"`
	Timeouts     timeouts.Value `tfsdk:"timeouts"`
}

// claimModel is what the resource and the data source both show of a
// claim: its spec and the sandbox it holds.
type claimModel struct {
	WarmPool                types.String `tfsdk:"warm_pool"`
	ShutdownTime            types.String `tfsdk:"shutdown_time"`
	TTLSecondsAfterFinished types.Int64  `tfsdk:"ttl_seconds_after_finished"`
	ShutdownPolicy          types.String `tfsdk:"shutdown_policy"`
	Env                     types.List   `tfsdk:"env"`
	AdditionalPodMetadata   types.Object `tfsdk:"additional_pod_metadata"`
	VolumeClaimTemplates    types.List   `tfsdk:"volume_claim_templates"`
	SandboxName             types.String `tfsdk:"sandbox_name"`
	PodIPs                  types.List   `tfsdk:"pod_ips"`
	ServiceFQDN             types.String `tfsdk:"service_fqdn"`
	Ready                   types.Bool   `tfsdk:"ready"`
}

type envModel struct {
	Name          types.String `tfsdk:"name"`
	Value         types.String `tfsdk:"value"`
	ContainerName types.String `tfsdk:"container_name"`
}

type podMetadataModel struct {
	Labels      types.Map `tfsdk:"labels"`
	Annotations types.Map `tfsdk:"annotations"`
}

// The types of env's elements and of additional_pod_metadata, derived
// from the resource's schema.
var (
	claimAttributes = resourceSchema(context.Background()).Attributes
	envType         = tfvalues.ElementType(claimAttributes["env"])
	podMetadataType = tfvalues.ElementType(claimAttributes["additional_pod_metadata"])
)

// spec converts the model. Values are known: Terraform resolves them all
// before apply.
func (m resourceModel) spec(ctx context.Context) (extv1beta1.SandboxClaimSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := extv1beta1.SandboxClaimSpec{
		WarmPoolRef: extv1beta1.SandboxWarmPoolRef{Name: m.WarmPool.ValueString()},
		Lifecycle:   &extv1beta1.Lifecycle{ShutdownPolicy: extv1beta1.ShutdownPolicy(m.ShutdownPolicy.ValueString())},
	}
	if s.Lifecycle.ShutdownPolicy == "" {
		s.Lifecycle.ShutdownPolicy = extv1beta1.ShutdownPolicyRetain
	}
	if !m.ShutdownTime.IsNull() {
		t, err := time.Parse(time.RFC3339, m.ShutdownTime.ValueString())
		if err != nil {
			diags.AddError("Invalid shutdown_time", err.Error()) // validated at plan; unreachable
			return s, diags
		}
		s.Lifecycle.ShutdownTime = new(metav1.NewTime(t))
	}
	if !m.TTLSecondsAfterFinished.IsNull() {
		s.Lifecycle.TTLSecondsAfterFinished = new(int32(m.TTLSecondsAfterFinished.ValueInt64()))
	}
	var env []envModel
	diags.Append(m.Env.ElementsAs(ctx, &env, false)...)
	for _, e := range env {
		s.Env = append(s.Env, extv1beta1.EnvVar{Name: e.Name.ValueString(), Value: e.Value.ValueString(), ContainerName: e.ContainerName.ValueString()})
	}
	vcts, d := blueprint.ExpandVolumeClaimTemplates(ctx, m.VolumeClaimTemplates)
	diags.Append(d...)
	s.VolumeClaimTemplates = vcts
	if !m.AdditionalPodMetadata.IsNull() {
		var pm podMetadataModel
		diags.Append(m.AdditionalPodMetadata.As(ctx, &pm, basetypesObjectAsOptions)...)
		diags.Append(pm.Labels.ElementsAs(ctx, &s.AdditionalPodMetadata.Labels, false)...)
		diags.Append(pm.Annotations.ElementsAs(ctx, &s.AdditionalPodMetadata.Annotations, false)...)
	}
	return s, diags
}

// build is the object the plan describes, ready for a server-side apply.
//
// Empty parts are left out, as upstream's controller leaves them when it
// records an adoption with a full Update of its typed claim
// (sandboxclaim_controller.go:1142 and sandboxclaim_types.go:120-135 at
// v0.5.6): `env` only when there are variables (the controller's Update
// drops an empty list, and sending [] would put it back: a write, and a new
// generation, on every update). The `additionalPodMetadata: {}` that Update
// writes holds nothing, so ApplyExclusive leaves it alone; sending {}
// ourselves instead fails once labels were set and are removed (server-side
// apply turns the emptied object into null, kubernetes/kubernetes#135841).
// Fields the configuration leaves out (a shutdown time, pod labels,
// variables) are removed if others add them by ApplyExclusive on update.
func build(ctx context.Context, m resourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
	obj := Kind.New()
	diags := m.Expand(ctx, obj)
	s, d := m.spec(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return nil, diags
	}
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&s)
	if err != nil {
		diags.AddError("Cannot build the sandbox claim", err.Error())
		return nil, diags
	}
	// Upstream's type writes additionalPodMetadata (and a volume claim
	// template's metadata) even when empty; see above for why {} is not sent.
	sandboxapi.OmitEmptyMetadata(spec)
	// The user's spelling of the time, not Go's re-rendering of it: what is
	// stored is then what was written (the CRD keeps the string as is).
	if !m.ShutdownTime.IsNull() {
		_ = unstructured.SetNestedField(spec, m.ShutdownTime.ValueString(), "lifecycle", "shutdownTime")
	}
	obj.Object["spec"] = spec
	return obj, diags
}

// flatten brings m in line with the live claim. Every spec field is read
// back, so an out-of-band change shows as a diff. Server normalisation
// never does: the default shutdown policy is applied, an empty list or map
// reads as whatever the configuration wrote (null or empty), and a
// shutdown time rewritten in another form (a controller re-encoding the
// claim renders it in UTC) keeps the configuration's spelling as long as
// it is the same instant.
func flatten(ctx context.Context, live *unstructured.Unstructured, m *resourceModel, fieldManager string) diag.Diagnostics {
	md, diags := object.Flatten(ctx, live, m.Metadata, fieldManager)
	m.Metadata = md
	claim, err := object.Decode[extv1beta1.SandboxClaim](Kind, live)
	if err != nil {
		diags.AddError("Cannot read the sandbox claim", err.Error())
		return diags
	}
	m.WarmPool = types.StringValue(claim.Spec.WarmPoolRef.Name)

	lc := claim.Spec.Lifecycle
	if lc == nil {
		lc = &extv1beta1.Lifecycle{}
	}
	liveTime, _, _ := unstructured.NestedString(live.Object, "spec", "lifecycle", "shutdownTime")
	m.ShutdownTime = tfvalues.Time(liveTime, m.ShutdownTime)
	m.TTLSecondsAfterFinished = types.Int64Null()
	if lc.TTLSecondsAfterFinished != nil {
		m.TTLSecondsAfterFinished = types.Int64Value(int64(*lc.TTLSecondsAfterFinished))
	}
	m.ShutdownPolicy = types.StringValue(string(extv1beta1.ShutdownPolicyRetain))
	if lc.ShutdownPolicy != "" {
		m.ShutdownPolicy = types.StringValue(string(lc.ShutdownPolicy))
	}

	var d diag.Diagnostics
	m.Env, d = flattenEnv(claim.Spec.Env, m.Env)
	diags.Append(d...)
	m.VolumeClaimTemplates, d = blueprint.FlattenVolumeClaimTemplates(ctx, claim.Spec.VolumeClaimTemplates, m.VolumeClaimTemplates)
	diags.Append(d...)
	m.AdditionalPodMetadata, d = flattenPodMetadata(ctx, claim.Spec.AdditionalPodMetadata.Labels, claim.Spec.AdditionalPodMetadata.Annotations, m.AdditionalPodMetadata)
	diags.Append(d...)

	st := readStatus(claim)
	m.SandboxName = types.StringValue(st.sandbox)
	m.PodIPs, d = types.ListValueFrom(ctx, types.StringType, st.podIPs)
	diags.Append(d...)
	m.ServiceFQDN = serviceFQDN(st)
	m.Ready = types.BoolValue(st.ready)
	if m.WaitForReady.IsNull() || m.WaitForReady.IsUnknown() {
		m.WaitForReady = types.BoolValue(true) // after an import
	}
	return diags
}

// serviceFQDN is the claim's status.sandbox.serviceFQDN, or null when the
// claim reports none: releases before v1.0.1 never do (the field is new in
// extensions/api/v1beta1/sandboxclaim_types.go:165-171 at v1.0.1), and
// v1.0.1+ leave it out while no sandbox is bound and while the sandbox has
// no Service (an empty string is omitted, :171). Those cases cannot be told
// apart on the claim, so none reads as an empty name.
//
// It needs no wait of its own. The claim controller sets it from the same
// read of the sandbox as the Ready condition it forwards, in one status
// write (computeAndSetStatus, extensions/controllers/sandboxclaim_controller.go:840-861
// at v1.0.1, the forwarding at :823-828). The sandbox controller computes
// the Service's FQDN and the Ready condition in one pass and writes them in
// one status update (controllers/sandbox_controller.go:389-458 and :380 at
// v1.0.1), and a sandbox with `service: true` is not Ready without its
// Service (:653-679). So once a claim the apply waits for is Ready
// (claimReady), the state made from it holds the FQDN.
func serviceFQDN(st claimStatus) types.String {
	if st.serviceFQDN == "" {
		return types.StringNull()
	}
	return types.StringValue(st.serviceFQDN)
}

// flattenEnv returns the live variables; none at all reads as prior when
// prior is an empty list, and as null otherwise.
func flattenEnv(live []extv1beta1.EnvVar, prior types.List) (types.List, diag.Diagnostics) {
	if len(live) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return prior, nil
		}
		return types.ListNull(envType), nil
	}
	elems := make([]attr.Value, 0, len(live))
	var diags diag.Diagnostics
	for _, e := range live {
		container := types.StringNull()
		if e.ContainerName != "" {
			container = types.StringValue(e.ContainerName)
		}
		o, d := types.ObjectValue(envType.AttrTypes, map[string]attr.Value{
			"name": types.StringValue(e.Name), "value": types.StringValue(e.Value), "container_name": container,
		})
		diags.Append(d...)
		elems = append(elems, o)
	}
	l, d := types.ListValue(envType, elems)
	diags.Append(d...)
	return l, diags
}

// flattenPodMetadata returns the live pod metadata in the shape prior has:
// a map that is empty live reads as an empty map if prior wrote one, and as
// null otherwise; the whole object is null when both are and prior is.
func flattenPodMetadata(ctx context.Context, labels, annotations map[string]string, prior types.Object) (types.Object, diag.Diagnostics) {
	var pm podMetadataModel
	priorSet := !prior.IsNull() && !prior.IsUnknown()
	if priorSet {
		if d := prior.As(ctx, &pm, basetypesObjectAsOptions); d.HasError() {
			return prior, d
		}
	}
	if len(labels) == 0 && len(annotations) == 0 && !priorSet {
		return types.ObjectNull(podMetadataType.AttrTypes), nil
	}
	var diags diag.Diagnostics
	o := tfvalues.ObjectOf(podMetadataType, map[string]attr.Value{
		"labels":      tfvalues.Map(ctx, labels, pm.Labels, &diags),
		"annotations": tfvalues.Map(ctx, annotations, pm.Annotations, &diags),
	}, &diags)
	return o, diags
}

// applied is what must not change without replacing the claim: the pool,
// the variables and the volume claim templates, fingerprinted (the values
// may be secrets, and the private state holding this is not meant to show
// them). A record written before volume_claim_templates existed reads as
// none ("").
type applied struct {
	WarmPool string `json:"warm_pool"`
	Env      string `json:"env"`
	Volumes  string `json:"volume_claim_templates,omitempty"`
}

func appliedOf(ctx context.Context, m resourceModel) (applied, diag.Diagnostics) {
	s, diags := m.spec(ctx)
	return applied{WarmPool: s.WarmPoolRef.Name, Env: envDigest(s.Env), Volumes: digest(s.VolumeClaimTemplates)}, diags
}

// digest fingerprints a list; empty and nil are one value ("").
func digest[T any](l []T) string {
	if len(l) == 0 {
		return ""
	}
	b, _ := json.Marshal(l) // plain structs and quantities always encode
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// envDigest fingerprints variables; none at all, null or [], is one value.
func envDigest(env []extv1beta1.EnvVar) string { return digest(env) }

// basetypesObjectAsOptions reads nested objects with null and unknown
// attributes kept as framework values (the models' fields all are).
var basetypesObjectAsOptions = basetypes.ObjectAsOptions{}
