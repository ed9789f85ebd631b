package validators

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestStringValidators(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    validator.String
		in   string
		ok   bool
	}{
		{"subdomain ok", DNSSubdomainName(), "python-3.12", true},
		{"subdomain upper", DNSSubdomainName(), "Python", false},
		{"subdomain underscore", DNSSubdomainName(), "a_b", false},
		{"label ok", DNSLabelName(), "agents", true},
		{"label dot", DNSLabelName(), "a.b", false},
		{"label too long", DNSLabelName(), "a123456789012345678901234567890123456789012345678901234567890123", false},
		{"label value ok", LabelValue(), "v1.2_x", true},
		{"label value space", LabelValue(), "a b", false},
		{"qualified ok", QualifiedName(), "example.com/team", true},
		{"capability", CapabilityName("NET_RAW"), "NET_BIND_SERVICE", true},
		{"capability ALL", CapabilityName("NET_RAW"), "ALL", true},
		{"capability in lower case", CapabilityName("NET_RAW"), "net_raw", false},
		{"capability with prefix dash", CapabilityName("NET_RAW"), "-NET_RAW", false},
		{"capability empty", CapabilityName("NET_RAW"), "", false},
		{"config map key ok", ConfigMapKey(), "settings.yaml", true},
		{"config map key with underscore", ConfigMapKey(), "API_KEY", true},
		{"config map key with a space", ConfigMapKey(), "a key", false},
		{"config map key with a slash", ConfigMapKey(), "dir/file", false},
		{"config map key ..", ConfigMapKey(), "..", false},
		{"field path pod IP", EnvFieldPath(), "status.podIP", true},
		{"field path host IPs", EnvFieldPath(), "status.hostIPs", true},
		{"field path label", EnvFieldPath(), "metadata.labels['app.kubernetes.io/name']", true},
		{"field path annotation", EnvFieldPath(), "metadata.annotations['team']", true},
		{"field path all labels", EnvFieldPath(), "metadata.labels", false},
		{"field path bad label key", EnvFieldPath(), "metadata.labels['-x']", false},
		{"field path spec", EnvFieldPath(), "spec.containers", false},
		{"field path typo", EnvFieldPath(), "metadata.nmae", false},
		{"qualified bad", QualifiedName(), "-bad", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &validator.StringResponse{}
			tc.v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("name"), ConfigValue: types.StringValue(tc.in)}, resp)
			if resp.Diagnostics.HasError() == tc.ok {
				t.Fatalf("%q: errors %v, want ok=%v", tc.in, resp.Diagnostics, tc.ok)
			}
			if !tc.ok {
				assertPath(t, resp.Diagnostics, "name")
			}
		})
	}
}

func TestLabelsAndAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		v        validator.Map
		in       map[string]string
		wantPath string
	}{
		{"ok", Labels("agents.x-k8s.io/"), map[string]string{"team": "a", "example.com/tier": "gold"}, ""},
		{"bad key", Labels(), map[string]string{"bad key": "a"}, `labels["bad key"]`},
		{"bad value", Labels(), map[string]string{"team": "not ok!"}, `labels["team"]`},
		{"reserved", Labels("agents.x-k8s.io/"), map[string]string{"agents.x-k8s.io/sandbox-name-hash": "x"}, `labels["agents.x-k8s.io/sandbox-name-hash"]`},
		{"allowed under a reserved prefix", LabelsAllowing([]string{"agents.x-k8s.io/created-by"}, "agents.x-k8s.io/"), map[string]string{"agents.x-k8s.io/created-by": "sdk"}, ""},
		{"only the allowed key", LabelsAllowing([]string{"agents.x-k8s.io/created-by"}, "agents.x-k8s.io/"), map[string]string{"agents.x-k8s.io/claim-uid": "x"}, `labels["agents.x-k8s.io/claim-uid"]`},
		{"annotation free value", Annotations("agents.x-k8s.io/"), map[string]string{"note": "any text at all!"}, ""},
		{"annotation reserved", Annotations("agents.x-k8s.io/"), map[string]string{"agents.x-k8s.io/pod-name": "x"}, `labels["agents.x-k8s.io/pod-name"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			elems := map[string]attr.Value{}
			for k, v := range tc.in {
				elems[k] = types.StringValue(v)
			}
			m, _ := types.MapValue(types.StringType, elems)
			resp := &validator.MapResponse{}
			tc.v.ValidateMap(context.Background(), validator.MapRequest{Path: path.Root("labels"), ConfigValue: m}, resp)
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

func assertPath(t *testing.T, diags diag.Diagnostics, want string) {
	t.Helper()
	for _, d := range diags {
		if wp, ok := d.(diag.DiagnosticWithPath); ok && wp.Path().String() == want {
			return
		}
	}
	t.Fatalf("no error at %s: %v", want, diags)
}
