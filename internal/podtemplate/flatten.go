package podtemplate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
)

// Flatten turns the live pod template into the `pod_template` state value.
//
// prior is the state (or, right after Create/Update, the plan) the value
// replaces; give Null() when there is none (import, data sources). It only
// decides spelling, never content: a quantity equal to the prior one keeps
// the prior spelling, an absent list or map is reported as empty when the
// prior was empty, a value the server fills in by default and the prior left
// unset stays unset, and pod_spec_overrides keeps its prior text (or stays
// null) while the live fields it sets still match it and the live spec has
// no other field the typed attributes cannot express. Any other difference is reported as
// it is live, so out-of-band changes show up as drift.
func Flatten(ctx context.Context, live agentsv1beta1.PodTemplate, prior types.Object) (types.Object, diag.Diagnostics) {
	var diags diag.Diagnostics
	f := flattener{ctx: ctx, diags: &diags}
	pm, priorKnown := decode[Model](ctx, prior, &diags)
	diags = nil // an undecodable prior is just no prior

	spec := live.Spec
	m := Model{
		Labels:                        f.strMap(live.ObjectMeta.Labels, pm.Labels),
		Annotations:                   f.strMap(live.ObjectMeta.Annotations, pm.Annotations),
		Containers:                    f.containers(spec.Containers, pm.Containers),
		InitContainers:                f.containers(spec.InitContainers, pm.InitContainers),
		Volumes:                       f.volumes(spec.Volumes, pm.Volumes),
		RuntimeClassName:              types.StringValue(deref(spec.RuntimeClassName)),
		AutomountServiceAccountToken:  boolp(spec.AutomountServiceAccountToken),
		ServiceAccountName:            str(spec.ServiceAccountName, pm.ServiceAccountName),
		NodeSelector:                  f.strMap(spec.NodeSelector, pm.NodeSelector),
		Tolerations:                   f.tolerations(spec.Tolerations, pm.Tolerations),
		Affinity:                      f.affinity(spec.Affinity, pm.Affinity),
		DNSPolicy:                     str(string(spec.DNSPolicy), pm.DNSPolicy),
		DNSConfig:                     f.dnsConfig(spec.DNSConfig, pm.DNSConfig),
		PriorityClassName:             str(spec.PriorityClassName, pm.PriorityClassName),
		TerminationGracePeriodSeconds: int64p(spec.TerminationGracePeriodSeconds),
		SecurityContext:               f.podSecurityContext(spec.SecurityContext, pm.SecurityContext),
		PodSpecOverrides:              types.StringNull(),
	}
	var secrets []string
	for _, s := range spec.ImagePullSecrets {
		secrets = append(secrets, s.Name)
	}
	m.ImagePullSecrets = f.strList(secrets, pm.ImagePullSecrets)

	// pod_spec_overrides reports what the typed attributes cannot: with no
	// prior (import) every residual field, otherwise the override's fields
	// as they are live plus any residual field the override does not
	// declare (added out of band, such as hostNetwork), so that the plan
	// shows it and the exclusive apply removes it.
	ov, err := flattenOverrides(spec, pm.PodSpecOverrides, priorKnown)
	if err != nil {
		diags.AddError("Reading pod_spec_overrides", fmt.Sprintf("Could not compare the live pod spec with pod_spec_overrides: %v", err))
	}
	m.PodSpecOverrides = ov
	if diags.HasError() {
		return Null(), diags
	}
	return encode(ctx, podType(), m, &diags), diags
}

type flattener struct {
	ctx   context.Context
	diags *diag.Diagnostics
}

func (f flattener) containers(live []corev1.Container, prior types.List) types.List {
	byName := map[string]ContainerModel{}
	each(f.ctx, prior, f.diags, func(_ int, m ContainerModel) { byName[m.Name.ValueString()] = m })
	var out []ContainerModel
	for _, c := range live {
		p := byName[c.Name]
		out = append(out, ContainerModel{
			Name:            types.StringValue(c.Name),
			Image:           types.StringValue(c.Image),
			ImagePullPolicy: str(string(c.ImagePullPolicy), p.ImagePullPolicy),
			Command:         f.strList(c.Command, p.Command),
			Args:            f.strList(c.Args, p.Args),
			WorkingDir:      str(c.WorkingDir, p.WorkingDir),
			Env:             f.env(c.Env, p.Env),
			Ports:           f.ports(c.Ports, p.Ports),
			Resources:       f.resources(c.Resources, p.Resources),
			VolumeMounts:    f.volumeMounts(c.VolumeMounts, p.VolumeMounts),
			ReadinessProbe:  f.probe(c.ReadinessProbe, p.ReadinessProbe),
			LivenessProbe:   f.probe(c.LivenessProbe, p.LivenessProbe),
			StartupProbe:    f.probe(c.StartupProbe, p.StartupProbe),
			SecurityContext: f.containerSecurityContext(c.SecurityContext, p.SecurityContext),
		})
	}
	return encodeList(f.ctx, containerType(), out, keepEmpty(prior), f.diags)
}

func (f flattener) env(live []corev1.EnvVar, prior types.List) types.List {
	priors := priorList[EnvModel](f, prior)
	var out []EnvModel
	for i, e := range live {
		p := at(priors, i)
		m := EnvModel{
			Name:      types.StringValue(e.Name),
			Value:     str(e.Value, p.Value),
			ValueFrom: types.ObjectNull(containerAttrType("env", "value_from").AttrTypes),
		}
		if e.ValueFrom != nil {
			ps, _ := decode[EnvSourceModel](f.ctx, p.ValueFrom, f.diags)
			refT := containerAttrType("env", "value_from", "secret_key_ref")
			src := EnvSourceModel{
				SecretKeyRef:    types.ObjectNull(refT.AttrTypes),
				ConfigMapKeyRef: types.ObjectNull(refT.AttrTypes),
				FieldRef:        types.ObjectNull(containerAttrType("env", "value_from", "field_ref").AttrTypes),
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				src.SecretKeyRef = encode(f.ctx, refT, KeyRefModel{
					Name: types.StringValue(r.Name), Key: types.StringValue(r.Key), Optional: boolp(r.Optional),
				}, f.diags)
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				src.ConfigMapKeyRef = encode(f.ctx, refT, KeyRefModel{
					Name: types.StringValue(r.Name), Key: types.StringValue(r.Key), Optional: boolp(r.Optional),
				}, f.diags)
			}
			if r := e.ValueFrom.FieldRef; r != nil {
				pf, _ := decode[FieldRefModel](f.ctx, ps.FieldRef, f.diags)
				src.FieldRef = encode(f.ctx, containerAttrType("env", "value_from", "field_ref"), FieldRefModel{
					FieldPath: types.StringValue(r.FieldPath), APIVersion: str(r.APIVersion, pf.APIVersion),
				}, f.diags)
			}
			m.ValueFrom = encode(f.ctx, containerAttrType("env", "value_from"), src, f.diags)
		}
		out = append(out, m)
	}
	return encodeList(f.ctx, containerAttrType("env"), out, keepEmpty(prior), f.diags)
}

func (f flattener) ports(live []corev1.ContainerPort, prior types.List) types.List {
	priors := priorList[PortModel](f, prior)
	var out []PortModel
	for i, p := range live {
		// The CRD defaults protocol to TCP, and an empty protocol means TCP.
		proto := string(p.Protocol)
		if proto == "" {
			proto = string(corev1.ProtocolTCP)
		}
		out = append(out, PortModel{
			Name:          str(p.Name, at(priors, i).Name),
			ContainerPort: types.Int64Value(int64(p.ContainerPort)),
			Protocol:      types.StringValue(proto),
		})
	}
	return encodeList(f.ctx, containerAttrType("ports"), out, keepEmpty(prior), f.diags)
}

func (f flattener) resources(live corev1.ResourceRequirements, prior types.Object) types.Object {
	p, _ := decode[ResourcesModel](f.ctx, prior, f.diags)
	return encode(f.ctx, containerAttrType("resources"), ResourcesModel{
		Limits:   f.quantityMap(live.Limits, p.Limits),
		Requests: f.quantityMap(live.Requests, p.Requests),
	}, f.diags)
}

func (f flattener) volumeMounts(live []corev1.VolumeMount, prior types.List) types.List {
	priors := priorList[VolumeMountModel](f, prior)
	var out []VolumeMountModel
	for i, v := range live {
		p := at(priors, i)
		out = append(out, VolumeMountModel{
			Name:      types.StringValue(v.Name),
			MountPath: types.StringValue(v.MountPath),
			SubPath:   str(v.SubPath, p.SubPath),
			ReadOnly:  boolv(v.ReadOnly, p.ReadOnly),
		})
	}
	return encodeList(f.ctx, containerAttrType("volume_mounts"), out, keepEmpty(prior), f.diags)
}

func (f flattener) probe(live *corev1.Probe, prior types.Object) types.Object {
	t := containerAttrType("readiness_probe")
	if live == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	p, _ := decode[ProbeModel](f.ctx, prior, f.diags)
	m := ProbeModel{
		Exec:                types.ObjectNull(containerAttrType("readiness_probe", "exec").AttrTypes),
		HTTPGet:             types.ObjectNull(containerAttrType("readiness_probe", "http_get").AttrTypes),
		TCPSocket:           types.ObjectNull(containerAttrType("readiness_probe", "tcp_socket").AttrTypes),
		GRPC:                types.ObjectNull(containerAttrType("readiness_probe", "grpc").AttrTypes),
		InitialDelaySeconds: int32v(live.InitialDelaySeconds, p.InitialDelaySeconds),
		PeriodSeconds:       int32v(live.PeriodSeconds, p.PeriodSeconds),
		TimeoutSeconds:      int32v(live.TimeoutSeconds, p.TimeoutSeconds),
		SuccessThreshold:    int32v(live.SuccessThreshold, p.SuccessThreshold),
		FailureThreshold:    int32v(live.FailureThreshold, p.FailureThreshold),
	}
	if x := live.Exec; x != nil {
		pe, _ := decode[ExecModel](f.ctx, p.Exec, f.diags)
		m.Exec = encode(f.ctx, containerAttrType("readiness_probe", "exec"),
			ExecModel{Command: f.strList(x.Command, pe.Command)}, f.diags)
	}
	if h := live.HTTPGet; h != nil {
		ph, _ := decode[HTTPGetModel](f.ctx, p.HTTPGet, f.diags)
		var headers []HTTPHeaderModel
		for _, hd := range h.HTTPHeaders {
			headers = append(headers, HTTPHeaderModel{Name: types.StringValue(hd.Name), Value: types.StringValue(hd.Value)})
		}
		m.HTTPGet = encode(f.ctx, containerAttrType("readiness_probe", "http_get"), HTTPGetModel{
			Path:        str(h.Path, ph.Path),
			Port:        types.StringValue(portString(h.Port)),
			Host:        str(h.Host, ph.Host),
			Scheme:      str(string(h.Scheme), ph.Scheme),
			HTTPHeaders: encodeList(f.ctx, containerAttrType("readiness_probe", "http_get", "http_headers"), headers, keepEmpty(ph.HTTPHeaders), f.diags),
		}, f.diags)
	}
	if s := live.TCPSocket; s != nil {
		ps, _ := decode[TCPSocketModel](f.ctx, p.TCPSocket, f.diags)
		m.TCPSocket = encode(f.ctx, containerAttrType("readiness_probe", "tcp_socket"), TCPSocketModel{
			Port: types.StringValue(portString(s.Port)),
			Host: str(s.Host, ps.Host),
		}, f.diags)
	}
	if g := live.GRPC; g != nil {
		pg, _ := decode[GRPCModel](f.ctx, p.GRPC, f.diags)
		// The CRD defaults service to "", which means the same as unset.
		m.GRPC = encode(f.ctx, containerAttrType("readiness_probe", "grpc"), GRPCModel{
			Port:    types.Int64Value(int64(g.Port)),
			Service: str(deref(g.Service), pg.Service),
		}, f.diags)
	}
	return encode(f.ctx, t, m, f.diags)
}

// portString is the configuration spelling of an int-or-string port.
func portString(p intstr.IntOrString) string {
	if p.Type == intstr.Int {
		return strconv.Itoa(int(p.IntVal))
	}
	return p.StrVal
}

func (f flattener) containerSecurityContext(live *corev1.SecurityContext, prior types.Object) types.Object {
	t := containerAttrType("security_context")
	if live == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	p, _ := decode[ContainerSecurityContextModel](f.ctx, prior, f.diags)
	capsT := containerAttrType("security_context", "capabilities")
	m := ContainerSecurityContextModel{
		AllowPrivilegeEscalation: boolp(live.AllowPrivilegeEscalation),
		Capabilities:             types.ObjectNull(capsT.AttrTypes),
		Privileged:               boolp(live.Privileged),
		ReadOnlyRootFilesystem:   boolp(live.ReadOnlyRootFilesystem),
		RunAsNonRoot:             boolp(live.RunAsNonRoot),
		RunAsUser:                int64p(live.RunAsUser),
		RunAsGroup:               int64p(live.RunAsGroup),
		SeccompProfile:           f.seccompProfile(live.SeccompProfile, p.SeccompProfile),
	}
	if c := live.Capabilities; c != nil {
		pc, _ := decode[CapabilitiesModel](f.ctx, p.Capabilities, f.diags)
		m.Capabilities = encode(f.ctx, capsT, CapabilitiesModel{
			Add:  f.strList(capStrings(c.Add), pc.Add),
			Drop: f.strList(capStrings(c.Drop), pc.Drop),
		}, f.diags)
	}
	return encode(f.ctx, t, m, f.diags)
}

func capStrings(cs []corev1.Capability) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c))
	}
	return out
}

func (f flattener) seccompProfile(live *corev1.SeccompProfile, prior types.Object) types.Object {
	t := objType("security_context", "seccomp_profile")
	if live == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	p, _ := decode[SeccompProfileModel](f.ctx, prior, f.diags)
	return encode(f.ctx, t, SeccompProfileModel{
		Type:             str(string(live.Type), p.Type),
		LocalhostProfile: str(deref(live.LocalhostProfile), p.LocalhostProfile),
	}, f.diags)
}

func (f flattener) podSecurityContext(live *corev1.PodSecurityContext, prior types.Object) types.Object {
	t := objType("security_context")
	if live == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	p, _ := decode[PodSecurityContextModel](f.ctx, prior, f.diags)
	groups := types.ListNull(types.Int64Type)
	if len(live.SupplementalGroups) > 0 {
		var d diag.Diagnostics
		groups, d = types.ListValueFrom(f.ctx, types.Int64Type, live.SupplementalGroups)
		f.diags.Append(d...)
	} else if keepEmpty(p.SupplementalGroups) {
		groups = p.SupplementalGroups
	}
	return encode(f.ctx, t, PodSecurityContextModel{
		RunAsNonRoot:       boolp(live.RunAsNonRoot),
		RunAsUser:          int64p(live.RunAsUser),
		RunAsGroup:         int64p(live.RunAsGroup),
		FSGroup:            int64p(live.FSGroup),
		SupplementalGroups: groups,
		SeccompProfile:     f.seccompProfile(live.SeccompProfile, p.SeccompProfile),
	}, f.diags)
}

func (f flattener) volumes(live []corev1.Volume, prior types.List) types.List {
	byName := map[string]VolumeModel{}
	each(f.ctx, prior, f.diags, func(_ int, m VolumeModel) { byName[m.Name.ValueString()] = m })
	var out []VolumeModel
	for _, v := range live {
		if v.EmptyDir == nil && v.ConfigMap == nil && v.Secret == nil && v.PersistentVolumeClaim == nil {
			// Not expressible in the typed schema: it belongs to
			// pod_spec_overrides (or to nobody we manage).
			continue
		}
		p := byName[v.Name]
		m := VolumeModel{
			Name:                  types.StringValue(v.Name),
			EmptyDir:              types.ObjectNull(volumeAttrType("empty_dir").AttrTypes),
			ConfigMap:             types.ObjectNull(volumeAttrType("config_map").AttrTypes),
			Secret:                types.ObjectNull(volumeAttrType("secret").AttrTypes),
			PersistentVolumeClaim: types.ObjectNull(volumeAttrType("persistent_volume_claim").AttrTypes),
		}
		if d := v.EmptyDir; d != nil {
			pd, _ := decode[EmptyDirModel](f.ctx, p.EmptyDir, f.diags)
			m.EmptyDir = encode(f.ctx, volumeAttrType("empty_dir"), EmptyDirModel{
				Medium:    str(string(d.Medium), pd.Medium),
				SizeLimit: quantity(d.SizeLimit, pd.SizeLimit),
			}, f.diags)
		}
		if c := v.ConfigMap; c != nil {
			pc, _ := decode[ConfigMapVolumeModel](f.ctx, p.ConfigMap, f.diags)
			m.ConfigMap = encode(f.ctx, volumeAttrType("config_map"), ConfigMapVolumeModel{
				Name:        types.StringValue(c.Name),
				Items:       f.keyToPaths(c.Items, pc.Items),
				DefaultMode: mode(c.DefaultMode, pc.DefaultMode),
				Optional:    boolp(c.Optional),
			}, f.diags)
		}
		if s := v.Secret; s != nil {
			ps, _ := decode[SecretVolumeModel](f.ctx, p.Secret, f.diags)
			m.Secret = encode(f.ctx, volumeAttrType("secret"), SecretVolumeModel{
				SecretName:  types.StringValue(s.SecretName),
				Items:       f.keyToPaths(s.Items, ps.Items),
				DefaultMode: mode(s.DefaultMode, ps.DefaultMode),
				Optional:    boolp(s.Optional),
			}, f.diags)
		}
		if c := v.PersistentVolumeClaim; c != nil {
			pc, _ := decode[PVCVolumeModel](f.ctx, p.PersistentVolumeClaim, f.diags)
			m.PersistentVolumeClaim = encode(f.ctx, volumeAttrType("persistent_volume_claim"), PVCVolumeModel{
				ClaimName: types.StringValue(c.ClaimName),
				ReadOnly:  boolv(c.ReadOnly, pc.ReadOnly),
			}, f.diags)
		}
		out = append(out, m)
	}
	return encodeList(f.ctx, volumeAttrType(), out, keepEmpty(prior), f.diags)
}

func (f flattener) keyToPaths(live []corev1.KeyToPath, prior types.List) types.List {
	var out []KeyToPathModel
	for _, k := range live {
		out = append(out, KeyToPathModel{Key: types.StringValue(k.Key), Path: types.StringValue(k.Path)})
	}
	return encodeList(f.ctx, volumeAttrType("secret", "items"), out, keepEmpty(prior), f.diags)
}

// mode is octal permission bits, keeping the prior spelling ("440" or
// "0440") when it means the same.
func mode(live *int32, prior types.String) types.String {
	if live == nil {
		return types.StringNull()
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		if n, err := strconv.ParseInt(prior.ValueString(), 8, 32); err == nil && int32(n) == *live {
			return prior
		}
	}
	return types.StringValue(fmt.Sprintf("%04o", *live))
}

func (f flattener) tolerations(live []corev1.Toleration, prior types.List) types.List {
	priors := priorList[TolerationModel](f, prior)
	var out []TolerationModel
	for i, t := range live {
		p := at(priors, i)
		out = append(out, TolerationModel{
			Key:               str(t.Key, p.Key),
			Operator:          str(string(t.Operator), p.Operator),
			Value:             str(t.Value, p.Value),
			Effect:            str(string(t.Effect), p.Effect),
			TolerationSeconds: int64p(t.TolerationSeconds),
		})
	}
	return encodeList(f.ctx, objType("tolerations"), out, keepEmpty(prior), f.diags)
}

func (f flattener) affinity(live *corev1.Affinity, prior types.Object) types.Object {
	t := objType("affinity")
	naT := objType("affinity", "node_affinity")
	paT := objType("affinity", "pod_anti_affinity")
	var na *corev1.NodeSelector
	var pa []corev1.WeightedPodAffinityTerm
	if live != nil && live.NodeAffinity != nil {
		na = live.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if live != nil && live.PodAntiAffinity != nil {
		pa = live.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	// Only the typed parts count: affinity set wholly through the override
	// leaves the typed attribute null.
	if na == nil && len(pa) == 0 {
		return types.ObjectNull(t.AttrTypes)
	}
	p, _ := decode[AffinityModel](f.ctx, prior, f.diags)
	m := AffinityModel{NodeAffinity: types.ObjectNull(naT.AttrTypes), PodAntiAffinity: types.ObjectNull(paT.AttrTypes)}
	if na != nil {
		pna, _ := decode[NodeAffinityModel](f.ctx, p.NodeAffinity, f.diags)
		pterms := priorList[NodeSelectorTermModel](f, pna.Required)
		var terms []NodeSelectorTermModel
		for i, term := range na.NodeSelectorTerms {
			var exprs []MatchExpressionModel
			pexprs := priorList[MatchExpressionModel](f, at(pterms, i).MatchExpressions)
			for j, x := range term.MatchExpressions {
				exprs = append(exprs, MatchExpressionModel{
					Key:      types.StringValue(x.Key),
					Operator: types.StringValue(string(x.Operator)),
					Values:   f.strList(x.Values, at(pexprs, j).Values),
				})
			}
			terms = append(terms, NodeSelectorTermModel{
				MatchExpressions: encodeList(f.ctx, objType("affinity", "node_affinity", "required", "match_expressions"), exprs, keepEmpty(at(pterms, i).MatchExpressions), f.diags),
			})
		}
		m.NodeAffinity = encode(f.ctx, naT, NodeAffinityModel{
			Required: encodeList(f.ctx, objType("affinity", "node_affinity", "required"), terms, keepEmpty(pna.Required), f.diags),
		}, f.diags)
	}
	if len(pa) > 0 {
		ppa, _ := decode[PodAntiAffinityModel](f.ctx, p.PodAntiAffinity, f.diags)
		pterms := priorList[WeightedPodAffinityTermModel](f, ppa.Preferred)
		var terms []WeightedPodAffinityTermModel
		for i, w := range pa {
			pt := at(pterms, i)
			terms = append(terms, WeightedPodAffinityTermModel{
				Weight:        types.Int64Value(int64(w.Weight)),
				TopologyKey:   types.StringValue(w.PodAffinityTerm.TopologyKey),
				LabelSelector: f.labelSelector(w.PodAffinityTerm.LabelSelector, pt.LabelSelector),
				Namespaces:    f.strList(w.PodAffinityTerm.Namespaces, pt.Namespaces),
			})
		}
		m.PodAntiAffinity = encode(f.ctx, paT, PodAntiAffinityModel{
			Preferred: encodeList(f.ctx, objType("affinity", "pod_anti_affinity", "preferred"), terms, keepEmpty(ppa.Preferred), f.diags),
		}, f.diags)
	}
	return encode(f.ctx, t, m, f.diags)
}

func (f flattener) labelSelector(live *metav1.LabelSelector, prior types.Object) types.Object {
	t := objType("affinity", "pod_anti_affinity", "preferred", "label_selector")
	if live == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	p, _ := decode[LabelSelectorModel](f.ctx, prior, f.diags)
	pexprs := priorList[MatchExpressionModel](f, p.MatchExpressions)
	var exprs []MatchExpressionModel
	for i, x := range live.MatchExpressions {
		exprs = append(exprs, MatchExpressionModel{
			Key:      types.StringValue(x.Key),
			Operator: types.StringValue(string(x.Operator)),
			Values:   f.strList(x.Values, at(pexprs, i).Values),
		})
	}
	return encode(f.ctx, t, LabelSelectorModel{
		MatchLabels:      f.strMap(live.MatchLabels, p.MatchLabels),
		MatchExpressions: encodeList(f.ctx, objType("affinity", "pod_anti_affinity", "preferred", "label_selector", "match_expressions"), exprs, keepEmpty(p.MatchExpressions), f.diags),
	}, f.diags)
}

func (f flattener) dnsConfig(live *corev1.PodDNSConfig, prior types.Object) types.Object {
	t := objType("dns_config")
	if live == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	p, _ := decode[DNSConfigModel](f.ctx, prior, f.diags)
	popts := priorList[DNSOptionModel](f, p.Options)
	var opts []DNSOptionModel
	for i, o := range live.Options {
		opts = append(opts, DNSOptionModel{Name: types.StringValue(o.Name), Value: str(deref(o.Value), at(popts, i).Value)})
	}
	return encode(f.ctx, t, DNSConfigModel{
		Nameservers: f.strList(live.Nameservers, p.Nameservers),
		Searches:    f.strList(live.Searches, p.Searches),
		Options:     encodeList(f.ctx, objType("dns_config", "options"), opts, keepEmpty(p.Options), f.diags),
	}, f.diags)
}

// quantityMap reports a resource list, keeping the prior spelling of every
// quantity that is equal in value ("1000m" stays "1000m" when the server says
// "1"); a changed or new quantity is reported in the server's spelling.
func (f flattener) quantityMap(live corev1.ResourceList, prior types.Map) types.Map {
	if len(live) == 0 {
		if keepEmptyMap(prior) {
			return prior
		}
		return types.MapNull(types.StringType)
	}
	priorVals := map[string]attr.Value{}
	if !prior.IsNull() && !prior.IsUnknown() {
		priorVals = prior.Elements()
	}
	out := map[string]attr.Value{}
	for name, q := range live {
		p, _ := priorVals[string(name)].(types.String)
		out[string(name)] = quantity(&q, p)
	}
	v, d := types.MapValue(types.StringType, out)
	f.diags.Append(d...)
	return v
}

// quantity reports q, in the prior spelling when that is the same amount.
func quantity(q *resource.Quantity, prior types.String) types.String {
	if q == nil {
		return types.StringNull()
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		if pq, err := resource.ParseQuantity(prior.ValueString()); err == nil && pq.Cmp(*q) == 0 {
			return prior
		}
	}
	return types.StringValue(q.String())
}

func (f flattener) strList(live []string, prior types.List) types.List {
	if len(live) == 0 {
		if keepEmpty(prior) {
			return prior
		}
		return types.ListNull(types.StringType)
	}
	l, d := types.ListValueFrom(f.ctx, types.StringType, live)
	f.diags.Append(d...)
	return l
}

func (f flattener) strMap(live map[string]string, prior types.Map) types.Map {
	if len(live) == 0 {
		if keepEmptyMap(prior) {
			return prior
		}
		return types.MapNull(types.StringType)
	}
	m, d := types.MapValueFrom(f.ctx, types.StringType, live)
	f.diags.Append(d...)
	return m
}

// priorList decodes the known elements of a prior list, by index.
func priorList[T any](f flattener, prior types.List) []T {
	var out []T
	if prior.IsNull() || prior.IsUnknown() {
		return nil
	}
	out = make([]T, len(prior.Elements()))
	each(f.ctx, prior, f.diags, func(i int, m T) { out[i] = m })
	return out
}

// at is the i-th prior element, or the zero model (all null) past the end.
func at[T any](l []T, i int) T {
	var zero T
	if i < len(l) {
		return l[i]
	}
	return zero
}

// keepEmpty: an empty live list is reported as the prior empty list (the
// server drops empty lists, so "[]" in the configuration would otherwise
// read back as null and show a diff).
func keepEmpty(prior types.List) bool {
	return !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0
}

func keepEmptyMap(prior types.Map) bool {
	return !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0
}

// str reports an optional string: Kubernetes does not tell "" from unset, so
// a live "" is null unless the prior said "".
func str(live string, prior types.String) types.String {
	if live == "" {
		if !prior.IsNull() && !prior.IsUnknown() && prior.ValueString() == "" {
			return prior
		}
		return types.StringNull()
	}
	return types.StringValue(live)
}

// boolv reports a non-pointer bool, where false and unset are the same.
func boolv(live bool, prior types.Bool) types.Bool {
	if !live {
		if !prior.IsNull() && !prior.IsUnknown() && !prior.ValueBool() {
			return prior
		}
		return types.BoolNull()
	}
	return types.BoolValue(true)
}

// int32v reports a non-pointer number, where 0 and unset are the same.
func int32v(live int32, prior types.Int64) types.Int64 {
	if live == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && prior.ValueInt64() == 0 {
			return prior
		}
		return types.Int64Null()
	}
	return types.Int64Value(int64(live))
}

func boolp(b *bool) types.Bool {
	if b == nil {
		return types.BoolNull()
	}
	return types.BoolValue(*b)
}

func int64p(i *int64) types.Int64 {
	if i == nil {
		return types.Int64Null()
	}
	return types.Int64Value(*i)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
