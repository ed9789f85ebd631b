package controller

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// inputsKnown says whether every attribute that decides the objects is
// known, so that they can be rendered now.
func (m *routerModel) inputsKnown() bool {
	for _, v := range m.inputs() {
		if !fullyKnown(v) {
			return false
		}
	}
	return true
}

// inputs are the attributes that decide the objects.
func (m *routerModel) inputs() []attr.Value {
	return []attr.Value{
		m.Version, m.Namespace, m.Replicas, m.Image, m.ImageRegistry, m.ImagePullPolicy, m.ImagePullSecrets, m.Resources,
		m.ClusterDomain, m.ProxyTimeout, m.UpstreamMaxRetries, m.CacheEnabled, m.CacheNamespace, m.AuthzMode,
		m.AuthzRequireToken, m.AuthzAudiences, m.AuthzScopedTokenSecret, m.AuthzScopedTokenVerificationKey, m.TLSSecretName,
		m.PDBMinAvailable, m.TopologySpread, m.NodeSelector, m.Tolerations, m.Affinity, m.NetworkPolicy, m.AllowedClients,
		m.AllowClientsFromAllNamespaces, m.MetricsNamespace, m.SandboxNamespaces, m.SandboxPorts, m.APIServerCIDRs,
		m.DNSCIDRs,
	}
}

// routerInputsEqual says whether a and b describe the same objects.
func routerInputsEqual(a, b *routerModel) bool {
	x, y := a.inputs(), b.inputs()
	for i := range x {
		if !x[i].Equal(y[i]) {
			return false
		}
	}
	return true
}

// config expands the model (known, as ModifyPlan checks first) into Go
// values; null attributes take their defaults.
func (m *routerModel) config(ctx context.Context) (routerConfig, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := defaultRouterConfig()
	str := func(v types.String, dst *string) {
		if !v.IsNull() && !v.IsUnknown() {
			*dst = v.ValueString()
		}
	}
	i64 := func(v types.Int64, dst *int64) {
		if !v.IsNull() && !v.IsUnknown() {
			*dst = v.ValueInt64()
		}
	}
	boolean := func(v types.Bool, dst *bool) {
		if !v.IsNull() && !v.IsUnknown() {
			*dst = v.ValueBool()
		}
	}
	str(m.Version, &c.Version)
	str(m.Namespace, &c.Namespace)
	i64(m.Replicas, &c.Replicas)
	str(m.Image, &c.Image)
	str(m.ImageRegistry, &c.ImageRegistry)
	str(m.ImagePullPolicy, &c.ImagePullPolicy)
	if !m.ImagePullSecrets.IsNull() {
		diags.Append(m.ImagePullSecrets.ElementsAs(ctx, &c.ImagePullSecrets, false)...)
	}
	c.Requests, c.Limits, c.HasResources = expandResources(ctx, m.Resources, &diags)
	str(m.ClusterDomain, &c.ClusterDomain)
	str(m.ProxyTimeout, &c.ProxyTimeout)
	i64(m.UpstreamMaxRetries, &c.UpstreamMaxRetries)
	boolean(m.CacheEnabled, &c.CacheEnabled)
	str(m.CacheNamespace, &c.CacheNamespace)
	str(m.AuthzMode, &c.AuthzMode)
	boolean(m.AuthzRequireToken, &c.RequireToken)
	if !m.AuthzAudiences.IsNull() {
		diags.Append(m.AuthzAudiences.ElementsAs(ctx, &c.Audiences, false)...)
	}
	c.ScopedSecret = expandSecretKey(ctx, m.AuthzScopedTokenSecret, &diags)
	c.ScopedKeys = expandSecretKey(ctx, m.AuthzScopedTokenVerificationKey, &diags)
	str(m.TLSSecretName, &c.TLSSecret)
	i64(m.PDBMinAvailable, &c.MinAvailable)
	boolean(m.TopologySpread, &c.TopologySpread)
	if !m.NodeSelector.IsNull() {
		diags.Append(m.NodeSelector.ElementsAs(ctx, &c.NodeSelector, false)...)
	}
	if !m.Tolerations.IsNull() {
		c.Tolerations = expandTolerations(ctx, m.Tolerations, &diags)
	}
	if v := m.Affinity.ValueString(); v != "" {
		if err := json.Unmarshal([]byte(v), &c.Affinity); err != nil {
			diags.AddError("Invalid affinity", err.Error()) // refused at validate already
		}
	}
	boolean(m.NetworkPolicy, &c.NetworkPolicy)
	if !m.AllowedClients.IsNull() {
		var clients []clientModel
		diags.Append(m.AllowedClients.ElementsAs(ctx, &clients, false)...)
		for _, cl := range clients {
			rc := routerClient{Namespace: cl.Namespace.ValueString()}
			if !cl.PodLabels.IsNull() {
				diags.Append(cl.PodLabels.ElementsAs(ctx, &rc.PodLabels, false)...)
			}
			c.Clients = append(c.Clients, rc)
		}
	}
	boolean(m.AllowClientsFromAllNamespaces, &c.AllNamespaces)
	str(m.MetricsNamespace, &c.MetricsNamespace)
	if !m.SandboxNamespaces.IsNull() {
		diags.Append(m.SandboxNamespaces.ElementsAs(ctx, &c.SandboxNamespaces, false)...)
		slices.Sort(c.SandboxNamespaces)
	}
	if !m.SandboxPorts.IsNull() {
		diags.Append(m.SandboxPorts.ElementsAs(ctx, &c.SandboxPorts, false)...)
	}
	if !m.APIServerCIDRs.IsNull() {
		diags.Append(m.APIServerCIDRs.ElementsAs(ctx, &c.APIServerCIDRs, false)...)
	}
	if !m.DNSCIDRs.IsNull() {
		diags.Append(m.DNSCIDRs.ElementsAs(ctx, &c.DNSCIDRs, false)...)
	}
	return c, diags
}

func expandSecretKey(ctx context.Context, v types.Object, diags *diag.Diagnostics) *secretKey {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	var sk secretKeyModel
	diags.Append(v.As(ctx, &sk, objectAsOptions)...)
	return &secretKey{Name: sk.Name.ValueString(), Key: sk.Key.ValueString()}
}

// setConfig writes c into the model's input attributes: what an import
// records. Optional attributes without a default are null when c leaves
// them unset.
func (m *routerModel) setConfig(ctx context.Context, c routerConfig) diag.Diagnostics {
	var diags diag.Diagnostics
	optStr := func(s string) types.String {
		if s == "" {
			return types.StringNull()
		}
		return types.StringValue(s)
	}
	strList := func(l []string) types.List {
		if len(l) == 0 {
			return types.ListNull(types.StringType)
		}
		v, d := types.ListValueFrom(ctx, types.StringType, l)
		diags.Append(d...)
		return v
	}
	strMap := func(mp map[string]string) types.Map {
		if len(mp) == 0 {
			return types.MapNull(types.StringType)
		}
		v, d := types.MapValueFrom(ctx, types.StringType, mp)
		diags.Append(d...)
		return v
	}
	m.Version, m.Namespace = types.StringValue(c.Version), types.StringValue(c.Namespace)
	m.Replicas = types.Int64Value(c.Replicas)
	m.Image, m.ImageRegistry, m.ImagePullPolicy = optStr(c.Image), optStr(c.ImageRegistry), optStr(c.ImagePullPolicy)
	m.ImagePullSecrets = strList(c.ImagePullSecrets)
	resType := resourcesObjectType()
	m.Resources = types.ObjectNull(resType.AttrTypes)
	if c.HasResources {
		v, d := types.ObjectValue(resType.AttrTypes, map[string]attr.Value{"requests": strMap(c.Requests), "limits": strMap(c.Limits)})
		diags.Append(d...)
		m.Resources = v
	}
	m.ClusterDomain, m.ProxyTimeout = types.StringValue(c.ClusterDomain), types.StringValue(c.ProxyTimeout)
	m.UpstreamMaxRetries = types.Int64Value(c.UpstreamMaxRetries)
	m.CacheEnabled, m.CacheNamespace = types.BoolValue(c.CacheEnabled), optStr(c.CacheNamespace)
	m.AuthzMode, m.AuthzRequireToken = types.StringValue(c.AuthzMode), types.BoolValue(c.RequireToken)
	m.AuthzAudiences = strList(c.Audiences)
	m.AuthzScopedTokenSecret = secretKeyValue(c.ScopedSecret, &diags)
	m.AuthzScopedTokenVerificationKey = secretKeyValue(c.ScopedKeys, &diags)
	m.TLSSecretName = optStr(c.TLSSecret)
	m.PDBMinAvailable, m.TopologySpread = types.Int64Value(c.MinAvailable), types.BoolValue(c.TopologySpread)
	m.NodeSelector = strMap(c.NodeSelector)
	m.Tolerations = types.ListNull(tolerationObjectType)
	if len(c.Tolerations) > 0 {
		tols := make([]podtemplate.TolerationModel, 0, len(c.Tolerations))
		for _, t := range c.Tolerations {
			tols = append(tols, podtemplate.TolerationModel{
				Key: anyStr(t["key"]), Operator: anyStr(t["operator"]), Value: anyStr(t["value"]),
				Effect: anyStr(t["effect"]), TolerationSeconds: anyInt(t["tolerationSeconds"]),
			})
		}
		v, d := types.ListValueFrom(ctx, tolerationObjectType, tols)
		diags.Append(d...)
		m.Tolerations = v
	}
	m.Affinity = types.StringNull()
	if c.Affinity != nil {
		b, err := json.Marshal(c.Affinity)
		if err != nil {
			diags.AddError("Cannot encode the affinity", err.Error())
		}
		m.Affinity = types.StringValue(string(b))
	}
	m.NetworkPolicy = types.BoolValue(c.NetworkPolicy)
	clType := clientObjectType()
	m.AllowedClients = types.ListNull(clType)
	if len(c.Clients) > 0 {
		var elems []attr.Value
		for _, cl := range c.Clients {
			v, d := types.ObjectValue(clType.AttrTypes, map[string]attr.Value{
				"namespace": types.StringValue(cl.Namespace), "pod_labels": strMap(cl.PodLabels),
			})
			diags.Append(d...)
			elems = append(elems, v)
		}
		v, d := types.ListValue(clType, elems)
		diags.Append(d...)
		m.AllowedClients = v
	}
	m.AllowClientsFromAllNamespaces = types.BoolValue(c.AllNamespaces)
	m.MetricsNamespace = optStr(c.MetricsNamespace)
	m.SandboxNamespaces = types.SetNull(types.StringType)
	if len(c.SandboxNamespaces) > 0 {
		v, d := types.SetValueFrom(ctx, types.StringType, c.SandboxNamespaces)
		diags.Append(d...)
		m.SandboxNamespaces = v
	}
	m.SandboxPorts = types.ListNull(types.Int64Type)
	if len(c.SandboxPorts) > 0 {
		v, d := types.ListValueFrom(ctx, types.Int64Type, c.SandboxPorts)
		diags.Append(d...)
		m.SandboxPorts = v
	}
	m.APIServerCIDRs = strList(c.APIServerCIDRs)
	m.DNSCIDRs = strList(c.DNSCIDRs)
	return diags
}

// setComputed fills the attributes derived from the configuration.
func (m *routerModel) setComputed(c routerConfig) {
	m.ID = types.StringValue(importID(c.Namespace, c.Version))
	m.ServiceName = types.StringValue(routerServiceName)
	m.ServicePort = types.Int64Value(c.proxyPort())
	m.URL = types.StringValue(c.url())
}

func secretKeyValue(s *secretKey, diags *diag.Diagnostics) types.Object {
	t := map[string]attr.Type{"name": types.StringType, "key": types.StringType}
	if s == nil {
		return types.ObjectNull(t)
	}
	v, d := types.ObjectValue(t, map[string]attr.Value{"name": types.StringValue(s.Name), "key": types.StringValue(s.Key)})
	diags.Append(d...)
	return v
}

func anyStr(v any) types.String {
	if s, ok := v.(string); ok && s != "" {
		return types.StringValue(s)
	}
	return types.StringNull()
}

func anyInt(v any) types.Int64 {
	switch n := v.(type) {
	case int64:
		return types.Int64Value(n)
	case float64:
		return types.Int64Value(int64(n))
	case json.Number:
		i, _ := n.Int64()
		return types.Int64Value(i)
	}
	return types.Int64Null()
}

func resourcesObjectType() types.ObjectType {
	return types.ObjectType{AttrTypes: map[string]attr.Type{
		"requests": types.MapType{ElemType: types.StringType}, "limits": types.MapType{ElemType: types.StringType},
	}}
}

// tolerationObjectType is derived from the attributes once: setConfig runs
// on every read and plan of the router.
var tolerationObjectType = tfvalues.ObjectType(podtemplate.TolerationAttributes())

func clientObjectType() types.ObjectType {
	return types.ObjectType{AttrTypes: map[string]attr.Type{
		"namespace": types.StringType, "pod_labels": types.MapType{ElemType: types.StringType},
	}}
}
