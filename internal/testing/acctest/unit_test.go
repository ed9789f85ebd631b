package acctest

import (
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestRandomName_IsDNS1123Label(t *testing.T) {
	for _, prefix := range []string{
		"pool",
		"TestAccWarmPool_basic/sub_test",
		"--Leading.and.trailing--",
		"",
		"!!!",
		"ünïcödé",
		strings.Repeat("x", 100),
		strings.Repeat("a-", 40),
	} {
		name := RandomName(prefix)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Errorf("RandomName(%q) = %q: %v", prefix, name, errs)
		}
	}
	if got := RandomName("TestAccX_basic"); !strings.HasPrefix(got, "testaccx-basic-") || len(got) != len("testaccx-basic-")+8 {
		t.Errorf("RandomName keeps too little of a readable prefix: %q", got)
	}
	if got := RandomName(""); !strings.HasPrefix(got, "acc-") {
		t.Errorf("RandomName(\"\") = %q", got)
	}
}

func TestRandomName_Unique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := RandomName("p")
		if seen[n] {
			t.Fatalf("duplicate name %q", n)
		}
		seen[n] = true
	}
}

func TestHCLString(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/kubeconfig":        `"/tmp/kubeconfig"`,
		`C:\dir "quoted"`:        `"C:\\dir \"quoted\""`,
		"a\nb\tc":                `"a\nb\tc"`,
		"${not.a.template}":      `"$${not.a.template}"`,
		"%{if x}":                `"%%{if x}"`,
		"$ and % alone, 100% ok": `"$ and % alone, 100% ok"`,
		"bell\a":                 `"bell\u0007"`,
		"ünï":                    `"ünï"`,
	} {
		if got := HCLString(in); got != want {
			t.Errorf("HCLString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestProviderConfig(t *testing.T) {
	got := providerConfig("/work/main/.cache/testenv/ab12cd34/kubeconfig")
	want := `provider "agentsandbox" {
  kubernetes {
    config_path = "/work/main/.cache/testenv/ab12cd34/kubeconfig"
  }
}
`
	if got != want {
		t.Errorf("providerConfig:\n%s\nwant:\n%s", got, want)
	}
}

func TestConfigCompose(t *testing.T) {
	got := ConfigCompose("a {}", "", "b {}\n", "c {}")
	if want := "a {}\nb {}\nc {}\n"; got != want {
		t.Errorf("ConfigCompose = %q, want %q", got, want)
	}
	if got := ConfigCompose(); got != "" {
		t.Errorf("ConfigCompose() = %q", got)
	}
}

var testGVR = schema.GroupVersionResource{Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxwarmpools"}

func TestRefFromAttributes(t *testing.T) {
	for _, tc := range []struct {
		attrs   map[string]string
		id      string
		want    string
		wantErr string
	}{
		{attrs: map[string]string{"name": "p", "namespace": "ns"}, id: "whatever", want: "sandboxwarmpools.extensions.agents.x-k8s.io ns/p"},
		{attrs: map[string]string{"name": "gvisor"}, want: "sandboxwarmpools.extensions.agents.x-k8s.io gvisor"},
		{id: "ns/p", want: "sandboxwarmpools.extensions.agents.x-k8s.io ns/p"},
		{id: "cluster-scoped", want: "sandboxwarmpools.extensions.agents.x-k8s.io cluster-scoped"},
		{id: "a/b/c", wantErr: `cannot read "a/b/c"`},
		{id: "/b", wantErr: `cannot read "/b"`},
		{wantErr: "neither a name attribute nor an ID"},
	} {
		ref, err := RefFromAttributes(testGVR, tc.attrs, tc.id)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v %q: err = %v, want %q", tc.attrs, tc.id, err, tc.wantErr)
			}
			continue
		}
		if err != nil || ref.String() != tc.want {
			t.Errorf("%v %q: got %q, %v; want %q", tc.attrs, tc.id, ref, err, tc.want)
		}
	}
}

func TestRefFromState(t *testing.T) {
	s := newState()
	s.RootModule().Resources["agentsandbox_warm_pool.p"] = &terraform.ResourceState{
		Type:    "agentsandbox_warm_pool",
		Primary: &terraform.InstanceState{ID: "ns/p", Attributes: map[string]string{"name": "p", "namespace": "ns"}},
	}
	ref, err := refFromState(s, "agentsandbox_warm_pool.p", testGVR)
	if err != nil || ref.Namespace != "ns" || ref.Name != "p" || ref.GVR != testGVR {
		t.Errorf("refFromState = %+v, %v", ref, err)
	}
	if _, err := refFromState(s, "agentsandbox_warm_pool.missing", testGVR); err == nil || !strings.Contains(err.Error(), "not in the state") {
		t.Errorf("missing resource: %v", err)
	}
}

func TestFindResource(t *testing.T) {
	inner := &tfjson.StateResource{Address: "module.m.agentsandbox_sandbox.s"}
	state := &tfjson.State{Values: &tfjson.StateValues{RootModule: &tfjson.StateModule{
		Resources:    []*tfjson.StateResource{{Address: "terraform_data.x"}},
		ChildModules: []*tfjson.StateModule{{Address: "module.m", Resources: []*tfjson.StateResource{inner}}},
	}}}
	if got := findResource(state, "module.m.agentsandbox_sandbox.s"); got != inner {
		t.Errorf("child module resource not found: %v", got)
	}
	if got := findResource(state, "terraform_data.y"); got != nil {
		t.Errorf("found a resource that does not exist: %v", got)
	}
	if got := findResource(&tfjson.State{}, "x"); got != nil {
		t.Error("empty state")
	}
}

// Without TF_ACC every cluster helper must skip, not fail: plain
// `go test ./...` (make unit) has no cluster.
func TestClusterHelpers_SkipWithoutTFAcc(t *testing.T) {
	t.Setenv("TF_ACC", "")
	for name, helper := range map[string]func(testing.TB){
		"Dynamic":   func(tb testing.TB) { Dynamic(tb) },
		"Clientset": func(tb testing.TB) { Clientset(tb) },
		"Namespace": func(tb testing.TB) { Namespace(tb) },
		"PreCheck":  func(tb testing.TB) { PreCheck(tb.(*testing.T)) },
	} {
		t.Run(name, func(t *testing.T) {
			helper(t)
			t.Error("helper returned instead of skipping")
		})
	}
}

// newState builds an empty Terraform state as terraform-plugin-testing hands
// it to check functions (its own constructor is deprecated for outside use).
func newState() *terraform.State {
	return &terraform.State{Modules: []*terraform.ModuleState{{
		Path:      []string{"root"},
		Resources: map[string]*terraform.ResourceState{},
	}}}
}

// TestPlanLookupRoutes: RefusedAtPlan lets through the GET of the
// plan-time RuntimeClass lookup and nothing else (no write, no other read:
// namespaces, templates and warm pools are not looked up at plan).
func TestPlanLookupRoutes(t *testing.T) {
	for route, want := range map[string]bool{
		"GET /api/v1/namespaces/{name}":                                                                  false,
		"GET /apis/node.k8s.io/v1/runtimeclasses/{name}":                                                 true,
		"GET /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxtemplates/{name}":    false,
		"GET /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxwarmpools/{name}":    false,
		"PATCH /api/v1/namespaces/{name}":                                                                false,
		"POST /apis/node.k8s.io/v1/runtimeclasses":                                                       false,
		"GET /apis/agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxes/{name}":                      false,
		"GET /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxtemplates":           false,
		"DELETE /apis/extensions.agents.x-k8s.io/v1beta1/namespaces/{namespace}/sandboxwarmpools/{name}": false,
	} {
		if got := planLookup.MatchString(route); got != want {
			t.Errorf("planLookup(%q) = %v, want %v", route, got, want)
		}
	}
}
