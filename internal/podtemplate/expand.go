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
	spec := corev1.PodSpec{
		Containers:                    e.containers(m.Containers),
		InitContainers:                e.containers(m.InitContainers),
		Volumes:                       e.volumes(m.Volumes),
		AutomountServiceAccountToken:  boolPtr(m.AutomountServiceAccountToken),
		ServiceAccountName:            m.ServiceAccountName.ValueString(),
		NodeSelector:                  e.stringMap(m.NodeSelector),
		Tolerations:                   e.tolerations(m.Tolerations),
		Affinity:                      e.affinity(m.Affinity),
		DNSPolicy:                     corev1.DNSPolicy(m.DNSPolicy.ValueString()),
		DNSConfig:                     e.dnsConfig(m.DNSConfig),
		PriorityClassName:             m.PriorityClassName.ValueString(),
		TerminationGracePeriodSeconds: int64Ptr(m.TerminationGracePeriodSeconds),
		SecurityContext:               e.podSecurityContext(m.SecurityContext),
	}
	// "" (and null) means no RuntimeClass: the node's default runtime.
	if s := m.RuntimeClassName.ValueString(); s != "" {
		spec.RuntimeClassName = &s
	}
	for _, name := range e.strings(m.ImagePullSecrets) {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
	}
	return spec
}

func (e expander) containers(l types.List) []corev1.Container {
	var out []corev1.Container
	each(e.ctx, l, e.diags, func(_ int, m ContainerModel) {
		out = append(out, corev1.Container{
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
			ReadinessProbe:  e.probe(m.ReadinessProbe),
			LivenessProbe:   e.probe(m.LivenessProbe),
			StartupProbe:    e.probe(m.StartupProbe),
			SecurityContext: e.containerSecurityContext(m.SecurityContext),
		})
	})
	return out
}

func (e expander) env(l types.List) []corev1.EnvVar {
	var out []corev1.EnvVar
	each(e.ctx, l, e.diags, func(_ int, m EnvModel) {
		v := corev1.EnvVar{Name: m.Name.ValueString(), Value: m.Value.ValueString()}
		if src, ok := decode[EnvSourceModel](e.ctx, m.ValueFrom, e.diags); ok {
			v.ValueFrom = &corev1.EnvVarSource{}
			if r, ok := decode[KeyRefModel](e.ctx, src.SecretKeyRef, e.diags); ok {
				v.ValueFrom.SecretKeyRef = &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: r.Name.ValueString()},
					Key:                  r.Key.ValueString(),
					Optional:             boolPtr(r.Optional),
				}
			}
			if r, ok := decode[KeyRefModel](e.ctx, src.ConfigMapKeyRef, e.diags); ok {
				v.ValueFrom.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: r.Name.ValueString()},
					Key:                  r.Key.ValueString(),
					Optional:             boolPtr(r.Optional),
				}
			}
			if r, ok := decode[FieldRefModel](e.ctx, src.FieldRef, e.diags); ok {
				v.ValueFrom.FieldRef = &corev1.ObjectFieldSelector{
					FieldPath:  r.FieldPath.ValueString(),
					APIVersion: r.APIVersion.ValueString(),
				}
			}
		}
		out = append(out, v)
	})
	return out
}

func (e expander) ports(l types.List) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	each(e.ctx, l, e.diags, func(_ int, m PortModel) {
		out = append(out, corev1.ContainerPort{
			Name:          m.Name.ValueString(),
			ContainerPort: int32(m.ContainerPort.ValueInt64()),
			Protocol:      corev1.Protocol(m.Protocol.ValueString()),
		})
	})
	return out
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
	var out []corev1.VolumeMount
	each(e.ctx, l, e.diags, func(_ int, m VolumeMountModel) {
		out = append(out, corev1.VolumeMount{
			Name:      m.Name.ValueString(),
			MountPath: m.MountPath.ValueString(),
			SubPath:   m.SubPath.ValueString(),
			ReadOnly:  m.ReadOnly.ValueBool(),
		})
	})
	return out
}

func (e expander) probe(o types.Object) *corev1.Probe {
	m, ok := decode[ProbeModel](e.ctx, o, e.diags)
	if !ok {
		return nil
	}
	p := &corev1.Probe{
		InitialDelaySeconds: int32(m.InitialDelaySeconds.ValueInt64()),
		PeriodSeconds:       int32(m.PeriodSeconds.ValueInt64()),
		TimeoutSeconds:      int32(m.TimeoutSeconds.ValueInt64()),
		SuccessThreshold:    int32(m.SuccessThreshold.ValueInt64()),
		FailureThreshold:    int32(m.FailureThreshold.ValueInt64()),
	}
	if x, ok := decode[ExecModel](e.ctx, m.Exec, e.diags); ok {
		p.Exec = &corev1.ExecAction{Command: e.strings(x.Command)}
	}
	if h, ok := decode[HTTPGetModel](e.ctx, m.HTTPGet, e.diags); ok {
		p.HTTPGet = &corev1.HTTPGetAction{
			Path:   h.Path.ValueString(),
			Port:   portValue(h.Port.ValueString()),
			Host:   h.Host.ValueString(),
			Scheme: corev1.URIScheme(h.Scheme.ValueString()),
		}
		each(e.ctx, h.HTTPHeaders, e.diags, func(_ int, hd HTTPHeaderModel) {
			p.HTTPGet.HTTPHeaders = append(p.HTTPGet.HTTPHeaders, corev1.HTTPHeader{Name: hd.Name.ValueString(), Value: hd.Value.ValueString()})
		})
	}
	if t, ok := decode[TCPSocketModel](e.ctx, m.TCPSocket, e.diags); ok {
		p.TCPSocket = &corev1.TCPSocketAction{Port: portValue(t.Port.ValueString()), Host: t.Host.ValueString()}
	}
	if g, ok := decode[GRPCModel](e.ctx, m.GRPC, e.diags); ok {
		p.GRPC = &corev1.GRPCAction{Port: int32(g.Port.ValueInt64())}
		if !g.Service.IsNull() {
			s := g.Service.ValueString()
			p.GRPC.Service = &s
		}
	}
	return p
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

func (e expander) containerSecurityContext(o types.Object) *corev1.SecurityContext {
	m, ok := decode[ContainerSecurityContextModel](e.ctx, o, e.diags)
	if !ok {
		return nil
	}
	sc := &corev1.SecurityContext{
		AllowPrivilegeEscalation: boolPtr(m.AllowPrivilegeEscalation),
		Privileged:               boolPtr(m.Privileged),
		ReadOnlyRootFilesystem:   boolPtr(m.ReadOnlyRootFilesystem),
		RunAsNonRoot:             boolPtr(m.RunAsNonRoot),
		RunAsUser:                int64Ptr(m.RunAsUser),
		RunAsGroup:               int64Ptr(m.RunAsGroup),
		SeccompProfile:           e.seccompProfile(m.SeccompProfile),
	}
	if c, ok := decode[CapabilitiesModel](e.ctx, m.Capabilities, e.diags); ok {
		sc.Capabilities = &corev1.Capabilities{}
		for _, s := range e.strings(c.Add) {
			sc.Capabilities.Add = append(sc.Capabilities.Add, corev1.Capability(s))
		}
		for _, s := range e.strings(c.Drop) {
			sc.Capabilities.Drop = append(sc.Capabilities.Drop, corev1.Capability(s))
		}
	}
	return sc
}

func (e expander) podSecurityContext(o types.Object) *corev1.PodSecurityContext {
	m, ok := decode[PodSecurityContextModel](e.ctx, o, e.diags)
	if !ok {
		return nil
	}
	sc := &corev1.PodSecurityContext{
		RunAsNonRoot:   boolPtr(m.RunAsNonRoot),
		RunAsUser:      int64Ptr(m.RunAsUser),
		RunAsGroup:     int64Ptr(m.RunAsGroup),
		FSGroup:        int64Ptr(m.FSGroup),
		SeccompProfile: e.seccompProfile(m.SeccompProfile),
	}
	if !m.SupplementalGroups.IsNull() {
		var gs []int64
		e.diags.Append(m.SupplementalGroups.ElementsAs(e.ctx, &gs, false)...)
		sc.SupplementalGroups = gs
	}
	return sc
}

func (e expander) seccompProfile(o types.Object) *corev1.SeccompProfile {
	m, ok := decode[SeccompProfileModel](e.ctx, o, e.diags)
	if !ok {
		return nil
	}
	p := &corev1.SeccompProfile{Type: corev1.SeccompProfileType(m.Type.ValueString())}
	if !m.LocalhostProfile.IsNull() {
		s := m.LocalhostProfile.ValueString()
		p.LocalhostProfile = &s
	}
	return p
}

func (e expander) volumes(l types.List) []corev1.Volume {
	var out []corev1.Volume
	each(e.ctx, l, e.diags, func(_ int, m VolumeModel) {
		v := corev1.Volume{Name: m.Name.ValueString()}
		if d, ok := decode[EmptyDirModel](e.ctx, m.EmptyDir, e.diags); ok {
			v.EmptyDir = &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMedium(d.Medium.ValueString())}
			if !d.SizeLimit.IsNull() {
				q, err := resource.ParseQuantity(d.SizeLimit.ValueString())
				if err != nil {
					e.diags.AddError("Invalid quantity", fmt.Sprintf("size_limit = %q: %v", d.SizeLimit.ValueString(), err))
				}
				v.EmptyDir.SizeLimit = &q
			}
		}
		if c, ok := decode[ConfigMapVolumeModel](e.ctx, m.ConfigMap, e.diags); ok {
			v.ConfigMap = &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: c.Name.ValueString()},
				Items:                e.keyToPaths(c.Items),
				DefaultMode:          e.mode(c.DefaultMode),
				Optional:             boolPtr(c.Optional),
			}
		}
		if s, ok := decode[SecretVolumeModel](e.ctx, m.Secret, e.diags); ok {
			v.Secret = &corev1.SecretVolumeSource{
				SecretName:  s.SecretName.ValueString(),
				Items:       e.keyToPaths(s.Items),
				DefaultMode: e.mode(s.DefaultMode),
				Optional:    boolPtr(s.Optional),
			}
		}
		if p, ok := decode[PVCVolumeModel](e.ctx, m.PersistentVolumeClaim, e.diags); ok {
			v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: p.ClaimName.ValueString(),
				ReadOnly:  p.ReadOnly.ValueBool(),
			}
		}
		out = append(out, v)
	})
	return out
}

func (e expander) keyToPaths(l types.List) []corev1.KeyToPath {
	var out []corev1.KeyToPath
	each(e.ctx, l, e.diags, func(_ int, m KeyToPathModel) {
		out = append(out, corev1.KeyToPath{Key: m.Key.ValueString(), Path: m.Path.ValueString()})
	})
	return out
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

func (e expander) tolerations(l types.List) []corev1.Toleration {
	var out []corev1.Toleration
	each(e.ctx, l, e.diags, func(_ int, m TolerationModel) {
		out = append(out, corev1.Toleration{
			Key:               m.Key.ValueString(),
			Operator:          corev1.TolerationOperator(m.Operator.ValueString()),
			Value:             m.Value.ValueString(),
			Effect:            corev1.TaintEffect(m.Effect.ValueString()),
			TolerationSeconds: int64Ptr(m.TolerationSeconds),
		})
	})
	return out
}

func (e expander) affinity(o types.Object) *corev1.Affinity {
	m, ok := decode[AffinityModel](e.ctx, o, e.diags)
	if !ok {
		return nil
	}
	a := &corev1.Affinity{}
	if na, ok := decode[NodeAffinityModel](e.ctx, m.NodeAffinity, e.diags); ok {
		sel := &corev1.NodeSelector{}
		each(e.ctx, na.Required, e.diags, func(_ int, t NodeSelectorTermModel) {
			term := corev1.NodeSelectorTerm{}
			each(e.ctx, t.MatchExpressions, e.diags, func(_ int, x MatchExpressionModel) {
				term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{
					Key:      x.Key.ValueString(),
					Operator: corev1.NodeSelectorOperator(x.Operator.ValueString()),
					Values:   e.strings(x.Values),
				})
			})
			sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, term)
		})
		a.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}
	}
	if pa, ok := decode[PodAntiAffinityModel](e.ctx, m.PodAntiAffinity, e.diags); ok {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
		each(e.ctx, pa.Preferred, e.diags, func(_ int, w WeightedPodAffinityTermModel) {
			a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(
				a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, corev1.WeightedPodAffinityTerm{
					Weight: int32(w.Weight.ValueInt64()),
					PodAffinityTerm: corev1.PodAffinityTerm{
						TopologyKey:   w.TopologyKey.ValueString(),
						LabelSelector: e.labelSelector(w.LabelSelector),
						Namespaces:    e.strings(w.Namespaces),
					},
				})
		})
	}
	return a
}

func (e expander) labelSelector(o types.Object) *metav1.LabelSelector {
	m, ok := decode[LabelSelectorModel](e.ctx, o, e.diags)
	if !ok {
		return nil
	}
	s := &metav1.LabelSelector{MatchLabels: e.stringMap(m.MatchLabels)}
	each(e.ctx, m.MatchExpressions, e.diags, func(_ int, x MatchExpressionModel) {
		s.MatchExpressions = append(s.MatchExpressions, metav1.LabelSelectorRequirement{
			Key:      x.Key.ValueString(),
			Operator: metav1.LabelSelectorOperator(x.Operator.ValueString()),
			Values:   e.strings(x.Values),
		})
	})
	return s
}

func (e expander) dnsConfig(o types.Object) *corev1.PodDNSConfig {
	m, ok := decode[DNSConfigModel](e.ctx, o, e.diags)
	if !ok {
		return nil
	}
	c := &corev1.PodDNSConfig{Nameservers: e.strings(m.Nameservers), Searches: e.strings(m.Searches)}
	each(e.ctx, m.Options, e.diags, func(_ int, opt DNSOptionModel) {
		o := corev1.PodDNSConfigOption{Name: opt.Name.ValueString()}
		if !opt.Value.IsNull() {
			v := opt.Value.ValueString()
			o.Value = &v
		}
		c.Options = append(c.Options, o)
	})
	return c
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
