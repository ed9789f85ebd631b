package warmpool

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

func model(replicas types.Int64, external bool, strategy string) resourceModel {
	return resourceModel{
		Metadata: object.Metadata{DataSourceMetadata: object.DataSourceMetadata{
			Name: types.StringValue("pool"), Namespace: types.StringValue("agents"),
			Labels: types.MapNull(types.StringType), Annotations: types.MapNull(types.StringType),
		}},
		poolModel: poolModel{
			Template:       types.StringValue("python"),
			Replicas:       replicas,
			UpdateStrategy: types.StringValue(strategy),
		},
		ReplicasManagedExternally: types.BoolValue(external),
		WaitForReady:              types.BoolValue(true),
	}
}

func TestBuildSendsEveryManagedFieldExplicitly(t *testing.T) {
	obj, diags := build(context.Background(), model(types.Int64Value(0), false, "Recreate"))
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := map[string]any{
		"replicas":           int64(0), // zero is a value, not "unset"
		"sandboxTemplateRef": map[string]any{"name": "python"},
		"updateStrategy":     map[string]any{"type": "Recreate"},
	}
	if got := obj.Object["spec"]; !equalJSON(got, want) {
		t.Errorf("spec = %v, want %v", got, want)
	}
	if obj.GetAPIVersion() != "extensions.agents.x-k8s.io/v1beta1" || obj.GetKind() != "SandboxWarmPool" || obj.GetName() != "pool" || obj.GetNamespace() != "agents" {
		t.Errorf("identity = %v", obj.Object)
	}
}

func TestBuildDefaultsAndExternalOwner(t *testing.T) {
	// Unset (or unknown) replicas with the provider owning the count: the
	// API's default, written explicitly.
	obj, _ := build(context.Background(), model(types.Int64Null(), false, ""))
	if got, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); got != 1 {
		t.Errorf("replicas = %d, want 1", got)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "spec", "updateStrategy", "type"); got != "OnReplenish" {
		t.Errorf("strategy = %q, want OnReplenish", got)
	}
	// An autoscaler owns the count: replicas is not sent at all.
	obj, _ = build(context.Background(), model(types.Int64Value(5), true, "OnReplenish"))
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas"); found {
		t.Errorf("spec.replicas sent under an external owner: %v", obj.Object["spec"])
	}
}

func livePool(spec, status map[string]any) *unstructured.Unstructured {
	u := Kind.New()
	u.SetName("pool")
	u.SetNamespace("agents")
	u.SetGeneration(2)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{})
	u.Object["spec"] = spec
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestFlattenAppliesServerDefaults(t *testing.T) {
	// A pool written by someone else with nothing but the template: the
	// API's defaults are what the model shows, so they never diff.
	live := livePool(map[string]any{"sandboxTemplateRef": map[string]any{"name": "python"}}, nil)
	m := resourceModel{Metadata: object.Metadata{DataSourceMetadata: object.DataSourceMetadata{Labels: types.MapNull(types.StringType), Annotations: types.MapNull(types.StringType)}}}
	if diags := flatten(context.Background(), live, &m, "agentsandbox"); diags.HasError() {
		t.Fatal(diags)
	}
	if m.Replicas.ValueInt64() != 1 || m.UpdateStrategy.ValueString() != "OnReplenish" || m.ReadyReplicas.ValueInt64() != 0 {
		t.Errorf("replicas %v, strategy %v, ready %v", m.Replicas, m.UpdateStrategy, m.ReadyReplicas)
	}
	// Import: the Terraform-only attributes get their defaults.
	if !m.WaitForReady.ValueBool() || m.ReplicasManagedExternally.ValueBool() || m.ReplicasManagedExternally.IsNull() {
		t.Errorf("wait_for_ready %v, replicas_managed_externally %v", m.WaitForReady, m.ReplicasManagedExternally)
	}
	if m.Selector.ValueString() != sandboxapi.WarmPoolSelector("pool") || m.ID.ValueString() != "agents/pool" {
		t.Errorf("selector %v, id %v", m.Selector, m.ID)
	}
}

func TestFlattenKeepsTerraformOnlyAttributes(t *testing.T) {
	live := livePool(map[string]any{
		"replicas": int64(7), "sandboxTemplateRef": map[string]any{"name": "node"}, "updateStrategy": map[string]any{"type": "Recreate"},
	}, map[string]any{"replicas": int64(7), "readyReplicas": int64(6), "observedGeneration": int64(2)})
	m := model(types.Int64Value(3), true, "OnReplenish")
	m.WaitForReady = types.BoolValue(false)
	if diags := flatten(context.Background(), live, &m, "agentsandbox"); diags.HasError() {
		t.Fatal(diags)
	}
	if m.Replicas.ValueInt64() != 7 || m.Template.ValueString() != "node" || m.UpdateStrategy.ValueString() != "Recreate" || m.ReadyReplicas.ValueInt64() != 6 {
		t.Errorf("model = %+v", m)
	}
	if m.WaitForReady.ValueBool() || !m.ReplicasManagedExternally.ValueBool() {
		t.Errorf("Terraform-only attributes changed: wait %v external %v", m.WaitForReady, m.ReplicasManagedExternally)
	}
}

func TestPoolReady(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   map[string]any
		status map[string]any
		ready  bool
		reason string
	}{
		{"ready", map[string]any{"replicas": int64(5)}, map[string]any{"replicas": int64(5), "readyReplicas": int64(5), "observedGeneration": int64(2)}, true, ""},
		{"stale generation", map[string]any{"replicas": int64(5)}, map[string]any{"replicas": int64(5), "readyReplicas": int64(5), "observedGeneration": int64(1)}, false, "generation 2"},
		{"filling", map[string]any{"replicas": int64(8)}, map[string]any{"replicas": int64(8), "readyReplicas": int64(5), "observedGeneration": int64(2)}, false, "5 of 8 sandboxes ready"},
		{"shrinking", map[string]any{"replicas": int64(2)}, map[string]any{"replicas": int64(5), "readyReplicas": int64(5), "observedGeneration": int64(2)}, false, "3 more to be removed"},
		{"empty pool, status omitted", map[string]any{"replicas": int64(0)}, map[string]any{"observedGeneration": int64(2)}, true, ""},
		{"default replicas", map[string]any{}, map[string]any{"replicas": int64(1), "readyReplicas": int64(1), "observedGeneration": int64(2)}, true, ""},
		{"no status yet", map[string]any{"replicas": int64(1)}, nil, false, "no status reported yet"},
		// v0.5.0 to v0.5.5 report no observedGeneration: the counts decide
		// here (and waitReady then checks the sandboxes themselves).
		{"v0.5.5: ready, no observedGeneration", map[string]any{"replicas": int64(3)}, map[string]any{"replicas": int64(3), "readyReplicas": int64(3)}, true, ""},
		{"v0.5.5: filling, no observedGeneration", map[string]any{"replicas": int64(3)}, map[string]any{"replicas": int64(3), "readyReplicas": int64(1)}, false, "1 of 3 sandboxes ready"},
		{"v0.5.5: shrinking, no observedGeneration", map[string]any{"replicas": int64(1)}, map[string]any{"replicas": int64(3), "readyReplicas": int64(3)}, false, "2 more to be removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec["sandboxTemplateRef"] = map[string]any{"name": "python"}
			ready, reason, err := poolReady(livePool(tc.spec, tc.status))
			if err != nil || ready != tc.ready || !strings.Contains(reason, tc.reason) {
				t.Errorf("ready=%v reason=%q err=%v; want %v, %q", ready, reason, err, tc.ready, tc.reason)
			}
		})
	}
}

func TestSandboxReadyDescribesTheConditions(t *testing.T) {
	sb := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "DependenciesNotReady", "message": "Pod exists with phase: Pending"},
		map[string]any{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/4 nodes are available"},
	}}}}
	ok, why := sandboxReady(sb)
	want := "Ready=False (DependenciesNotReady): Pod exists with phase: Pending; PodScheduled=False (Unschedulable): 0/4 nodes are available"
	if ok || why != want {
		t.Errorf("got %v %q\nwant %q", ok, why, want)
	}
	if ok, why := sandboxReady(&unstructured.Unstructured{Object: map[string]any{}}); ok || why != "no Ready condition reported yet" {
		t.Errorf("got %v %q", ok, why)
	}
}

func equalJSON(a, b any) bool {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		if len(am) != len(bm) {
			return false
		}
		for k := range am {
			if !equalJSON(am[k], bm[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}
