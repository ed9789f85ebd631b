package podtemplate

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// hardenedContainer is what a container with nothing but name, image and
// limits expands to.
func hardenedContainer(name string) corev1.Container {
	return corev1.Container{
		Name:  name,
		Image: "python:3.12-slim",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
		}},
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
}

// hardenedSpec is the pod spec of minimalPod with edit applied.
func hardenedSpec(edit func(*corev1.PodSpec)) agentsv1beta1.PodTemplate {
	spec := corev1.PodSpec{
		Containers:                   []corev1.Container{hardenedContainer("main")},
		RuntimeClassName:             ptr.To("gvisor"),
		AutomountServiceAccountToken: ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
	if edit != nil {
		edit(&spec)
	}
	return agentsv1beta1.PodTemplate{Spec: spec}
}

// TestExpand: each part of the schema maps to the API fields it names.
func TestExpand(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name string
		pod  map[string]any
		want agentsv1beta1.PodTemplate
	}{
		{"minimal: the hardened defaults", minimalPod(), hardenedSpec(nil)},
		{"labels and annotations", sets("labels", map[string]any{"app": "agent"}, "annotations", map[string]any{"example.com/a": "b"}),
			func() agentsv1beta1.PodTemplate {
				pt := hardenedSpec(nil)
				pt.ObjectMeta = agentsv1beta1.PodMetadata{Labels: map[string]string{"app": "agent"}, Annotations: map[string]string{"example.com/a": "b"}}
				return pt
			}()},
		{"empty maps and lists are omitted", sets("labels", map[string]any{}, "tolerations", []any{}, "containers.0.env", []any{}),
			hardenedSpec(nil)},
		{"container basics", sets("containers.0.image_pull_policy", "Always", "containers.0.command", []any{"sh"},
			"containers.0.args", []any{"-c", "x"}, "containers.0.working_dir", "/w"),
			hardenedSpec(func(s *corev1.PodSpec) {
				c := &s.Containers[0]
				c.ImagePullPolicy, c.Command, c.Args, c.WorkingDir = corev1.PullAlways, []string{"sh"}, []string{"-c", "x"}, "/w"
			})},
		{"env", set("containers.0.env", []any{
			map[string]any{"name": "A", "value": "1"},
			map[string]any{"name": "B", "value_from": map[string]any{"secret_key_ref": map[string]any{"name": "s", "key": "k", "optional": true}}},
			map[string]any{"name": "C", "value_from": map[string]any{"config_map_key_ref": map[string]any{"name": "c", "key": "k"}}},
			map[string]any{"name": "D", "value_from": map[string]any{"field_ref": map[string]any{"field_path": "status.podIP", "api_version": "v1"}}},
		}), hardenedSpec(func(s *corev1.PodSpec) {
			s.Containers[0].Env = []corev1.EnvVar{
				{Name: "A", Value: "1"},
				{Name: "B", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k", Optional: ptr.To(true)}}},
				{Name: "C", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Key: "k"}}},
				{Name: "D", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP", APIVersion: "v1"}}},
			}
		})},
		{"ports", set("containers.0.ports", []any{map[string]any{"name": "http", "container_port": 80}, map[string]any{"container_port": 53, "protocol": "UDP"}}),
			hardenedSpec(func(s *corev1.PodSpec) {
				s.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: "TCP"}, {ContainerPort: 53, Protocol: "UDP"}}
			})},
		{"resources keep their spelling on the way out", set("containers.0.resources", map[string]any{
			"limits": map[string]any{"cpu": "1000m", "memory": "1024Mi"}, "requests": map[string]any{"cpu": "0.5"}}),
			hardenedSpec(func(s *corev1.PodSpec) {
				s.Containers[0].Resources = corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m"), corev1.ResourceMemory: resource.MustParse("1024Mi")},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				}
			})},
		{"probes", sets(
			"containers.0.readiness_probe", map[string]any{"http_get": map[string]any{"path": "/h", "port": "http", "host": "localhost", "scheme": "HTTPS",
				"http_headers": []any{map[string]any{"name": "X", "value": "y"}}}, "period_seconds": 5, "timeout_seconds": 2, "failure_threshold": 4, "success_threshold": 2},
			"containers.0.liveness_probe", map[string]any{"tcp_socket": map[string]any{"port": 8080}, "initial_delay_seconds": 3},
			"containers.0.startup_probe", map[string]any{"grpc": map[string]any{"port": 9000, "service": "health"}},
			"init_containers", []any{with(container("side"), "readiness_probe", map[string]any{"exec": map[string]any{"command": []any{"true"}}})},
			"pod_spec_overrides", `{"initContainers": [{"name": "side", "restartPolicy": "Always"}]}`,
		), hardenedSpec(func(s *corev1.PodSpec) {
			c := &s.Containers[0]
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/h", Port: intstr.FromString("http"), Host: "localhost", Scheme: corev1.URISchemeHTTPS,
				HTTPHeaders: []corev1.HTTPHeader{{Name: "X", Value: "y"}}}},
				PeriodSeconds: 5, TimeoutSeconds: 2, FailureThreshold: 4, SuccessThreshold: 2}
			c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, InitialDelaySeconds: 3}
			c.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000, Service: ptr.To("health")}}}
			side := hardenedContainer("side")
			side.Name = "side"
			side.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			side.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			s.InitContainers = []corev1.Container{side}
		})},
		{"volumes and mounts", sets(
			"volumes", []any{
				map[string]any{"name": "a", "empty_dir": map[string]any{"medium": "Memory", "size_limit": "64Mi"}},
				map[string]any{"name": "b", "config_map": map[string]any{"name": "cm", "items": []any{map[string]any{"key": "k", "path": "p"}}, "default_mode": "0440", "optional": false}},
				map[string]any{"name": "c", "secret": map[string]any{"secret_name": "s", "default_mode": "400"}},
				map[string]any{"name": "d", "persistent_volume_claim": map[string]any{"claim_name": "pvc", "read_only": true}},
			},
			"containers.0.volume_mounts", []any{map[string]any{"name": "a", "mount_path": "/a", "sub_path": "x", "read_only": true}},
		), hardenedSpec(func(s *corev1.PodSpec) {
			size := resource.MustParse("64Mi")
			s.Volumes = []corev1.Volume{
				{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &size}}},
				{Name: "b", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Items: []corev1.KeyToPath{{Key: "k", Path: "p"}},
					DefaultMode: ptr.To[int32](0o440), Optional: ptr.To(false)}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: ptr.To[int32](0o400)}}},
				{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "pvc", ReadOnly: true}}},
			}
			s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "a", MountPath: "/a", SubPath: "x", ReadOnly: true}}
		})},
		{"scheduling", sets(
			"node_selector", map[string]any{"pool": "sandbox"},
			"tolerations", []any{map[string]any{"key": "k", "operator": "Exists", "effect": "NoExecute", "toleration_seconds": 60}},
			"affinity", map[string]any{
				"node_affinity": map[string]any{"required": []any{map[string]any{"match_expressions": []any{map[string]any{"key": "zone", "operator": "In", "values": []any{"a"}}}}}},
				"pod_anti_affinity": map[string]any{"preferred": []any{map[string]any{"weight": 50, "topology_key": "kubernetes.io/hostname",
					"namespaces": []any{"agents"}, "label_selector": map[string]any{"match_labels": map[string]any{"app": "agent"}}}}},
			},
			"priority_class_name", "low",
			"termination_grace_period_seconds", 0,
		), hardenedSpec(func(s *corev1.PodSpec) {
			s.NodeSelector = map[string]string{"pool": "sandbox"}
			s.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}}
			s.Affinity = &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
					Weight: 50, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname", Namespaces: []string{"agents"},
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}}}}},
			}
			s.PriorityClassName = "low"
			s.TerminationGracePeriodSeconds = ptr.To[int64](0)
		})},
		{"dns, account, pull secrets", sets(
			"dns_policy", "None",
			"dns_config", map[string]any{"nameservers": []any{"1.1.1.1"}, "searches": []any{"a.example"}, "options": []any{map[string]any{"name": "ndots", "value": "1"}, map[string]any{"name": "edns0"}}},
			"service_account_name", "runner",
			"image_pull_secrets", []any{"r1", "r2"},
		), hardenedSpec(func(s *corev1.PodSpec) {
			s.DNSPolicy = corev1.DNSNone
			s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"a.example"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("1")}, {Name: "edns0"}}}
			s.ServiceAccountName = "runner"
			s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "r1"}, {Name: "r2"}}
		})},
		{"security loosened and tightened", sets(
			"runtime_class_name", "",
			"automount_service_account_token", true,
			"security_context", map[string]any{"run_as_non_root": false, "run_as_user": 0, "run_as_group": 0, "fs_group": 10, "supplemental_groups": []any{20},
				"seccomp_profile": map[string]any{"type": "Localhost", "localhost_profile": "p.json"}},
			"containers.0.security_context", map[string]any{"privileged": true, "allow_privilege_escalation": true, "read_only_root_filesystem": true,
				"run_as_user": 5, "run_as_group": 6, "run_as_non_root": true, "capabilities": map[string]any{"add": []any{"NET_BIND_SERVICE"}},
				"seccomp_profile": map[string]any{"type": "Unconfined"}},
		), hardenedSpec(func(s *corev1.PodSpec) {
			s.RuntimeClassName = nil
			s.AutomountServiceAccountToken = ptr.To(true)
			s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false), RunAsUser: ptr.To[int64](0), RunAsGroup: ptr.To[int64](0),
				FSGroup: ptr.To[int64](10), SupplementalGroups: []int64{20},
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}}
			s.Containers[0].SecurityContext = &corev1.SecurityContext{
				Privileged: ptr.To(true), AllowPrivilegeEscalation: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true),
				RunAsUser: ptr.To[int64](5), RunAsGroup: ptr.To[int64](6), RunAsNonRoot: ptr.To(true),
				Capabilities:   &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}},
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
			}
		})},
		{"overrides merged under the typed fields", sets(
			"volumes", []any{map[string]any{"name": "a", "empty_dir": map[string]any{}}},
			"pod_spec_overrides", "hostname: agent\n"+
				"containers:\n- name: main\n  lifecycle: {preStop: {exec: {command: [/drain]}}}\n  securityContext: {seLinuxOptions: {level: s0}}\n  resources: {claims: [{name: gpu}]}\n"+
				"volumes:\n- name: extra\n  projected: {sources: [{serviceAccountToken: {path: t}}]}\n"+
				"affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: {topologyKey: zone}}]}}\n"+
				"securityContext: {sysctls: [{name: net.ipv4.ping_group_range, value: '0 1'}]}\n",
		), hardenedSpec(func(s *corev1.PodSpec) {
			s.Hostname = "agent"
			c := &s.Containers[0]
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/drain"}}}}
			c.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Level: "s0"}
			c.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
			s.Volumes = []corev1.Volume{
				{Name: "a", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "extra", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}},
			}
			s.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
				{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "zone"}}}}}
			s.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ping_group_range", Value: "0 1"}}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, diags := Expand(context.Background(), h.plan(tc.pod))
			if diags.HasError() {
				t.Fatal(diags)
			}
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("Expand:\n got %s\nwant %s", jsonOf(got), jsonOf(tc.want))
			}
		})
	}
}

// TestExpandRefusesUnknownAndNull: Expand needs a fully known plan.
func TestExpandRefusesUnknownAndNull(t *testing.T) {
	h := newHarness(t)
	for name, obj := range map[string]types.Object{
		"null":          Null(),
		"unknown":       types.ObjectUnknown(ObjectType().AttrTypes),
		"unknown image": h.object(set("containers.0.image", unknown)),
	} {
		t.Run(name, func(t *testing.T) {
			if _, diags := Expand(context.Background(), obj); !diags.HasError() {
				t.Error("Expand accepted an incomplete pod template")
			}
		})
	}
}

// TestExpandRefusesOverrideConflicts: even without validation (values
// unknown at plan time), Expand does not apply an override of a typed field.
func TestExpandRefusesOverrideConflicts(t *testing.T) {
	h := newHarness(t)
	planned := h.plan(minimalPod())
	attrs := planned.Attributes()
	attrs["pod_spec_overrides"] = types.StringValue(`{"runtimeClassName": "runc"}`)
	obj := types.ObjectValueMust(ObjectType().AttrTypes, attrs)
	if _, diags := Expand(context.Background(), obj); !diags.HasError() {
		t.Fatal("Expand applied an override of runtimeClassName")
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
