package podtemplate

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// The model mirrors the schema one struct per nested object. Nested objects
// and lists are kept as types.Object and types.List (not Go structs and
// slices) so that a configuration with unknown values can still be decoded
// in ValidateConfig; the helpers below decode them where they are known.

// Model is the `pod_template` object.
type Model struct {
	Labels                        types.Map    `tfsdk:"labels"`
	Annotations                   types.Map    `tfsdk:"annotations"`
	Containers                    types.List   `tfsdk:"containers"`      // of ContainerModel
	InitContainers                types.List   `tfsdk:"init_containers"` // of ContainerModel
	Volumes                       types.List   `tfsdk:"volumes"`         // of VolumeModel
	RuntimeClassName              types.String `tfsdk:"runtime_class_name"`
	AutomountServiceAccountToken  types.Bool   `tfsdk:"automount_service_account_token"`
	ServiceAccountName            types.String `tfsdk:"service_account_name"`
	NodeSelector                  types.Map    `tfsdk:"node_selector"`
	Tolerations                   types.List   `tfsdk:"tolerations"` // of TolerationModel
	Affinity                      types.Object `tfsdk:"affinity"`    // AffinityModel
	DNSPolicy                     types.String `tfsdk:"dns_policy"`
	DNSConfig                     types.Object `tfsdk:"dns_config"` // DNSConfigModel
	ImagePullSecrets              types.List   `tfsdk:"image_pull_secrets"`
	PriorityClassName             types.String `tfsdk:"priority_class_name"`
	TerminationGracePeriodSeconds types.Int64  `tfsdk:"termination_grace_period_seconds"`
	SecurityContext               types.Object `tfsdk:"security_context"` // PodSecurityContextModel
	PodSpecOverrides              types.String `tfsdk:"pod_spec_overrides"`
}

// ContainerModel is one entry of containers or init_containers.
type ContainerModel struct {
	Name            types.String `tfsdk:"name"`
	Image           types.String `tfsdk:"image"`
	ImagePullPolicy types.String `tfsdk:"image_pull_policy"`
	Command         types.List   `tfsdk:"command"`
	Args            types.List   `tfsdk:"args"`
	WorkingDir      types.String `tfsdk:"working_dir"`
	Env             types.List   `tfsdk:"env"`       // of EnvModel
	Ports           types.List   `tfsdk:"ports"`     // of PortModel
	Resources       types.Object `tfsdk:"resources"` // ResourcesModel
	VolumeMounts    types.List   `tfsdk:"volume_mounts"`
	ReadinessProbe  types.Object `tfsdk:"readiness_probe"` // ProbeModel
	LivenessProbe   types.Object `tfsdk:"liveness_probe"`
	StartupProbe    types.Object `tfsdk:"startup_probe"`
	SecurityContext types.Object `tfsdk:"security_context"` // ContainerSecurityContextModel
}

// EnvModel is one environment variable.
type EnvModel struct {
	Name      types.String `tfsdk:"name"`
	Value     types.String `tfsdk:"value"`
	ValueFrom types.Object `tfsdk:"value_from"` // EnvSourceModel
}

// EnvSourceModel is an environment variable's value_from.
type EnvSourceModel struct {
	SecretKeyRef    types.Object `tfsdk:"secret_key_ref"`     // KeyRefModel
	ConfigMapKeyRef types.Object `tfsdk:"config_map_key_ref"` // KeyRefModel
	FieldRef        types.Object `tfsdk:"field_ref"`          // FieldRefModel
}

// KeyRefModel selects a key of a Secret or ConfigMap.
type KeyRefModel struct {
	Name     types.String `tfsdk:"name"`
	Key      types.String `tfsdk:"key"`
	Optional types.Bool   `tfsdk:"optional"`
}

// FieldRefModel selects a field of the pod.
type FieldRefModel struct {
	FieldPath  types.String `tfsdk:"field_path"`
	APIVersion types.String `tfsdk:"api_version"`
}

// PortModel is one container port.
type PortModel struct {
	Name          types.String `tfsdk:"name"`
	ContainerPort types.Int64  `tfsdk:"container_port"`
	Protocol      types.String `tfsdk:"protocol"`
}

// ResourcesModel holds requests and limits as quantity strings by name.
type ResourcesModel struct {
	Limits   types.Map `tfsdk:"limits"`
	Requests types.Map `tfsdk:"requests"`
}

// VolumeMountModel is one volume mount.
type VolumeMountModel struct {
	Name      types.String `tfsdk:"name"`
	MountPath types.String `tfsdk:"mount_path"`
	SubPath   types.String `tfsdk:"sub_path"`
	ReadOnly  types.Bool   `tfsdk:"read_only"`
}

// ProbeModel is a readiness, liveness or startup probe.
type ProbeModel struct {
	Exec                types.Object `tfsdk:"exec"`       // ExecModel
	HTTPGet             types.Object `tfsdk:"http_get"`   // HTTPGetModel
	TCPSocket           types.Object `tfsdk:"tcp_socket"` // TCPSocketModel
	GRPC                types.Object `tfsdk:"grpc"`       // GRPCModel
	InitialDelaySeconds types.Int64  `tfsdk:"initial_delay_seconds"`
	PeriodSeconds       types.Int64  `tfsdk:"period_seconds"`
	TimeoutSeconds      types.Int64  `tfsdk:"timeout_seconds"`
	SuccessThreshold    types.Int64  `tfsdk:"success_threshold"`
	FailureThreshold    types.Int64  `tfsdk:"failure_threshold"`
}

// ExecModel is a probe's exec handler.
type ExecModel struct {
	Command types.List `tfsdk:"command"`
}

// HTTPGetModel is a probe's http_get handler.
type HTTPGetModel struct {
	Path        types.String `tfsdk:"path"`
	Port        types.String `tfsdk:"port"`
	Host        types.String `tfsdk:"host"`
	Scheme      types.String `tfsdk:"scheme"`
	HTTPHeaders types.List   `tfsdk:"http_headers"` // of HTTPHeaderModel
}

// HTTPHeaderModel is one extra header of an http_get probe.
type HTTPHeaderModel struct {
	Name  types.String `tfsdk:"name"`
	Value types.String `tfsdk:"value"`
}

// TCPSocketModel is a probe's tcp_socket handler.
type TCPSocketModel struct {
	Port types.String `tfsdk:"port"`
	Host types.String `tfsdk:"host"`
}

// GRPCModel is a probe's grpc handler.
type GRPCModel struct {
	Port    types.Int64  `tfsdk:"port"`
	Service types.String `tfsdk:"service"`
}

// ContainerSecurityContextModel is a container's security_context.
type ContainerSecurityContextModel struct {
	AllowPrivilegeEscalation types.Bool   `tfsdk:"allow_privilege_escalation"`
	Capabilities             types.Object `tfsdk:"capabilities"` // CapabilitiesModel
	Privileged               types.Bool   `tfsdk:"privileged"`
	ReadOnlyRootFilesystem   types.Bool   `tfsdk:"read_only_root_filesystem"`
	RunAsNonRoot             types.Bool   `tfsdk:"run_as_non_root"`
	RunAsUser                types.Int64  `tfsdk:"run_as_user"`
	RunAsGroup               types.Int64  `tfsdk:"run_as_group"`
	SeccompProfile           types.Object `tfsdk:"seccomp_profile"` // SeccompProfileModel
}

// CapabilitiesModel lists capabilities to add and drop.
type CapabilitiesModel struct {
	Add  types.List `tfsdk:"add"`
	Drop types.List `tfsdk:"drop"`
}

// SeccompProfileModel is a seccomp profile.
type SeccompProfileModel struct {
	Type             types.String `tfsdk:"type"`
	LocalhostProfile types.String `tfsdk:"localhost_profile"`
}

// PodSecurityContextModel is the pod's security_context.
type PodSecurityContextModel struct {
	RunAsNonRoot       types.Bool   `tfsdk:"run_as_non_root"`
	RunAsUser          types.Int64  `tfsdk:"run_as_user"`
	RunAsGroup         types.Int64  `tfsdk:"run_as_group"`
	FSGroup            types.Int64  `tfsdk:"fs_group"`
	SupplementalGroups types.List   `tfsdk:"supplemental_groups"`
	SeccompProfile     types.Object `tfsdk:"seccomp_profile"` // SeccompProfileModel
}

// VolumeModel is one pod volume; exactly one source is set.
type VolumeModel struct {
	Name                  types.String `tfsdk:"name"`
	EmptyDir              types.Object `tfsdk:"empty_dir"`               // EmptyDirModel
	ConfigMap             types.Object `tfsdk:"config_map"`              // ConfigMapVolumeModel
	Secret                types.Object `tfsdk:"secret"`                  // SecretVolumeModel
	PersistentVolumeClaim types.Object `tfsdk:"persistent_volume_claim"` // PVCVolumeModel
}

// EmptyDirModel is an empty_dir volume source.
type EmptyDirModel struct {
	Medium    types.String `tfsdk:"medium"`
	SizeLimit types.String `tfsdk:"size_limit"`
}

// ConfigMapVolumeModel is a config_map volume source.
type ConfigMapVolumeModel struct {
	Name types.String `tfsdk:"name"`
	ProjectionModel
}

// SecretVolumeModel is a secret volume source.
type SecretVolumeModel struct {
	SecretName types.String `tfsdk:"secret_name"`
	ProjectionModel
}

// ProjectionModel is what config_map and secret volumes share: the keys
// that become files, the files' mode, and whether the source may be
// missing.
type ProjectionModel struct {
	Items       types.List   `tfsdk:"items"` // of KeyToPathModel
	DefaultMode types.String `tfsdk:"default_mode"`
	Optional    types.Bool   `tfsdk:"optional"`
}

// KeyToPathModel projects one key to a file.
type KeyToPathModel struct {
	Key  types.String `tfsdk:"key"`
	Path types.String `tfsdk:"path"`
}

// PVCVolumeModel is a persistent_volume_claim volume source.
type PVCVolumeModel struct {
	ClaimName types.String `tfsdk:"claim_name"`
	ReadOnly  types.Bool   `tfsdk:"read_only"`
}

// TolerationModel is one toleration: of pod_template, and of the controller's
// and sandbox router's Deployments (internal/resources/controller), which
// take TolerationAttributes, CheckTolerations and ExpandToleration too.
type TolerationModel struct {
	Key               types.String `tfsdk:"key"`
	Operator          types.String `tfsdk:"operator"`
	Value             types.String `tfsdk:"value"`
	Effect            types.String `tfsdk:"effect"`
	TolerationSeconds types.Int64  `tfsdk:"toleration_seconds"`
}

// AffinityModel is the pod's affinity.
type AffinityModel struct {
	NodeAffinity    types.Object `tfsdk:"node_affinity"`     // NodeAffinityModel
	PodAntiAffinity types.Object `tfsdk:"pod_anti_affinity"` // PodAntiAffinityModel
}

// NodeAffinityModel holds the required node selector terms.
type NodeAffinityModel struct {
	Required types.List `tfsdk:"required"` // of NodeSelectorTermModel
}

// NodeSelectorTermModel is one node selector term.
type NodeSelectorTermModel struct {
	MatchExpressions types.List `tfsdk:"match_expressions"` // of labelselector.RequirementModel
}

// PodAntiAffinityModel holds the preferred anti-affinity terms.
type PodAntiAffinityModel struct {
	Preferred types.List `tfsdk:"preferred"` // of WeightedPodAffinityTermModel
}

// WeightedPodAffinityTermModel is one weighted anti-affinity preference.
type WeightedPodAffinityTermModel struct {
	Weight        types.Int64  `tfsdk:"weight"`
	TopologyKey   types.String `tfsdk:"topology_key"`
	LabelSelector types.Object `tfsdk:"label_selector"` // labelselector.Model
	Namespaces    types.List   `tfsdk:"namespaces"`
}

// DNSConfigModel is the pod's dns_config.
type DNSConfigModel struct {
	Nameservers types.List `tfsdk:"nameservers"`
	Searches    types.List `tfsdk:"searches"`
	Options     types.List `tfsdk:"options"` // of DNSOptionModel
}

// DNSOptionModel is one resolver option.
type DNSOptionModel struct {
	Name  types.String `tfsdk:"name"`
	Value types.String `tfsdk:"value"`
}

// ObjectType is the type of the pod_template object, e.g. for
// types.ObjectNull(podtemplate.ObjectType().AttrTypes).
func ObjectType() types.ObjectType { return podType() }

// Null is a null pod_template, the "prior" to give Flatten when there is no
// prior state (import, data sources).
func Null() types.Object { return types.ObjectNull(podType().AttrTypes) }

// podType is computed from the schema once, so model, schema and the values
// Flatten builds can never disagree about a type.
var podType = sync.OnceValue(func() types.ObjectType {
	t, ok := Attribute().GetType().(types.ObjectType)
	if !ok {
		panic("podtemplate: pod_template is not an object")
	}
	return t
})

// typeAt walks from the pod_template type through attribute names; a list
// step continues with the list's element type.
func typeAt(names ...string) attr.Type {
	var t attr.Type = podType()
	for _, n := range names {
		if l, ok := t.(types.ListType); ok {
			t = l.ElemType
		}
		o, ok := t.(types.ObjectType)
		if !ok {
			panic(fmt.Sprintf("podtemplate: %v is not an object at %q", names, n))
		}
		t, ok = o.AttrTypes[n]
		if !ok {
			panic(fmt.Sprintf("podtemplate: no attribute %q in %v", n, names))
		}
	}
	return t
}

// objType is the object type at names; for a list attribute, of its elements.
func objType(names ...string) types.ObjectType {
	t := typeAt(names...)
	if l, ok := t.(types.ListType); ok {
		t = l.ElemType
	}
	o, ok := t.(types.ObjectType)
	if !ok {
		panic(fmt.Sprintf("podtemplate: %v is not an object", names))
	}
	return o
}

// Frequently used object types.
var (
	containerType     = sync.OnceValue(func() types.ObjectType { return objType("containers") })
	containerAttrType = func(names ...string) types.ObjectType {
		return objType(append([]string{"containers"}, names...)...)
	}
	volumeAttrType = func(names ...string) types.ObjectType {
		return objType(append([]string{"volumes"}, names...)...)
	}
)

// decode turns a known, non-null object into its model. ok is false when
// the object is null or unknown (or has unknown parts a model cannot hold,
// which the model types can: so in practice only null/unknown).
func decode[T any](ctx context.Context, o types.Object, diags *diag.Diagnostics) (T, bool) {
	var m T
	if o.IsNull() || o.IsUnknown() {
		return m, false
	}
	d := tfvalues.As(ctx, o, &m)
	diags.Append(d...)
	return m, !d.HasError()
}

// each decodes the known elements of a list of objects and calls fn with
// each one's index; null and unknown elements are skipped.
func each[T any](ctx context.Context, l types.List, diags *diag.Diagnostics, fn func(i int, m T)) {
	if l.IsNull() || l.IsUnknown() {
		return
	}
	for i, e := range l.Elements() {
		o, ok := e.(types.Object)
		if !ok {
			continue
		}
		if m, ok := decode[T](ctx, o, diags); ok {
			fn(i, m)
		}
	}
}

// encode turns a model into an object of type t.
func encode(ctx context.Context, t types.ObjectType, m any, diags *diag.Diagnostics) types.Object {
	o, d := tfvalues.ObjectFrom(ctx, t, m)
	diags.Append(d...)
	if d.HasError() {
		return types.ObjectNull(t.AttrTypes)
	}
	return o
}

// encodeList turns models into a list of objects of type t; no models is a
// null list unless keepEmpty.
func encodeList[T any](ctx context.Context, t types.ObjectType, ms []T, keepEmpty bool, diags *diag.Diagnostics) types.List {
	if len(ms) == 0 && !keepEmpty {
		return types.ListNull(t)
	}
	elems := make([]attr.Value, 0, len(ms))
	for _, m := range ms {
		elems = append(elems, encode(ctx, t, m, diags))
	}
	l, d := types.ListValue(t, elems)
	diags.Append(d...)
	return l
}
