package networkpolicy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Rules is the model of RuleAttributes nested in another resource's object
// attribute (agentsandbox_sandbox_template's network_policy). It goes
// through exactly the rendering and decoding this resource uses, so a
// template's rules and an agentsandbox_network_policy with the same
// attributes enforce the same traffic.
type Rules struct {
	Ingress             types.List `tfsdk:"ingress"`
	AllowDNS            types.Bool `tfsdk:"allow_dns"`
	AllowInternet       types.Bool `tfsdk:"allow_internet"`
	AllowEgress         types.List `tfsdk:"allow_egress"`
	BlockMetadataServer types.Bool `tfsdk:"block_metadata_server"`
}

// RulesAttrTypes are the attribute types of the object RuleAttributes make.
func RulesAttrTypes() map[string]attr.Type {
	return map[string]attr.Type{
		"ingress":               types.ListType{ElemType: ingressType},
		"allow_dns":             types.BoolType,
		"allow_internet":        types.BoolType,
		"allow_egress":          types.ListType{ElemType: egressType},
		"block_metadata_server": types.BoolType,
	}
}

// Render returns the ingress and egress rules r stands for, with the
// metadata-server carve-out applied; known is false while any input is
// unknown (a plan), and the rules are then meaningless.
func (r Rules) Render(ctx context.Context) (ingress []networkingv1.NetworkPolicyIngressRule, egress []networkingv1.NetworkPolicyEgressRule, known bool, diags diag.Diagnostics) {
	m := resourceModel{
		Ingress: r.Ingress, AllowDNS: r.AllowDNS, AllowInternet: r.AllowInternet,
		AllowEgress: r.AllowEgress, BlockMetadataServer: r.BlockMetadataServer,
	}
	p, known, diags := m.expand(ctx)
	if !known {
		return nil, nil, false, diags
	}
	s := p.spec()
	return s.Ingress, s.Egress, true, diags
}

// DecodeRules reads live rules back into attributes (import). Rules this
// package rendered come back as the canonical configuration; others are
// taken in when they can be expressed, and refused with the reason when
// not (e.g. egress to pods other than cluster DNS).
func DecodeRules(ctx context.Context, ingress []networkingv1.NetworkPolicyIngressRule, egress []networkingv1.NetworkPolicyEgressRule) (Rules, error) {
	p, err := decode(networkingv1.NetworkPolicySpec{
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		Ingress:     ingress,
		Egress:      egress,
	}, nil)
	if err != nil {
		return Rules{}, err
	}
	var m resourceModel
	if diags := m.setInputs(ctx, p); diags.HasError() {
		return Rules{}, fmt.Errorf("%v", diags)
	}
	return Rules{
		Ingress: m.Ingress, AllowDNS: m.AllowDNS, AllowInternet: m.AllowInternet,
		AllowEgress: m.AllowEgress, BlockMetadataServer: m.BlockMetadataServer,
	}, nil
}

// RulesContent is the canonical unstructured form of rules as a template's
// spec.networkPolicy: both lists always present, [] when empty, so that the
// provider owns the empty list and a rule added out of band is removed by
// the next apply (the same reason specContent spells them out).
func RulesContent(ingress []networkingv1.NetworkPolicyIngressRule, egress []networkingv1.NetworkPolicyEgressRule) (map[string]any, error) {
	m, err := specContent(networkingv1.NetworkPolicySpec{Ingress: ingress, Egress: egress})
	if err != nil {
		return nil, err
	}
	// A template carries only the rules: the controller supplies the pod
	// selector and the policy types.
	return map[string]any{"ingress": m["ingress"], "egress": m["egress"]}, nil
}

// RulesJSON is RulesContent as indented JSON with sorted keys: identical for
// a configuration and for the live object it produced.
func RulesJSON(ingress []networkingv1.NetworkPolicyIngressRule, egress []networkingv1.NetworkPolicyEgressRule) (string, error) {
	m, err := RulesContent(ingress, egress)
	if err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding the network policy rules: %w", err)
	}
	return string(b), nil
}

// LiveRules reads rules from their unstructured form (a template's
// spec.networkPolicy as the API server returned it), through the typed
// structs so that they are normalised exactly like rendered ones.
func LiveRules(content map[string]any) ([]networkingv1.NetworkPolicyIngressRule, []networkingv1.NetworkPolicyEgressRule, error) {
	var s networkingv1.NetworkPolicySpec
	if content == nil {
		return nil, nil, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, &s); err != nil {
		return nil, nil, fmt.Errorf("reading the network policy rules: %w", err)
	}
	return s.Ingress, s.Egress, nil
}
