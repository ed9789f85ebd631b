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

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/labelselector"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
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
	return flattenList(f, containerAttrType("env"), live, prior, func(e corev1.EnvVar, p EnvModel) EnvModel {
		return EnvModel{
			Name:      types.StringValue(e.Name),
			Value:     str(e.Value, p.Value),
			ValueFrom: flattenObject(f, containerAttrType("env", "value_from"), e.ValueFrom, p.ValueFrom, f.envSource),
		}
	})
}

func (f flattener) envSource(live *corev1.EnvVarSource, p EnvSourceModel) EnvSourceModel {
	refT := containerAttrType("env", "value_from", "secret_key_ref")
	return EnvSourceModel{
		SecretKeyRef: flattenObject(f, refT, live.SecretKeyRef, p.SecretKeyRef, func(r *corev1.SecretKeySelector, _ KeyRefModel) KeyRefModel {
			return keyRef(r.LocalObjectReference, r.Key, r.Optional)
		}),
		ConfigMapKeyRef: flattenObject(f, refT, live.ConfigMapKeyRef, p.ConfigMapKeyRef, func(r *corev1.ConfigMapKeySelector, _ KeyRefModel) KeyRefModel {
			return keyRef(r.LocalObjectReference, r.Key, r.Optional)
		}),
		FieldRef: flattenObject(f, containerAttrType("env", "value_from", "field_ref"), live.FieldRef, p.FieldRef,
			func(r *corev1.ObjectFieldSelector, p FieldRefModel) FieldRefModel {
				return FieldRefModel{FieldPath: types.StringValue(r.FieldPath), APIVersion: str(r.APIVersion, p.APIVersion)}
			}),
	}
}

// keyRef is a secret_key_ref or config_map_key_ref.
func keyRef(ref corev1.LocalObjectReference, key string, optional *bool) KeyRefModel {
	return KeyRefModel{Name: types.StringValue(ref.Name), Key: types.StringValue(key), Optional: boolp(optional)}
}

func (f flattener) ports(live []corev1.ContainerPort, prior types.List) types.List {
	return flattenList(f, containerAttrType("ports"), live, prior, func(c corev1.ContainerPort, p PortModel) PortModel {
		// The CRD defaults protocol to TCP, and an empty protocol means TCP.
		proto := string(c.Protocol)
		if proto == "" {
			proto = string(corev1.ProtocolTCP)
		}
		return PortModel{
			Name:          str(c.Name, p.Name),
			ContainerPort: types.Int64Value(int64(c.ContainerPort)),
			Protocol:      types.StringValue(proto),
		}
	})
}

func (f flattener) resources(live corev1.ResourceRequirements, prior types.Object) types.Object {
	return flattenObject(f, containerAttrType("resources"), &live, prior, func(r *corev1.ResourceRequirements, p ResourcesModel) ResourcesModel {
		return ResourcesModel{Limits: f.quantityMap(r.Limits, p.Limits), Requests: f.quantityMap(r.Requests, p.Requests)}
	})
}

func (f flattener) volumeMounts(live []corev1.VolumeMount, prior types.List) types.List {
	return flattenList(f, containerAttrType("volume_mounts"), live, prior, func(v corev1.VolumeMount, p VolumeMountModel) VolumeMountModel {
		return VolumeMountModel{
			Name:      types.StringValue(v.Name),
			MountPath: types.StringValue(v.MountPath),
			SubPath:   str(v.SubPath, p.SubPath),
			ReadOnly:  boolv(v.ReadOnly, p.ReadOnly),
		}
	})
}

func (f flattener) probe(live *corev1.Probe, prior types.Object) types.Object {
	t := func(names ...string) types.ObjectType {
		return containerAttrType(append([]string{"readiness_probe"}, names...)...)
	}
	return flattenObject(f, t(), live, prior, func(live *corev1.Probe, p ProbeModel) ProbeModel {
		return ProbeModel{
			Exec: flattenObject(f, t("exec"), live.Exec, p.Exec, func(x *corev1.ExecAction, p ExecModel) ExecModel {
				return ExecModel{Command: f.strList(x.Command, p.Command)}
			}),
			HTTPGet: flattenObject(f, t("http_get"), live.HTTPGet, p.HTTPGet, func(h *corev1.HTTPGetAction, p HTTPGetModel) HTTPGetModel {
				return HTTPGetModel{
					Path:   str(h.Path, p.Path),
					Port:   types.StringValue(portString(h.Port)),
					Host:   str(h.Host, p.Host),
					Scheme: str(string(h.Scheme), p.Scheme),
					HTTPHeaders: flattenList(f, t("http_get", "http_headers"), h.HTTPHeaders, p.HTTPHeaders,
						func(hd corev1.HTTPHeader, _ HTTPHeaderModel) HTTPHeaderModel {
							return HTTPHeaderModel{Name: types.StringValue(hd.Name), Value: types.StringValue(hd.Value)}
						}),
				}
			}),
			TCPSocket: flattenObject(f, t("tcp_socket"), live.TCPSocket, p.TCPSocket, func(s *corev1.TCPSocketAction, p TCPSocketModel) TCPSocketModel {
				return TCPSocketModel{Port: types.StringValue(portString(s.Port)), Host: str(s.Host, p.Host)}
			}),
			GRPC: flattenObject(f, t("grpc"), live.GRPC, p.GRPC, func(g *corev1.GRPCAction, p GRPCModel) GRPCModel {
				// The CRD defaults service to "", which means the same as unset.
				return GRPCModel{Port: types.Int64Value(int64(g.Port)), Service: str(deref(g.Service), p.Service)}
			}),
			InitialDelaySeconds: int32v(live.InitialDelaySeconds, p.InitialDelaySeconds),
			PeriodSeconds:       int32v(live.PeriodSeconds, p.PeriodSeconds),
			TimeoutSeconds:      int32v(live.TimeoutSeconds, p.TimeoutSeconds),
			SuccessThreshold:    int32v(live.SuccessThreshold, p.SuccessThreshold),
			FailureThreshold:    int32v(live.FailureThreshold, p.FailureThreshold),
		}
	})
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
	return flattenObject(f, t, live, prior, func(live *corev1.SecurityContext, p ContainerSecurityContextModel) ContainerSecurityContextModel {
		return ContainerSecurityContextModel{
			AllowPrivilegeEscalation: boolp(live.AllowPrivilegeEscalation),
			Capabilities: flattenObject(f, containerAttrType("security_context", "capabilities"), live.Capabilities, p.Capabilities,
				func(c *corev1.Capabilities, p CapabilitiesModel) CapabilitiesModel {
					return CapabilitiesModel{Add: f.strList(capStrings(c.Add), p.Add), Drop: f.strList(capStrings(c.Drop), p.Drop)}
				}),
			Privileged:             boolp(live.Privileged),
			ReadOnlyRootFilesystem: boolp(live.ReadOnlyRootFilesystem),
			RunAsNonRoot:           boolp(live.RunAsNonRoot),
			RunAsUser:              int64p(live.RunAsUser),
			RunAsGroup:             int64p(live.RunAsGroup),
			SeccompProfile:         f.seccompProfile(live.SeccompProfile, p.SeccompProfile),
		}
	})
}

func capStrings(cs []corev1.Capability) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c))
	}
	return out
}

func (f flattener) seccompProfile(live *corev1.SeccompProfile, prior types.Object) types.Object {
	return flattenObject(f, objType("security_context", "seccomp_profile"), live, prior, func(live *corev1.SeccompProfile, p SeccompProfileModel) SeccompProfileModel {
		return SeccompProfileModel{
			Type:             str(string(live.Type), p.Type),
			LocalhostProfile: str(deref(live.LocalhostProfile), p.LocalhostProfile),
		}
	})
}

func (f flattener) podSecurityContext(live *corev1.PodSecurityContext, prior types.Object) types.Object {
	return flattenObject(f, objType("security_context"), live, prior, func(live *corev1.PodSecurityContext, p PodSecurityContextModel) PodSecurityContextModel {
		groups := types.ListNull(types.Int64Type)
		if len(live.SupplementalGroups) > 0 {
			var d diag.Diagnostics
			groups, d = types.ListValueFrom(f.ctx, types.Int64Type, live.SupplementalGroups)
			f.diags.Append(d...)
		} else if keepEmpty(p.SupplementalGroups) {
			groups = p.SupplementalGroups
		}
		return PodSecurityContextModel{
			RunAsNonRoot:       boolp(live.RunAsNonRoot),
			RunAsUser:          int64p(live.RunAsUser),
			RunAsGroup:         int64p(live.RunAsGroup),
			FSGroup:            int64p(live.FSGroup),
			SupplementalGroups: groups,
			SeccompProfile:     f.seccompProfile(live.SeccompProfile, p.SeccompProfile),
		}
	})
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
		out = append(out, VolumeModel{
			Name:                  types.StringValue(v.Name),
			EmptyDir:              flattenObject(f, volumeAttrType("empty_dir"), v.EmptyDir, p.EmptyDir, f.emptyDir),
			ConfigMap:             flattenObject(f, volumeAttrType("config_map"), v.ConfigMap, p.ConfigMap, f.configMapVolume),
			Secret:                flattenObject(f, volumeAttrType("secret"), v.Secret, p.Secret, f.secretVolume),
			PersistentVolumeClaim: flattenObject(f, volumeAttrType("persistent_volume_claim"), v.PersistentVolumeClaim, p.PersistentVolumeClaim, pvcVolume),
		})
	}
	return encodeList(f.ctx, volumeAttrType(), out, keepEmpty(prior), f.diags)
}

func (f flattener) emptyDir(d *corev1.EmptyDirVolumeSource, p EmptyDirModel) EmptyDirModel {
	return EmptyDirModel{Medium: str(string(d.Medium), p.Medium), SizeLimit: quantity(d.SizeLimit, p.SizeLimit)}
}

func (f flattener) configMapVolume(c *corev1.ConfigMapVolumeSource, p ConfigMapVolumeModel) ConfigMapVolumeModel {
	return ConfigMapVolumeModel{
		Name:            types.StringValue(c.Name),
		ProjectionModel: f.projection(c.Items, c.DefaultMode, c.Optional, p.ProjectionModel),
	}
}

func (f flattener) secretVolume(s *corev1.SecretVolumeSource, p SecretVolumeModel) SecretVolumeModel {
	return SecretVolumeModel{
		SecretName:      types.StringValue(s.SecretName),
		ProjectionModel: f.projection(s.Items, s.DefaultMode, s.Optional, p.ProjectionModel),
	}
}

func (f flattener) projection(items []corev1.KeyToPath, defaultMode *int32, optional *bool, p ProjectionModel) ProjectionModel {
	return ProjectionModel{
		Items:       f.keyToPaths(items, p.Items),
		DefaultMode: mode(defaultMode, p.DefaultMode),
		Optional:    boolp(optional),
	}
}

func pvcVolume(c *corev1.PersistentVolumeClaimVolumeSource, p PVCVolumeModel) PVCVolumeModel {
	return PVCVolumeModel{ClaimName: types.StringValue(c.ClaimName), ReadOnly: boolv(c.ReadOnly, p.ReadOnly)}
}

func (f flattener) keyToPaths(live []corev1.KeyToPath, prior types.List) types.List {
	return flattenList(f, volumeAttrType("secret", "items"), live, prior, func(k corev1.KeyToPath, _ KeyToPathModel) KeyToPathModel {
		return KeyToPathModel{Key: types.StringValue(k.Key), Path: types.StringValue(k.Path)}
	})
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
	return flattenList(f, objType("tolerations"), live, prior, func(t corev1.Toleration, p TolerationModel) TolerationModel {
		return TolerationModel{
			Key:               str(t.Key, p.Key),
			Operator:          str(string(t.Operator), p.Operator),
			Value:             str(t.Value, p.Value),
			Effect:            str(string(t.Effect), p.Effect),
			TolerationSeconds: int64p(t.TolerationSeconds),
		}
	})
}

func (f flattener) affinity(live *corev1.Affinity, prior types.Object) types.Object {
	t := objType("affinity")
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
	paT := objType("affinity", "pod_anti_affinity")
	m := AffinityModel{
		NodeAffinity:    flattenObject(f, objType("affinity", "node_affinity"), na, p.NodeAffinity, f.nodeAffinity),
		PodAntiAffinity: types.ObjectNull(paT.AttrTypes),
	}
	if len(pa) > 0 {
		ppa, _ := decode[PodAntiAffinityModel](f.ctx, p.PodAntiAffinity, f.diags)
		m.PodAntiAffinity = encode(f.ctx, paT, PodAntiAffinityModel{
			Preferred: flattenList(f, objType("affinity", "pod_anti_affinity", "preferred"), pa, ppa.Preferred, f.weightedTerm),
		}, f.diags)
	}
	return encode(f.ctx, t, m, f.diags)
}

func (f flattener) nodeAffinity(na *corev1.NodeSelector, p NodeAffinityModel) NodeAffinityModel {
	return NodeAffinityModel{
		Required: flattenList(f, objType("affinity", "node_affinity", "required"), na.NodeSelectorTerms, p.Required,
			func(term corev1.NodeSelectorTerm, p NodeSelectorTermModel) NodeSelectorTermModel {
				return NodeSelectorTermModel{MatchExpressions: flattenList(f, objType("affinity", "node_affinity", "required", "match_expressions"),
					term.MatchExpressions, p.MatchExpressions, func(x corev1.NodeSelectorRequirement, p labelselector.RequirementModel) labelselector.RequirementModel {
						return f.matchExpression(x.Key, string(x.Operator), x.Values, p)
					})}
			}),
	}
}

func (f flattener) weightedTerm(w corev1.WeightedPodAffinityTerm, p WeightedPodAffinityTermModel) WeightedPodAffinityTermModel {
	return WeightedPodAffinityTermModel{
		Weight:        types.Int64Value(int64(w.Weight)),
		TopologyKey:   types.StringValue(w.PodAffinityTerm.TopologyKey),
		LabelSelector: f.labelSelector(w.PodAffinityTerm.LabelSelector, p.LabelSelector),
		Namespaces:    f.strList(w.PodAffinityTerm.Namespaces, p.Namespaces),
	}
}

// matchExpression is a node selector or label selector requirement.
func (f flattener) matchExpression(key, operator string, values []string, p labelselector.RequirementModel) labelselector.RequirementModel {
	return labelselector.RequirementModel{Key: types.StringValue(key), Operator: types.StringValue(operator), Values: f.strList(values, p.Values)}
}

func (f flattener) labelSelector(live *metav1.LabelSelector, prior types.Object) types.Object {
	t := objType("affinity", "pod_anti_affinity", "preferred", "label_selector")
	return flattenObject(f, t, live, prior, func(live *metav1.LabelSelector, p labelselector.Model) labelselector.Model {
		return labelselector.Model{
			MatchLabels: f.strMap(live.MatchLabels, p.MatchLabels),
			MatchExpressions: flattenList(f, objType("affinity", "pod_anti_affinity", "preferred", "label_selector", "match_expressions"),
				live.MatchExpressions, p.MatchExpressions, func(x metav1.LabelSelectorRequirement, p labelselector.RequirementModel) labelselector.RequirementModel {
					return f.matchExpression(x.Key, string(x.Operator), x.Values, p)
				}),
		}
	})
}

func (f flattener) dnsConfig(live *corev1.PodDNSConfig, prior types.Object) types.Object {
	return flattenObject(f, objType("dns_config"), live, prior, func(live *corev1.PodDNSConfig, p DNSConfigModel) DNSConfigModel {
		return DNSConfigModel{
			Nameservers: f.strList(live.Nameservers, p.Nameservers),
			Searches:    f.strList(live.Searches, p.Searches),
			Options: flattenList(f, objType("dns_config", "options"), live.Options, p.Options, func(o corev1.PodDNSConfigOption, p DNSOptionModel) DNSOptionModel {
				return DNSOptionModel{Name: types.StringValue(o.Name), Value: str(deref(o.Value), p.Value)}
			}),
		}
	})
}

// flattenList reports live as a list of t, converting each element with
// its prior element at the same index (the zero model, all null, past the
// prior's end); an empty live list is null, or the prior empty list.
func flattenList[L, M any](f flattener, t types.ObjectType, live []L, prior types.List, conv func(L, M) M) types.List {
	priors := priorList[M](f, prior)
	var out []M
	for i, l := range live {
		out = append(out, conv(l, at(priors, i)))
	}
	return encodeList(f.ctx, t, out, keepEmpty(prior), f.diags)
}

// flattenObject reports an optional live part as an object of t, converted
// with its prior; nil is null.
func flattenObject[L, M any](f flattener, t types.ObjectType, live *L, prior types.Object, conv func(*L, M) M) types.Object {
	if live == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	p, _ := decode[M](f.ctx, prior, f.diags)
	return encode(f.ctx, t, conv(live, p), f.diags)
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
	return tfvalues.Map(f.ctx, live, prior, f.diags)
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
