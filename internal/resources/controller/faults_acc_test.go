package controller_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	fp "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/faultproxy"
)

// TestAccController_throughFaults: the install, an update and the destroy
// go through the fault proxy (429 with Retry-After, 500, 503, resets before
// and after forwarding, delays, cut watches) and succeed; a fault that
// outlasts the retries fails naming the request and saying that applying
// again is safe: on the Deployment's dry run, with nothing written; on its
// real write, listing what was already applied. The next apply converges.
func TestAccController_throughFaults(t *testing.T) {
	acctest.PreCheck(t)
	rs := newReleaseServer(t)
	proxy, err := fp.Start(acctest.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	kc, err := proxy.Kubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	provider := fmt.Sprintf("provider %q {\n  kubernetes {\n    config_path = %s\n  }\n}\n", acctest.ProviderName, acctest.HCLString(kc))
	config := func(replicas int) string {
		return provider + fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version          = "v1.0.3"
  release_base_url = %q
  controller       = { replicas = %d }
}
`, rs.URL, replicas)
	}
	retries := kube.RetryCount()
	inject := func(rules ...*fp.Rule) { proxy.Clear(); proxy.Inject(rules...) }
	transient := func() []*fp.Rule {
		return []*fp.Rule{
			{Kind: fp.KindStatus, Method: http.MethodPatch, Status: http.StatusTooManyRequests, RetryAfter: time.Second, Times: 2},
			{Kind: fp.KindStatus, Method: http.MethodPatch, Status: http.StatusInternalServerError, Skip: 3, Times: 1},
			{Kind: fp.KindResetAfter, Method: http.MethodPatch, Skip: 6, Times: 1},
			{Kind: fp.KindReset, Method: http.MethodPost, Times: 1},
			{Kind: fp.KindResetAfter, Method: http.MethodPost, Skip: 1, Times: 1},
			{Kind: fp.KindStatus, Method: http.MethodGet, Watch: fp.Bool(false), Status: http.StatusServiceUnavailable, Times: 2},
			{Kind: fp.KindReset, Method: http.MethodGet, Watch: fp.Bool(false), Skip: 5, Times: 2},
			{Kind: fp.KindDropWatch, Watch: fp.Bool(true), Delay: 150 * time.Millisecond, Times: 4},
			{Kind: fp.KindDelay, Skip: 4, Delay: time.Second, Times: 3},
		}
	}
	t.Cleanup(func() {
		t.Logf("faultproxy: %d requests, faults injected %v; provider retries: %d", proxy.Requests(), proxy.Injected(), kube.RetryCount()-retries)
	})
	// The dry run of the Deployment fails: nothing is written.
	outlastPreflight := regexp.MustCompile(`(?s)` + strings.Join([]string{
		`Deployment\s+"agent-sandbox-system/agent-sandbox-controller"`, `503`,
		`Running\s+.terraform\s+apply.\s+again\s+is\s+safe`, `Nothing\s+was\s+written\s+to\s+the\s+cluster`,
	}, ".*"))
	// The Deployment's real write fails: what was applied is listed.
	outlastWrite := regexp.MustCompile(`(?s)` + strings.Join([]string{
		`Deployment\s+"agent-sandbox-system/agent-sandbox-controller"`, `503`,
		`Already\s+applied\s+before\s+the\s+failure`, `Running\s+apply\s+again\s+is\s+safe`,
	}, ".*"))
	deployment := regexp.MustCompile(`/deployments/agent-sandbox-controller$`)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkGone(controllerDeployment),
		Steps: []resource.TestStep{
			{
				PreConfig:        func() { inject(transient()...) },
				Config:           config(1),
				Check:            resource.ComposeAggregateTestCheckFunc(checkExists(controllerDeployment), checkDeploymentAvailable()),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			},
			{
				PreConfig: func() {
					inject(&fp.Rule{Kind: fp.KindStatus, Method: http.MethodPatch, Status: http.StatusServiceUnavailable,
						Path: deployment, Times: -1})
				},
				Config:      config(2),
				ExpectError: outlastPreflight,
			},
			{
				PreConfig: func() {
					inject(&fp.Rule{Kind: fp.KindStatus, Method: http.MethodPatch, Status: http.StatusServiceUnavailable,
						Path: deployment, Match: fp.NotDryRun, Times: -1})
				},
				Config:      config(2),
				ExpectError: outlastWrite,
			},
			{
				PreConfig:        func() { inject(transient()...) },
				Config:           config(2),
				Check:            resource.ComposeAggregateTestCheckFunc(checkExists(controllerDeployment), checkDeploymentAvailable()),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			},
			{
				// The destroy that ends the test goes through these.
				PreConfig: func() {
					inject(&fp.Rule{Kind: fp.KindStatus, Method: http.MethodDelete, Status: http.StatusServiceUnavailable, Times: 2},
						&fp.Rule{Kind: fp.KindReset, Method: http.MethodDelete, Skip: 1, Times: 1},
						&fp.Rule{Kind: fp.KindResetAfter, Method: http.MethodDelete, Skip: 3, Times: 1})
				},
				Config:   config(2),
				PlanOnly: true,
			},
		},
	})
	if got := proxy.Injected(); got[fp.KindStatus] == 0 || got[fp.KindReset] == 0 || got[fp.KindResetAfter] == 0 || got[fp.KindDelay] == 0 {
		t.Errorf("not every kind of fault happened: %v", got)
	}
}
