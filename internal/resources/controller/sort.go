package controller

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// stage is one step of a staged apply. Every object of a stage is applied
// (and, where it matters, awaited) before the next stage starts, so that
// nothing is created before what it depends on: custom resources need
// their CRD established, everything namespaced needs its namespace, a
// Deployment needs its service account and RBAC or its first pods fail.
type stage int

const (
	stageDefinitions stage = iota // Namespaces and CRDs; waited for
	stageConfig                   // RBAC, service accounts, config, policies
	stageWorkloads                // Services, workloads, webhooks, custom resources
)

func (s stage) String() string {
	switch s {
	case stageDefinitions:
		return "namespaces and CRDs"
	case stageConfig:
		return "RBAC and configuration"
	default:
		return "workloads"
	}
}

// kindOrder fixes the order of kinds within the whole apply (and, reversed,
// of deletions). Kinds not listed are custom resources or rarities; they go
// last, after the controller that serves them.
var kindOrder = []struct {
	groupKind string
	stage     stage
}{
	{"Namespace", stageDefinitions},
	{"CustomResourceDefinition.apiextensions.k8s.io", stageDefinitions},

	{"ResourceQuota", stageConfig},
	{"LimitRange", stageConfig},
	{"PriorityClass.scheduling.k8s.io", stageConfig},
	{"RuntimeClass.node.k8s.io", stageConfig},
	{"StorageClass.storage.k8s.io", stageConfig},
	{"NetworkPolicy.networking.k8s.io", stageConfig},
	{"ServiceAccount", stageConfig},
	{"Secret", stageConfig},
	{"ConfigMap", stageConfig},
	{"ClusterRole.rbac.authorization.k8s.io", stageConfig},
	{"ClusterRoleBinding.rbac.authorization.k8s.io", stageConfig},
	{"Role.rbac.authorization.k8s.io", stageConfig},
	{"RoleBinding.rbac.authorization.k8s.io", stageConfig},

	{"Service", stageWorkloads},
	{"PersistentVolumeClaim", stageWorkloads},
	{"Deployment.apps", stageWorkloads},
	{"StatefulSet.apps", stageWorkloads},
	{"DaemonSet.apps", stageWorkloads},
	{"Job.batch", stageWorkloads},
	{"CronJob.batch", stageWorkloads},
	{"Pod", stageWorkloads},
	{"PodDisruptionBudget.policy", stageWorkloads},
	{"HorizontalPodAutoscaler.autoscaling", stageWorkloads},
	{"Ingress.networking.k8s.io", stageWorkloads},
	{"APIService.apiregistration.k8s.io", stageWorkloads},
	{"MutatingWebhookConfiguration.admissionregistration.k8s.io", stageWorkloads},
	{"ValidatingWebhookConfiguration.admissionregistration.k8s.io", stageWorkloads},
}

var kindRank = func() map[string]int {
	m := make(map[string]int, len(kindOrder))
	for i, k := range kindOrder {
		m[k.groupKind] = i
	}
	return m
}()

func groupKindOf(group, kind string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}

// rank orders kinds; unknown kinds rank after every known one.
func rank(group, kind string) int {
	if r, ok := kindRank[groupKindOf(group, kind)]; ok {
		return r
	}
	return len(kindOrder)
}

// stageOf says in which stage an object of group/kind is applied.
func stageOf(group, kind string) stage {
	if r, ok := kindRank[groupKindOf(group, kind)]; ok {
		return kindOrder[r].stage
	}
	return stageWorkloads
}

// compareKeys orders objects for applying: by kind rank, then by kind name
// (for unknown kinds), namespace and name. Deleting uses the reverse.
func compareKeys(a, b objectKey) int {
	return cmp.Or(
		cmp.Compare(rank(a.Group, a.Kind), rank(b.Group, b.Kind)),
		cmp.Compare(groupKindOf(a.Group, a.Kind), groupKindOf(b.Group, b.Kind)),
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Name, b.Name),
	)
}

// sortForApply orders objects in place for a staged apply.
func sortForApply(objs []object) {
	slices.SortStableFunc(objs, func(a, b object) int {
		return compareKeys(keyOf(a.Unstructured), keyOf(b.Unstructured))
	})
}

// sortForApplyEntries orders inventory entries for applying.
func sortForApplyEntries(entries []inventoryEntry) {
	slices.SortStableFunc(entries, func(a, b inventoryEntry) int { return compareKeys(a.key(), b.key()) })
}

// sortForDelete orders inventory entries for deletion: the reverse of the
// apply order, so workloads stop before their RBAC goes and namespaces and
// CRDs go last.
func sortForDelete(entries []inventoryEntry) {
	slices.SortStableFunc(entries, func(a, b inventoryEntry) int {
		return -compareKeys(a.key(), b.key())
	})
}

func isCRD(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}
