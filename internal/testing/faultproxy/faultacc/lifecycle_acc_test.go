// Package faultacc_test runs the single-object resources' lifecycles
// through the fault-injecting proxy (package faultproxy): create, update and
// destroy while the proxy throttles, fails, resets and slows requests and
// cuts watches; then faults that outlast the provider's retries, whose
// errors must say what failed and that applying again is safe, and the
// apply after them, which must converge with nothing lost or made twice.
package faultacc_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/networkpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	fp "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/faultproxy"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// managed is every resource of the configuration, by address, with the
// API resource its object is stored as.
var managed = acctest.OneOfEachObjects

// startProxy starts a proxy to the test cluster for t and returns it with
// the provider block that talks through it.
func startProxy(t *testing.T) (*fp.Proxy, string) {
	t.Helper()
	p, err := fp.Start(acctest.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	kc, err := p.Kubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p, fmt.Sprintf(`provider %q {
  kubernetes {
    config_path = %s
  }
}
`, acctest.ProviderName, acctest.HCLString(kc))
}

// lifecycleConfig is acctest.OneOfEach: one of each single-object
// resource, stage a label on all five, extra appended.
func lifecycleConfig(provider, ns, stage, extra string) string {
	return acctest.OneOfEach(provider, ns, stage, extra)
}

const extraPolicy = `
resource "agentsandbox_network_policy" "extra" {
  name         = "extra"
  namespace    = agentsandbox_sandbox_template.python.namespace
  pod_selector = { match_labels = { app = "extra" } }
}
`

var notWatches = fp.Bool(false)

// transientFaults is what one apply is put through. Per HTTP method the
// faults add up to at most four, so that even if all of them hit one
// request in a row its fifth attempt (the provider makes five) gets
// through.
func transientFaults() []*fp.Rule {
	return []*fp.Rule{
		// Writes: server-side applies (PATCH) and creates (POST).
		{Kind: fp.KindStatus, Method: http.MethodPatch, Status: http.StatusTooManyRequests, RetryAfter: time.Second, Times: 2},
		{Kind: fp.KindStatus, Method: http.MethodPatch, Status: http.StatusInternalServerError, Times: 1},
		{Kind: fp.KindResetAfter, Method: http.MethodPatch, Times: 1},
		{Kind: fp.KindReset, Method: http.MethodPost, Times: 1},
		{Kind: fp.KindResetAfter, Method: http.MethodPost, Times: 2},
		{Kind: fp.KindStatus, Method: http.MethodPost, Status: http.StatusServiceUnavailable, Times: 1},
		// Reads.
		{Kind: fp.KindStatus, Method: http.MethodGet, Watch: notWatches, Status: http.StatusServiceUnavailable, Times: 2},
		{Kind: fp.KindReset, Method: http.MethodGet, Watch: notWatches, Skip: 3, Times: 2},
		// Waits: watches cut where the event a wait needs would have been
		// (the event is lost with the connection), and slow answers.
		{Kind: fp.KindDropWatch, Watch: fp.Bool(true), AtEvent: 1, Times: 4},
		{Kind: fp.KindDelay, Delay: 1500 * time.Millisecond, Skip: 2, Times: 4},
	}
}

// deleteFaults is what the destroy is put through.
func deleteFaults() []*fp.Rule {
	return []*fp.Rule{
		{Kind: fp.KindStatus, Method: http.MethodDelete, Status: http.StatusServiceUnavailable, Times: 2},
		{Kind: fp.KindReset, Method: http.MethodDelete, Skip: 1, Times: 1},
		{Kind: fp.KindResetAfter, Method: http.MethodDelete, Skip: 2, Times: 1},
	}
}

// TestAccFaults_lifecycle: the five single-object resources are created,
// updated and destroyed through faults the provider must ride out; two
// failures that outlast its retries say what failed and that applying
// again is safe, and the next apply converges; no object is made twice
// (each keeps its uid from creation to destruction) and none is left over.
func TestAccFaults_lifecycle(t *testing.T) {
	t.Parallel()
	acctest.PreCheck(t)
	ns := acctest.Namespace(t)
	client = acctest.Dynamic(t)
	proxy, provider := startProxy(t)
	retriesBefore := kube.RetryCount()
	uids := map[string]string{}
	var all []*fp.Rule
	inject := func(rules []*fp.Rule) {
		proxy.Clear()
		all = append(all, proxy.Inject(rules...)...)
	}
	t.Cleanup(func() {
		report(t, proxy, all, kube.RetryCount()-retriesBefore)
	})

	// Terraform wraps the text it prints, so words are matched across
	// line breaks.
	outlastWrite := phrases("Kubernetes API server error", `apply (server-side) NetworkPolicy "`+ns+`/isolate"`,
		"The API server answered 503", "Running `terraform apply` again is safe")
	outlastCreate := phrases("Cannot reach the Kubernetes API server", `create NetworkPolicy "`+ns+`/extra"`,
		"connection reset by peer", "the create was sent 5 times; none of them created the object",
		"Running `terraform apply` again is safe")

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkDestroyed(ns),
		Steps: []resource.TestStep{
			{
				PreConfig:        func() { inject(transientFaults()) },
				Config:           lifecycleConfig(provider, ns, "created", ""),
				Check:            resource.ComposeTestCheckFunc(recordUIDs(uids), cleanOwnership(ns)),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			},
			{
				PreConfig: func() { inject(transientFaults()) },
				Config:    lifecycleConfig(provider, ns, "updated", ""),
				Check:     resource.ComposeTestCheckFunc(sameUIDs(uids), cleanOwnership(ns)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             updatesOnly(),
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Every server-side apply of the policy fails: the error
				// names the request and the answer, and says applying
				// again is safe.
				PreConfig: func() {
					inject([]*fp.Rule{{Kind: fp.KindStatus, Method: http.MethodPatch, Status: http.StatusServiceUnavailable,
						Path: regexp.MustCompile(`/networkpolicies/isolate$`), Times: -1}})
				},
				Config:      lifecycleConfig(provider, ns, "outlasted", ""),
				ExpectError: outlastWrite,
			},
			{
				// Every create of a new policy is reset before it reaches
				// the server.
				PreConfig: func() {
					inject([]*fp.Rule{{Kind: fp.KindReset, Method: http.MethodPost,
						Path: regexp.MustCompile(`/networkpolicies$`), Times: -1}})
				},
				Config:      lifecycleConfig(provider, ns, "outlasted", extraPolicy),
				ExpectError: outlastCreate,
			},
			{
				// The faults have passed: the same configuration converges
				// and the new policy is created once.
				PreConfig:        func() { inject(nil) },
				Config:           lifecycleConfig(provider, ns, "outlasted", extraPolicy),
				Check:            resource.ComposeTestCheckFunc(sameUIDs(uids), cleanOwnership(ns), onePolicy(ns, "extra")),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			},
			{
				// The destroy that ends the test goes through these.
				PreConfig: func() { inject(deleteFaults()) },
				Config:    lifecycleConfig(provider, ns, "outlasted", extraPolicy),
				PlanOnly:  true,
			},
		},
	})

	if got := proxy.Injected(); got[fp.KindDropWatch] == 0 || got[fp.KindStatus] == 0 || got[fp.KindReset] == 0 ||
		got[fp.KindResetAfter] == 0 || got[fp.KindDelay] == 0 {
		t.Errorf("not every kind of fault happened: %v", got)
	}
}

// updatesOnly: the plan of the update step changes every resource in
// place, replacing none.
func updatesOnly() []plancheck.PlanCheck {
	var checks []plancheck.PlanCheck
	for addr := range managed {
		checks = append(checks, plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate))
	}
	return checks
}

// recordUIDs remembers each object's uid after its creation.
func recordUIDs(uids map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for addr, gvr := range managed {
			obj, err := live(s, addr, gvr)
			if err != nil {
				return err
			}
			uids[addr] = string(obj.GetUID())
		}
		return nil
	}
}

// sameUIDs: every object is still the one first created (not deleted and
// made again behind Terraform's back by a retried request).
func sameUIDs(uids map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for addr, gvr := range managed {
			obj, err := live(s, addr, gvr)
			if err != nil {
				return err
			}
			if string(obj.GetUID()) != uids[addr] {
				return fmt.Errorf("%s: uid %s, was %s: the object was made again", addr, obj.GetUID(), uids[addr])
			}
		}
		return nil
	}
}

// cleanOwnership: every object of the provider has exactly one
// provider-owned managedFields entry, its Apply entry; no create's Update
// entry (agentsandbox-create-<token>) is left behind by a retried create.
func cleanOwnership(ns string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		for _, gvr := range uniqueGVRs() {
			list, err := dyn(gvr, ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, obj := range list.Items {
				var own []string
				for _, e := range obj.GetManagedFields() {
					if ours(e.Manager) && e.Subresource == "" {
						own = append(own, e.Manager+"/"+string(e.Operation))
					}
				}
				if len(own) == 0 {
					continue // made by the controller, not the provider
				}
				if len(own) != 1 || own[0] != kube.DefaultFieldManager+"/Apply" {
					return fmt.Errorf("%s %s: provider entries %v, want only %s/Apply", gvr.Resource, obj.GetName(), own, kube.DefaultFieldManager)
				}
			}
		}
		return nil
	}
}

func onePolicy(ns, name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if _, err := dyn(networkpolicy.Kind.GVR, ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("policy %s: %w", name, err)
		}
		return nil
	}
}

// checkDestroyed: after the destroy, nothing the provider made is left in
// the namespace.
func checkDestroyed(ns string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx := context.Background()
		for _, gvr := range uniqueGVRs() {
			list, err := dyn(gvr, ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, obj := range list.Items {
				if _, ok := providerOwned(&obj); ok && obj.GetDeletionTimestamp() == nil {
					return fmt.Errorf("%s %s/%s is left after the destroy", gvr.Resource, ns, obj.GetName())
				}
			}
		}
		return nil
	}
}

func providerOwned(obj *unstructured.Unstructured) (string, bool) {
	for _, e := range obj.GetManagedFields() {
		if ours(e.Manager) {
			return e.Manager, true
		}
	}
	return "", false
}

// ours says whether a field manager is the provider's: its own, or one
// create's (agentsandbox-create-<token>).
func ours(manager string) bool {
	return manager == kube.DefaultFieldManager || strings.HasPrefix(manager, kube.DefaultFieldManager+"-create-")
}

func uniqueGVRs() []schema.GroupVersionResource {
	seen := map[schema.GroupVersionResource]bool{networkpolicy.Kind.GVR: true}
	out := []schema.GroupVersionResource{networkpolicy.Kind.GVR}
	for _, g := range managed {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// report logs the figures of the run: faults injected by kind and by rule,
// and the provider's retries.
func report(t *testing.T, proxy *fp.Proxy, rules []*fp.Rule, retries int64) {
	got := proxy.Injected()
	kinds := make([]string, 0, len(got))
	total := 0
	for k, n := range got {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
		total += n
	}
	sort.Strings(kinds)
	t.Logf("faultproxy: %d requests, %d faults injected (%s); provider retries: %d", proxy.Requests(), total, strings.Join(kinds, " "), retries)
	for _, r := range rules {
		t.Logf("  %-60s hits %d", r.String(), r.Hits())
	}
}

// phrases matches the phrases in order, each with any white space (a line
// break of Terraform's) between its words.
func phrases(ps ...string) *regexp.Regexp {
	parts := make([]string, len(ps))
	for i, p := range ps {
		words := strings.Fields(p)
		for j, w := range words {
			words[j] = regexp.QuoteMeta(w)
		}
		parts[i] = strings.Join(words, `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, ".*"))
}

// client is the test cluster's own client (not through the proxy), set by
// the test before the checks run.
var client dynamic.Interface

func dyn(gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	return client.Resource(gvr).Namespace(ns)
}

// live reads the object of addr in the state from the cluster directly.
func live(s *terraform.State, addr string, gvr schema.GroupVersionResource) (*unstructured.Unstructured, error) {
	rs, ok := s.RootModule().Resources[addr]
	if !ok {
		return nil, fmt.Errorf("%s is not in the state", addr)
	}
	ref, err := acctest.RefFromAttributes(gvr, rs.Primary.Attributes, rs.Primary.ID)
	if err != nil {
		return nil, err
	}
	return acctest.GetObject(context.Background(), ref)
}
