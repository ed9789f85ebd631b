package object

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// An import ID names the object to adopt, and the configuration names the
// object the resource manages. When they differ, Terraform plans "import,
// then replace": the replacement deletes the imported object, which may be a
// live sandbox someone else uses. ImportState leaves a marker in the private
// state and the plan of name refuses such an import, naming both objects.
//
// The marker stays in the private state until a plan finds the names equal
// (Terraform keeps the private state of an import that changes nothing), so
// it only speaks for a day after the import: a later rename is a rename.
const privateImported = "agentsandbox_imported"

const importMarkerLifetime = 24 * time.Hour

type importMarker struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	At        time.Time `json:"at"`
}

// markImported records which object an import ID named.
func markImported(ctx context.Context, resp *resource.ImportStateResponse, namespace, name string) {
	raw, err := json.Marshal(importMarker{Namespace: namespace, Name: name, At: time.Now().UTC()})
	if err != nil {
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImported, raw)...)
}

// importedName is the plan modifier of name that refuses an import whose ID
// names another object than the configuration.
type importedName struct{ kind string }

func (m importedName) Description(context.Context) string {
	return "refuses an import whose ID names another object than the configuration"
}

func (m importedName) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

// InertWhenUnchanged marks the modifier as a no-op on an unchanged plan
// without private state (fastpath.InertWhenUnchanged): it acts only on an
// import marker, which lives in the private state.
func (importedName) InertWhenUnchanged() {}

// InertOnCreate marks the modifier as a no-op without prior state
// (fastpath.InertOnCreate): PlanModifyString returns at once when the
// state is null.
func (importedName) InertOnCreate() {}

func (m importedName) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.Private == nil || req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	raw, diags := req.Private.GetKey(ctx, privateImported)
	if diags.HasError() || len(raw) == 0 {
		return
	}
	var mk importMarker
	if json.Unmarshal(raw, &mk) != nil || time.Since(mk.At) > importMarkerLifetime {
		return
	}
	var name, namespace types.String
	resp.Diagnostics.Append(tfvalues.GetPlanAttribute(ctx, req.Plan, "name", &name)...)
	resp.Diagnostics.Append(tfvalues.GetPlanAttribute(ctx, req.Plan, "namespace", &namespace)...)
	if resp.Diagnostics.HasError() || name.IsUnknown() || namespace.IsUnknown() {
		return
	}
	if name.ValueString() == mk.Name && namespace.ValueString() == mk.Namespace {
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateImported, nil)...)
		return
	}
	at := path.Root("name")
	if name.ValueString() == mk.Name {
		at = path.Root("namespace")
	}
	imported, configured := ID(mk.Namespace, mk.Name), ID(namespace.ValueString(), name.ValueString())
	resp.Diagnostics.AddAttributeError(at, "Import ID names another object",
		fmt.Sprintf("The import ID %q names the %s %s, but this resource's configuration names %s. Terraform would "+
			"import %s and then replace it, deleting %s to create %s. If you meant to adopt %s, set name and "+
			"namespace to match it; if you meant %s, use the import ID %q.",
			imported, m.kind, imported, configured, imported, imported, configured, imported, configured, configured))
}

// privateImportRead is set by the first Read that finds the imported
// object: from then on a missing object is one deleted out of band (removed
// from the state), not a mistaken import ID.
const privateImportRead = "agentsandbox_import_read"

type privateData interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// pendingImport returns the import marker when the Read at hand is the one
// that follows ImportState (no Read has found the object since).
func pendingImport(ctx context.Context, p privateData) (importMarker, bool) {
	var mk importMarker
	if p == nil {
		return mk, false
	}
	raw, diags := p.GetKey(ctx, privateImported)
	if diags.HasError() || len(raw) == 0 || json.Unmarshal(raw, &mk) != nil {
		return mk, false
	}
	if done, _ := p.GetKey(ctx, privateImportRead); len(done) > 0 {
		return mk, false
	}
	return mk, true
}

// importNotFound is the error of an import whose object does not exist,
// instead of Terraform's "Cannot import non-existent remote object" with
// its advice about regions and endpoints.
func importNotFound(k Kind, mk importMarker) diag.Diagnostic {
	id := ID(mk.Namespace, mk.Name)
	return diag.NewErrorDiagnostic(fmt.Sprintf("%s %s not found", k.Kind, id),
		fmt.Sprintf("The import ID %q names the %s %q in namespace %q, and the cluster has no such object (%s). "+
			"Check the ID (`<namespace>/<name>`, or `<name>` for the %q namespace) and that the provider points at "+
			"the cluster that has it. To create the object instead, remove the import: this resource then creates it.",
			id, k.Kind, mk.Name, mk.Namespace, k.GVR.Resource+"."+k.GVR.Group+"/"+k.GVR.Version, DefaultNamespace))
}
