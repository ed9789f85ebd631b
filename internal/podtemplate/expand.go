package podtemplate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/labelselector"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// Expand builds the API pod template from a planned `pod_template` object
// (defaults applied, every value known: call it from Create and Update). The
// typed attributes are applied over pod_spec_overrides; an override that
// sets a field the typed schema owns is an error here too, so a plan that
// skipped validation (values unknown at plan time) still cannot apply one.
func Expand(ctx context.Context, obj types.Object) (agentsv1beta1.PodTemplate, diag.Diagnostics) {
	var diags diag.Diagnostics
	var out agentsv1beta1.PodTemplate
	if obj.IsNull() || obj.IsUnknown() {
		diags.AddError("Missing pod template", "The pod template is null or unknown; it must be known to build the object.")
		return out, diags
	}
	if tv, err := obj.ToTerraformValue(ctx); err != nil || !tv.IsFullyKnown() {
		diags.AddError("Unknown pod template values",
			"Some values of the pod template are still unknown; Expand needs the planned values of an apply.")
		return out, diags
	}
	m, _ := decode[Model](ctx, obj, &diags)
	if diags.HasError() {
		return out, diags
	}
	e := expander{ctx: ctx, diags: &diags}
	out.ObjectMeta.Labels = e.stringMap(m.Labels)
	out.ObjectMeta.Annotations = e.stringMap(m.Annotations)
	spec := e.podSpec(m)
	if diags.HasError() {
		return out, diags
	}
	if s := m.PodSpecOverrides.ValueString(); s != "" {
		merged, err := mergeOverrides(spec, s)
		if err != nil {
			diags.AddError("Invalid pod_spec_overrides", err.Error())
			return out, diags
		}
		spec = merged
	}
	out.Spec = spec
	return out, diags
}

// expander carries the context and the diagnostics through the conversion,
// so the per-part functions stay one line per field.
type expander struct {
	ctx   context.Context
	diags *diag.Diagnostics
}

func (e expander) podSpec(m Model) corev1.PodSpec {
	return corev1.PodSpec{
		Containers:                   e.containers(m.Containers),
		InitContainers:               e.containers(m.InitContainers),
		Volumes:                      e.volumes(m.Volumes),
		RuntimeClassName:             runtimeClass(m.RuntimeClassName),
		AutomountServiceAccountToken: boolPtr(m.AutomountServiceAccountToken),
		ServiceAccountName:           m.ServiceAccountName.ValueString(),
		NodeSelector:                 e.stringMap(m.NodeSelector),
		Tolerations:                  expandList(e, m.Tolerations, ExpandToleration),
		Affinity:                     expandObject(e, m.Affinity, e.affinity),
		DNSPolicy:                    corev1.DNSPolicy(m.DNSPolicy.ValueString()),
		DNSConfig:                    expandObject(e, m.DNSConfig, e.dnsConfig),
		ImagePullSecrets: expandStrings(e, m.ImagePullSecrets, func(name string) corev1.LocalObjectReference {
			return corev1.LocalObjectReference{Name: name}
		}),
		PriorityClassName:             m.PriorityClassName.ValueString(),
		TerminationGracePeriodSeconds: int64Ptr(m.TerminationGracePeriodSeconds),
		SecurityContext:               expandObject(e, m.SecurityContext, e.podSecurityContext),
	}
}

// runtimeClass: "" (and null) means no RuntimeClass, the node's default
// runtime.
func runtimeClass(s types.String) *string {
	if s.ValueString() == "" {
		return nil
	}
	return stringPtr(s)
}

func (e expander) containers(l types.List) []corev1.Container {
	return expandList(e, l, func(m ContainerModel) corev1.Container {
		return corev1.Container{
			Name:            m.Name.ValueString(),
			Image:           m.Image.ValueString(),
			ImagePullPolicy: corev1.PullPolicy(m.ImagePullPolicy.ValueString()),
			Command:         e.strings(m.Command),
			Args:            e.strings(m.Args),
			WorkingDir:      m.WorkingDir.ValueString(),
			Env:             e.env(m.Env),
			Ports:           e.ports(m.Ports),
			Resources:       e.resources(m.Resources),
			VolumeMounts:    e.volumeMounts(m.VolumeMounts),
			ReadinessProbe:  expandObject(e, m.ReadinessProbe, e.probe),
			LivenessProbe:   expandObject(e, m.LivenessProbe, e.probe),
			StartupProbe:    expandObject(e, m.StartupProbe, e.probe),
			SecurityContext: expandObject(e, m.SecurityContext, e.containerSecurityContext),
		}
	})
}

func (e expander) env(l types.List) []corev1.EnvVar {
	return expandList(e, l, func(m EnvModel) corev1.EnvVar {
		return corev1.EnvVar{
			Name:      m.Name.ValueString(),
			Value:     m.Value.ValueString(),
			ValueFrom: expandObject(e, m.ValueFrom, e.envSource),
		}
	})
}

func (e expander) envSource(m EnvSourceModel) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{
		SecretKeyRef: expandObject(e, m.SecretKeyRef, func(r KeyRefModel) *corev1.SecretKeySelector {
			return &corev1.SecretKeySelector{LocalObjectReference: r.reference(), Key: r.Key.ValueString(), Optional: boolPtr(r.Optional)}
		}),
		ConfigMapKeyRef: expandObject(e, m.ConfigMapKeyRef, func(r KeyRefModel) *corev1.ConfigMapKeySelector {
			return &corev1.ConfigMapKeySelector{LocalObjectReference: r.reference(), Key: r.Key.ValueString(), Optional: boolPtr(r.Optional)}
		}),
		FieldRef: expandObject(e, m.FieldRef, func(r FieldRefModel) *corev1.ObjectFieldSelector {
			return &corev1.ObjectFieldSelector{FieldPath: r.FieldPath.ValueString(), APIVersion: r.APIVersion.ValueString()}
		}),
	}
}

// reference is the Secret or ConfigMap a key reference names.
func (r KeyRefModel) reference() corev1.LocalObjectReference {
	return corev1.LocalObjectReference{Name: r.Name.ValueString()}
}

func (e expander) ports(l types.List) []corev1.ContainerPort {
	return expandList(e, l, func(m PortModel) corev1.ContainerPort {
		return corev1.ContainerPort{
			Name:          m.Name.ValueString(),
			ContainerPort: int32(m.ContainerPort.ValueInt64()),
			Protocol:      corev1.Protocol(m.Protocol.ValueString()),
		}
	})
}

func (e expander) resources(o types.Object) corev1.ResourceRequirements {
	m, ok := decode[ResourcesModel](e.ctx, o, e.diags)
	if !ok {
		return corev1.ResourceRequirements{}
	}
	return corev1.ResourceRequirements{
		Limits:   e.resourceList(m.Limits),
		Requests: e.resourceList(m.Requests),
	}
}

func (e expander) resourceList(mp types.Map) corev1.ResourceList {
	in := e.stringMap(mp)
	if len(in) == 0 {
		return nil
	}
	out := make(corev1.ResourceList, len(in))
	for name, s := range in {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			// The attribute validator refuses this at plan time already.
			e.diags.AddError("Invalid quantity", fmt.Sprintf("%s = %q: %v", name, s, err))
			continue
		}
		out[corev1.ResourceName(name)] = q
	}
	return out
}

func (e expander) volumeMounts(l types.List) []corev1.VolumeMount {
	return expandList(e, l, func(m VolumeMountModel) corev1.VolumeMount {
		return corev1.VolumeMount{
			Name:      m.Name.ValueString(),
			MountPath: m.MountPath.ValueString(),
			SubPath:   m.SubPath.ValueString(),
			ReadOnly:  m.ReadOnly.ValueBool(),
		}
	})
}

func (e expander) probe(m ProbeModel) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{
			Exec: expandObject(e, m.Exec, func(x ExecModel) *corev1.ExecAction {
				return &corev1.ExecAction{Command: e.strings(x.Command)}
			}),
			HTTPGet: expandObject(e, m.HTTPGet, func(h HTTPGetModel) *corev1.HTTPGetAction {
				return &corev1.HTTPGetAction{
					Path:   h.Path.ValueString(),
					Port:   portValue(h.Port.ValueString()),
					Host:   h.Host.ValueString(),
					Scheme: corev1.URIScheme(h.Scheme.ValueString()),
					HTTPHeaders: expandList(e, h.HTTPHeaders, func(hd HTTPHeaderModel) corev1.HTTPHeader {
						return corev1.HTTPHeader{Name: hd.Name.ValueString(), Value: hd.Value.ValueString()}
					}),
				}
			}),
			TCPSocket: expandObject(e, m.TCPSocket, func(t TCPSocketModel) *corev1.TCPSocketAction {
				return &corev1.TCPSocketAction{Port: portValue(t.Port.ValueString()), Host: t.Host.ValueString()}
			}),
			GRPC: expandObject(e, m.GRPC, func(g GRPCModel) *corev1.GRPCAction {
				return &corev1.GRPCAction{Port: int32(g.Port.ValueInt64()), Service: stringPtr(g.Service)}
			}),
		},
		InitialDelaySeconds: int32(m.InitialDelaySeconds.ValueInt64()),
		PeriodSeconds:       int32(m.PeriodSeconds.ValueInt64()),
		TimeoutSeconds:      int32(m.TimeoutSeconds.ValueInt64()),
		SuccessThreshold:    int32(m.SuccessThreshold.ValueInt64()),
		FailureThreshold:    int32(m.FailureThreshold.ValueInt64()),
	}
}

// portValue is a port number when the string is one and a port name
// otherwise, as Kubernetes' int-or-string ports are (validators.Port has
// checked it).
func portValue(s string) intstr.IntOrString {
	if n, _, err := validators.ParsePort(s); err == nil && n != 0 {
		return intstr.FromInt32(n)
	}
	return intstr.FromString(s)
}

func (e expander) containerSecurityContext(m ContainerSecurityContextModel) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: boolPtr(m.AllowPrivilegeEscalation),
		Capabilities: expandObject(e, m.Capabilities, func(c CapabilitiesModel) *corev1.Capabilities {
			capability := func(s string) corev1.Capability { return corev1.Capability(s) }
			return &corev1.Capabilities{Add: expandStrings(e, c.Add, capability), Drop: expandStrings(e, c.Drop, capability)}
		}),
		Privileged:             boolPtr(m.Privileged),
		ReadOnlyRootFilesystem: boolPtr(m.ReadOnlyRootFilesystem),
		RunAsNonRoot:           boolPtr(m.RunAsNonRoot),
		RunAsUser:              int64Ptr(m.RunAsUser),
		RunAsGroup:             int64Ptr(m.RunAsGroup),
		SeccompProfile:         expandObject(e, m.SeccompProfile, e.seccompProfile),
	}
}

func (e expander) podSecurityContext(m PodSecurityContextModel) *corev1.PodSecurityContext {
	sc := &corev1.PodSecurityContext{
		RunAsNonRoot:   boolPtr(m.RunAsNonRoot),
		RunAsUser:      int64Ptr(m.RunAsUser),
		RunAsGroup:     int64Ptr(m.RunAsGroup),
		FSGroup:        int64Ptr(m.FSGroup),
		SeccompProfile: expandObject(e, m.SeccompProfile, e.seccompProfile),
	}
	if !m.SupplementalGroups.IsNull() {
		var gs []int64
		e.diags.Append(m.SupplementalGroups.ElementsAs(e.ctx, &gs, false)...)
		sc.SupplementalGroups = gs
	}
	return sc
}

func (e expander) seccompProfile(m SeccompProfileModel) *corev1.SeccompProfile {
	return &corev1.SeccompProfile{
		Type:             corev1.SeccompProfileType(m.Type.ValueString()),
		LocalhostProfile: stringPtr(m.LocalhostProfile),
	}
}

func (e expander) volumes(l types.List) []corev1.Volume {
	return expandList(e, l, func(m VolumeModel) corev1.Volume {
		return corev1.Volume{Name: m.Name.ValueString(), VolumeSource: corev1.VolumeSource{
			EmptyDir:  expandObject(e, m.EmptyDir, e.emptyDir),
			ConfigMap: expandObject(e, m.ConfigMap, e.configMapVolume),
			Secret:    expandObject(e, m.Secret, e.secretVolume),
			PersistentVolumeClaim: expandObject(e, m.PersistentVolumeClaim, func(p PVCVolumeModel) *corev1.PersistentVolumeClaimVolumeSource {
				return &corev1.PersistentVolumeClaimVolumeSource{ClaimName: p.ClaimName.ValueString(), ReadOnly: p.ReadOnly.ValueBool()}
			}),
		}}
	})
}

func (e expander) emptyDir(d EmptyDirModel) *corev1.EmptyDirVolumeSource {
	v := &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMedium(d.Medium.ValueString())}
	if !d.SizeLimit.IsNull() {
		q, err := resource.ParseQuantity(d.SizeLimit.ValueString())
		if err != nil {
			e.diags.AddError("Invalid quantity", fmt.Sprintf("size_limit = %q: %v", d.SizeLimit.ValueString(), err))
		}
		v.SizeLimit = &q
	}
	return v
}

func (e expander) configMapVolume(c ConfigMapVolumeModel) *corev1.ConfigMapVolumeSource {
	return &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: c.Name.ValueString()},
		Items:                e.keyToPaths(c.Items),
		DefaultMode:          e.mode(c.DefaultMode),
		Optional:             boolPtr(c.Optional),
	}
}

func (e expander) secretVolume(s SecretVolumeModel) *corev1.SecretVolumeSource {
	return &corev1.SecretVolumeSource{
		SecretName:  s.SecretName.ValueString(),
		Items:       e.keyToPaths(s.Items),
		DefaultMode: e.mode(s.DefaultMode),
		Optional:    boolPtr(s.Optional),
	}
}

func (e expander) keyToPaths(l types.List) []corev1.KeyToPath {
	return expandList(e, l, func(m KeyToPathModel) corev1.KeyToPath {
		return corev1.KeyToPath{Key: m.Key.ValueString(), Path: m.Path.ValueString()}
	})
}

// mode parses octal permission bits ("0440"); the attribute validator has
// checked the format.
func (e expander) mode(s types.String) *int32 {
	if s.IsNull() {
		return nil
	}
	n, err := strconv.ParseInt(s.ValueString(), 8, 32)
	if err != nil {
		e.diags.AddError("Invalid file mode", fmt.Sprintf("%q is not octal permission bits: %v", s.ValueString(), err))
		return nil
	}
	v := int32(n)
	return &v
}

// ExpandToleration is the Kubernetes toleration of m; null attributes stay
// at their zero values, which the API server omits.
func ExpandToleration(m TolerationModel) corev1.Toleration {
	return corev1.Toleration{
		Key:               m.Key.ValueString(),
		Operator:          corev1.TolerationOperator(m.Operator.ValueString()),
		Value:             m.Value.ValueString(),
		Effect:            corev1.TaintEffect(m.Effect.ValueString()),
		TolerationSeconds: int64Ptr(m.TolerationSeconds),
	}
}

func (e expander) affinity(m AffinityModel) *corev1.Affinity {
	return &corev1.Affinity{
		NodeAffinity: expandObject(e, m.NodeAffinity, e.nodeAffinity),
		PodAntiAffinity: expandObject(e, m.PodAntiAffinity, func(pa PodAntiAffinityModel) *corev1.PodAntiAffinity {
			return &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: expandList(e, pa.Preferred, e.weightedTerm)}
		}),
	}
}

func (e expander) nodeAffinity(na NodeAffinityModel) *corev1.NodeAffinity {
	terms := expandList(e, na.Required, func(t NodeSelectorTermModel) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: expandList(e, t.MatchExpressions, func(x labelselector.RequirementModel) corev1.NodeSelectorRequirement {
			return corev1.NodeSelectorRequirement{
				Key:      x.Key.ValueString(),
				Operator: corev1.NodeSelectorOperator(x.Operator.ValueString()),
				Values:   e.strings(x.Values),
			}
		})}
	})
	return &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}
}

func (e expander) weightedTerm(w WeightedPodAffinityTermModel) corev1.WeightedPodAffinityTerm {
	return corev1.WeightedPodAffinityTerm{
		Weight: int32(w.Weight.ValueInt64()),
		PodAffinityTerm: corev1.PodAffinityTerm{
			TopologyKey:   w.TopologyKey.ValueString(),
			LabelSelector: expandObject(e, w.LabelSelector, e.labelSelector),
			Namespaces:    e.strings(w.Namespaces),
		},
	}
}

func (e expander) labelSelector(m labelselector.Model) *metav1.LabelSelector {
	return &metav1.LabelSelector{
		MatchLabels: e.stringMap(m.MatchLabels),
		MatchExpressions: expandList(e, m.MatchExpressions, func(x labelselector.RequirementModel) metav1.LabelSelectorRequirement {
			return metav1.LabelSelectorRequirement{
				Key:      x.Key.ValueString(),
				Operator: metav1.LabelSelectorOperator(x.Operator.ValueString()),
				Values:   e.strings(x.Values),
			}
		}),
	}
}

func (e expander) dnsConfig(m DNSConfigModel) *corev1.PodDNSConfig {
	return &corev1.PodDNSConfig{
		Nameservers: e.strings(m.Nameservers),
		Searches:    e.strings(m.Searches),
		Options: expandList(e, m.Options, func(o DNSOptionModel) corev1.PodDNSConfigOption {
			return corev1.PodDNSConfigOption{Name: o.Name.ValueString(), Value: stringPtr(o.Value)}
		}),
	}
}

// expandList converts each known element of a list of nested objects; a
// null or empty list gives nil.
func expandList[M, T any](e expander, l types.List, conv func(M) T) []T {
	var out []T
	each(e.ctx, l, e.diags, func(_ int, m M) { out = append(out, conv(m)) })
	return out
}

// expandStrings converts each element of a list of strings; a null or empty
// list gives nil.
func expandStrings[T any](e expander, l types.List, conv func(string) T) []T {
	var out []T
	for _, s := range e.strings(l) {
		out = append(out, conv(s))
	}
	return out
}

// expandObject converts a nested object; a null one gives nil.
func expandObject[M, T any](e expander, o types.Object, conv func(M) *T) *T {
	m, ok := decode[M](e.ctx, o, e.diags)
	if !ok {
		return nil
	}
	return conv(m)
}

func (e expander) strings(l types.List) []string {
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	var out []string
	e.diags.Append(l.ElementsAs(e.ctx, &out, false)...)
	return out
}

func (e expander) stringMap(m types.Map) map[string]string {
	if m.IsNull() || m.IsUnknown() || len(m.Elements()) == 0 {
		return nil
	}
	out := map[string]string{}
	e.diags.Append(m.ElementsAs(e.ctx, &out, false)...)
	return out
}

func boolPtr(b types.Bool) *bool {
	if b.IsNull() || b.IsUnknown() {
		return nil
	}
	v := b.ValueBool()
	return &v
}

func int64Ptr(i types.Int64) *int64 {
	if i.IsNull() || i.IsUnknown() {
		return nil
	}
	v := i.ValueInt64()
	return &v
}

// stringPtr is an optional string that Kubernetes holds as a pointer: null
// is nil, anything else (also "") points to the value.
func stringPtr(s types.String) *string {
	if s.IsNull() || s.IsUnknown() {
		return nil
	}
	v := s.ValueString()
	return &v
}
