package object

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// ReservedPrefixes are label and annotation key prefixes that belong to the
// agent-sandbox controller; declaring them would fight with it.
var ReservedPrefixes = []string{"agents.x-k8s.io/", "extensions.agents.x-k8s.io/"}

// UserLabels are the labels under ReservedPrefixes a configuration may set:
// only upstream's CreatedByLabel, agents.x-k8s.io/created-by, which the
// claim controller reads from the claim and copies to the sandbox and its
// pod template (extensions/controllers/sandboxclaim_controller.go:527-558
// at v0.5.6).
var UserLabels = []string{agentsv1beta1.CreatedByLabel}

// DefaultNamespace is used when a resource does not name one.
const DefaultNamespace = "default"

// DataSourceMetadata is the model of the identity and metadata attributes
// every object resource and data source has. Data source models embed it
// (the framework promotes the fields of an embedded struct): a data source
// manages nothing, so its labels and annotations are all of the object's.
type DataSourceMetadata struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Namespace   types.String `tfsdk:"namespace"`
	Labels      types.Map    `tfsdk:"labels"`
	Annotations types.Map    `tfsdk:"annotations"`
}

// identityOf is the id, name and namespace of live; labels and annotations
// are left to the caller, which decides which of them to show.
func identityOf(live *unstructured.Unstructured) DataSourceMetadata {
	return DataSourceMetadata{
		ID:        types.StringValue(ID(live.GetNamespace(), live.GetName())),
		Name:      types.StringValue(live.GetName()),
		Namespace: types.StringValue(live.GetNamespace()),
	}
}

// Metadata is the model of a resource's identity and metadata attributes:
// DataSourceMetadata's, where labels and annotations hold only the keys the
// configuration manages, and force_conflicts. Resource models embed it, so
// every object resource has the same six attributes with the same rules.
type Metadata struct {
	DataSourceMetadata
	// ForceConflicts is the opt-in to take fields over from another
	// server-side applier (see Kind.Apply). It is a setting of this
	// resource, not a field of the object: kept as configured.
	ForceConflicts types.Bool `tfsdk:"force_conflicts"`
}

// MetadataAttributes returns the id, name, namespace, labels, annotations
// and force_conflicts attributes. kind names the object in descriptions
// ("SandboxTemplate").
func MetadataAttributes(kind string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "`<namespace>/<name>`, also the import ID.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
		},
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: fmt.Sprintf("Name of the %s. Changing it replaces the object.", kind),
			Validators:          []validator.String{validators.DNSSubdomainName()},
			PlanModifiers:       []planmodifier.String{importedName{kind: kind}, stringplanmodifier.RequiresReplace()},
		},
		"namespace": schema.StringAttribute{
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(DefaultNamespace),
			MarkdownDescription: fmt.Sprintf("Namespace of the %s. Defaults to `%s`. Changing it replaces the object. "+
				"The namespace must exist when the object is created (it may be created in the same apply); the apply fails naming it if it does not.", kind, DefaultNamespace),
			Validators:    []validator.String{validators.DNSLabelName()},
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"labels": schema.MapAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: fmt.Sprintf("Labels of the %s object. Only the keys declared here are managed: labels "+
				"other tools or the controller add are left alone and never show as a diff. Keys under "+
				"`agents.x-k8s.io/` are reserved for the controller, except `%s`, which users and SDKs set to "+
				"say who created the object (the controller copies it from a claim to its sandbox and pod).", kind, agentsv1beta1.CreatedByLabel),
			Validators: []validator.Map{validators.LabelsAllowing(UserLabels, ReservedPrefixes...)},
		},
		"annotations": schema.MapAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: fmt.Sprintf("Annotations of the %s object. Only the keys declared here are managed. "+
				"Keys under `agents.x-k8s.io/` are reserved for the controller.", kind),
			Validators: []validator.Map{validators.Annotations(ReservedPrefixes...)},
		},
		"force_conflicts": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: fmt.Sprintf("Take over fields of the %s that another tool owns through server-side apply "+
				"(another Terraform configuration, `kubectl apply --server-side`, a GitOps controller). By default such a "+
				"field is a conflict: the apply fails naming the field and its field manager, and nothing is written. "+
				"Values others changed with ordinary writes (`kubectl edit`, `kubectl patch`) are drift and are always "+
				"set back. See the guide \"Faults, interruptions and conflicts\".", kind),
		},
	}
}

// ID is the import ID and `id` attribute of a namespaced object.
func ID(namespace, name string) string { return namespace + "/" + name }

// ParseID splits an import ID `<namespace>/<name>`; a bare `<name>` means
// the default namespace.
func ParseID(id string) (namespace, name string, err error) {
	parts := strings.Split(id, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return DefaultNamespace, parts[0], nil
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("import ID %q is not of the form <namespace>/<name> (or <name> in namespace %q)", id, DefaultNamespace)
}

// Expand writes name, namespace, and the declared labels and annotations
// into obj's metadata.
func (m Metadata) Expand(ctx context.Context, obj *unstructured.Unstructured) diag.Diagnostics {
	var diags diag.Diagnostics
	obj.SetName(m.Name.ValueString())
	obj.SetNamespace(m.Namespace.ValueString())
	obj.SetLabels(tfvalues.StringMap(ctx, m.Labels, &diags))
	obj.SetAnnotations(tfvalues.StringMap(ctx, m.Annotations, &diags))
	return diags
}

// Flatten returns the metadata of live as the model should hold it. Labels
// and annotations are limited to the keys this configuration manages: the
// keys of prior (the state or plan being refreshed) plus the keys the
// provider's field manager owns on the server (which covers import, where
// there is no prior). A managed key changed or removed out of band therefore
// shows as drift, while keys added by the controller or other tools never do.
func Flatten(ctx context.Context, live *unstructured.Unstructured, prior Metadata, fieldManager string) (Metadata, diag.Diagnostics) {
	var diags diag.Diagnostics
	owned, err := kube.OwnedFields(live, fieldManager)
	if err != nil {
		diags.AddWarning("Cannot read managed fields", err.Error())
	}
	out := Metadata{DataSourceMetadata: identityOf(live), ForceConflicts: prior.ForceConflicts}
	var d diag.Diagnostics
	out.Labels, d = managedSubset(ctx, live.GetLabels(), prior.Labels, ownedKeys(owned, ".metadata.labels."))
	diags.Append(d...)
	out.Annotations, d = managedSubset(ctx, live.GetAnnotations(), prior.Annotations, ownedKeys(owned, ".metadata.annotations."))
	diags.Append(d...)
	return out, diags
}

// ownedKeys picks the map keys under prefix out of managed-field paths such
// as `.metadata.labels.team`.
func ownedKeys(paths []string, prefix string) map[string]bool {
	keys := map[string]bool{}
	for _, p := range paths {
		if k, ok := strings.CutPrefix(p, prefix); ok {
			keys[k] = true
		}
	}
	return keys
}

// managedSubset keeps the live entries whose keys prior declares or the
// field manager owns. A prior that was null stays null when nothing is
// managed, so an unset attribute never turns into an empty map.
func managedSubset(ctx context.Context, live map[string]string, prior types.Map, owned map[string]bool) (types.Map, diag.Diagnostics) {
	managed := map[string]bool{}
	for k := range owned {
		managed[k] = true
	}
	if !prior.IsNull() && !prior.IsUnknown() {
		for k := range prior.Elements() {
			managed[k] = true
		}
	}
	out := map[string]string{}
	for k := range managed {
		if v, ok := live[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 && (prior.IsNull() || prior.IsUnknown()) {
		return types.MapNull(types.StringType), nil
	}
	return types.MapValueFrom(ctx, types.StringType, out)
}

// SortedKeys is a small helper for deterministic messages.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
