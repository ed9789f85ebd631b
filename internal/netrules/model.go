package netrules

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/labelselector"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// Rules is the model of Attributes: the top level of
// agentsandbox_network_policy (embedded in its model) and the object of
// agentsandbox_sandbox_template's network_policy. Both go through exactly
// this expansion and rendering, so a template's rules and an
// agentsandbox_network_policy with the same attributes enforce the same
// traffic.
type Rules struct {
	Ingress             types.List `tfsdk:"ingress"`
	AllowDNS            types.Bool `tfsdk:"allow_dns"`
	AllowInternet       types.Bool `tfsdk:"allow_internet"`
	AllowEgress         types.List `tfsdk:"allow_egress"`
	BlockMetadataServer types.Bool `tfsdk:"block_metadata_server"`
}

// AttrTypes are the attribute types of the object Attributes make,
// derived from them (once).
func AttrTypes() map[string]attr.Type { return rulesType().AttrTypes }

var rulesType = sync.OnceValue(func() types.ObjectType { return tfvalues.ObjectType(Attributes()) })

// Nested object models. Containers stay framework values (types.List,
// types.Object) because any of them may be null or unknown in a plan.
type ingressModel struct {
	NamespaceSelector types.Object `tfsdk:"namespace_selector"`
	PodSelector       types.Object `tfsdk:"pod_selector"`
	IPBlock           types.Object `tfsdk:"ip_block"`
	Ports             types.List   `tfsdk:"ports"`
}

type ipBlockModel struct {
	CIDR   types.String `tfsdk:"cidr"`
	Except types.List   `tfsdk:"except"`
}

type egressModel struct {
	CIDR              types.String `tfsdk:"cidr"`
	Except            types.List   `tfsdk:"except"`
	NamespaceSelector types.Object `tfsdk:"namespace_selector"`
	PodSelector       types.Object `tfsdk:"pod_selector"`
	Ports             types.List   `tfsdk:"ports"`
}

type portModel struct {
	Port     types.String `tfsdk:"port"`
	EndPort  types.Int64  `tfsdk:"end_port"`
	Protocol types.String `tfsdk:"protocol"`
}

// Attribute types of the nested objects, derived from the attributes
// that declare them in schema.go (not from Attributes, whose ingress
// default is built with these types).
var (
	portType    = tfvalues.ElementType(portsAttribute(""))
	ipBlockType = tfvalues.ElementType(ipBlockAttribute(""))
	ingressType = tfvalues.ObjectType(ingressObject().Attributes)
	egressType  = tfvalues.ObjectType(egressObject().Attributes)
)

// expander turns framework values into an Intent. Instead of failing on an
// unknown value it notes it: a plan whose inputs are not all known yet
// cannot be rendered, and its `rendered` is unknown.
type expander struct {
	ctx     context.Context
	diags   diag.Diagnostics
	unknown bool
}

// Intent returns what r asks for; known is false while any input is
// unknown (a plan), and the intent is then meaningless.
func (r Rules) Intent(ctx context.Context) (i Intent, known bool, diags diag.Diagnostics) {
	e := &expander{ctx: ctx}
	i = Intent{
		AllowDNS:            e.boolean(r.AllowDNS, false),
		AllowInternet:       e.boolean(r.AllowInternet, false),
		BlockMetadataServer: e.boolean(r.BlockMetadataServer, true),
	}
	var ingress []ingressModel
	if e.list(r.Ingress, &ingress) {
		i.Ingress = make([]IngressRule, 0, len(ingress))
		for _, in := range ingress {
			rule := IngressRule{
				NamespaceSelector: e.selector(in.NamespaceSelector),
				PodSelector:       e.selector(in.PodSelector),
				Ports:             e.ports(in.Ports),
			}
			var b ipBlockModel
			if e.object(in.IPBlock, &b) {
				rule.IPBlock = &IPBlock{CIDR: e.str(b.CIDR), Except: e.strings(b.Except)}
			}
			i.Ingress = append(i.Ingress, rule)
		}
	}
	var egress []egressModel
	if e.list(r.AllowEgress, &egress) {
		i.AllowEgress = make([]EgressRule, 0, len(egress))
		for _, eg := range egress {
			i.AllowEgress = append(i.AllowEgress, EgressRule{
				CIDR: e.str(eg.CIDR), Except: e.strings(eg.Except),
				NamespaceSelector: e.selector(eg.NamespaceSelector), PodSelector: e.selector(eg.PodSelector),
				Ports: e.ports(eg.Ports),
			})
		}
	}
	return i, !e.unknown && !e.diags.HasError(), e.diags
}

// Render returns the ingress and egress rules r stands for (Intent, then
// Intent.Render); known is false while any input is unknown.
func (r Rules) Render(ctx context.Context) (ingress []networkingv1.NetworkPolicyIngressRule, egress []networkingv1.NetworkPolicyEgressRule, known bool, diags diag.Diagnostics) {
	i, known, diags := r.Intent(ctx)
	if !known {
		return nil, nil, false, diags
	}
	ingress, egress = i.Render()
	return ingress, egress, true, diags
}

// ExpandSelector reads a labelselector.Attribute value: nil when null; known is
// false while any part of it is unknown.
func ExpandSelector(ctx context.Context, v types.Object) (s *Selector, known bool, diags diag.Diagnostics) {
	e := &expander{ctx: ctx}
	s = e.selector(v)
	return s, !e.unknown && !e.diags.HasError(), e.diags
}

func (e *expander) str(v types.String) string {
	if v.IsUnknown() {
		e.unknown = true
	}
	return v.ValueString()
}

func (e *expander) boolean(v types.Bool, def bool) bool {
	switch {
	case v.IsUnknown():
		e.unknown = true
		return def
	case v.IsNull():
		return def
	}
	return v.ValueBool()
}

// list reads a known, non-null list into target and reports whether it did.
func (e *expander) list(v types.List, target any) bool {
	if v.IsUnknown() {
		e.unknown = true
		return false
	}
	if v.IsNull() {
		return false
	}
	e.diags.Append(v.ElementsAs(e.ctx, target, false)...)
	return !e.diags.HasError()
}

func (e *expander) object(v types.Object, target any) bool {
	if v.IsUnknown() {
		e.unknown = true
		return false
	}
	if v.IsNull() {
		return false
	}
	e.diags.Append(v.As(e.ctx, target, basetypes.ObjectAsOptions{})...)
	return !e.diags.HasError()
}

func (e *expander) strings(v types.List) []string {
	var elems []types.String
	if !e.list(v, &elems) {
		return nil
	}
	out := make([]string, 0, len(elems))
	for _, s := range elems {
		out = append(out, e.str(s))
	}
	return out
}

func (e *expander) selector(v types.Object) *Selector {
	var m labelselector.Model
	if !e.object(v, &m) {
		return nil
	}
	out := &Selector{}
	if m.MatchLabels.IsUnknown() {
		e.unknown = true
	} else if !m.MatchLabels.IsNull() {
		labels := map[string]types.String{}
		e.diags.Append(m.MatchLabels.ElementsAs(e.ctx, &labels, false)...)
		out.MatchLabels = map[string]string{}
		for k, v := range labels {
			out.MatchLabels[k] = e.str(v)
		}
	}
	var reqs []labelselector.RequirementModel
	if e.list(m.MatchExpressions, &reqs) {
		out.MatchExpressions = make([]Requirement, 0, len(reqs))
		for _, r := range reqs {
			out.MatchExpressions = append(out.MatchExpressions, Requirement{
				Key: e.str(r.Key), Operator: e.str(r.Operator), Values: e.strings(r.Values),
			})
		}
	}
	return out
}

func (e *expander) ports(v types.List) []Port {
	var ports []portModel
	if !e.list(v, &ports) {
		return nil
	}
	out := make([]Port, 0, len(ports))
	for _, pm := range ports {
		p := Port{Port: e.str(pm.Port), Protocol: e.str(pm.Protocol)}
		if pm.EndPort.IsUnknown() {
			e.unknown = true
		} else if !pm.EndPort.IsNull() {
			end := int32(pm.EndPort.ValueInt64()) // the schema bounds it to 1-65535
			p.EndPort = &end
		}
		out = append(out, p)
	}
	return out
}

// Flatten is the Rules value of i (import: decoded live rules).
func Flatten(ctx context.Context, i Intent) (Rules, diag.Diagnostics) {
	var diags diag.Diagnostics
	r := Rules{
		AllowDNS:            types.BoolValue(i.AllowDNS),
		AllowInternet:       types.BoolValue(i.AllowInternet),
		BlockMetadataServer: types.BoolValue(i.BlockMetadataServer),
	}

	ingress := make([]attr.Value, 0, len(i.Ingress))
	for _, in := range i.Ingress {
		block := types.ObjectNull(ipBlockType.AttrTypes)
		if in.IPBlock != nil {
			block = tfvalues.Object(ctx, ipBlockType, ipBlockModel{CIDR: types.StringValue(in.IPBlock.CIDR), Except: tfvalues.Strings(ctx, in.IPBlock.Except, &diags)}, &diags)
		}
		ingress = append(ingress, tfvalues.Object(ctx, ingressType, ingressModel{
			NamespaceSelector: flattenSelector(ctx, in.NamespaceSelector, &diags),
			PodSelector:       flattenSelector(ctx, in.PodSelector, &diags),
			IPBlock:           block,
			Ports:             flattenPorts(ctx, in.Ports, &diags),
		}, &diags))
	}
	r.Ingress = listValue(ingressType, ingress, i.Ingress == nil, &diags)

	egress := make([]attr.Value, 0, len(i.AllowEgress))
	for _, e := range i.AllowEgress {
		cidr := types.StringNull()
		if e.CIDR != "" {
			cidr = types.StringValue(e.CIDR)
		}
		egress = append(egress, tfvalues.Object(ctx, egressType, egressModel{
			CIDR: cidr, Except: tfvalues.Strings(ctx, e.Except, &diags),
			NamespaceSelector: flattenSelector(ctx, e.NamespaceSelector, &diags),
			PodSelector:       flattenSelector(ctx, e.PodSelector, &diags),
			Ports:             flattenPorts(ctx, e.Ports, &diags),
		}, &diags))
	}
	r.AllowEgress = listValue(egressType, egress, i.AllowEgress == nil, &diags)
	return r, diags
}

// FlattenSelector is the labelselector.Attribute value of s (null for nil).
func FlattenSelector(ctx context.Context, s *Selector) (types.Object, diag.Diagnostics) {
	var diags diag.Diagnostics
	o := flattenSelector(ctx, s, &diags)
	return o, diags
}

func flattenSelector(ctx context.Context, s *Selector, diags *diag.Diagnostics) types.Object {
	if s == nil {
		return types.ObjectNull(labelselector.Type.AttrTypes)
	}
	labels := types.MapNull(types.StringType)
	if s.MatchLabels != nil {
		var d diag.Diagnostics
		labels, d = types.MapValueFrom(ctx, types.StringType, s.MatchLabels)
		diags.Append(d...)
	}
	reqs := make([]attr.Value, 0, len(s.MatchExpressions))
	for _, r := range s.MatchExpressions {
		reqs = append(reqs, tfvalues.Object(ctx, labelselector.RequirementType, labelselector.RequirementModel{
			Key: types.StringValue(r.Key), Operator: types.StringValue(r.Operator), Values: tfvalues.Strings(ctx, r.Values, diags),
		}, diags))
	}
	return tfvalues.Object(ctx, labelselector.Type, labelselector.Model{
		MatchLabels:      labels,
		MatchExpressions: listValue(labelselector.RequirementType, reqs, s.MatchExpressions == nil, diags),
	}, diags)
}

func flattenPorts(ctx context.Context, ports []Port, diags *diag.Diagnostics) types.List {
	elems := make([]attr.Value, 0, len(ports))
	for _, p := range ports {
		pm := portModel{Port: types.StringNull(), EndPort: types.Int64Null(), Protocol: types.StringValue(p.Protocol)}
		if p.Port != "" {
			pm.Port = types.StringValue(p.Port)
		}
		if p.EndPort != nil {
			pm.EndPort = types.Int64Value(int64(*p.EndPort))
		}
		elems = append(elems, tfvalues.Object(ctx, portType, pm, diags))
	}
	return listValue(portType, elems, ports == nil, diags)
}

func listValue(elem attr.Type, elems []attr.Value, null bool, diags *diag.Diagnostics) types.List {
	if null {
		return types.ListNull(elem)
	}
	l, d := types.ListValue(elem, elems)
	diags.Append(d...)
	return l
}
