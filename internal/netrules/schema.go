package netrules

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/labelselector"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// Attributes returns the attributes that say who may connect to the
// selected pods and what they may reach: ingress, allow_dns,
// allow_internet, allow_egress and block_metadata_server.
// agentsandbox_network_policy uses them at the top level;
// agentsandbox_sandbox_template nests them in its network_policy, so the
// two spell isolation the same way and render it through the same code
// (see Rules).
func Attributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"ingress": schema.ListNestedAttribute{
			Optional: true,
			Computed: true,
			MarkdownDescription: fmt.Sprintf("Who may connect to the selected pods; each entry admits one kind of source "+
				"on its `ports`, and traffic matching any entry is allowed. Defaults to the sandbox router only: pods labelled "+
				"`app=sandbox-router` in namespace `%s` (as upstream's managed policy), on TCP port %s (the router's default "+
				"`X-Sandbox-Port`). `[]` denies all ingress.", routerNamespace, routerPort),
			Default:      listdefault.StaticValue(defaultIngress()),
			NestedObject: ingressObject(),
			Validators:   []validator.List{repeatedRules{what: "ingress"}},
		},
		"allow_dns": schema.BoolAttribute{
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
			MarkdownDescription: fmt.Sprintf("Allow cluster DNS on port %s over UDP and TCP: the kube-dns/CoreDNS pods "+
				"(`k8s-app=kube-dns` in `%s`) and NodeLocal DNSCache at `%s`. Defaults to `false`: with egress denied, "+
				"names do not resolve unless the pod uses resolvers it can reach (upstream's managed policy blocks cluster "+
				"DNS on purpose, so that code cannot enumerate internal services).",
				dnsPort, dnsNamespace, dnsNodeLocalIP),
		},
		"allow_internet": schema.BoolAttribute{
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
			MarkdownDescription: fmt.Sprintf("Allow egress to the public internet on every port: `%s` except `%s`, and `%s` "+
				"except `%s` (upstream's managed default: private, link-local and IPv6 unique-local ranges stay blocked). "+
				"Defaults to `false`.", internetV4.CIDR, strings.Join(internetV4.Except, "`, `"), internetV6.CIDR,
				strings.Join(internetV6.Except, "`, `")),
		},
		"allow_egress": schema.ListNestedAttribute{
			Optional: true,
			MarkdownDescription: "Further destinations the selected pods may reach: per entry either one IP range " +
				"(`cidr`, `except`) or the pods chosen by `namespace_selector` and/or `pod_selector` (for example a proxy " +
				"or a model server inside the cluster). Egress not allowed by `allow_dns`, `allow_internet` or an entry " +
				"here is denied.",
			NestedObject: egressObject(),
			Validators:   []validator.List{repeatedRules{what: "allow_egress"}},
		},
		"block_metadata_server": schema.BoolAttribute{
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(true),
			MarkdownDescription: fmt.Sprintf("Keep the cloud metadata server (`%s`, `%s`) unreachable: it is added to the "+
				"`except` list of every allowed range that contains it, and an `allow_egress` entry for exactly that "+
				"address is refused. Set to `false` only to let sandboxes fetch credentials from it (e.g. Workload "+
				"Identity), together with an explicit `allow_egress` entry. Defaults to `true`.",
				metadataServers[0], metadataServers[1]),
		},
	}
}

func ingressObject() schema.NestedAttributeObject {
	ns := labelselector.Attribute("Namespaces the source pods may be in (`{}`: any namespace). With `pod_selector`, "+
		"both must match; alone, every pod of the matching namespaces is admitted.", "namespace")
	pods := labelselector.Attribute("Source pods (in this policy's namespace unless `namespace_selector` is set).", "pod")
	block := ipBlockAttribute("Source IP range, for traffic from outside the cluster. Cannot be combined with the selectors.")
	// Kubernetes allows an ipBlock peer only on its own.
	block.Validators = append(block.Validators, objectvalidator.ConflictsWith(
		path.MatchRelative().AtParent().AtName("namespace_selector"),
		path.MatchRelative().AtParent().AtName("pod_selector"),
	))
	return schema.NestedAttributeObject{
		Attributes: map[string]schema.Attribute{
			"namespace_selector": ns,
			"pod_selector":       pods,
			"ip_block":           block,
			"ports":              portsAttribute("Destination ports on the selected pods. Unset: every port."),
		},
	}
}

func ipBlockAttribute(description string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		Attributes: map[string]schema.Attribute{
			"cidr":   cidrAttribute(),
			"except": exceptAttribute(),
		},
		Validators: []validator.Object{exceptValidator},
	}
}

// egressObject is one allow_egress entry: an IP range (cidr, except) or
// pods chosen by label (namespace_selector, pod_selector), as a
// NetworkPolicyPeer is one or the other.
func egressObject() schema.NestedAttributeObject {
	selectors := []path.Expression{
		path.MatchRelative().AtParent().AtName("namespace_selector"),
		path.MatchRelative().AtParent().AtName("pod_selector"),
	}
	cidr := cidrAttribute()
	cidr.Required, cidr.Optional = false, true
	cidr.MarkdownDescription = "Destination IPv4 or IPv6 range in canonical form, e.g. `10.0.0.0/8` or " +
		"`2001:db8::/32`. Either `cidr` or the selectors."
	cidr.Validators = append(cidr.Validators, stringvalidator.ConflictsWith(selectors...))
	except := exceptAttribute()
	except.Validators = append(except.Validators, listvalidator.AlsoRequires(path.MatchRelative().AtParent().AtName("cidr")))
	return schema.NestedAttributeObject{
		Attributes: map[string]schema.Attribute{
			"cidr":   cidr,
			"except": except,
			"namespace_selector": labelselector.Attribute("Destination namespaces (`{}`: every namespace). With "+
				"`pod_selector`, both must match; alone, every pod of the matching namespaces may be reached.", "namespace"),
			"pod_selector": labelselector.Attribute("Destination pods, in the selected pods' own namespace unless "+
				"`namespace_selector` is set.", "pod"),
			"ports": portsAttribute("Destination ports. Unset: every port."),
		},
		Validators: []validator.Object{exceptValidator, metadataValidator, destinationValidator},
	}
}

func cidrAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Required:            true,
		MarkdownDescription: "IPv4 or IPv6 range in canonical form, e.g. `10.0.0.0/8` or `2001:db8::/32`.",
		Validators:          []validator.String{validators.CIDR()},
	}
}

func exceptAttribute() schema.ListAttribute {
	return schema.ListAttribute{
		Optional:            true,
		ElementType:         types.StringType,
		MarkdownDescription: "Ranges inside `cidr` to leave out, each strictly smaller than `cidr`.",
		Validators:          []validator.List{listvalidator.ValueStringsAre(validators.CIDR())},
	}
}

func portsAttribute(description string) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"port": schema.StringAttribute{
					Optional: true,
					MarkdownDescription: "Port number (1-65535) or a named container port (IANA service name such as " +
						"`http`). Unset: every port of `protocol`.",
					Validators: []validator.String{validators.Port()},
				},
				"end_port": schema.Int64Attribute{
					Optional:            true,
					MarkdownDescription: "Last port of a range starting at `port`, which must then be a number.",
					Validators:          []validator.Int64{int64validator.Between(1, 65535)},
				},
				"protocol": schema.StringAttribute{
					Optional:            true,
					Computed:            true,
					Default:             stringdefault.StaticString(defaultProtocol),
					MarkdownDescription: "`TCP`, `UDP` or `SCTP`. Defaults to `TCP`.",
					Validators:          []validator.String{validators.Protocol()},
				},
			},
			Validators: []validator.Object{portRangeValidator},
		},
	}
}

// DefaultIngress is what `ingress` admits when it is not set: the sandbox
// router, on its default port.
func DefaultIngress() []IngressRule {
	return []IngressRule{{
		NamespaceSelector: &Selector{MatchLabels: map[string]string{namespaceNameLabel: routerNamespace}},
		PodSelector:       &Selector{MatchLabels: copyMap(routerLabels)},
		Ports:             []Port{{Port: routerPort, Protocol: defaultProtocol}},
	}}
}

// defaultIngress is the value of `ingress` when it is not set.
func defaultIngress() types.List {
	r, diags := Flatten(context.Background(), Intent{Ingress: DefaultIngress()})
	if diags.HasError() {
		// Built from constants; a failure is a programming error caught by
		// every test that loads the schema.
		panic(fmt.Sprintf("default ingress: %v", diags))
	}
	return r.Ingress
}

// Object validators for the rules that involve more than one attribute.
// Each reports at the attribute to fix and skips values not known yet.

// objectRule is an object validator: its description, and its check of the
// object's attributes, run only when the object is known.
type objectRule struct {
	description string
	check       func(ctx context.Context, req validator.ObjectRequest, attrs map[string]attr.Value, resp *validator.ObjectResponse)
}

func (r objectRule) Description(context.Context) string { return r.description }

func (r objectRule) MarkdownDescription(context.Context) string { return r.description }

func (r objectRule) ValidateObject(ctx context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if attrs, ok := knownAttrs(req.ConfigValue); ok {
		r.check(ctx, req, attrs, resp)
	}
}

// exceptValidator: every except range is strictly inside cidr, as the API
// server requires (and as "except" means).
var exceptValidator = objectRule{"every except range must lie strictly inside cidr", exceptCheck}

func exceptCheck(ctx context.Context, req validator.ObjectRequest, attrs map[string]attr.Value, resp *validator.ObjectResponse) {
	cidrStr, ok := tfvalues.StringIfSet(attrs["cidr"])
	if !ok {
		return
	}
	cidr, err := validators.ParseCIDR(cidrStr)
	if err != nil {
		return // reported by the cidr attribute
	}
	except, ok := attrs["except"].(types.List)
	if !ok || except.IsNull() || except.IsUnknown() {
		return
	}
	for i, el := range except.Elements() {
		s, ok := tfvalues.StringIfSet(el)
		if !ok {
			continue
		}
		e, err := validators.ParseCIDR(s)
		if err != nil {
			continue
		}
		if e.Addr().Is4() != cidr.Addr().Is4() || e.Bits() <= cidr.Bits() || !cidr.Contains(e.Addr()) {
			resp.Diagnostics.AddAttributeError(req.Path.AtName("except").AtListIndex(i), "Except range outside cidr",
				fmt.Sprintf("%s is not strictly inside %s: an except range must be a smaller part of cidr (Kubernetes "+
					"refuses anything else). Remove it, or widen cidr.", s, cidrStr))
		}
	}
}

// metadataValidator refuses an allow_egress entry whose whole range is a
// metadata server while block_metadata_server is on: there is nothing to
// carve out of it, so honouring it would open exactly what blocking closes.
var metadataValidator = objectRule{"cidr may not be the metadata server while block_metadata_server is true", metadataCheck}

func metadataCheck(ctx context.Context, req validator.ObjectRequest, attrs map[string]attr.Value, resp *validator.ObjectResponse) {
	cidrStr, ok := tfvalues.StringIfSet(attrs["cidr"])
	if !ok {
		return
	}
	cidr, err := netip.ParsePrefix(cidrStr)
	if err != nil {
		return
	}
	var block types.Bool
	// The sibling of allow_egress, wherever the rules are nested.
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, req.Path.ParentPath().ParentPath().AtName("block_metadata_server"), &block)...)
	if block.IsUnknown() || (!block.IsNull() && !block.ValueBool()) {
		return
	}
	for _, m := range metadataServers {
		if cidr.Addr().Is4() == m.Addr().Is4() && cidr.Bits() >= m.Bits() && m.Contains(cidr.Addr()) {
			resp.Diagnostics.AddAttributeError(req.Path.AtName("cidr"), "Metadata server allowed while blocked",
				fmt.Sprintf("%s is the cloud metadata server, which hands out the node's or workload's credentials, and "+
					"block_metadata_server is true. To let sandboxes reach it on purpose (e.g. for Workload Identity), "+
					"set block_metadata_server = false and keep this entry narrow (one address, one port).", cidrStr))
		}
	}
}

// destinationValidator: an allow_egress entry names a destination, an IP
// range or selectors. (Kubernetes reads a peer with neither as every
// destination; allow_internet and a 0.0.0.0/0 range say that explicitly.)
var destinationValidator = objectRule{"one of cidr, namespace_selector or pod_selector is required", destinationCheck}

func destinationCheck(_ context.Context, req validator.ObjectRequest, attrs map[string]attr.Value, resp *validator.ObjectResponse) {
	for _, k := range []string{"cidr", "namespace_selector", "pod_selector"} {
		if v, ok := attrs[k]; ok && !v.IsNull() {
			return // set, or unknown (then checked again at apply)
		}
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Egress entry without a destination",
		"Each allow_egress entry needs a destination: cidr (an IP range), or namespace_selector and/or pod_selector "+
			"(pods in the cluster). To allow every destination, set allow_internet = true or write cidr = \"0.0.0.0/0\".")
}

// portRangeValidator: end_port needs a numeric port no greater than it.
var portRangeValidator = objectRule{"end_port requires a numeric port no greater than end_port", portRangeCheck}

func portRangeCheck(ctx context.Context, req validator.ObjectRequest, attrs map[string]attr.Value, resp *validator.ObjectResponse) {
	end, ok := attrs["end_port"].(types.Int64)
	if !ok || end.IsNull() || end.IsUnknown() {
		return
	}
	portVal, _ := attrs["port"].(types.String)
	if portVal.IsUnknown() {
		return
	}
	if portVal.IsNull() {
		resp.Diagnostics.AddAttributeError(req.Path.AtName("end_port"), "end_port without port",
			"end_port ends a range that starts at port; set port to the first port of the range.")
		return
	}
	num, name, err := validators.ParsePort(portVal.ValueString())
	switch {
	case err != nil:
		return // reported by the port attribute
	case name != "":
		resp.Diagnostics.AddAttributeError(req.Path.AtName("end_port"), "end_port with a named port",
			fmt.Sprintf("A range needs a numeric start, but port is the name %q. Use a port number, or drop end_port.", name))
	case end.ValueInt64() < int64(num):
		resp.Diagnostics.AddAttributeError(req.Path.AtName("end_port"), "end_port before port",
			fmt.Sprintf("end_port %d is lower than port %d; the range runs from port to end_port.", end.ValueInt64(), num))
	}
}

func knownAttrs(o basetypes.ObjectValue) (map[string]attr.Value, bool) {
	if o.IsNull() || o.IsUnknown() {
		return nil, false
	}
	return o.Attributes(), true
}

// repeatedRules warns about a rule that repeats an earlier one of the same
// list exactly: harmless (NetworkPolicy rules are a union), but usually a
// copy-paste that was meant to be edited.
type repeatedRules struct{ what string }

func (v repeatedRules) Description(context.Context) string {
	return "warns when an entry of " + v.what + " repeats an earlier one"
}

func (v repeatedRules) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v repeatedRules) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	elems := req.ConfigValue.Elements()
	for j, e := range elems {
		if !fullyKnown(ctx, e) {
			continue
		}
		for i := range j {
			if elems[i].Equal(e) {
				resp.Diagnostics.AddAttributeWarning(req.Path.AtListIndex(j), "Repeated rule",
					fmt.Sprintf("%s[%d] is the same as %s[%d]: the second adds nothing (a NetworkPolicy allows the "+
						"union of its rules). Remove it, or change it if it was meant to allow something else.",
						req.Path, j, req.Path, i))
				break
			}
		}
	}
}

// fullyKnown says v holds no unknown value at any depth: two entries that
// differ only in values not known yet are not called the same.
func fullyKnown(ctx context.Context, v attr.Value) bool {
	tv, err := v.ToTerraformValue(ctx)
	return err == nil && tv.IsFullyKnown()
}
