package object

import (
	"context"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// dataSourceMetadataAttributes returns the id, name, namespace, labels and
// annotations attributes of a data source reading one object of kind.
func dataSourceMetadataAttributes(kind string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "`<namespace>/<name>`.",
		},
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: fmt.Sprintf("Name of the %s.", kind),
			Validators:          []validator.String{validators.DNSSubdomainName()},
		},
		"namespace": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			MarkdownDescription: fmt.Sprintf("Namespace of the %s. Defaults to `%s`.", kind, DefaultNamespace),
			Validators:          []validator.String{validators.DNSLabelName()},
		},
		"labels": schema.MapAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: fmt.Sprintf("All labels of the %s, including those the controller and other tools set.", kind),
		},
		"annotations": schema.MapAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: fmt.Sprintf("All annotations of the %s.", kind),
		},
	}
}

// Lookup reads the object a data source names. Unlike Read, a missing
// object is an error (a data source has nothing to remove from the state);
// hint, if not empty, is added to its detail to say where such an object
// usually comes from.
func (k Kind) Lookup(ctx context.Context, meta *conn.Meta, m DataSourceMetadata, hint string) (*unstructured.Unstructured, DataSourceMetadata, diag.Diagnostics) {
	ns := m.Namespace.ValueString()
	if ns == "" {
		ns = DefaultNamespace
	}
	live, found, diags := k.Read(ctx, meta, ns, m.Name.ValueString())
	if diags.HasError() {
		return nil, m, diags
	}
	ref := k.Ref(ns, m.Name.ValueString())
	if !found {
		detail := fmt.Sprintf("The cluster has no %s. Check the name and the namespace.", ref)
		if hint != "" {
			detail += " " + hint
		}
		diags.AddError(fmt.Sprintf("%s not found", ref), detail)
		return nil, m, diags
	}
	out, d := FlattenAll(ctx, live)
	diags.Append(d...)
	return live, out, diags
}

// FlattenAll returns the identity and all labels and annotations of live;
// absent maps become empty ones, so a configuration can always index them.
func FlattenAll(ctx context.Context, live *unstructured.Unstructured) (DataSourceMetadata, diag.Diagnostics) {
	var diags, d diag.Diagnostics
	out := identityOf(live)
	out.Labels, d = types.MapValueFrom(ctx, types.StringType, tfvalues.NonNilMap(live.GetLabels()))
	diags.Append(d...)
	out.Annotations, d = types.MapValueFrom(ctx, types.StringType, tfvalues.NonNilMap(live.GetAnnotations()))
	diags.Append(d...)
	return out, diags
}

// DataSourceFamily is what a data source reading one object supplies to
// DataSource: its kind, description and attributes, a hint for a missing
// object, and how the live object fills the model. The data source has the
// type of the kind's resource (Kind.ResourceType) and the identity
// attributes of every such data source (id, name, namespace, labels,
// annotations), which name Kind.Kind.
//
// M is the data source's model; it must embed DataSourceMetadata.
type DataSourceFamily[M any] struct {
	// Kind is the object the data source reads.
	Kind Kind
	// Description is the data source's description.
	Description string
	// Attributes returns the data source's attributes besides the identity
	// ones; an attribute of the same name replaces an identity attribute.
	Attributes func() map[string]schema.Attribute
	// Hint, if set, is added to the error for a missing object, to say
	// where such objects usually come from.
	Hint string
	// Flatten fills m from live; m's DataSourceMetadata is already set.
	Flatten func(ctx context.Context, live *unstructured.Unstructured, m *M) diag.Diagnostics
}

// dataSourceModel is a model that embeds DataSourceMetadata.
type dataSourceModel[M any] interface {
	*M
	dataSourceMetadata() *DataSourceMetadata
}

func (m *DataSourceMetadata) dataSourceMetadata() *DataSourceMetadata { return m }

// DataSource is a data source reading one object, made from a
// DataSourceFamily: the configuration names the object, Lookup reads it
// (a missing object is an error, with the family's hint), and the family
// fills in the rest.
type DataSource[M any, P dataSourceModel[M]] struct {
	ConfiguredDataSource
	f *DataSourceFamily[M]
}

var _ datasource.DataSourceWithConfigure = (*DataSource[DataSourceMetadata, *DataSourceMetadata])(nil)

// NewDataSource returns the DataSource of family f.
func NewDataSource[M any, P dataSourceModel[M]](f *DataSourceFamily[M]) *DataSource[M, P] {
	if f.Attributes == nil || f.Flatten == nil {
		panic(fmt.Sprintf("object.NewDataSource(%s): Attributes and Flatten are required", f.Kind.ResourceType))
	}
	return &DataSource[M, P]{f: f}
}

func (d *DataSource[M, P]) Metadata(_ context.Context, _ datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = d.f.Kind.ResourceType
}

func (d *DataSource[M, P]) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := dataSourceMetadataAttributes(d.f.Kind.Kind)
	maps.Copy(attrs, d.f.Attributes())
	resp.Schema = schema.Schema{MarkdownDescription: d.f.Description, Attributes: attrs}
}

func (d *DataSource[M, P]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m M
	if resp.Diagnostics.Append(tfvalues.GetConfig(ctx, req.Config, &m)...); resp.Diagnostics.HasError() {
		return
	}
	md := P(&m).dataSourceMetadata()
	live, out, diags := d.f.Kind.Lookup(ctx, d.Meta, *md, d.f.Hint)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	*md = out
	if resp.Diagnostics.Append(d.f.Flatten(ctx, live, &m)...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(tfvalues.SetState(ctx, &resp.State, &m)...)
}
