package validators

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
)

// Plan-time checks of GKE names and of what GKE owns on a gVisor node pool,
// so that a value GKE would refuse with a 400 during apply fails at plan
// with the attribute path.

// gkeProjectRE: project IDs, 6 to 30 lowercase letters, digits and hyphens,
// starting with a letter (legacy domain-scoped IDs "example.com:p" too).
var gkeProjectRE = regexp.MustCompile(`^(?:[a-z][a-z0-9.-]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]$`)

// GKEName accepts a cluster or node pool short name (GKE's rule, from
// gkeapi.ValidateID); kind ("cluster", "node pool") names it in the error.
func GKEName(kind string) validator.String {
	return Check{
		Desc: "1 to 40 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen",
		Problem: func(s string) string {
			if err := gkeapi.ValidateID(kind, s); err != nil {
				msg := err.Error() + "."
				if kind == "cluster" && strings.HasPrefix(s, "projects/") {
					msg += " Use the cluster's short name here; project and location are separate attributes."
				}
				return msg
			}
			return ""
		},
	}
}

// GKEProjectID accepts a Google Cloud project ID (not a project number).
func GKEProjectID() validator.String {
	return Check{
		Desc: "a Google Cloud project ID such as my-project",
		Problem: func(s string) string {
			if !gkeProjectRE.MatchString(s) {
				return fmt.Sprintf("%q is not a project ID: 6 to 30 lowercase letters, digits or hyphens, starting with a "+
					"letter (the project number is not accepted here).", s)
			}
			return ""
		},
	}
}

// GKELocation accepts a region (regional cluster) or a zone (zonal cluster).
func GKELocation() validator.String {
	return Check{
		Desc: "a region such as us-central1 or a zone such as us-central1-a",
		Problem: func(s string) string {
			if gkeapi.RegionOf(s) == "" {
				return fmt.Sprintf("%q is neither a region (us-central1) nor a zone (us-central1-a): use the location of "+
					"the cluster as GKE shows it.", s)
			}
			return ""
		},
	}
}

// GKEZone accepts a zone only (node locations are zones).
func GKEZone() validator.String {
	return Check{
		Desc: "a zone such as us-central1-a",
		Problem: func(s string) string {
			if gkeapi.ZoneRegion(s) == "" {
				return fmt.Sprintf("%q is not a zone such as us-central1-a: node locations are zones of the cluster's region.", s)
			}
			return ""
		},
	}
}

// GKEImageType accepts only image, the one node image GKE Sandbox supports,
// and says why.
func GKEImageType(image string) validator.String {
	return Check{
		Summary: "Unsupported image type for GKE Sandbox",
		Desc:    "must be " + image + ", the only image GKE Sandbox supports",
		Problem: func(s string) string {
			if s == image {
				return ""
			}
			return fmt.Sprintf("image_type is %q, but GKE Sandbox node pools need %s: GKE documents it as the only image for "+
				"gVisor and refuses any other, and no public GKE documentation names an image for MicroVM pools, so no other "+
				"is accepted rather than guessed. Remove image_type or set it to %q.", s, image, image)
		},
	}
}

// GKEOwnedMapKey refuses key in a map of labels (what = "label"): GKE puts
// key=value on every gVisor node pool itself.
func GKEOwnedMapKey(what, key, value string) validator.Map {
	return gkeOwnedKey{described(fmt.Sprintf("the %s key %s is GKE's own and cannot be set", what, key)), what, key, value}
}

type gkeOwnedKey struct {
	described
	what, key, value string
}

func (v gkeOwnedKey) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, ok := req.ConfigValue.Elements()[v.key]; ok {
		resp.Diagnostics.AddAttributeError(req.Path.AtMapKey(v.key), "GKE-owned "+v.what,
			fmt.Sprintf("GKE puts the %s %s=%s on every gVisor node pool itself, and the provider hides it. Remove it "+
				"from the configuration.", v.what, v.key, v.value))
	}
}

// GKEOwnedTaintKey refuses GKE's own sandbox taint key (key=value:NoSchedule),
// which GKE refuses from users (a 400 during apply otherwise).
func GKEOwnedTaintKey(key, value string) validator.String {
	return Check{
		Desc: "must not be " + key + ", which GKE owns",
		Problem: func(s string) string {
			if s == key {
				return fmt.Sprintf("The taint key %s is reserved: GKE adds the taint %s=%s:NoSchedule to every gVisor node "+
					"pool itself and refuses user taints with this key. Remove this taint; pods with runtimeClassName: "+
					"gvisor already tolerate GKE's.", key, key, value)
			}
			return ""
		},
	}
}
