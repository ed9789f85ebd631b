package object

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// Operation is the step of the resource lifecycle a family's hook runs in.
type Operation int

// The operations that call a family's hooks (and OpDelete, for Deadline).
const (
	OpCreate Operation = iota + 1
	OpRead
	OpUpdate
	OpDelete
)

func (o Operation) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpRead:
		return "read"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("Operation(%d)", int(o))
}

// Call is what a hook gets besides the model: the operation it runs in and
// the provider's clients.
type Call struct {
	Op   Operation
	Meta *conn.Meta
}

// Timeouts are a resource's defaults for the `timeouts` block.
type Timeouts struct {
	Create, Update, Delete time.Duration
}

// PrivateState is the part of the framework's private state a hook may
// write (the create and update responses offer it).
type PrivateState interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// Family is what one single-object resource family supplies to Resource:
// its kind, schema and model conversions, and the hooks that make it
// different. Everything else (reading the plan and the timeouts, applying,
// waiting, saving the state, removing a vanished object, deleting, import)
// is Resource's and behaves the same for every family.
//
// M is the resource's model. It must embed Metadata and have the
// `timeouts` block (Resource reads the identity and the limits through the
// schema's attributes, name, namespace and timeouts).
type Family[M any] struct {
	// Kind is the object the resource manages; its ResourceType is the
	// resource's type.
	Kind Kind
	// Schema is the resource's schema.
	Schema func(context.Context) schema.Schema
	// Timeouts are the defaults of the timeouts block.
	Timeouts Timeouts
	// Exclusive lists the top-level fields the resource declares in full
	// (e.g. "spec"): an update applies with ApplyExclusive over them, so a
	// field another manager added below them is removed. Empty: a forced
	// apply, which takes back what others changed but keeps what they
	// added.
	Exclusive []string
	// DeleteOptions are used to delete the object (e.g. foreground
	// propagation, so that destroy returns once the dependents are gone).
	DeleteOptions kube.DeleteOptions

	// Build is the object the plan describes (expand). Required.
	Build func(ctx context.Context, plan *M) (*unstructured.Unstructured, diag.Diagnostics)
	// Refresh brings m in line with live (flatten): identity, managed
	// metadata, spec in the model's spelling, status. On OpRead m is the
	// prior state, which after an import holds only the identity. Required.
	Refresh func(ctx context.Context, c Call, live *unstructured.Unstructured, m *M) diag.Diagnostics

	// Check, if set, runs after Build and before the object is written;
	// its errors stop the write. state is nil on create.
	Check func(ctx context.Context, c Call, plan, state *M) diag.Diagnostics
	// Unchanged, if set, says that an update changes nothing in the object
	// (only Terraform-side attributes such as timeouts differ): the object
	// is then not written but read (one GET), so its generation stays and
	// its controller has nothing to do.
	Unchanged func(ctx context.Context, plan, state *M) bool
	// Record, if set, runs after a successful write, to keep what was
	// applied in the private state.
	Record func(ctx context.Context, plan *M, private PrivateState) diag.Diagnostics
	// FastRead opts the resource's ReadResource into package fastpath's
	// read fast path (a refresh of an unchanged object answered from the
	// read marker in the private state, with one GET and no conversion).
	// Set it only when Refresh on OpRead is a deterministic function of
	// the state, the live object and the field manager: no clock, no
	// other request, nothing from the environment. (An import's first
	// Read may do more: it has an import marker in the private state,
	// which keeps it off the fast path.)
	FastRead bool

	// Wait, if set, runs after a successful write, and waits (if the plan
	// asks for it) until the object is what the plan wants. It returns the
	// object as last seen (nil when it saw none), from which the state is
	// then made, also when the wait fails. state is nil on create.
	Wait func(ctx context.Context, c Call, live *unstructured.Unstructured, plan, state *M) (*unstructured.Unstructured, diag.Diagnostics)

	// ConfigValidators, if set, are the resource's declarative checks
	// across attributes (resource.ResourceWithConfigValidators).
	ConfigValidators []resource.ConfigValidator
	// ValidateConfig, if set, runs the checks across attributes that the
	// attribute validators cannot make (resource.ResourceWithValidateConfig).
	ValidateConfig func(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse)
	// ModifyPlan, if set, modifies or checks the plan of a create or an
	// update (resource.ResourceWithModifyPlan); it is not called for a
	// destroy. meta is the provider's clients, as Configure set them.
	ModifyPlan func(ctx context.Context, meta *conn.Meta, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse)
}

// Resource is a single-object resource made from a Family: it implements
// resource.Resource with Configure and ImportState, and ValidateConfig,
// ConfigValidators and ModifyPlan through the family's hooks (doing
// nothing where the family has none).
//
// The rules it keeps for every family:
//   - Create refuses to take over an existing object (Kind.Create), Update
//     forces the apply (exclusively below Family.Exclusive), both within
//     the `timeouts` limit.
//   - After a write, the state is made from the object the API server
//     returned or the wait last saw, so no further GET is needed.
//   - A failed wait still saves the state: the object exists, and
//     Terraform must know it (after a create it is tainted and replaced by
//     the next apply). The error says so (stateSaved).
//   - Read removes the resource from the state when the object (or its
//     kind, its CRD removed) is gone, so the next plan recreates it; a
//     cluster serving only other versions of the kind is an error.
//   - Delete waits until the object is gone; an object already gone is
//     success.
//   - Import takes `<namespace>/<name>` (or `<name>`); Read fills in the
//     rest.
type Resource[M any] struct {
	Configured
	f *Family[M]
}

// NewResource returns the Resource of family f.
func NewResource[M any](f *Family[M]) *Resource[M] {
	if f.Build == nil || f.Refresh == nil || f.Schema == nil {
		panic(fmt.Sprintf("object.NewResource(%s): Schema, Build and Refresh are required", f.Kind.ResourceType))
	}
	return &Resource[M]{f: f}
}

var (
	_ resource.Resource                     = (*Resource[struct{}])(nil)
	_ resource.ResourceWithConfigure        = (*Resource[struct{}])(nil)
	_ resource.ResourceWithImportState      = (*Resource[struct{}])(nil)
	_ resource.ResourceWithConfigValidators = (*Resource[struct{}])(nil)
	_ resource.ResourceWithValidateConfig   = (*Resource[struct{}])(nil)
	_ resource.ResourceWithModifyPlan       = (*Resource[struct{}])(nil)
)

var _ fastpath.Reader = (*Resource[struct{}])(nil)

// ReadFastPath is Family.FastRead (fastpath.Reader).
func (r *Resource[M]) ReadFastPath() bool { return r.f.FastRead }

// FastReadContext returns the provider's field manager (fastpath.Reader).
func (r *Resource[M]) FastReadContext(providerData any) (string, bool) {
	meta, diags := conn.FromProviderData(providerData)
	if diags.HasError() || meta == nil {
		return "", false
	}
	return meta.FieldManager(), true
}

// FastReadGet is the GET of Read (fastpath.Reader).
func (r *Resource[M]) FastReadGet(ctx context.Context, providerData any, key fastpath.ObjectKey) (fastpath.Seen, any, bool) {
	meta, diags := conn.FromProviderData(providerData)
	if diags.HasError() {
		return fastpath.Seen{}, nil, false
	}
	return r.f.Kind.fastGet(ctx, meta, key)
}

func (r *Resource[M]) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = r.f.Kind.ResourceType
}

func (r *Resource[M]) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	// Nested attribute types computed once per schema.
	resp.Schema = tfvalues.PrecomputeTypes(r.f.Schema(ctx))
}

// ConfigValidators are Family.ConfigValidators.
func (r *Resource[M]) ConfigValidators(context.Context) []resource.ConfigValidator {
	return r.f.ConfigValidators
}

// ValidateConfig runs Family.ValidateConfig, if the family has it.
func (r *Resource[M]) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	if r.f.ValidateConfig != nil {
		r.f.ValidateConfig(ctx, req, resp)
	}
}

// ModifyPlan runs Family.ModifyPlan, if the family has it, on the plan of
// a create or an update; a destroy's plan is left as it is.
func (r *Resource[M]) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.f.ModifyPlan == nil || req.Plan.Raw.IsNull() {
		return
	}
	r.f.ModifyPlan(ctx, r.Meta, req, resp)
}

// ImportState takes `<namespace>/<name>` (or `<name>` in the default
// namespace); Read then fills in everything else from the live object.
func (r *Resource[M]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ImportState(ctx, req, resp)
}

func (r *Resource[M]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan M
	if resp.Diagnostics.Append(tfvalues.GetPlan(ctx, req.Plan, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	ctx, c, cancel, obj, ok := r.begin(ctx, req.Plan, OpCreate, &plan, nil, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	live, diags := r.create(ctx, obj)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		if live != nil {
			// Created, but not finished (kube.PartialCreateError): saved,
			// so Terraform marks it tainted and the next apply replaces
			// it, instead of an orphan that only an import recovers.
			resp.Diagnostics.Append(r.f.Refresh(ctx, c, live, &plan)...)
			resp.Diagnostics.Append(tfvalues.SetState(ctx, &resp.State, &plan)...)
		}
		return
	}
	r.written(ctx, c, live, &plan, nil, &resp.State, resp.Private, &resp.Diagnostics)
}

// create is the one step that writes a new object: Kind.Create, which
// refuses to take over an object that already exists.
func (r *Resource[M]) create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, diag.Diagnostics) {
	return r.f.Kind.Create(ctx, r.Meta, obj)
}

// update is the one step that writes a changed object: an apply that
// takes back what others changed with ordinary writes (drift) and, with
// force_conflicts, what other server-side appliers own (Kind.Apply),
// exclusive below Family.Exclusive.
func (r *Resource[M]) update(ctx context.Context, obj *unstructured.Unstructured, wo WriteOptions) (*unstructured.Unstructured, diag.Diagnostics) {
	if len(r.f.Exclusive) > 0 {
		return r.f.Kind.ApplyExclusive(ctx, r.Meta, obj, wo, r.f.Exclusive...)
	}
	return r.f.Kind.Apply(ctx, r.Meta, obj, wo)
}

// writeOptions reads the plan's force_conflicts.
func writeOptions(ctx context.Context, plan tfsdk.Plan, diags *diag.Diagnostics) WriteOptions {
	var force types.Bool
	diags.Append(tfvalues.GetPlanAttribute(ctx, plan, "force_conflicts", &force)...)
	return WriteOptions{ForceConflicts: force.ValueBool()}
}

func (r *Resource[M]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state M
	if resp.Diagnostics.Append(tfvalues.GetState(ctx, req.State, &state)...); resp.Diagnostics.HasError() {
		return
	}
	ns, name, diags := identity(ctx, req.State)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	live, found, diags := r.f.Kind.Read(ctx, r.Meta, ns, name)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	imported, importing := pendingImport(ctx, req.Private)
	if !found && importing {
		resp.Diagnostics.Append(importNotFound(r.f.Kind, imported))
		return
	}
	if importing {
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImportRead, []byte(`true`))...)
	}
	if !found {
		tflog.Info(ctx, fmt.Sprintf("%s is gone; removing it from the state", r.f.Kind.Kind), map[string]any{
			"namespace": ns, "name": name,
		})
		resp.State.RemoveResource(ctx)
		return
	}
	if resp.Diagnostics.Append(r.f.Refresh(ctx, Call{Op: OpRead, Meta: r.Meta}, live, &state)...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(tfvalues.SetState(ctx, &resp.State, &state)...)
}

func (r *Resource[M]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state M
	resp.Diagnostics.Append(tfvalues.GetPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(tfvalues.GetState(ctx, req.State, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, c, cancel, obj, ok := r.begin(ctx, req.Plan, OpUpdate, &plan, &state, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	var live *unstructured.Unstructured
	var diags diag.Diagnostics
	if r.f.Unchanged != nil && r.f.Unchanged(ctx, &plan, &state) {
		live, diags = r.reread(ctx, obj)
	} else {
		live, diags = r.update(ctx, obj, writeOptions(ctx, req.Plan, &resp.Diagnostics))
	}
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	r.written(ctx, c, live, &plan, &state, &resp.State, resp.Private, &resp.Diagnostics)
}

// reread is the update of an object the plan does not change: one GET.
func (r *Resource[M]) reread(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, diag.Diagnostics) {
	ref := r.f.Kind.Ref(obj.GetNamespace(), obj.GetName())
	tflog.Debug(ctx, "no change to the object itself; not writing it", map[string]any{"object": ref.String()})
	live, found, diags := r.f.Kind.Read(ctx, r.Meta, ref.Namespace, ref.Name)
	if !found && !diags.HasError() {
		diags.AddError(fmt.Sprintf("%s disappeared", ref),
			fmt.Sprintf("%s was deleted while Terraform updated it. Apply again to create it anew.", ref))
	}
	return live, diags
}

func (r *Resource[M]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	ns, name, diags := identity(ctx, req.State)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	var t timeouts.Value
	if resp.Diagnostics.Append(tfvalues.GetStateAttribute(ctx, req.State, "timeouts", &t)...); resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, ok := Deadline(ctx, t, OpDelete, r.f.Timeouts.Delete, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	resp.Diagnostics.Append(r.f.Kind.Delete(ctx, r.Meta, ns, name, r.f.DeleteOptions)...)
}

// written finishes a create or update once the object is written: record
// what was applied, wait (if the family waits), refresh the plan from the
// object last seen and save it, also when the wait failed.
func (r *Resource[M]) written(ctx context.Context, c Call, live *unstructured.Unstructured, plan, prior *M, state *tfsdk.State, private PrivateState, out *diag.Diagnostics) {
	if r.f.Record != nil {
		out.Append(r.f.Record(ctx, plan, private)...)
	}
	var waitDiags diag.Diagnostics
	if r.f.Wait != nil {
		var seen *unstructured.Unstructured
		seen, waitDiags = r.f.Wait(ctx, c, live, plan, prior)
		if seen != nil {
			live = seen
		}
	}
	// For package fastpath's read marker after an apply: the object the
	// new state is made from.
	fastpath.WriteSlotFrom(ctx).Wrote(seenOf(r.f.Kind.objectKey(live.GetNamespace(), live.GetName()), live, true), live)
	out.Append(r.f.Refresh(ctx, c, live, plan)...)
	out.Append(tfvalues.SetState(ctx, state, plan)...)
	out.Append(stateSaved(waitDiags, c.Op, r.f.Kind.Ref(live.GetNamespace(), live.GetName()))...)
}

// stateSaved adds to each error of a failed wait what became of the
// object: it was written and is in the state, and what Terraform does with
// it next. Without that, a failed apply reads as if nothing had been done.
func stateSaved(waitDiags diag.Diagnostics, op Operation, ref kube.ObjectRef) diag.Diagnostics {
	if !waitDiags.HasError() {
		return waitDiags
	}
	var note string
	switch op {
	case OpCreate:
		note = fmt.Sprintf("%s was created and is saved in the Terraform state, marked tainted: the next apply "+
			"replaces it. To keep it instead, run terraform untaint on the resource.", ref)
	default:
		note = fmt.Sprintf("The change to %s was applied and is saved in the Terraform state, so the next plan does "+
			"not show it again; the object stays as it is until the cause above is fixed.", ref)
	}
	out := make(diag.Diagnostics, 0, len(waitDiags))
	for _, d := range waitDiags {
		if d.Severity() != diag.SeverityError {
			out = append(out, d)
			continue
		}
		out.AddError(d.Summary(), d.Detail()+"\n\n"+note)
	}
	return out
}

// begin starts a create or update (op): it bounds ctx by the plan's
// timeouts block (the family's default for op where the block leaves it
// out), builds the object the plan describes and runs the family's Check
// on it (state is nil on create). ok is false when any of that failed, the
// errors in diags; cancel is always safe to call.
func (r *Resource[M]) begin(ctx context.Context, raw tfsdk.Plan, op Operation, plan, state *M, diags *diag.Diagnostics) (_ context.Context, c Call, cancel context.CancelFunc, obj *unstructured.Unstructured, ok bool) {
	c = Call{Op: op, Meta: r.Meta}
	var t timeouts.Value
	if diags.Append(tfvalues.GetPlanAttribute(ctx, raw, "timeouts", &t)...); diags.HasError() {
		return ctx, c, func() {}, nil, false
	}
	def := r.f.Timeouts.Create
	if op == OpUpdate {
		def = r.f.Timeouts.Update
	}
	if ctx, cancel, ok = Deadline(ctx, t, op, def, diags); !ok {
		return ctx, c, cancel, nil, false
	}
	obj, d := r.f.Build(ctx, plan)
	diags.Append(d...)
	if r.f.Check != nil && !diags.HasError() {
		diags.Append(r.f.Check(ctx, c, plan, state)...)
	}
	return ctx, c, cancel, obj, !diags.HasError()
}

// identity reads namespace and name from a state.
func identity(ctx context.Context, s tfsdk.State) (namespace, name string, diags diag.Diagnostics) {
	var ns, n string
	diags.Append(s.GetAttribute(ctx, path.Root("namespace"), &ns)...)
	diags.Append(s.GetAttribute(ctx, path.Root("name"), &n)...)
	return ns, n, diags
}
