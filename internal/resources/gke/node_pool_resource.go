package gke

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

var (
	_ resource.Resource                   = (*nodePoolResource)(nil)
	_ resource.ResourceWithConfigure      = (*nodePoolResource)(nil)
	_ resource.ResourceWithImportState    = (*nodePoolResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*nodePoolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*nodePoolResource)(nil)
)

// NewNodePoolResource is registered in the provider.
func NewNodePoolResource() resource.Resource { return &nodePoolResource{} }

type nodePoolResource struct {
	object.Configured
}

// privateEtag is the private-state key of the etag GKE gave the pool when
// it was last read, sent with the first update so that an update planned
// against a pool that changed since is refused (ABORTED) instead of
// overwriting the change.
const privateEtag = "etag"

func (r *nodePoolResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_gke_node_pool"
}

func (r *nodePoolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	project, diags := resolveProject(plan.Project, r.Meta)
	resp.Diagnostics.Append(diags...)
	ctx, cancel, client, ok := begin(ctx, r.Meta, plan.Timeouts, object.OpCreate, defaultNodePoolTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	plan.Project = types.StringValue(project)
	name := plan.poolName()

	np, diags := expandNodePool(ctx, &plan)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Info(ctx, "creating GKE node pool", map[string]any{"node_pool": name.String()})
	sent := time.Now()
	cctx, lost := gkeapi.WithLostAnswerRecord(ctx)
	_, err := client.RunOperation(cctx, func() (*container.Operation, error) {
		return client.Service.Projects.Locations.Clusters.NodePools.Create(name.ClusterName.String(),
			&container.CreateNodePoolRequest{NodePool: np}).Context(cctx).Do()
	})
	if gkeapi.IsAlreadyExists(err) && lost.Load() {
		err = adoptLostAnswer(ctx, client, name, "CREATE_NODE_POOL", sent, err)
	}
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsCreate, name.String()))
		// An operation that failed after GKE created the pool leaves it in
		// ERROR state. Record it, so Terraform marks it tainted and the
		// next apply replaces it rather than failing with "already exists".
		if got, gerr := client.Service.Projects.Locations.Clusters.NodePools.Get(name.String()).Context(ctx).Do(); gerr == nil {
			r.setState(ctx, got, &plan, &resp.State, resp.Private, &resp.Diagnostics)
		}
		return
	}
	got, err := client.Service.Projects.Locations.Clusters.NodePools.Get(name.String()).Context(ctx).Do()
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsGet, name.String()))
		return
	}
	r.setState(ctx, got, &plan, &resp.State, resp.Private, &resp.Diagnostics)
}

// adoptLostAnswer handles a mutation that met its own earlier attempt: a
// connection broke after the request was sent (the transport resent it),
// and GKE answered the resend with failed, an error such as ALREADY_EXISTS
// for a create or "already being deleted" for a delete. If GKE started an
// operation of opType on this pool since the request was first sent, that
// operation is the lost answer's: wait for it, and the change is made once.
// Otherwise failed stands (for a create: the pool is someone else's).
func adoptLostAnswer(ctx context.Context, client *gkeapi.Client, name gkeapi.NodePoolName, opType string, sent time.Time, failed error) error {
	op, err := client.FindOperation(ctx, name.Parent(), opType, name.String(), sent)
	if err != nil || op == nil {
		tflog.Warn(ctx, "a GKE node pool request whose answer was lost failed when resent; no operation of ours found",
			map[string]any{"node_pool": name.String(), "operation_type": opType, "error": fmt.Sprint(err)})
		return failed
	}
	tflog.Info(ctx, "the answer to a GKE node pool request was lost; waiting for the operation it started",
		map[string]any{"node_pool": name.String(), "operation": op.Name, "operation_type": opType})
	_, err = client.WaitOperation(ctx, op)
	return err
}

// stateSetter is what Create, Read and Update responses share.
type stateSetter interface {
	Set(context.Context, any) diag.Diagnostics
}

type privateSetter interface {
	SetKey(context.Context, string, []byte) diag.Diagnostics
}

// setState flattens GKE's pool over prior into the response state and keeps
// its etag in private state.
func (r *nodePoolResource) setState(ctx context.Context, np *container.NodePool, prior *nodePoolModel, st stateSetter, priv privateSetter, diags *diag.Diagnostics) {
	m, d := flattenNodePool(ctx, np, prior)
	diags.Append(d...)
	if d.HasError() {
		return
	}
	diags.Append(st.Set(ctx, &m)...)
	if priv != nil && np.Etag != "" {
		raw, _ := json.Marshal(np.Etag)
		diags.Append(priv.SetKey(ctx, privateEtag, raw)...)
	}
}

func (r *nodePoolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	client, diags := gkeClient(ctx, r.Meta)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	name := state.poolName()
	got, err := client.Service.Projects.Locations.Clusters.NodePools.Get(name.String()).Context(ctx).Do()
	if gkeapi.IsNotFound(err) {
		tflog.Warn(ctx, "GKE node pool is gone; removing it from state", map[string]any{"node_pool": name.String()})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsGet, name.String()))
		return
	}
	if got.Config == nil || got.Config.SandboxConfig == nil ||
		(got.Config.SandboxConfig.Type != sandboxGVisor && got.Config.SandboxConfig.Type != sandboxMicroVM) {
		resp.Diagnostics.AddAttributeWarning(path.Root("sandbox_type"), "Not a GKE Sandbox node pool",
			fmt.Sprintf("GKE reports node pool %s without sandbox_config.type GVISOR or MICROVM. This resource manages "+
				"GKE Sandbox pools only; the plan replaces the pool with one of the configured sandbox_type. To keep a "+
				"regular pool, manage it with another resource and remove this one from state (terraform state rm).", name))
	}
	r.setState(ctx, got, &state, &resp.State, resp.Private, &resp.Diagnostics)
}

// Update applies each change through the API call GKE offers for it, one
// operation at a time (GKE runs one per cluster anyway), in this order:
// node pool updates (zones alone first, as the API recommends, then
// version, node shape, labels, taints, workload metadata, upgrade
// settings), then autoscaling and size, then management. The first update
// carries the etag read at plan time, so an update planned against a pool
// that changed since is refused rather than overwriting the change.
func (r *nodePoolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state nodePoolModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, client, ok := begin(ctx, r.Meta, plan.Timeouts, object.OpUpdate, defaultNodePoolTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	name := plan.poolName().String()
	pools := client.Service.Projects.Locations.Clusters.NodePools

	etag := ""
	if raw, d := req.Private.GetKey(ctx, privateEtag); !d.HasError() && len(raw) > 0 {
		_ = json.Unmarshal(raw, &etag)
	}
	steps, diags := planNodePoolUpdates(ctx, &plan, &state)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	sizeApplied := false
	for i, st := range steps {
		tflog.Info(ctx, "updating GKE node pool", map[string]any{"node_pool": name, "change": st.what, "step": i + 1, "of": len(steps)})
		var call func() (*container.Operation, error)
		switch {
		case st.update != nil:
			if etag != "" {
				st.update.Etag, etag = etag, ""
			}
			u := st.update
			call = func() (*container.Operation, error) { return pools.Update(name, u).Context(ctx).Do() }
		case st.size != nil:
			s := st.size
			call = func() (*container.Operation, error) { return pools.SetSize(name, s).Context(ctx).Do() }
		case st.autoscaling != nil:
			a := st.autoscaling
			call = func() (*container.Operation, error) { return pools.SetAutoscaling(name, a).Context(ctx).Do() }
		case st.management != nil:
			m := st.management
			call = func() (*container.Operation, error) { return pools.SetManagement(name, m).Context(ctx).Do() }
		}
		if _, err := client.RunOperation(ctx, call); err != nil {
			d := gkeapi.ErrorDiagnostic(err, st.method, name)
			resp.Diagnostics.AddError(d.Summary(), fmt.Sprintf("Changing %s (step %d of %d).\n%s", st.what, i+1, len(steps), d.Detail())+
				partialNote(i))
			r.recordPartialUpdate(ctx, client, name, &plan, &state, sizeApplied, resp)
			return
		}
		if st.size != nil {
			sizeApplied = true
		}
	}
	got, err := pools.Get(name).Context(ctx).Do()
	if err != nil {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsGet, name))
		return
	}
	r.setState(ctx, got, &plan, &resp.State, resp.Private, &resp.Diagnostics)
}

func partialNote(done int) string {
	if done == 0 {
		return ""
	}
	return fmt.Sprintf("\n\nThe %d change(s) before this one were applied and are recorded in the state.", done)
}

// recordPartialUpdate stores what GKE now has after a failed update, so
// that changes applied before the failure are not planned again and the
// next plan shows only what is left.
func (r *nodePoolResource) recordPartialUpdate(ctx context.Context, client *gkeapi.Client, name string, plan, state *nodePoolModel,
	sizeApplied bool, resp *resource.UpdateResponse) {
	// The operation may have been cut short by the timeout; reading must
	// not be.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*defaultRequestBudget)
	defer cancel()
	got, err := client.Service.Projects.Locations.Clusters.NodePools.Get(name).Context(rctx).Do()
	if err != nil {
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
		return
	}
	prior := *plan
	if !sizeApplied {
		prior.NodeCount = state.NodeCount
	}
	r.setState(ctx, got, &prior, &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *nodePoolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodePoolModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel, client, ok := begin(ctx, r.Meta, state.Timeouts, object.OpDelete, defaultNodePoolTimeout, &resp.Diagnostics)
	defer cancel()
	if !ok {
		return
	}
	pool := state.poolName()
	name := pool.String()
	tflog.Info(ctx, "deleting GKE node pool", map[string]any{"node_pool": name})
	sent := time.Now()
	dctx, lost := gkeapi.WithLostAnswerRecord(ctx)
	_, err := client.RunOperation(dctx, func() (*container.Operation, error) {
		return client.Service.Projects.Locations.Clusters.NodePools.Delete(name).Context(dctx).Do()
	})
	if err != nil && !gkeapi.IsNotFound(err) && lost.Load() {
		// Resent after its answer was lost, the delete meets its own
		// operation ("already being deleted").
		err = adoptLostAnswer(ctx, client, pool, "DELETE_NODE_POOL", sent, err)
	}
	if err != nil && !gkeapi.IsNotFound(err) {
		resp.Diagnostics.Append(gkeapi.ErrorDiagnostic(err, gkeapi.MethodNodePoolsDelete, name))
	}
}

// ImportState takes the pool's full resource name (also the zones/ form
// and API URLs, as gcloud and the console show them), and the IDs the
// Google provider's google_container_node_pool imports and keeps in its
// state: PROJECT/LOCATION/CLUSTER/NODE_POOL, and LOCATION/CLUSTER/NODE_POOL
// in the provider's gke.project.
func (r *nodePoolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	n, err := gkeapi.ParseNodePoolName(req.ID)
	if err != nil {
		var ok bool
		if n, ok = googleProviderID(req.ID, r.Meta); !ok {
			resp.Diagnostics.AddError("Invalid import ID",
				fmt.Sprintf("%v.\n\nImport a node pool by its full resource name, for example:\n\n"+
					"  terraform import agentsandbox_gke_node_pool.sandbox projects/my-project/locations/us-central1/clusters/my-cluster/nodePools/sandbox\n\n"+
					"or by the ID google_container_node_pool uses: my-project/us-central1/my-cluster/sandbox (or "+
					"us-central1/my-cluster/sandbox, in the provider's gke.project).", err))
			return
		}
	}
	for attrName, v := range map[string]string{
		"id": n.String(), "project": n.Project, "location": n.Location, "cluster": n.Cluster, "name": n.NodePool,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(attrName), v)...)
	}
}

// googleProviderID reads the import IDs of the Google provider's
// google_container_node_pool: PROJECT/LOCATION/CLUSTER/NODE_POOL, or
// LOCATION/CLUSTER/NODE_POOL with the provider's gke.project.
func googleProviderID(id string, meta *conn.Meta) (gkeapi.NodePoolName, bool) {
	parts := strings.Split(strings.TrimSpace(id), "/")
	if len(parts) == 3 && meta != nil && meta.GKEProject() != "" {
		parts = append([]string{meta.GKEProject()}, parts...)
	}
	if len(parts) != 4 {
		return gkeapi.NodePoolName{}, false
	}
	n := gkeapi.NodePoolName{
		ClusterName: gkeapi.ClusterName{Project: parts[0], Location: parts[1], Cluster: parts[2]},
		NodePool:    parts[3],
	}
	return n, n.Validate() == nil
}
