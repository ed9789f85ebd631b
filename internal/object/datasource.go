package object

import (
	"context"
	"fmt"

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

// DataSourceMetadata is the model of a data source's identity and metadata
// attributes, for data source models to embed. Unlike a resource, a data
// source manages nothing, so labels and annotations are all of them.
type DataSourceMetadata struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Namespace   types.String `tfsdk:"namespace"`
	Labels      types.Map    `tfsdk:"labels"`
	Annotations types.Map    `tfsdk:"annotations"`
}

// DataSourceMetadataAttributes returns the id, name, namespace, labels and
// annotations attributes of a data source reading one object of kind.
func DataSourceMetadataAttributes(kind string) map[string]schema.Attribute {
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
	var diags diag.Diagnostics
	out := DataSourceMetadata{
		ID:        types.StringValue(ID(live.GetNamespace(), live.GetName())),
		Name:      types.StringValue(live.GetName()),
		Namespace: types.StringValue(live.GetNamespace()),
	}
	var d diag.Diagnostics
	out.Labels, d = types.MapValueFrom(ctx, types.StringType, tfvalues.NonNilMap(live.GetLabels()))
	diags.Append(d...)
	out.Annotations, d = types.MapValueFrom(ctx, types.StringType, tfvalues.NonNilMap(live.GetAnnotations()))
	diags.Append(d...)
	return out, diags
}

// DataSourceFamily is what a data source reading one object supplies to
// DataSource: its kind, schema, a hint for a missing object, and how the
// live object fills the model.
//
// M is the data source's model; it must embed DataSourceMetadata.
type DataSourceFamily[M any] struct {
	// Kind is the object the data source reads.
	Kind Kind
	// TypeName is the data source type without the provider's prefix.
	TypeName string
	// Schema is the data source's schema; DataSourceMetadataAttributes
	// gives its identity attributes.
	Schema func(context.Context) schema.Schema
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
	f    *DataSourceFamily[M]
	meta *conn.Meta
}

var _ datasource.DataSourceWithConfigure = (*DataSource[DataSourceMetadata, *DataSourceMetadata])(nil)

// NewDataSource returns the DataSource of family f.
func NewDataSource[M any, P dataSourceModel[M]](f *DataSourceFamily[M]) *DataSource[M, P] {
	if f.Schema == nil || f.Flatten == nil {
		panic(fmt.Sprintf("object.NewDataSource(%s): Schema and Flatten are required", f.TypeName))
	}
	return &DataSource[M, P]{f: f}
}

func (d *DataSource[M, P]) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.f.TypeName
}

func (d *DataSource[M, P]) Schema(ctx context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = d.f.Schema(ctx)
}

func (d *DataSource[M, P]) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	meta, diags := conn.FromProviderData(req.ProviderData)
	resp.Diagnostics.Append(diags...)
	d.meta = meta
}

func (d *DataSource[M, P]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m M
	if resp.Diagnostics.Append(tfvalues.GetConfig(ctx, req.Config, &m)...); resp.Diagnostics.HasError() {
		return
	}
	md := P(&m).dataSourceMetadata()
	live, out, diags := d.f.Kind.Lookup(ctx, d.meta, *md, d.f.Hint)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	*md = out
	if resp.Diagnostics.Append(d.f.Flatten(ctx, live, &m)...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(tfvalues.SetState(ctx, &resp.State, &m)...)
}
