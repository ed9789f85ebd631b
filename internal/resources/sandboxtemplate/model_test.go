package sandboxtemplate

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netrules"
)

// TestNetworkPolicyRulesRoundTrip: what the template sends as
// spec.networkPolicy reads back as the same rendering, and import decodes
// it into the configured attributes.
func TestNetworkPolicyRulesRoundTrip(t *testing.T) {
	ctx := context.Background()
	ingress, _ := types.ListValueFrom(ctx, netrules.AttrTypes()["ingress"].(types.ListType).ElemType, []attr.Value{})
	cfg := types.ObjectValueMust(netrules.AttrTypes(), map[string]attr.Value{
		"ingress":               ingress,
		"allow_dns":             types.BoolValue(true),
		"allow_internet":        types.BoolValue(false),
		"allow_egress":          types.ListNull(netrules.AttrTypes()["allow_egress"].(types.ListType).ElemType),
		"block_metadata_server": types.BoolValue(true),
	})
	rendered, diags := renderedRules(ctx, cfg)
	if diags.HasError() {
		t.Fatal(diags)
	}
	r, ok := rules(ctx, cfg, &diags)
	if !ok {
		t.Fatal("rules not decoded")
	}
	in, eg, known, _ := r.Render(ctx)
	content, err := netrules.Content(in, eg)
	if err != nil || !known {
		t.Fatal(err, known)
	}
	// ingress [] is sent as [], so the provider owns "no ingress".
	if l, ok := content["ingress"].([]any); !ok || len(l) != 0 {
		t.Errorf("ingress = %#v, want []", content["ingress"])
	}
	live := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"networkPolicy": map[string]any{
		// The API server may drop the empty list.
		"egress": content["egress"],
	}}}}
	got, decoded, err := liveNetworkPolicy(ctx, live, true)
	if err != nil {
		t.Fatal(err)
	}
	if got.ValueString() != rendered.ValueString() {
		t.Errorf("live rendering\n%s\nwant\n%s", got.ValueString(), rendered.ValueString())
	}
	if !decoded.Equal(cfg) {
		t.Errorf("decoded %v, want %v", decoded, cfg)
	}
	// No networkPolicy: null, the controller's default.
	got, _, _ = liveNetworkPolicy(ctx, &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}, true)
	if !got.IsNull() {
		t.Errorf("rendered = %v, want null", got)
	}
}
