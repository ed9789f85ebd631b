package acctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
)

// Family is what a resource family's acceptance tests share: the resource
// type under test, the API resource its objects are stored as, and the
// address of the resource every test configuration names "test".
//
//	var fam = acctest.Family{ResourceType: sandbox.ResourceType, GVR: sandbox.Kind.GVR}
//
//	resource.Test(t, fam.Case(t,
//		resource.TestStep{Config: acctest.Config(body), ConfigPlanChecks: acctest.EmptyPlanAfterApply},
//		resource.TestStep{Config: acctest.Config(changed), ConfigPlanChecks: fam.Planned(plancheck.ResourceActionUpdate)},
//	))
//
// A family whose objects are not Kubernetes objects (the GKE resources,
// which talk to a GKE emulator) sets NoCluster and Destroyed.
type Family struct {
	ResourceType string
	GVR          schema.GroupVersionResource
	// NoCluster: the tests need no Kubernetes cluster, only TF_ACC and a
	// terraform CLI (PreCheckCLI instead of PreCheck).
	NoCluster bool
	// Destroyed, when set, is the CheckDestroy instead of asking the API
	// server for objects of GVR.
	Destroyed resource.TestCheckFunc
}

// Address is the address of the family's resource named "test".
func (f Family) Address() string { return f.ResourceType + ".test" }

// Case is the TestCase of an acceptance test of the family: the pre-check,
// the provider served in-process, and a CheckDestroy that asks the API
// server until every object of the resource type in the state is gone.
func (f Family) Case(t *testing.T, steps ...resource.TestStep) resource.TestCase {
	preCheck, destroyed := PreCheck, f.Destroyed
	if f.NoCluster {
		preCheck = PreCheckCLI
	}
	if destroyed == nil {
		destroyed = CheckDestroy(f.ResourceType, f.GVR)
	}
	return resource.TestCase{
		PreCheck:                 func() { preCheck(t) },
		ProtoV6ProviderFactories: ProtoV6ProviderFactories,
		CheckDestroy:             destroyed,
		Steps:                    steps,
	}
}

// Planned is a step's plan checks: the plan does action to the family's
// resource "test" (and passes extra), and after the apply a new plan is
// empty.
func (f Family) Planned(action plancheck.ResourceActionType, extra ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	return PlannedAt(f.Address(), action, extra...)
}

// DriftRepaired is the plan checks of the step that repairs drift made out
// of band: the plan updates the family's resource "test" in place, its
// refreshed state (the plan's "before") shows every one of visible, so the
// drift was seen rather than missed, and after the apply a new plan is
// empty.
func (f Family) DriftRepaired(visible ...string) resource.ConfigPlanChecks {
	return f.Planned(plancheck.ResourceActionUpdate, ExpectBefore(f.Address(), BeforeContains(visible...)))
}

// Disappears is the steps of a _disappears test: config is applied and
// the family's resource "test" deleted behind Terraform's back (the plan
// after that apply must show it), then the next plan creates it again and
// a plan after that apply is empty. checks run on the state after the
// re-creation.
func (f Family) Disappears(config string, checks ...statecheck.StateCheck) []resource.TestStep {
	return []resource.TestStep{
		{Config: config, Check: CheckDisappears(f.Address(), f.GVR), ExpectNonEmptyPlan: true},
		{Config: config, ConfigPlanChecks: f.Planned(plancheck.ResourceActionCreate), ConfigStateChecks: checks},
	}
}

// Config is a test configuration: the provider block for the test cluster
// followed by body.
func Config(body string) string {
	return ConfigCompose(ProviderConfig(), body)
}

// EmptyPlanAfterApply is every step's proof that nothing the server or a
// controller normalised shows up as a perpetual diff.
var EmptyPlanAfterApply = resource.ConfigPlanChecks{
	PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
}

// PlannedAt is Family.Planned for any resource address.
func PlannedAt(address string, action plancheck.ResourceActionType, extra ...plancheck.PlanCheck) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{
		PreApply:             append([]plancheck.PlanCheck{plancheck.ExpectResourceAction(address, action)}, extra...),
		PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
	}
}

// ExpectBefore checks the refreshed state a plan starts from (the "before"
// of address's change): drift made out of band must be visible there
// before the apply repairs it.
func ExpectBefore(address string, check func(before map[string]any) error) plancheck.PlanCheck {
	return expectBefore{address: address, check: check}
}

type expectBefore struct {
	address string
	check   func(before map[string]any) error
}

func (c expectBefore) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address == c.address {
			before, _ := rc.Change.Before.(map[string]any)
			resp.Error = c.check(before)
			return
		}
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.address)
}

// BeforeContains is an ExpectBefore check: the refreshed state, printed,
// contains every one of wants.
func BeforeContains(wants ...string) func(before map[string]any) error {
	return func(before map[string]any) error {
		s := fmt.Sprint(before)
		for _, w := range wants {
			if !strings.Contains(s, w) {
				return fmt.Errorf("the refreshed state lacks %q, so the drift is invisible: %s", w, s)
			}
		}
		return nil
	}
}

// Field checks one value of a live object (for CheckExists and
// ExpectObject): the value at path, printed, equals want printed.
func Field(want any, path ...string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		got, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
		if err != nil || !found {
			return fmt.Errorf("%s not found (%w)", strings.Join(path, "."), err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("%s = %v, want %v", strings.Join(path, "."), got, want)
		}
		return nil
	}
}

// Mentions checks that the value at path of a live object, printed,
// contains want.
func Mentions(want string, path ...string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		got, _, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
		if !strings.Contains(fmt.Sprint(got), want) {
			return fmt.Errorf("%s = %v, want it to mention %s", strings.Join(path, "."), got, want)
		}
		return nil
	}
}

// Absent checks that a live object has no value at path.
func Absent(path ...string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		if v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, path...); found {
			return fmt.Errorf("%s = %v, want it absent", strings.Join(path, "."), v)
		}
		return nil
	}
}

// OwnedBy checks that the field manager owns every one of fields (as
// kube.OwnedFields names them, e.g. ".spec.replicas") of a live object
// through server-side apply, so that a change another manager makes to
// them is taken back at the next apply.
func OwnedBy(manager string, fields ...string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		owned, err := kube.OwnedFields(obj, manager)
		if err != nil {
			return err
		}
		for _, f := range fields {
			if !slices.Contains(owned, f) {
				return fmt.Errorf("%s does not own %s; it owns %v", manager, f, owned)
			}
		}
		return nil
	}
}

// NotOwnedBy checks that the field manager owns none of fields of a live
// object, so that another owner (an autoscaler) keeps them.
func NotOwnedBy(manager string, fields ...string) func(*unstructured.Unstructured) error {
	return func(obj *unstructured.Unstructured) error {
		owned, err := kube.OwnedFields(obj, manager)
		if err != nil {
			return err
		}
		for _, f := range fields {
			if slices.Contains(owned, f) {
				return fmt.Errorf("%s still owns %s", manager, f)
			}
		}
		return nil
	}
}

// RequestCost measures what the provider sends to the API server during
// the steps of a test, through the client's request counters (which count
// every logical request, retries apart). The counters are process-wide, so
// a test that uses it must not run in parallel with another that sends
// requests.
type RequestCost struct {
	t    testing.TB
	n    int
	noun string
	t0   time.Time
}

// NewRequestCost measures the cost of n objects, named noun ("policies")
// in what it logs.
func NewRequestCost(t testing.TB, n int, noun string) *RequestCost {
	return &RequestCost{t: t, n: n, noun: noun}
}

// Start resets the counters and the clock; use it as a step's PreConfig.
func (c *RequestCost) Start() {
	kube.ResetRequestCounts()
	c.t0 = time.Now()
}

// Report logs what was sent since Start, as a measurement.
func (c *RequestCost) Report(what string) {
	c.t.Logf("%s of %d %s: %d requests in %s: %v", what, c.n, c.noun, kube.RequestCount(),
		time.Since(c.t0).Round(time.Millisecond), kube.RequestCounts())
}

// ExpectOneGETEach fails unless what was sent since Start is exactly one
// GET of route (as the counters name it, e.g. "GET
// /apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies/{name}")
// per object plus others requests of any kind.
func (c *RequestCost) ExpectOneGETEach(route string, others int64) error {
	get := kube.RequestCounts()[route]
	if total := kube.RequestCount(); get != int64(c.n) || total != int64(c.n)+others {
		return fmt.Errorf("%d %s sent %d requests (%d of %s); want one GET each and %d others",
			c.n, c.noun, total, get, route, others)
	}
	return nil
}

// CreateStep applies config from nothing, logs its cost, and checks that
// the plan after it is empty.
func (c *RequestCost) CreateStep(config, what string) resource.TestStep {
	return resource.TestStep{
		PreConfig: c.Start,
		Config:    config,
		Check: func(*terraform.State) error {
			c.Report(what)
			return nil
		},
		ConfigPlanChecks: EmptyPlanAfterApply,
	}
}

// RefreshStep refreshes the unchanged objects and requires exactly one GET
// of route each, plus others requests (objects of other types in the
// configuration): no discovery, no OpenAPI, no LIST or watch.
func (c *RequestCost) RefreshStep(route string, others int64) resource.TestStep {
	return resource.TestStep{
		PreConfig:    c.Start,
		RefreshState: true,
		Check: func(*terraform.State) error {
			c.Report("no-change refresh")
			return c.ExpectOneGETEach(route, others)
		},
	}
}

// PlanSteps measure a no-change plan of config (terraform-plugin-testing
// runs a refresh and a plan).
func (c *RequestCost) PlanSteps(config string) []resource.TestStep {
	return []resource.TestStep{
		{PreConfig: c.Start, Config: config, PlanOnly: true},
		{
			PreConfig: func() {
				c.Report("no-change plan (terraform-plugin-testing runs refresh + plan)")
				c.Start()
			},
			RefreshState: true,
		},
	}
}

// MeasureDestroy makes tc log the cost of its destroy (what) before its
// CheckDestroy runs.
func (c *RequestCost) MeasureDestroy(tc resource.TestCase, what string) resource.TestCase {
	checkDestroy := tc.CheckDestroy
	tc.CheckDestroy = func(s *terraform.State) error {
		c.Report(what)
		return checkDestroy(s)
	}
	return tc
}

// planLookup is the route of the one read a plan may send: the plan-time
// lookup of a non-default RuntimeClass that a new object names
// (object.Lookup).
var planLookup = regexp.MustCompile(`^GET /apis/node\.k8s\.io/v1/runtimeclasses/\{name\}$`)

// RefusedAtPlan is the steps of a bad-input test through the terraform
// CLI: each configuration in configs, paired with the pattern its error
// must match, is planned and refused, and nothing is written: the only
// requests are the plan-time RuntimeClass lookups' GETs (checked before
// every later step and after the last).
func RefusedAtPlan(t *testing.T, cases ...BadConfig) []resource.TestStep {
	noRequests := func() {
		for route, n := range kube.RequestCounts() {
			if !planLookup.MatchString(route) {
				t.Errorf("a configuration refused at plan sent %d %s (only the plan-time RuntimeClass lookups' GETs may be sent): %v",
					n, route, kube.RequestCounts())
			}
		}
	}
	var steps []resource.TestStep
	for i, c := range cases {
		pre := noRequests
		if i == 0 {
			pre = kube.ResetRequestCounts
		}
		steps = append(steps, resource.TestStep{
			PreConfig:   pre,
			Config:      c.Config,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(c.Error),
		})
	}
	return append(steps, resource.TestStep{PreConfig: noRequests, Config: Config(""), PlanOnly: true})
}

// BadConfig is one case of RefusedAtPlan: a whole configuration and a
// regular expression its error must match.
type BadConfig struct {
	Config string
	Error  string
}

// foreignBlock is a top-level resource block of another provider, from its
// first line to the first closing brace at the start of a line.
var foreignBlock = regexp.MustCompile(`(?ms)^resource "kubernetes_[^"]*" "[^"]*" \{.*?^\}\n`)

// ExampleConfig joins the documentation's examples/resources/<type>/resource.tf
// of the given resource types, without the blocks of resources of other
// providers (which are not installed in tests).
func ExampleConfig(t testing.TB, types ...string) string {
	t.Helper()
	var parts []string
	for _, typ := range types {
		b, err := os.ReadFile(filepath.Join(RepoRoot(t), "examples", "resources", typ, "resource.tf"))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, foreignBlock.ReplaceAllString(string(b), ""))
	}
	return strings.Join(parts, "\n")
}

// RepoRoot is the repository's top directory, found from this file's
// place in it.
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the acctest package's source")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// CreateTemplate makes a SandboxTemplate with spec directly through the
// API, for tests of resources that refer to one (the template resource is
// another family's, and families do not import each other).
func CreateTemplate(t testing.TB, ns, name string, spec map[string]any) {
	t.Helper()
	tmpl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": extv1beta1.GroupVersion.String(),
		"kind":       extv1beta1.SandboxTemplateKind,
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
	if _, err := Dynamic(t).Resource(sandboxapi.SandboxTemplateGVR).Namespace(ns).Create(context.Background(), tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating SandboxTemplate %s/%s: %v", ns, name, err)
	}
}
