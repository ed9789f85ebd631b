package controller

import (
	"slices"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
)

func entriesOf(t *testing.T, version string) []inventoryEntry {
	t.Helper()
	objs := bundleObjects(t, version, bundles.AssetAll)
	sortForApply(objs)
	var out []inventoryEntry
	for _, o := range objs {
		e := entryFor(o)
		e.Digest = "d-" + version
		out = append(out, e)
	}
	return out
}

func names(entries []inventoryEntry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.String())
	}
	return out
}

// TestRemovedEntries_V05ToV10 is the prune of the upgrade: the conversion
// webhook's Service, then its RoleBinding, then its Role.
func TestRemovedEntries_V05ToV10(t *testing.T) {
	got := names(removedEntries(entriesOf(t, "v0.5.6"), entriesOf(t, "v1.0.3")))
	want := []string{
		`Service "agent-sandbox-system/agent-sandbox-webhook-service"`,
		`RoleBinding.rbac.authorization.k8s.io "agent-sandbox-system/agent-sandbox-controller"`,
		`Role.rbac.authorization.k8s.io "agent-sandbox-system/agent-sandbox-controller"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("pruned:\n got %q\nwant %q", got, want)
	}
	if r := removedEntries(entriesOf(t, "v1.0.3"), entriesOf(t, "v0.5.6")); len(r) != 0 {
		t.Errorf("a downgrade adds objects and prunes none, got %v", names(r))
	}
	if r := removedEntries(nil, entriesOf(t, "v1.0.3")); len(r) != 0 {
		t.Errorf("a first install prunes nothing, got %v", names(r))
	}
}

func TestInventoryKeyIgnoresAPIVersion(t *testing.T) {
	a := inventoryEntry{APIVersion: "apps/v1beta2", Kind: "Deployment", Namespace: "n", Name: "d"}
	b := inventoryEntry{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "n", Name: "d"}
	if a.key() != b.key() {
		t.Error("the same object in two API versions must be one inventory key")
	}
	if len(removedEntries([]inventoryEntry{a}, []inventoryEntry{b})) != 0 {
		t.Error("changing an object's API version must not prune it")
	}
}

// TestMergeInventories: after a failed upgrade the state keeps every
// object either version may have left, new entries winning, in apply order.
func TestMergeInventories(t *testing.T) {
	prior, next := entriesOf(t, "v0.5.6"), entriesOf(t, "v1.0.3")
	merged := mergeInventories(prior, next[:6]) // failed after six objects
	if len(merged) != len(prior) {
		t.Fatalf("%d entries, want %d", len(merged), len(prior))
	}
	for _, e := range merged {
		inNext := slices.ContainsFunc(next[:6], func(n inventoryEntry) bool { return n.key() == e.key() })
		if want := map[bool]string{true: "d-v1.0.3", false: "d-v0.5.6"}[inNext]; e.Digest != want {
			t.Errorf("%s has digest %s, want %s", e, e.Digest, want)
		}
	}
	if merged[0].Kind != "Namespace" || merged[len(merged)-1].Kind != "Deployment" {
		t.Errorf("not in apply order: %v", names(merged))
	}
}

func TestDriftSummary(t *testing.T) {
	entries := entriesOf(t, "v1.0.3")
	entries[11].Drift = driftDeleted
	entries[5].Drift = driftChanged
	got := driftSummary(entries)
	want := []string{
		`ServiceAccount "agent-sandbox-system/agent-sandbox-controller" (changed)`,
		`Deployment.apps "agent-sandbox-system/agent-sandbox-controller" (deleted)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("driftSummary = %q, want %q", got, want)
	}
}

func TestCrossesV1(t *testing.T) {
	cases := []struct {
		prior, next string
		want        bool
	}{
		{"v0.5.6", "v1.0.3", true},
		{"", "v1.0.3", true}, // first install or import: a v0.5 install may have been there
		{"v1.0.0", "v1.0.3", false},
		{"v0.5.0", "v0.5.6", false},
		{"v1.0.3", "v0.5.6", false}, // a downgrade brings the webhook back
		{"v0.5.6", "v1.0.0-rc.1", true},
		{"v1.0.0-rc.1", "v1.0.3", false},
	}
	for _, c := range cases {
		if got := crossesV1(c.prior, c.next); got != c.want {
			t.Errorf("crossesV1(%q, %q) = %v, want %v", c.prior, c.next, got, c.want)
		}
	}
}

func TestServesConversionWebhook(t *testing.T) {
	if !servesConversionWebhook(bundleObjects(t, "v0.5.6", bundles.AssetAll)) {
		t.Error("v0.5.6 converts through a webhook")
	}
	if servesConversionWebhook(bundleObjects(t, "v1.0.3", bundles.AssetAll)) {
		t.Error("v1.0.3 has no conversion webhook")
	}
}
