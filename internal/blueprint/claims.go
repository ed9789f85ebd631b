package blueprint

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// This file holds volume_claim_templates: agentsandbox_sandbox_template
// uses them as they are, agentsandbox_sandbox with RequiresReplace (the API
// makes them immutable on a Sandbox).

// Access modes a PVC may ask for.
var accessModes = []string{"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}

// VolumeClaimTemplateModel is one entry of volume_claim_templates.
type VolumeClaimTemplateModel struct {
	Name             types.String `tfsdk:"name"`
	Labels           types.Map    `tfsdk:"labels"`
	Annotations      types.Map    `tfsdk:"annotations"`
	AccessModes      types.List   `tfsdk:"access_modes"`
	StorageClassName types.String `tfsdk:"storage_class_name"`
	Resources        types.Object `tfsdk:"resources"`
	VolumeMode       types.String `tfsdk:"volume_mode"`
}

// ClaimResourcesModel is resources of a volume claim template.
type ClaimResourcesModel struct {
	Requests types.Object `tfsdk:"requests"`
}

// ClaimRequestsModel is resources.requests of a volume claim template.
type ClaimRequestsModel struct {
	Storage types.String `tfsdk:"storage"`
}

// The types of a volume claim template's values, derived from its schema
// attribute.
var (
	// VolumeClaimTemplateType is the element type of volume_claim_templates.
	VolumeClaimTemplateType = tfvalues.ElementType(VolumeClaimTemplatesAttribute(""))
	claimResType            = tfvalues.NestedObjectType(VolumeClaimTemplateType, "resources")
	requestsType            = tfvalues.NestedObjectType(claimResType, "requests")
)

// VolumeClaimTemplatesAttribute is `volume_claim_templates` for a resource
// schema; what is claimed is described by the caller (kind).
func VolumeClaimTemplatesAttribute(description string) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Name of the claim template. A container mounts the volume by this name " +
					"(`volume_mounts[].name`, no `volumes` entry needed: the controller adds it); the PVC is named " +
					"`<name>-<sandbox>`.",
				Validators: []validator.String{validators.DNSLabelName()},
			},
			"labels": schema.MapAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Labels of the PVC.",
				Validators:          []validator.Map{validators.Labels()},
			},
			"annotations": schema.MapAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Annotations of the PVC.",
				Validators:          []validator.Map{validators.Annotations()},
			},
			"access_modes": schema.ListAttribute{
				Optional:    true,
				Computed:    true,
				ElementType: types.StringType,
				Default:     listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{types.StringValue("ReadWriteOnce")})),
				MarkdownDescription: "Access modes of the volume: `ReadWriteOnce` (default), `ReadOnlyMany`, " +
					"`ReadWriteMany` or `ReadWriteOncePod`.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(stringvalidator.OneOf(accessModes...)),
				},
			},
			"storage_class_name": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "StorageClass that provisions the volume. Unset: the cluster's default " +
					"StorageClass. Without a provisioner the PVC stays Pending and the sandbox's pod does not start.",
				Validators: []validator.String{validators.DNSSubdomainName()},
			},
			"resources": schema.SingleNestedAttribute{
				Required:            true,
				MarkdownDescription: "Resources of the claim.",
				Attributes: map[string]schema.Attribute{
					"requests": schema.SingleNestedAttribute{
						Required:            true,
						MarkdownDescription: "Requested resources.",
						Attributes: map[string]schema.Attribute{
							"storage": schema.StringAttribute{
								Required: true,
								MarkdownDescription: "Size of the volume, a Kubernetes quantity such as `1Gi`. The cluster " +
									"may round it up; the configured spelling is kept as long as the value is the same.",
								Validators:    []validator.String{validators.NonNegativeQuantity()},
								PlanModifiers: []planmodifier.String{sameQuantity{}},
							},
						},
					},
				},
			},
			"volume_mode": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "`Filesystem` or `Block`. Unset: `Filesystem`.",
				Validators:          []validator.String{stringvalidator.OneOf("Filesystem", "Block")},
			},
		}},
	}
}

// VolumeClaimTemplatesDataSourceAttribute is volume_claim_templates for a
// data source schema: derived from the resource attribute, every attribute
// computed, so FlattenVolumeClaimTemplates fills both.
func VolumeClaimTemplatesDataSourceAttribute() dsschema.ListNestedAttribute {
	a := VolumeClaimTemplatesAttribute("")
	return dsschema.ListNestedAttribute{
		Computed:            true,
		MarkdownDescription: "The PVCs created for each sandbox.",
		NestedObject:        dsschema.NestedAttributeObject{Attributes: tfvalues.DataSourceAttributes(a.NestedObject.Attributes)},
	}
}

// ClaimTemplateNames returns the configured claim template names, and
// whether they are all known (a plan may not know them yet).
func ClaimTemplateNames(ctx context.Context, l types.List) ([]string, bool) {
	if l.IsUnknown() {
		return nil, false
	}
	var names []string
	known := true
	for _, e := range l.Elements() {
		o, ok := e.(types.Object)
		if !ok || o.IsUnknown() {
			known = false
			continue
		}
		var m VolumeClaimTemplateModel
		if o.IsNull() || o.As(ctx, &m, basetypes.ObjectAsOptions{}).HasError() {
			continue
		}
		if m.Name.IsUnknown() {
			known = false
			continue
		}
		names = append(names, m.Name.ValueString())
	}
	return names, known
}

// ValidateVolumeClaimTemplates checks what the attribute validators cannot
// see alone: names are unique (they name the PVCs and the pod volumes).
func ValidateVolumeClaimTemplates(ctx context.Context, p path.Path, l types.List) diag.Diagnostics {
	var diags diag.Diagnostics
	if l.IsNull() || l.IsUnknown() {
		return diags
	}
	seen := map[string]int{}
	for i, e := range l.Elements() {
		o, ok := e.(types.Object)
		if !ok || o.IsNull() || o.IsUnknown() {
			continue
		}
		var m VolumeClaimTemplateModel
		if o.As(ctx, &m, basetypes.ObjectAsOptions{}).HasError() || m.Name.IsNull() || m.Name.IsUnknown() {
			continue
		}
		name := m.Name.ValueString()
		if j, dup := seen[name]; dup {
			diags.AddAttributeError(p.AtListIndex(i).AtName("name"), "Duplicate volume claim template name",
				fmt.Sprintf("%q is already the name of volume_claim_templates[%d]; each claim template becomes a PVC and "+
					"a pod volume of that name, so names must be unique.", name, j))
			continue
		}
		seen[name] = i
	}
	return diags
}

// ExpandVolumeClaimTemplates builds the API list from a planned (fully
// known) value; null is no templates.
func ExpandVolumeClaimTemplates(ctx context.Context, l types.List) ([]agentsv1beta1.PersistentVolumeClaimTemplate, diag.Diagnostics) {
	var diags diag.Diagnostics
	if l.IsNull() || l.IsUnknown() {
		return nil, diags
	}
	var ms []VolumeClaimTemplateModel
	if diags.Append(l.ElementsAs(ctx, &ms, false)...); diags.HasError() {
		return nil, diags
	}
	out := make([]agentsv1beta1.PersistentVolumeClaimTemplate, 0, len(ms))
	for _, m := range ms {
		t := agentsv1beta1.PersistentVolumeClaimTemplate{
			EmbeddedObjectMetadata: agentsv1beta1.EmbeddedObjectMetadata{
				Name:        m.Name.ValueString(),
				Labels:      tfvalues.StringMap(ctx, m.Labels, &diags),
				Annotations: tfvalues.StringMap(ctx, m.Annotations, &diags),
			},
		}
		for _, am := range tfvalues.StringList(ctx, m.AccessModes, &diags) {
			t.Spec.AccessModes = append(t.Spec.AccessModes, corev1.PersistentVolumeAccessMode(am))
		}
		if !m.StorageClassName.IsNull() {
			sc := m.StorageClassName.ValueString()
			t.Spec.StorageClassName = &sc
		}
		if !m.VolumeMode.IsNull() {
			vm := corev1.PersistentVolumeMode(m.VolumeMode.ValueString())
			t.Spec.VolumeMode = &vm
		}
		if s := storage(ctx, m.Resources, &diags); s != "" {
			q, err := resource.ParseQuantity(s)
			if err != nil {
				diags.AddError("Invalid storage request", fmt.Sprintf("%q: %v", s, err))
				continue
			}
			t.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: q}
		}
		out = append(out, t)
	}
	return out, diags
}

func storage(ctx context.Context, o types.Object, diags *diag.Diagnostics) string {
	if o.IsNull() || o.IsUnknown() {
		return ""
	}
	var r ClaimResourcesModel
	if diags.Append(o.As(ctx, &r, basetypes.ObjectAsOptions{})...); diags.HasError() || r.Requests.IsNull() {
		return ""
	}
	var q ClaimRequestsModel
	if diags.Append(r.Requests.As(ctx, &q, basetypes.ObjectAsOptions{})...); diags.HasError() {
		return ""
	}
	return q.Storage.ValueString()
}

// FlattenVolumeClaimTemplates is the state value of live claim templates.
// prior (state or plan; null on import) only decides spelling: a storage
// quantity equal to the prior one keeps the prior spelling, and an empty
// label map stays empty rather than null when the prior said so.
func FlattenVolumeClaimTemplates(ctx context.Context, live []agentsv1beta1.PersistentVolumeClaimTemplate, prior types.List) (types.List, diag.Diagnostics) {
	var diags diag.Diagnostics
	if len(live) == 0 {
		return types.ListNull(VolumeClaimTemplateType), diags
	}
	priorByName := map[string]VolumeClaimTemplateModel{}
	if !prior.IsNull() && !prior.IsUnknown() {
		var ms []VolumeClaimTemplateModel
		if !prior.ElementsAs(ctx, &ms, false).HasError() {
			for _, m := range ms {
				priorByName[m.Name.ValueString()] = m
			}
		}
	}
	elems := make([]attr.Value, 0, len(live))
	for _, t := range live {
		p := priorByName[t.Name]
		var modes []string
		for _, am := range t.Spec.AccessModes {
			modes = append(modes, string(am))
		}
		m := VolumeClaimTemplateModel{
			Name:             types.StringValue(t.Name),
			Labels:           tfvalues.Map(ctx, t.Labels, p.Labels, &diags),
			Annotations:      tfvalues.Map(ctx, t.Annotations, p.Annotations, &diags),
			AccessModes:      tfvalues.Strings(ctx, modes, &diags),
			StorageClassName: types.StringPointerValue(t.Spec.StorageClassName),
			VolumeMode:       types.StringNull(),
		}
		if t.Spec.VolumeMode != nil {
			m.VolumeMode = types.StringValue(string(*t.Spec.VolumeMode))
		}
		requests := types.ObjectNull(requestsType.AttrTypes)
		if q, ok := t.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			s := q.String()
			if ps := storage(ctx, p.Resources, &diags); ps != "" {
				if pq, err := resource.ParseQuantity(ps); err == nil && pq.Cmp(q) == 0 {
					s = ps // same value: keep the configured spelling
				}
			}
			requests = tfvalues.Object(ctx, requestsType, ClaimRequestsModel{Storage: types.StringValue(s)}, &diags)
		}
		m.Resources = tfvalues.Object(ctx, claimResType, ClaimResourcesModel{Requests: requests}, &diags)
		elems = append(elems, tfvalues.Object(ctx, VolumeClaimTemplateType, m, &diags))
	}
	l, d := types.ListValue(VolumeClaimTemplateType, elems)
	diags.Append(d...)
	return l, diags
}

// sameQuantity plans the prior spelling of a storage size when the
// configuration spells the same value differently ("1024Mi" for "1Gi"):
// the cluster could not tell them apart, so neither should the plan. On a
// Sandbox, where the claim templates are immutable, a mere respelling
// would otherwise replace the sandbox and lose its volumes.
type sameQuantity struct{}

func (sameQuantity) Description(context.Context) string {
	return "keeps the prior spelling of an equal quantity"
}
func (v sameQuantity) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

// InertWhenUnchanged marks the modifier as a no-op on an unchanged plan
// (fastpath.InertWhenUnchanged): equal values keep the prior spelling,
// which is the planned one.
func (sameQuantity) InertWhenUnchanged() {}

// InertOnCreate marks the modifier as a no-op without prior state
// (fastpath.InertOnCreate): PlanModifyString returns at once when the
// prior value is null, as it is on a create.
func (sameQuantity) InertOnCreate() {}

func (sameQuantity) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || req.StateValue.IsUnknown() || req.PlanValue.IsNull() || req.PlanValue.IsUnknown() {
		return
	}
	prior, err1 := resource.ParseQuantity(req.StateValue.ValueString())
	planned, err2 := resource.ParseQuantity(req.PlanValue.ValueString())
	if err1 == nil && err2 == nil && prior.Cmp(planned) == 0 {
		resp.PlanValue = req.StateValue
	}
}

// VolumeClaimTemplatesChanged reports whether two values of
// volume_claim_templates ask for different claims, comparing what would be
// sent (so quantities by value); an unknown plan counts as a change. A
// Sandbox replaces itself only then (listplanmodifier.RequiresReplaceIf):
// the list-level check runs before the nested attributes' plan modifiers
// have restored equal spellings.
func VolumeClaimTemplatesChanged(ctx context.Context, state, plan types.List) bool {
	if plan.IsUnknown() {
		return true
	}
	if tv, err := plan.ToTerraformValue(ctx); err != nil || !tv.IsFullyKnown() {
		return true
	}
	a, d1 := ExpandVolumeClaimTemplates(ctx, state)
	b, d2 := ExpandVolumeClaimTemplates(ctx, plan)
	if d1.HasError() || d2.HasError() {
		return true
	}
	return !equality.Semantic.DeepEqual(a, b)
}
