package controller

import (
	"slices"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
)

// TestSortForApply_Release orders a real bundle: the namespace and CRDs
// first, RBAC next, workloads last.
func TestSortForApply_Release(t *testing.T) {
	objs := bundleObjects(t, "v0.5.6", bundles.AssetAll)
	slices.Reverse(objs) // the input order must not matter
	sortForApply(objs)
	want := []string{
		`Namespace "agent-sandbox-system"`,
		`CustomResourceDefinition.apiextensions.k8s.io "sandboxclaims.extensions.agents.x-k8s.io"`,
		`CustomResourceDefinition.apiextensions.k8s.io "sandboxes.agents.x-k8s.io"`,
		`CustomResourceDefinition.apiextensions.k8s.io "sandboxtemplates.extensions.agents.x-k8s.io"`,
		`CustomResourceDefinition.apiextensions.k8s.io "sandboxwarmpools.extensions.agents.x-k8s.io"`,
		`ServiceAccount "agent-sandbox-system/agent-sandbox-controller"`,
		`ClusterRole.rbac.authorization.k8s.io "agent-sandbox-controller"`,
		`ClusterRole.rbac.authorization.k8s.io "agent-sandbox-controller-extensions"`,
		`ClusterRoleBinding.rbac.authorization.k8s.io "agent-sandbox-controller"`,
		`ClusterRoleBinding.rbac.authorization.k8s.io "agent-sandbox-controller-extensions"`,
		`Role.rbac.authorization.k8s.io "agent-sandbox-system/agent-sandbox-controller"`,
		`RoleBinding.rbac.authorization.k8s.io "agent-sandbox-system/agent-sandbox-controller"`,
		`Service "agent-sandbox-system/agent-sandbox-controller"`,
		`Service "agent-sandbox-system/agent-sandbox-webhook-service"`,
		`Deployment.apps "agent-sandbox-system/agent-sandbox-controller"`,
	}
	if got := keysOf(objs); !slices.Equal(got, want) {
		t.Errorf("apply order:\n got %q\nwant %q", got, want)
	}
}

func TestStageOf(t *testing.T) {
	cases := []struct {
		group, kind string
		want        stage
	}{
		{"", "Namespace", stageDefinitions},
		{"apiextensions.k8s.io", "CustomResourceDefinition", stageDefinitions},
		{"rbac.authorization.k8s.io", "ClusterRole", stageConfig},
		{"", "Secret", stageConfig},
		{"", "Service", stageWorkloads},
		{"apps", "Deployment", stageWorkloads},
		{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", stageWorkloads},
		{"agents.x-k8s.io", "SandboxTemplate", stageWorkloads}, // custom resources come last
		{"example.com", "Deployment", stageWorkloads},          // a Deployment of another group is unknown
	}
	for _, c := range cases {
		if got := stageOf(c.group, c.kind); got != c.want {
			t.Errorf("stageOf(%s, %s) = %s, want %s", c.group, c.kind, got, c.want)
		}
	}
	if rank("agents.x-k8s.io", "Sandbox") <= rank("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") {
		t.Error("custom resources must rank after every known kind")
	}
}

func TestSortForDelete_ReversesApplyOrder(t *testing.T) {
	objs := bundleObjects(t, "v1.0.3", bundles.AssetAll)
	sortForApply(objs)
	var entries []inventoryEntry
	for _, o := range objs {
		entries = append(entries, entryFor(o))
	}
	del := slices.Clone(entries)
	sortForDelete(del)
	slices.Reverse(del)
	if !slices.Equal(del, entries) {
		t.Errorf("delete order is not the reverse of apply order:\n%v\n%v", del, entries)
	}
}
