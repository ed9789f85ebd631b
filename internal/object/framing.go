package object

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// The framing every resource and data source shares, including those that
// are not one Kubernetes object (the controller's installation, the GKE
// node pool and add-on, the cluster data sources): Configure keeps the
// provider's clients, and Deadline bounds an operation by the resource's
// timeouts block; Query is the whole of a data source that reads
// something other than one object. Resource and DataSource use them too.

// Configured implements Configure for a resource: embed it and use Meta.
type Configured struct {
	Meta *conn.Meta
}

func (c *Configured) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	c.Meta = configure(req.ProviderData, &resp.Diagnostics)
}

// ConfiguredDataSource implements Configure for a data source: embed it
// and use Meta.
type ConfiguredDataSource struct {
	Meta *conn.Meta
}

func (c *ConfiguredDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	c.Meta = configure(req.ProviderData, &resp.Diagnostics)
}

// QueryFamily is what a data source that is not one Kubernetes object
// (the cluster's capabilities, a GKE cluster, the isolation report)
// supplies to Query: its type, its schema, and how it completes its
// configuration into its state.
//
// M is the data source's model, configuration and computed attributes
// alike.
type QueryFamily[M any] struct {
	// TypeSuffix follows the provider's type name: "_cluster" makes
	// agentsandbox_cluster.
	TypeSuffix string
	// Schema returns the data source's schema.
	Schema func() schema.Schema
	// Read completes m, read from the configuration, with what it reads
	// through meta. m is the state unless the diagnostics hold an error.
	Read func(ctx context.Context, meta *conn.Meta, m *M) diag.Diagnostics
}

// Query is the data source of a QueryFamily.
type Query[M any] struct {
	ConfiguredDataSource
	f *QueryFamily[M]
}

var _ datasource.DataSourceWithConfigure = (*Query[struct{}])(nil)

// NewQuery returns the data source of family f.
func NewQuery[M any](f *QueryFamily[M]) *Query[M] {
	if f.Schema == nil || f.Read == nil {
		panic(fmt.Sprintf("object.NewQuery(%s): Schema and Read are required", f.TypeSuffix))
	}
	return &Query[M]{f: f}
}

func (q *Query[M]) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + q.f.TypeSuffix
}

func (q *Query[M]) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = q.f.Schema()
}

func (q *Query[M]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m M
	if resp.Diagnostics.Append(req.Config.Get(ctx, &m)...); resp.Diagnostics.HasError() {
		return
	}
	if resp.Diagnostics.Append(q.f.Read(ctx, q.Meta, &m)...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// configure is every Configure: the provider's clients from its data (nil
// before the provider is configured, e.g. during validation).
func configure(providerData any, diags *diag.Diagnostics) *conn.Meta {
	meta, d := conn.FromProviderData(providerData)
	diags.Append(d...)
	return meta
}

// Deadline bounds ctx by the timeouts block t for op (create, update or
// delete), def when the block leaves it out. When t cannot be read, the
// error is in diags, ok is false and ctx is returned unbounded; cancel is
// always safe to call.
func Deadline(ctx context.Context, t timeouts.Value, op Operation, def time.Duration, diags *diag.Diagnostics) (_ context.Context, cancel context.CancelFunc, ok bool) {
	var timeout time.Duration
	var d diag.Diagnostics
	switch op {
	case OpCreate:
		timeout, d = t.Create(ctx, def)
	case OpUpdate:
		timeout, d = t.Update(ctx, def)
	case OpDelete:
		timeout, d = t.Delete(ctx, def)
	default:
		timeout, d = t.Read(ctx, def)
	}
	if diags.Append(d...); diags.HasError() {
		return ctx, func() {}, false
	}
	ctx, cancel = context.WithTimeout(ctx, timeout)
	return ctx, cancel, true
}

// PlanInputs reads what a ModifyPlan works from: the plan and the
// configuration, and the state when the resource exists (nil when it is
// being created). ok is false on destroy (nothing to plan) and when any of
// them cannot be read (the error is in diags).
func PlanInputs[M any](ctx context.Context, req resource.ModifyPlanRequest, diags *diag.Diagnostics) (plan, config M, state *M, ok bool) {
	if req.Plan.Raw.IsNull() {
		return plan, config, nil, false
	}
	diags.Append(tfvalues.GetPlan(ctx, req.Plan, &plan)...)
	diags.Append(tfvalues.GetConfig(ctx, req.Config, &config)...)
	if !req.State.Raw.IsNull() {
		state = new(M)
		diags.Append(tfvalues.GetState(ctx, req.State, state)...)
	}
	return plan, config, state, !diags.HasError()
}
