package gke

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// GKE's own marks on gVisor node pools, and the only sandbox and image
// types this provider manages.
const (
	sandboxKey    = "sandbox.gke.io/runtime"
	sandboxValue  = "gvisor"
	sandboxGVisor = "GVISOR"
	imageCOS      = "COS_CONTAINERD"
)

// Default timeouts. Node pool operations take minutes on GKE (creating
// VMs, draining and recreating nodes on updates); the add-on is a control
// plane change.
const (
	defaultNodePoolTimeout = 30 * time.Minute
	defaultAddonTimeout    = 20 * time.Minute
)

var (
	// Regions (us-central1) and zones (us-central1-a).
	regionRE = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)
	zoneRE   = regexp.MustCompile(`^([a-z]+-[a-z]+[0-9]+)-[a-z]$`)
	// Project IDs: 6 to 30 lowercase letters, digits and hyphens, starting
	// with a letter (legacy domain-scoped IDs "example.com:p" too).
	projectRE = regexp.MustCompile(`^(?:[a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]$`)
)

// regionOf returns the region of a region or zone, "" if it is neither.
func regionOf(location string) string {
	if m := zoneRE.FindStringSubmatch(location); m != nil {
		return m[1]
	}
	if regionRE.MatchString(location) {
		return location
	}
	return ""
}

// resolveProject returns the project a resource is in: its own attribute,
// else the provider's gke.project. The error names the attribute.
func resolveProject(configured types.String, meta *conn.Meta) (string, diag.Diagnostics) {
	var diags diag.Diagnostics
	if !configured.IsNull() && !configured.IsUnknown() && configured.ValueString() != "" {
		return configured.ValueString(), diags
	}
	if meta != nil && meta.GKEProject() != "" {
		return meta.GKEProject(), diags
	}
	diags.AddAttributeError(path.Root("project"), "No GKE project",
		"Set this resource's project, or the provider's gke.project (or GOOGLE_PROJECT), so the provider knows "+
			"which project the cluster is in.")
	return "", diags
}

// gkeClient returns the provider's shared container API client.
func gkeClient(ctx context.Context, meta *conn.Meta) (*gkeapi.Client, diag.Diagnostics) {
	if meta == nil {
		var diags diag.Diagnostics
		diags.AddError("Provider not configured",
			"The agentsandbox provider was not configured before this resource was used. This is a bug in the provider; please report it.")
		return nil, diags
	}
	return meta.GKE(ctx)
}

// --- validators ---

// gkeName accepts a cluster or node pool name (GKE's rule, from internal/clients/gkeapi).
func gkeName(kind string) validator.String {
	return validators.Check{
		Desc: "1 to 40 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen",
		Problem: func(s string) string {
			if err := gkeapi.ValidateID(kind, s); err != nil {
				msg := err.Error() + "."
				if kind == "cluster" && regexp.MustCompile(`^projects/`).MatchString(s) {
					msg += " Use the cluster's short name here; project and location are separate attributes."
				}
				return msg
			}
			return ""
		},
	}
}

func projectID() validator.String {
	return validators.Check{
		Desc: "a Google Cloud project ID such as my-project",
		Problem: func(s string) string {
			if !projectRE.MatchString(s) {
				return fmt.Sprintf("%q is not a project ID: 6 to 30 lowercase letters, digits or hyphens, starting with a "+
					"letter (the project number is not accepted here).", s)
			}
			return ""
		},
	}
}

// location accepts a region (regional cluster) or a zone (zonal cluster).
func location() validator.String {
	return validators.Check{
		Desc: "a region such as us-central1 or a zone such as us-central1-a",
		Problem: func(s string) string {
			if regionOf(s) == "" {
				return fmt.Sprintf("%q is neither a region (us-central1) nor a zone (us-central1-a): use the location of "+
					"the cluster as GKE shows it.", s)
			}
			return ""
		},
	}
}

// zone accepts a zone only (node locations are zones).
func zone() validator.String {
	return validators.Check{
		Desc: "a zone such as us-central1-a",
		Problem: func(s string) string {
			if !zoneRE.MatchString(s) {
				return fmt.Sprintf("%q is not a zone such as us-central1-a: node locations are zones of the cluster's region.", s)
			}
			return ""
		},
	}
}

// defaultRequestBudget bounds a single read made outside the operation's
// own deadline (recording state after a failed update).
const defaultRequestBudget = 30 * time.Second
