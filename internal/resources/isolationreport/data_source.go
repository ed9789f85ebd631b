// Package isolationreport implements data.agentsandbox_isolation_report: a
// posture report of the sandboxes of a namespace as they run now (runtime,
// identity, process, network), with violations and counts, for `check`
// blocks and postconditions. read.go reads the cluster (one list per kind),
// analyze.go and network.go compute the report from what was read (pure
// functions, unit-tested), internal/netpolicy decides reachability.
package isolationreport

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

var _ datasource.DataSourceWithValidateConfig = (*reportDataSource)(nil)

// NewDataSource is registered in the provider.
func NewDataSource() datasource.DataSource {
	return &reportDataSource{object.NewQuery(&object.QueryFamily[configModel]{
		TypeSuffix: "_isolation_report", Schema: dataSourceSchema, Read: readReport,
	})}
}

// reportDataSource is the Query with its own ValidateConfig.
type reportDataSource struct {
	*object.Query[configModel]
}

// builtinEgress and builtinIngress are the keys the report always fills;
// extra destinations and sources may not reuse them.
var (
	builtinEgress = []string{"metadata_server_ipv4", "metadata_server_ipv6", "metadata_server_ipv6_gce", "kubernetes_api_service",
		"kubernetes_api_endpoints", "cluster_dns", "internet_ipv4", "internet_ipv6", "other_namespaces", "same_template"}
	builtinIngress = []string{"from_other_namespaces", "from_same_namespace", "from_internet", "from_sandbox_router", "from_same_template"}
	nameRE         = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)
)

func validName(s string) bool { return nameRE.MatchString(s) }

func validSelector(s string) bool {
	_, err := labels.Parse(s)
	return err == nil
}

func (d *reportDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var m configModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	check := func(attr string, list []probeModel, builtin []string) {
		seen := map[string]bool{}
		for i, p := range list {
			at := path.Root(attr).AtListIndex(i)
			if !p.Name.IsUnknown() && !p.Name.IsNull() {
				n := p.Name.ValueString()
				switch {
				case slices.Contains(builtin, n):
					resp.Diagnostics.AddAttributeError(at.AtName("name"), "Name of a built-in verdict",
						fmt.Sprintf("%q is one of the verdicts the report always gives (%v); choose another name.", n, builtin))
				case seen[n]:
					resp.Diagnostics.AddAttributeError(at.AtName("name"), "Duplicate name",
						fmt.Sprintf("%q names another entry of %s already; each name is a key of the verdict map.", n, attr))
				}
				seen[n] = true
			}
			if p.Address.IsUnknown() || p.Namespace.IsUnknown() {
				continue
			}
			switch {
			case p.Address.IsNull() && p.Namespace.IsNull():
				resp.Diagnostics.AddAttributeError(at, "Missing address or namespace",
					"Give either `address` (an IP address) or `namespace` (a pod's namespace, with its `labels`).")
			case !p.Address.IsNull() && !p.Namespace.IsNull():
				resp.Diagnostics.AddAttributeError(at.AtName("namespace"), "Both address and namespace",
					"Give either `address` or `namespace` (with `labels`), not both.")
			case !p.Address.IsNull() && !p.Labels.IsNull():
				resp.Diagnostics.AddAttributeError(at.AtName("labels"), "Labels without namespace",
					"`labels` describe a pod, with `namespace`; an address has none.")
			}
		}
	}
	check("destinations", m.Destinations, builtinEgress)
	check("sources", m.Sources, builtinIngress)
}

// readReport reads the namespace's sandboxes and what decides their
// isolation, and reports on them.
func readReport(ctx context.Context, meta *conn.Meta, m *configModel) diag.Diagnostics {
	var diags diag.Diagnostics
	ns := m.Namespace.ValueString()
	var sel labels.Selector
	id := ns
	if s := m.Selector.ValueString(); s != "" {
		var err error
		if sel, err = labels.Parse(s); err != nil {
			diags.AddAttributeError(path.Root("selector"), "Invalid label selector", err.Error())
			return diags
		}
		id += "?" + s
	}
	c, d := meta.Kube(ctx)
	if diags.Append(d...); diags.HasError() {
		return diags
	}
	routerNS := defaultRouterNamespace
	if v := m.RouterNamespace.ValueString(); v != "" {
		routerNS = v
	}
	inv, d := read(ctx, c, ns, routerNS)
	if diags.Append(d...); diags.HasError() {
		return diags
	}
	inv.destinations = probes(ctx, m.Destinations)
	inv.sources = probes(ctx, m.Sources)
	inv.declared = map[string]bool{}
	var declared []string
	if !m.IsolatingRuntimeClasses.IsNull() && !m.IsolatingRuntimeClasses.IsUnknown() {
		diags.Append(m.IsolatingRuntimeClasses.ElementsAs(ctx, &declared, false)...)
	}
	for _, rc := range declared {
		inv.declared[rc] = true
	}
	r := analyze(inv, sel)
	if len(declared) > 0 {
		diags.AddAttributeWarning(path.Root("isolating_runtime_classes"), "Isolation declared, not verified",
			declaredWarning(inv, declared, r))
	}
	m.ID = types.StringValue(id)
	m.Sandboxes = r.Sandboxes
	m.Violations = r.Violations
	m.Summary = &r.Summary
	m.Router = r.Router
	return diags
}

// probes converts the validated configuration entries.
func probes(ctx context.Context, list []probeModel) []probe {
	var out []probe
	for _, p := range list {
		pr := probe{Name: p.Name.ValueString(), Namespace: p.Namespace.ValueString(), Port: int32(p.Port.ValueInt64()), //nolint:gosec // validated 1-65535
			Protocol: corev1.Protocol(p.Protocol.ValueString())}
		if pr.Protocol == "" {
			pr.Protocol = corev1.ProtocolTCP
		}
		if a, err := netip.ParseAddr(p.Address.ValueString()); err == nil {
			pr.Address = a
		}
		pr.Labels = map[string]string{}
		if !p.Labels.IsNull() {
			_ = p.Labels.ElementsAs(ctx, &pr.Labels, false)
		}
		out = append(out, pr)
	}
	return out
}

// declaredWarning says what the report took on the configuration's word:
// which RuntimeClasses, their handlers, and how many sandboxes it counted
// as isolated because of them.
func declaredWarning(inv inventory, declared []string, r reportModel) string {
	sort.Strings(declared)
	used := map[string]int{}
	for _, s := range r.Sandboxes {
		if s.Runtime.Isolation == isolationDeclared {
			used[s.Runtime.RuntimeClassName]++
		}
	}
	var b strings.Builder
	b.WriteString("The report counts pods of these RuntimeClasses as isolated from the host kernel because " +
		"isolating_runtime_classes says so:\n")
	for _, rc := range declared {
		handler := "unknown: the RuntimeClasses could not be read"
		if inv.runtimeClasses != nil {
			if h, ok := inv.runtimeClasses[rc]; ok {
				handler = fmt.Sprintf("%q", h)
			} else {
				handler = "none: the cluster has no such RuntimeClass"
			}
		}
		fmt.Fprintf(&b, "  - %s (handler %s): %d sandbox(es)\n", rc, handler, used[rc])
	}
	b.WriteString("The provider recognises gVisor's handlers (" + strings.Join(gvisorHandlers, ", ") + ") only and cannot " +
		"verify that another runtime isolates anything; GKE does not document the RuntimeClass or handler of MicroVM " +
		"node pools, the case this is meant for. Keep a RuntimeClass here only if you have checked on the cluster that " +
		"its handler runs each pod in its own VM or kernel.")
	return b.String()
}
