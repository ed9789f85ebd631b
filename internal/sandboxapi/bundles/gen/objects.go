package main

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

// Names of the installed objects, as upstream names them.
const (
	namespaceName      = "agent-sandbox-system"
	controllerName     = "agent-sandbox-controller" // ServiceAccount, Deployment, metrics Service, core ClusterRole, Role
	coreRole           = controllerName
	extensionsRole     = "agent-sandbox-controller-extensions"
	webhookCertsSecret = "agent-sandbox-webhook-certs" // created by the controller, never shipped
	configMapName      = "agent-sandbox-config"        // optional, not shipped either

	metricsPort = 8080
	healthPort  = 8081
	webhookPod  = 9443
)

var appLabels = map[string]string{"app": controllerName}

func namespace() object {
	return toObject(&corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: namespaceName},
	})
}

func serviceAccount() object {
	return toObject(&corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: controllerName, Namespace: namespaceName, Labels: appLabels},
	})
}

// allVerbs is what the controller needs on the objects it owns outright.
var allVerbs = []string{"create", "delete", "get", "list", "patch", "update", "watch"}

// coreClusterRole is what the Sandbox controller needs: the pods, Services
// and PVCs of sandboxes, the sandboxes themselves, events, its leader
// election lease and, with the webhook, the right to patch the conversion
// caBundle into the four CRDs (and nothing else).
func coreClusterRole(r release) object {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims", "pods", "services"}, Verbs: allVerbs},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{agentsv1beta1.Group}, Resources: []string{"sandboxes"}, Verbs: allVerbs},
		{APIGroups: []string{agentsv1beta1.Group}, Resources: []string{"sandboxes/finalizers", "sandboxes/status"}, Verbs: []string{"get", "patch", "update"}},
	}
	if r.webhook {
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"},
			ResourceNames: sandboxapi.CRDNames(), Verbs: []string{"get", "patch", "update"},
		})
	}
	rules = append(rules, rbacv1.PolicyRule{
		APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
		Verbs: []string{"create", "get", "list", "patch", "update", "watch"},
	})
	return clusterRole(coreRole, rules)
}

// extensionsClusterRole is what the template, warm pool and claim
// controllers need: their own kinds, the sandboxes they create, the pods they
// label on adoption, the templates' NetworkPolicies, events and leases.
func extensionsClusterRole() object {
	return clusterRole(extensionsRole, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "patch", "update", "watch"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		{APIGroups: []string{agentsv1beta1.Group}, Resources: []string{"sandboxes"}, Verbs: allVerbs},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: allVerbs},
		{APIGroups: []string{extv1beta1.Group}, Resources: []string{"sandboxclaims", "sandboxtemplates", "sandboxwarmpools"}, Verbs: allVerbs},
		{
			APIGroups: []string{extv1beta1.Group},
			Resources: []string{
				"sandboxclaims/finalizers", "sandboxclaims/status",
				"sandboxtemplates/finalizers",
				"sandboxwarmpools/finalizers", "sandboxwarmpools/status",
			},
			Verbs: []string{"get", "patch", "update"},
		},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: allVerbs},
	})
}

func clusterRole(name string, rules []rbacv1.PolicyRule) object {
	return toObject(&rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules:      rules,
	})
}

func clusterRoleBinding(role string) object {
	return toObject(&rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: controllerName, Namespace: namespaceName}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
	})
}

// certSecretRole lets the v0.5.x controller create its webhook certificate
// Secret and then read and update only that one Secret.
func certSecretRole() object {
	return toObject(&rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: controllerName, Namespace: namespaceName},
		Rules: []rbacv1.PolicyRule{
			// create cannot be limited by resourceNames.
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{webhookCertsSecret}, Verbs: []string{"get", "patch", "update"}},
		},
	})
}

func certSecretRoleBinding() object {
	return toObject(&rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: controllerName, Namespace: namespaceName},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: controllerName, Namespace: namespaceName}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: controllerName},
	})
}

func metricsService() object {
	return toObject(&corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: controllerName, Namespace: namespaceName, Labels: appLabels},
		Spec: corev1.ServiceSpec{
			Selector: appLabels,
			Ports: []corev1.ServicePort{{
				Name: "metrics", Port: metricsPort, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP,
			}},
		},
	})
}

// webhookService fronts the conversion webhook the API server calls (v0.5.x).
func webhookService() object {
	return toObject(&corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: webhookServiceName, Namespace: namespaceName},
		Spec: corev1.ServiceSpec{
			Selector: appLabels,
			Ports: []corev1.ServicePort{{
				Name: "webhook", Port: webhookPort, TargetPort: intstr.FromInt32(webhookPod), Protocol: corev1.ProtocolTCP,
			}},
		},
	})
}

// deployment is the controller. With extensions it runs the template, pool
// and claim controllers too and mounts the optional agent-sandbox-config
// ConfigMap (allowed label domains), as upstream's extensions variant does
// in every v0.5.x release (k8s/extensions.controller.yaml:33-41 at v0.5.0,
// :36-44 at v0.5.2..v0.5.6; upstream's core-only k8s/controller.yaml mounts
// nothing). v1.0's source is not available: its bundle follows v0.5.6 and
// upstream main, which still mount it.
//
// Unlike upstream's manifest it is hardened: non-root, no privilege
// escalation, all capabilities dropped, RuntimeDefault seccomp, a read-only
// root filesystem (with an emptyDir on /tmp, where the v0.5.x controller
// writes its webhook serving certificate), health probes and resources.
func deployment(r release, extensions bool) object {
	args := []string{"--leader-elect=true"}
	if extensions {
		args = append(args, "--extensions")
	}
	ports := []corev1.ContainerPort{
		{Name: "metrics", ContainerPort: metricsPort, Protocol: corev1.ProtocolTCP},
		{Name: "healthz", ContainerPort: healthPort, Protocol: corev1.ProtocolTCP},
	}
	if r.webhook {
		ports = append(ports, corev1.ContainerPort{Name: "webhook", ContainerPort: webhookPod, Protocol: corev1.ProtocolTCP})
	}
	mounts := []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}
	volumes := []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if extensions {
		mounts = append(mounts, corev1.VolumeMount{Name: "config-volume", MountPath: "/etc/sandbox-config", ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: "config-volume", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: configMapName},
				Optional:             ptr.To(true),
			},
		}})
	}
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromString("healthz"),
			}},
			InitialDelaySeconds: 5,
			PeriodSeconds:       period,
		}
	}
	return toObject(&appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: controllerName, Namespace: namespaceName, Labels: appLabels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: appLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: appLabels},
				Spec: corev1.PodSpec{
					ServiceAccountName: controllerName,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:           controllerName,
						Image:          r.image(),
						Args:           args,
						Ports:          ports,
						LivenessProbe:  probe("/healthz", 20),
						ReadinessProbe: probe("/readyz", 10),
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("100m"),
								corev1.ResourceMemory: resource.MustParse("128Mi"),
							},
							Limits: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("1"),
								corev1.ResourceMemory: resource.MustParse("512Mi"),
							},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							RunAsNonRoot:             ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: mounts,
					}},
					Volumes: volumes,
				},
			},
		},
	})
}
