package validators

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

const gkeKey, gkeValue = "sandbox.gke.io/runtime", "gvisor"

// TestFamilyStringValidators covers the string rules of the GKE resources,
// the pod template's paths and the claim's environment: accepted values, an
// error at the attribute's path for refused ones, and no error for null or
// unknown values (they are checked once known).
func TestFamilyStringValidators(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    validator.String
		in   string
		ok   bool
	}{
		{"region", GKELocation(), "us-central1", true},
		{"zone as location", GKELocation(), "europe-west4-b", true},
		{"bad location", GKELocation(), "us-central", false},
		{"uppercase location", GKELocation(), "US-CENTRAL1", false},
		{"zone", GKEZone(), "us-central1-f", true},
		{"region as zone", GKEZone(), "us-central1", false},
		{"project", GKEProjectID(), "my-project-123", true},
		{"domain project", GKEProjectID(), "example.com:my-project", true},
		{"project number", GKEProjectID(), "123456789012", false},
		{"short project", GKEProjectID(), "abc", false},
		{"cluster", GKEName("cluster"), "agents-prod", true},
		{"cluster full name", GKEName("cluster"), "projects/p/locations/l/clusters/c", false},
		{"pool trailing hyphen", GKEName("node pool"), "pool-", false},
		{"image type", GKEImageType("COS_CONTAINERD"), "COS_CONTAINERD", true},
		{"ubuntu image", GKEImageType("COS_CONTAINERD"), "UBUNTU_CONTAINERD", false},
		{"lowercase cos", GKEImageType("COS_CONTAINERD"), "cos_containerd", false},
		{"reserved taint key", GKEOwnedTaintKey(gkeKey, gkeValue), gkeKey, false},
		{"other taint key", GKEOwnedTaintKey(gkeKey, gkeValue), "sandbox.gke.io/other", true},
		{"relative path", RelativePath(), "config/app.yaml", true},
		{"dots inside a name", RelativePath(), "a..b/c", true},
		{"absolute path", RelativePath(), "/etc/passwd", false},
		{"parent element", RelativePath(), "a/../../etc", false},
		{"empty path", RelativePath(), "", false},
		{"env name", EnvVarName(), "PYTHONPATH", true},
		{"env name with dot", EnvVarName(), "my.var", true},
		{"env name with =", EnvVarName(), "A=B", false},
		{"env name starting with a digit", EnvVarName(), "1ABC", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &validator.StringResponse{}
			tc.v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("attr"), ConfigValue: types.StringValue(tc.in)}, resp)
			if ok := !resp.Diagnostics.HasError(); ok != tc.ok {
				t.Fatalf("%q accepted=%v, want %v (%v)", tc.in, ok, tc.ok, resp.Diagnostics)
			}
			if !tc.ok {
				assertPath(t, resp.Diagnostics, "attr")
			}
			for _, v := range []types.String{types.StringNull(), types.StringUnknown()} {
				resp := &validator.StringResponse{}
				tc.v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("attr"), ConfigValue: v}, resp)
				if resp.Diagnostics.HasError() {
					t.Errorf("%s rejected: %v", v, resp.Diagnostics)
				}
			}
		})
	}
}

func TestFamilyMapValidators(t *testing.T) {
	for _, tc := range []struct {
		name     string
		v        validator.Map
		in       map[string]string
		wantPath string // "" for accepted
	}{
		{"GKE's label", GKEOwnedMapKey("label", gkeKey, gkeValue), map[string]string{"a": "b", gkeKey: gkeValue}, `m["sandbox.gke.io/runtime"]`},
		{"other labels", GKEOwnedMapKey("label", gkeKey, gkeValue), map[string]string{"a": "b", "sandbox.gke.io/x": "y"}, ""},
		{"claim label in the allowed domain", ClaimPodLabels("sandbox.users.io"), map[string]string{"sandbox.users.io/session": "s1"}, ""},
		{"claim label without a domain", ClaimPodLabels("sandbox.users.io"), map[string]string{"team": "a"}, `m["team"]`},
		{"sandbox router identity", ClaimPodLabels("sandbox.users.io"), map[string]string{"app": "Sandbox-Router"}, `m["app"]`},
		{"bad key left to Labels", ClaimPodLabels("sandbox.users.io"), map[string]string{"bad key": "a"}, ""},
		{"claim annotation in own domain", ClaimPodAnnotations(), map[string]string{"example.com/note": "x", "note": "y"}, ""},
		{"kubernetes.io annotation", ClaimPodAnnotations(), map[string]string{"sub.kubernetes.io/x": "y"}, `m["sub.kubernetes.io/x"]`},
		{"controller's annotation", ClaimPodAnnotations(), map[string]string{"agents.x-k8s.io/x": "y"}, ""}, // reserved prefix: Annotations reports it
		{"safe-to-evict allowed", ClaimPodAnnotations(), map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			elems := map[string]attr.Value{}
			for k, v := range tc.in {
				elems[k] = types.StringValue(v)
			}
			resp := &validator.MapResponse{}
			tc.v.ValidateMap(context.Background(), validator.MapRequest{Path: path.Root("m"), ConfigValue: types.MapValueMust(types.StringType, elems)}, resp)
			if tc.wantPath == "" {
				if resp.Diagnostics.HasError() {
					t.Fatal(resp.Diagnostics)
				}
				return
			}
			if n := resp.Diagnostics.ErrorsCount(); n != 1 {
				t.Fatalf("%d errors, want 1: %v", n, resp.Diagnostics)
			}
			assertPath(t, resp.Diagnostics, tc.wantPath)
		})
	}
}

func TestUniqueEnv(t *testing.T) {
	typ := types.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType, "value": types.StringType, "container_name": types.StringType}}
	entry := func(name string, container attr.Value) attr.Value {
		return types.ObjectValueMust(typ.AttrTypes, map[string]attr.Value{"name": types.StringValue(name), "value": types.StringValue("v"), "container_name": container})
	}
	for _, tc := range []struct {
		name     string
		in       []attr.Value
		wantPath string
	}{
		{"distinct", []attr.Value{entry("A", types.StringNull()), entry("B", types.StringNull())}, ""},
		{"same name, other containers", []attr.Value{entry("A", types.StringValue("main")), entry("A", types.StringValue("side"))}, ""},
		{"twice in the first container", []attr.Value{entry("A", types.StringNull()), entry("B", types.StringNull()), entry("A", types.StringValue(""))}, "env[2].name"},
		{"twice in a named container", []attr.Value{entry("A", types.StringValue("side")), entry("A", types.StringValue("side"))}, "env[1].name"},
		{"container not known yet", []attr.Value{entry("A", types.StringNull()), entry("A", types.StringUnknown())}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &validator.ListResponse{}
			UniqueEnv().ValidateList(context.Background(), validator.ListRequest{Path: path.Root("env"), ConfigValue: types.ListValueMust(typ, tc.in)}, resp)
			if tc.wantPath == "" {
				if resp.Diagnostics.HasError() {
					t.Fatal(resp.Diagnostics)
				}
				return
			}
			assertPath(t, resp.Diagnostics, tc.wantPath)
		})
	}
}
