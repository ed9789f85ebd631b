package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// The options of upstream's Helm chart for the controller pod that the
// release manifests do not set (helm/values.yaml at v1.0.3, rendered by
// helm/templates/deployment.yaml): image pull policy and secrets, pod
// labels and annotations, pod and container security contexts, affinity.
// Each is applied where the chart renders it; unset, the release's
// Deployment is installed as it is.

// controllerPodLabel is the label the release manifests select the
// controller pods by (k8s/controller.yaml): a pod label may not change it.
const controllerPodLabel = "app"

func seccompAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Optional:            true,
		MarkdownDescription: "`seccompProfile.type`: `RuntimeDefault` (the container runtime's default filter) or `Unconfined`.",
		Validators:          []validator.String{stringvalidator.OneOf("RuntimeDefault", "Unconfined")},
	}
}

func idAttribute(what string) schema.Int64Attribute {
	return schema.Int64Attribute{
		Optional:            true,
		MarkdownDescription: what,
		Validators:          []validator.Int64{int64validator.AtLeast(0)},
	}
}

// podSettingsAttributes are the chart's pod options, in `controller`.
func podSettingsAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"image_pull_policy": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "The controller container's `imagePullPolicy`: `Always`, `IfNotPresent` or `Never` (the chart's `image.pullPolicy`). Unset keeps the release's (none: Kubernetes' default, `IfNotPresent` for a tagged image).",
			Validators:          []validator.String{validators.ImagePullPolicy()},
		},
		"image_pull_secrets": schema.ListAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Names of Secrets in the controller's namespace holding credentials for the registry of the controller " +
				"image, e.g. a private mirror with `image_registry` (the chart's `imagePullSecrets`). The Secrets are not created by this resource.",
			Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(validators.DNSSubdomainName())},
		},
		"pod_labels": labelsAttribute("Labels added to the controller pods (the chart's `podLabels`), e.g. for cost allocation or NetworkPolicy " +
			"selectors. `app`, the label the release selects its pods by, cannot be set."),
		"pod_annotations": schema.MapAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Annotations added to the controller pods (the chart's `podAnnotations`), e.g. a service mesh's injection toggle.",
			Validators:          []validator.Map{validators.Annotations()},
		},
		"pod_security_context": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "The controller pod's `securityContext` (the chart's `podSecurityContext`). The release sets none; " +
				"for a restricted Pod Security namespace set `{ run_as_non_root = true, seccomp_profile = \"RuntimeDefault\" }`.",
			Attributes: map[string]schema.Attribute{
				"run_as_non_root": schema.BoolAttribute{Optional: true, MarkdownDescription: "Refuse to start containers that would run as root."},
				"run_as_user":     idAttribute("UID the containers run as."),
				"run_as_group":    idAttribute("Primary GID of the containers' processes."),
				"fs_group":        idAttribute("Supplementary GID that owns mounted volumes."),
				"seccomp_profile": seccompAttribute(),
			},
		},
		"container_security_context": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "The controller container's `securityContext` (the chart's `containerSecurityContext`). The release sets " +
				"none; hardened, as the restricted Pod Security Standard asks: `{ allow_privilege_escalation = false, capabilities_drop = [\"ALL\"] }` with the pod's `{ run_as_non_root = true, seccomp_profile = \"RuntimeDefault\" }`.",
			Attributes: map[string]schema.Attribute{
				"allow_privilege_escalation": schema.BoolAttribute{Optional: true, MarkdownDescription: "Whether a process may gain more privileges than its parent."},
				"privileged":                 schema.BoolAttribute{Optional: true, MarkdownDescription: "Run the container privileged; the controller never needs it."},
				"read_only_root_filesystem":  schema.BoolAttribute{Optional: true, MarkdownDescription: "Mount the container's root filesystem read-only."},
				"run_as_non_root":            schema.BoolAttribute{Optional: true, MarkdownDescription: "Refuse to start the container as root."},
				"run_as_user":                idAttribute("UID the container runs as."),
				"run_as_group":               idAttribute("Primary GID of the container's process."),
				"capabilities_add": schema.ListAttribute{
					Optional: true, ElementType: types.StringType,
					MarkdownDescription: "Linux capabilities to add, e.g. `[\"NET_BIND_SERVICE\"]`.",
					Validators:          []validator.List{listvalidator.ValueStringsAre(validators.CapabilityName("NET_BIND_SERVICE"))},
				},
				"capabilities_drop": schema.ListAttribute{
					Optional: true, ElementType: types.StringType,
					MarkdownDescription: "Linux capabilities to drop, e.g. `[\"ALL\"]`.",
					Validators:          []validator.List{listvalidator.ValueStringsAre(validators.CapabilityName("NET_RAW, or ALL"))},
				},
				"seccomp_profile": seccompAttribute(),
			},
		},
		"affinity": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "The controller pod's `affinity` (the chart's `affinity`), as JSON in Kubernetes' field names, e.g. " +
				"`jsonencode({ nodeAffinity = { requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms = [{ matchExpressions = " +
				"[{ key = \"pool\", operator = \"In\", values = [\"system\"] }] }] } } })`. Checked at validate against Kubernetes' `Affinity` " +
				"type: an unknown field or a value of the wrong type is refused.",
			Validators: []validator.String{affinityValid},
		},
	}
}

// podSettingsModel holds the chart's pod options of controllerSettingsModel.
type podSettingsModel struct {
	ImagePullPolicy          types.String `tfsdk:"image_pull_policy"`
	ImagePullSecrets         types.List   `tfsdk:"image_pull_secrets"`
	PodLabels                types.Map    `tfsdk:"pod_labels"`
	PodAnnotations           types.Map    `tfsdk:"pod_annotations"`
	PodSecurityContext       types.Object `tfsdk:"pod_security_context"`
	ContainerSecurityContext types.Object `tfsdk:"container_security_context"`
	Affinity                 types.String `tfsdk:"affinity"`
}

type podSecurityContextModel struct {
	RunAsNonRoot   types.Bool   `tfsdk:"run_as_non_root"`
	RunAsUser      types.Int64  `tfsdk:"run_as_user"`
	RunAsGroup     types.Int64  `tfsdk:"run_as_group"`
	FSGroup        types.Int64  `tfsdk:"fs_group"`
	SeccompProfile types.String `tfsdk:"seccomp_profile"`
}

type containerSecurityContextModel struct {
	AllowPrivilegeEscalation types.Bool   `tfsdk:"allow_privilege_escalation"`
	Privileged               types.Bool   `tfsdk:"privileged"`
	ReadOnlyRootFilesystem   types.Bool   `tfsdk:"read_only_root_filesystem"`
	RunAsNonRoot             types.Bool   `tfsdk:"run_as_non_root"`
	RunAsUser                types.Int64  `tfsdk:"run_as_user"`
	RunAsGroup               types.Int64  `tfsdk:"run_as_group"`
	CapabilitiesAdd          types.List   `tfsdk:"capabilities_add"`
	CapabilitiesDrop         types.List   `tfsdk:"capabilities_drop"`
	SeccompProfile           types.String `tfsdk:"seccomp_profile"`
}

// podSettings are the chart's pod options, expanded to the objects'
// fields; nil maps and slices mean unset.
type podSettings struct {
	ImagePullPolicy          string
	ImagePullSecrets         []any
	PodLabels                map[string]any
	PodAnnotations           map[string]any
	PodSecurityContext       map[string]any
	ContainerSecurityContext map[string]any
	Affinity                 map[string]any
}

// expand reads m into s.
func (m podSettingsModel) expand(ctx context.Context, s *podSettings) diag.Diagnostics {
	var diags diag.Diagnostics
	s.ImagePullPolicy = m.ImagePullPolicy.ValueString()
	if !m.ImagePullSecrets.IsNull() {
		var names []string
		diags.Append(m.ImagePullSecrets.ElementsAs(ctx, &names, false)...)
		for _, n := range names {
			s.ImagePullSecrets = append(s.ImagePullSecrets, map[string]any{"name": n})
		}
	}
	if !m.PodLabels.IsNull() {
		var l map[string]string
		diags.Append(m.PodLabels.ElementsAs(ctx, &l, false)...)
		s.PodLabels = toAnyMap(l)
	}
	if !m.PodAnnotations.IsNull() {
		var a map[string]string
		diags.Append(m.PodAnnotations.ElementsAs(ctx, &a, false)...)
		s.PodAnnotations = toAnyMap(a)
	}
	if !m.PodSecurityContext.IsNull() {
		var p podSecurityContextModel
		diags.Append(m.PodSecurityContext.As(ctx, &p, objectAsOptions)...)
		s.PodSecurityContext = knownValues(map[string]attr.Value{
			"runAsNonRoot": p.RunAsNonRoot, "runAsUser": p.RunAsUser, "runAsGroup": p.RunAsGroup, "fsGroup": p.FSGroup,
		})
		setSeccomp(s.PodSecurityContext, p.SeccompProfile)
	}
	if !m.ContainerSecurityContext.IsNull() {
		var c containerSecurityContextModel
		diags.Append(m.ContainerSecurityContext.As(ctx, &c, objectAsOptions)...)
		s.ContainerSecurityContext = knownValues(map[string]attr.Value{
			"allowPrivilegeEscalation": c.AllowPrivilegeEscalation, "privileged": c.Privileged,
			"readOnlyRootFilesystem": c.ReadOnlyRootFilesystem, "runAsNonRoot": c.RunAsNonRoot,
			"runAsUser": c.RunAsUser, "runAsGroup": c.RunAsGroup,
		})
		caps := map[string]any{}
		for key, l := range map[string]types.List{"add": c.CapabilitiesAdd, "drop": c.CapabilitiesDrop} {
			if l.IsNull() {
				continue
			}
			var names []string
			diags.Append(l.ElementsAs(ctx, &names, false)...)
			caps[key] = toAnySlice(names)
		}
		if len(caps) > 0 {
			s.ContainerSecurityContext["capabilities"] = caps
		}
		setSeccomp(s.ContainerSecurityContext, c.SeccompProfile)
	}
	if v := m.Affinity.ValueString(); v != "" {
		if err := json.Unmarshal([]byte(v), &s.Affinity); err != nil {
			diags.AddError("Invalid affinity", err.Error()) // refused at validate already
		}
	}
	return diags
}

// knownValues maps Kubernetes field names to the values of the attributes
// that are set (booleans and integers), leaving out null and unknown ones.
func knownValues(fields map[string]attr.Value) map[string]any {
	out := map[string]any{}
	for key, v := range fields {
		if v.IsNull() || v.IsUnknown() {
			continue
		}
		switch v := v.(type) {
		case types.Bool:
			out[key] = v.ValueBool()
		case types.Int64:
			out[key] = v.ValueInt64()
		default:
			// A new kind of field must be added here.
			panic(fmt.Sprintf("controller: no Kubernetes value for %T", v))
		}
	}
	return out
}

func setSeccomp(m map[string]any, v types.String) {
	if s := v.ValueString(); s != "" {
		m["seccompProfile"] = map[string]any{"type": s}
	}
}

// affinityValid refuses what is not a Kubernetes Affinity in JSON.
var affinityValid = validators.Check{
	Summary: "Invalid affinity",
	Desc:    "must be a Kubernetes Affinity as JSON",
	Problem: func(s string) string {
		if err := checkAffinity(s); err != nil {
			return fmt.Sprintf("%v.\n\nGive a Kubernetes Affinity (nodeAffinity, podAffinity, podAntiAffinity) in its own field names, "+
				"as JSON: jsonencode({ nodeAffinity = { ... } }).", err)
		}
		return ""
	},
}

// checkAffinity decodes s strictly into corev1.Affinity: unknown fields and
// values of the wrong type are errors, as the API server's strict field
// validation would report them.
func checkAffinity(s string) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	var a corev1.Affinity
	if err := dec.Decode(&a); err != nil {
		return fmt.Errorf("not a Kubernetes Affinity: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("not a Kubernetes Affinity: more than one JSON value")
	}
	if a.NodeAffinity == nil && a.PodAffinity == nil && a.PodAntiAffinity == nil {
		return fmt.Errorf("an empty affinity: set nodeAffinity, podAffinity or podAntiAffinity, or remove the attribute")
	}
	return nil
}

// withPodSettings adds the chart's pod options to the `controller`
// attributes.
func withPodSettings(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	for k, v := range podSettingsAttributes() {
		attrs[k] = v
	}
	return attrs
}
