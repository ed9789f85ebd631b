package controller

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// controllerModel is the resource's Terraform data.
type controllerModel struct {
	installedModel // inventory, timeouts

	ID                    types.String `tfsdk:"id"`
	Version               types.String `tfsdk:"version"`
	ReleaseBaseURL        types.String `tfsdk:"release_base_url"`
	ManifestURL           types.String `tfsdk:"manifest_url"`
	Manifest              types.String `tfsdk:"manifest"`
	ManifestFile          types.String `tfsdk:"manifest_file"`
	ManifestSHA256        types.String `tfsdk:"manifest_sha256"`
	Extensions            types.Bool   `tfsdk:"extensions"`
	ImageRegistry         types.String `tfsdk:"image_registry"`
	Controller            types.Object `tfsdk:"controller"`
	Metrics               types.Object `tfsdk:"metrics"`
	AllowedLabelDomains   types.Set    `tfsdk:"allowed_label_domains"`
	KeepCRDsOnDestroy     types.Bool   `tfsdk:"keep_crds_on_destroy"`
	Wait                  types.Bool   `tfsdk:"wait"`
	Namespace             types.String `tfsdk:"namespace"`
	AppliedManifestSHA256 types.String `tfsdk:"applied_manifest_sha256"`
}

// controllerSettingsModel is the `controller` attribute.
type controllerSettingsModel struct {
	Args         types.List   `tfsdk:"args"`
	Replicas     types.Int64  `tfsdk:"replicas"`
	Resources    types.Object `tfsdk:"resources"`
	NodeSelector types.Map    `tfsdk:"node_selector"`
	Tolerations  types.List   `tfsdk:"tolerations"`
	// The chart's pod options (podsettings.go).
	podSettingsModel
	// The chart's typed controller values (flags.go).
	chartFlagsModel
}

type inventoryModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Kind       types.String `tfsdk:"kind"`
	Namespace  types.String `tfsdk:"namespace"`
	Name       types.String `tfsdk:"name"`
	Digest     types.String `tfsdk:"digest"`
	Drift      types.String `tfsdk:"drift"`
}

// inventoryElemType is the type of an inventory entry, derived from the
// schema's attributes.
var inventoryElemType = tfvalues.ObjectType(inventoryAttributes)

// inputsKnown says whether every attribute that decides the objects is
// known, i.e. whether the manifest can be fetched and expanded now.
func (m *controllerModel) inputsKnown() bool {
	for _, v := range []attr.Value{m.Version, m.ReleaseBaseURL, m.ManifestURL, m.Manifest, m.ManifestFile, m.ManifestSHA256,
		m.Extensions, m.ImageRegistry} {
		if v.IsUnknown() {
			return false
		}
	}
	return fullyKnown(m.Controller) && fullyKnown(m.Metrics) && fullyKnown(m.AllowedLabelDomains)
}

// inputsEqual says whether a and b describe the same objects: when they do
// and nothing drifted, an update has nothing to apply.
//
// A manifest_file is the same only if its content is: the file is read (no
// download, so this stays cheap) and its digest compared with the one b
// applied.
func inputsEqual(a, b *controllerModel) bool {
	same := a.Version.Equal(b.Version) && a.ReleaseBaseURL.Equal(b.ReleaseBaseURL) &&
		a.ManifestURL.Equal(b.ManifestURL) && a.Manifest.Equal(b.Manifest) && a.ManifestFile.Equal(b.ManifestFile) &&
		a.ManifestSHA256.Equal(b.ManifestSHA256) && orTrue(a.Extensions) == orTrue(b.Extensions) &&
		a.ImageRegistry.Equal(b.ImageRegistry) && a.Controller.Equal(b.Controller) && a.Metrics.Equal(b.Metrics) &&
		a.AllowedLabelDomains.Equal(b.AllowedLabelDomains)
	if !same || a.ManifestFile.IsNull() {
		return same
	}
	data, err := readManifestFile(a.ManifestFile.ValueString())
	if err != nil {
		return false // the plan reads it again and reports the error
	}
	return strings.EqualFold(manifestSHA256([]manifestFile{{Data: data}}), b.AppliedManifestSHA256.ValueString())
}

// orTrue reads a boolean whose default is true (extensions, wait,
// keep_crds_on_destroy): null or unknown means true.
func orTrue(v types.Bool) bool {
	if v.IsNull() || v.IsUnknown() {
		return true
	}
	return v.ValueBool()
}

// fullyKnown reports whether v and everything inside it is known.
func fullyKnown(v attr.Value) bool {
	if v == nil || v.IsNull() {
		return true
	}
	if v.IsUnknown() {
		return false
	}
	switch x := v.(type) {
	case types.Object:
		for _, e := range x.Attributes() {
			if !fullyKnown(e) {
				return false
			}
		}
	case types.List:
		for _, e := range x.Elements() {
			if !fullyKnown(e) {
				return false
			}
		}
	case types.Set:
		for _, e := range x.Elements() {
			if !fullyKnown(e) {
				return false
			}
		}
	case types.Map:
		for _, e := range x.Elements() {
			if !fullyKnown(e) {
				return false
			}
		}
	}
	return true
}

// source resolves which manifest the configuration asks for.
func (m *controllerModel) source() sourceSpec {
	switch {
	case !m.Manifest.IsNull():
		return sourceSpec{Inline: m.Manifest.ValueString(), Attr: "manifest"}
	case !m.ManifestFile.IsNull():
		return sourceSpec{File: m.ManifestFile.ValueString(), Attr: "manifest_file"}
	case !m.ManifestURL.IsNull():
		return sourceSpec{URLs: []string{m.ManifestURL.ValueString()}, Attr: "manifest_url"}
	default:
		return sourceSpec{
			URLs: releaseURLs(m.ReleaseBaseURL.ValueString(), m.Version.ValueString(), orTrue(m.Extensions)),
			Attr: "version",
		}
	}
}

// settings expands the `controller` attribute; ok is false when it is unset.
func (m *controllerModel) settings(ctx context.Context) (controllerSettings, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	var s controllerSettings
	if m.Controller.IsNull() || m.Controller.IsUnknown() {
		return s, false, diags
	}
	var cm controllerSettingsModel
	diags.Append(m.Controller.As(ctx, &cm, objectAsOptions)...)
	if diags.HasError() {
		return s, false, diags
	}
	if !cm.Args.IsNull() {
		diags.Append(cm.Args.ElementsAs(ctx, &s.Args, false)...)
	}
	s.Flags = append(renderFlags(flagValues(m.Controller.Attributes())), metricsTLSFlagsSet(m.Controller.Attributes())...)
	if !cm.MetricsCertSecret.IsNull() && !cm.MetricsCertSecret.IsUnknown() {
		s.MetricsCertSecret = cm.MetricsCertSecret.ValueString()
	}
	if !cm.Replicas.IsNull() {
		r := cm.Replicas.ValueInt64()
		s.Replicas = &r
	}
	s.Requests, s.Limits, s.HasResources = expandResources(ctx, cm.Resources, &diags)
	if !cm.NodeSelector.IsNull() {
		s.HasSelector = true
		diags.Append(cm.NodeSelector.ElementsAs(ctx, &s.NodeSelector, false)...)
	}
	if !cm.Tolerations.IsNull() {
		s.HasTolerations = true
		s.Tolerations = expandTolerations(ctx, cm.Tolerations, &diags)
	}
	diags.Append(cm.expand(ctx, &s.Pod)...) // the pod options
	return s, true, diags
}

// allowedLabelDomains expands `allowed_label_domains`: nil when it is unset
// (or unknown, which ModifyPlan never expands).
func (m *controllerModel) allowedLabelDomains(ctx context.Context) ([]string, diag.Diagnostics) {
	var out []string
	if m.AllowedLabelDomains.IsNull() || m.AllowedLabelDomains.IsUnknown() {
		return nil, nil
	}
	diags := m.AllowedLabelDomains.ElementsAs(ctx, &out, false)
	return out, diags
}

// inventoryOf reads an inventory attribute, in apply order.
func inventoryOf(ctx context.Context, inventory types.Map) ([]inventoryEntry, diag.Diagnostics) {
	var diags diag.Diagnostics
	if inventory.IsNull() || inventory.IsUnknown() {
		return nil, diags
	}
	var items map[string]inventoryModel
	diags.Append(inventory.ElementsAs(ctx, &items, false)...)
	out := make([]inventoryEntry, 0, len(items))
	for _, it := range items {
		out = append(out, inventoryEntry{
			APIVersion: it.APIVersion.ValueString(), Kind: it.Kind.ValueString(),
			Namespace: it.Namespace.ValueString(), Name: it.Name.ValueString(),
			Digest: it.Digest.ValueString(), Drift: it.Drift.ValueString(),
		})
	}
	sortForApplyEntries(out)
	return out, diags
}

// inventoryValue builds the inventory map, keyed by inventoryKey so that a
// plan shows objects added, removed or drifted by name rather than by
// position. Entries with an empty digest get an unknown one: planned, to
// be known after apply.
func inventoryValue(entries []inventoryEntry) (types.Map, diag.Diagnostics) {
	elems := make(map[string]attr.Value, len(entries))
	var diags diag.Diagnostics
	for _, e := range entries {
		digest := types.StringValue(e.Digest)
		if e.Digest == "" {
			digest = types.StringUnknown()
		}
		obj, d := types.ObjectValue(inventoryElemType.AttrTypes, map[string]attr.Value{
			"api_version": types.StringValue(e.APIVersion),
			"kind":        types.StringValue(e.Kind),
			"namespace":   types.StringValue(e.Namespace),
			"name":        types.StringValue(e.Name),
			"digest":      digest,
			"drift":       types.StringValue(e.Drift),
		})
		diags.Append(d...)
		elems[inventoryKey(e)] = obj
	}
	m, d := types.MapValue(inventoryElemType, elems)
	diags.Append(d...)
	return m, diags
}

// inventoryKey names an entry in the inventory map as people read it:
// Kind[.group]/[namespace/]name, e.g.
// "Deployment.apps/agent-sandbox-system/agent-sandbox-controller" or
// "CustomResourceDefinition.apiextensions.k8s.io/sandboxes.agents.x-k8s.io".
func inventoryKey(e inventoryEntry) string {
	k := e.key()
	out := groupKindOf(k.Group, k.Kind) + "/"
	if k.Namespace != "" {
		out += k.Namespace + "/"
	}
	return out + k.Name
}

// importID is the resource's ID: namespace/version.
func importID(namespace, version string) string { return namespace + "/" + version }

// attrPath is the attribute a source problem is reported on.
func (s sourceSpec) attrPath() path.Path { return path.Root(s.Attr) }

// objectAsOptions reads nested objects strictly: every attribute is in the
// schema, so a mismatch is a bug worth an error.
var objectAsOptions = basetypes.ObjectAsOptions{}
