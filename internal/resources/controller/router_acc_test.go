package controller_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// The router's acceptance tests install agentsandbox_sandbox_router into a
// namespace of their own (so they never meet the controller tests'
// agent-sandbox-system), where the kwok nodes make its Deployment roll out.
// No router process runs (kwok pods run nothing): what is checked is what
// the provider writes and keeps; the router's behaviour under that
// configuration is make testacc-e2e's (issue 33).

const routerAddr = "agentsandbox_sandbox_router.test"

var (
	routerDeploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	routerNetpolGVR     = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	routerPDBGVR        = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}
	routerServiceGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	routerSAGVR         = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	routerCRGVR         = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	routerCRBGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

func configRouter(body string) string {
	return acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf("resource \"agentsandbox_sandbox_router\" \"test\" {\n%s\n}\n", body))
}

// routerObjects are every object a default router in ns consists of.
func routerObjects(ns string) []acctest.ObjectRef {
	return []acctest.ObjectRef{
		{GVR: routerDeploymentGVR, Namespace: ns, Name: "sandbox-router"},
		{GVR: routerNetpolGVR, Namespace: ns, Name: "sandbox-router"},
		{GVR: routerPDBGVR, Namespace: ns, Name: "sandbox-router"},
		{GVR: routerServiceGVR, Namespace: ns, Name: "sandbox-router-svc"},
		{GVR: routerSAGVR, Namespace: ns, Name: "sandbox-router"},
		{GVR: routerCRGVR, Name: "sandbox-router-" + ns},
		{GVR: routerCRBGVR, Name: "sandbox-router-" + ns},
		{GVR: routerCRBGVR, Name: "sandbox-router-auth-delegator-" + ns},
	}
}

func routerDeployment(ns string) acctest.ObjectRef {
	return acctest.ObjectRef{GVR: routerDeploymentGVR, Namespace: ns, Name: "sandbox-router"}
}

// checkRouterDeployment runs check on the live router Deployment's spec,
// args and pod spec.
func checkRouterDeployment(ns string, check func(dep *unstructured.Unstructured, args []string, pod map[string]any) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		dep, err := mustGet(context.Background(), routerDeployment(ns))
		if err != nil {
			return err
		}
		pod, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "spec")
		var args []string
		ctrs, _, _ := unstructured.NestedSlice(pod, "containers")
		for _, c := range ctrs {
			if m := c.(map[string]any); m["name"] == "sandbox-router" {
				args, _, _ = unstructured.NestedStringSlice(m, "args")
			}
		}
		return check(dep, args, pod)
	}
}

func hasArgs(want ...string) func(*unstructured.Unstructured, []string, map[string]any) error {
	return func(_ *unstructured.Unstructured, args []string, _ map[string]any) error {
		for _, w := range want {
			if !slices.Contains(args, w) {
				return fmt.Errorf("router args %v lack %s", args, w)
			}
		}
		return nil
	}
}

func hasReplicas(n int64) func(*unstructured.Unstructured, []string, map[string]any) error {
	return func(dep *unstructured.Unstructured, _ []string, _ map[string]any) error {
		if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != n {
			return fmt.Errorf("replicas = %d, want %d", r, n)
		}
		return nil
	}
}

// TestAccSandboxRouter_lifecycle: create with defaults (authorization on),
// update in place, drift repaired, out-of-band deletion recreated, import,
// replace, destroy; the plan is empty after every apply (the framework
// checks it after each step).
func TestAccSandboxRouter_lifecycle(t *testing.T) {
	ns := acctest.Namespace(t)
	ns2 := acctest.Namespace(t)
	base := fmt.Sprintf("namespace = %q\nreplicas = 1", ns)
	updated := base + `
upstream_max_retries = 5
authz_audiences      = ["sandbox-router"]
metrics_namespace    = "monitoring"
allowed_clients = [
  { namespace = "agents", pod_labels = { role = "agent" } },
]`
	updated = strings.Replace(updated, "replicas = 1", "replicas = 2", 1)

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             resource.ComposeAggregateTestCheckFunc(checkGone(routerObjects(ns)...), checkGone(routerObjects(ns2)...)),
		Steps: []resource.TestStep{
			{
				// Installed with defaults: authorization is on.
				Config: configRouter(base),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/v1.0.3")),
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("authz_mode"), knownvalue.StringExact("tokenreview")),
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("service_name"), knownvalue.StringExact("sandbox-router-svc")),
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("service_port"), knownvalue.Int64Exact(8080)),
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("url"),
						knownvalue.StringExact("http://sandbox-router-svc."+ns+".svc.cluster.local:8080")),
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("inventory"), knownvalue.MapSizeExact(8)),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkExists(routerObjects(ns)...),
					checkRouterDeployment(ns, hasArgs("--authz-mode=tokenreview", "--authz-tokenreview-require-token=true",
						"--cache-enabled=true", "--http-bind-address=:8080")),
					checkRouterDeployment(ns, hasReplicas(1)),
					checkRouterDeployment(ns, func(dep *unstructured.Unstructured, _ []string, pod map[string]any) error {
						if pod["automountServiceAccountToken"] != true {
							return fmt.Errorf("automountServiceAccountToken = %v; TokenReview needs the token", pod["automountServiceAccountToken"])
						}
						if nr, _, _ := unstructured.NestedBool(pod, "securityContext", "runAsNonRoot"); !nr {
							return fmt.Errorf("pod securityContext %v", pod["securityContext"])
						}
						if avail, _, _ := unstructured.NestedInt64(dep.Object, "status", "availableReplicas"); avail != 1 {
							return fmt.Errorf("availableReplicas = %d after a waiting apply", avail)
						}
						return nil
					}),
				),
			},
			{
				// Update in place.
				Config: configRouter(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(routerAddr, plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRouterDeployment(ns, hasReplicas(2)),
					checkRouterDeployment(ns, hasArgs("--upstream-max-retries=5", "--authz-tokenreview-audiences=sandbox-router")),
					checkPolicyIngress(ns, `"kubernetes.io/metadata.name":"agents"`, `"role":"agent"`, `"kubernetes.io/metadata.name":"monitoring"`),
				),
			},
			{
				// Drift: someone turns authorization off and scales the
				// router with kubectl. The refresh sees it, the plan
				// repairs it.
				PreConfig: func() {
					acctest.Patch(t, routerDeployment(ns), types.JSONPatchType,
						`[{"op":"replace","path":"/spec/replicas","value":5},`+
							`{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--authz-mode=allow-all"}]`)
					acctest.Patch(t, acctest.ObjectRef{GVR: routerNetpolGVR, Namespace: ns, Name: "sandbox-router"}, types.MergePatchType,
						`{"spec":{"ingress":[{"from":[{"namespaceSelector":{}}]}]}}`)
				},
				Config: configRouter(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(routerAddr, plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRouterDeployment(ns, hasReplicas(2)),
					checkRouterDeployment(ns, func(_ *unstructured.Unstructured, args []string, _ map[string]any) error {
						if slices.Contains(args, "--authz-mode=allow-all") {
							return fmt.Errorf("the drifted flag is still there: %v", args)
						}
						return hasArgs("--authz-mode=tokenreview")(nil, args, nil)
					}),
					checkPolicyIngress(ns, `"kubernetes.io/metadata.name":"agents"`),
				),
			},
			{
				// Deleted out of band: recreated.
				PreConfig: func() {
					acctest.Delete(t, routerDeployment(ns))
					acctest.Delete(t, acctest.ObjectRef{GVR: routerNetpolGVR, Namespace: ns, Name: "sandbox-router"})
				},
				Config: configRouter(updated),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(routerAddr, plancheck.ResourceActionUpdate)},
				},
				Check: checkExists(routerObjects(ns)...),
			},
			{
				ResourceName:            routerAddr,
				ImportState:             true,
				ImportStateId:           ns + "/v1.0.3",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"inventory"},
			},
			{
				ResourceName:  routerAddr,
				ImportState:   true,
				ImportStateId: "agent-sandbox-system/v0.5.5",
				ExpectError:   regexp.MustCompile(`Expected <namespace>/<version> with a release that has a router[\s\S]*v0\.5\.6,\s+v1\.0\.1,\s+v1\.0\.3`),
			},
			{
				// Another namespace: replaced, the old objects removed.
				Config: configRouter(fmt.Sprintf("namespace = %q\nreplicas = 1", ns2)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(routerAddr, plancheck.ResourceActionDestroyBeforeCreate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkGone(routerObjects(ns)...), checkExists(routerObjects(ns2)...)),
			},
		},
	})
}

// checkPolicyIngress checks that the router's live NetworkPolicy ingress,
// as JSON, contains each fragment.
func checkPolicyIngress(ns string, fragments ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		np, err := mustGet(context.Background(), acctest.ObjectRef{GVR: routerNetpolGVR, Namespace: ns, Name: "sandbox-router"})
		if err != nil {
			return err
		}
		ingress, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
		js, _ := (&unstructured.Unstructured{Object: map[string]any{"i": ingress}}).MarshalJSON()
		for _, f := range fragments {
			if !strings.Contains(string(js), f) {
				return fmt.Errorf("ingress %s lacks %s", js, f)
			}
		}
		return nil
	}
}

// TestAccSandboxRouter_upgrade: v1.0.1's router upgraded to v1.0.3's in
// place; the objects stay (same names) and the plan is empty after.
func TestAccSandboxRouter_upgrade(t *testing.T) {
	ns := acctest.Namespace(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkGone(routerObjects(ns)...),
		Steps: []resource.TestStep{
			{
				Config: configRouter(fmt.Sprintf("namespace = %q\nversion = \"v1.0.1\"\nreplicas = 1", ns)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/v1.0.1")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkExists(routerObjects(ns)...),
					checkRouterDeployment(ns, hasArgs("--authz-mode=tokenreview"))),
			},
			{
				Config: configRouter(fmt.Sprintf("namespace = %q\nversion = \"v1.0.3\"\nreplicas = 1", ns)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(routerAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/v1.0.3")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(checkExists(routerObjects(ns)...),
					checkRouterDeployment(ns, hasArgs("--authz-mode=tokenreview"))),
			},
		},
	})
}

// TestAccSandboxRouter_loosenedAndTLS: allow-all without the cache mounts no
// token and grants no RBAC; TLS serves 8443 only; and changing them back
// prunes what the hardened configuration does not need.
func TestAccSandboxRouter_loosenedAndTLS(t *testing.T) {
	ns := acctest.Namespace(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkGone(routerObjects(ns)...),
		Steps: []resource.TestStep{
			{
				Config: configRouter(fmt.Sprintf(`namespace = %q
replicas = 1
authz_mode = "allow-all"
cache_enabled = false
tls_secret_name = "router-tls"
pdb_min_available = 0`, ns)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("inventory"), knownvalue.MapSizeExact(4)),
					statecheck.ExpectKnownValue(routerAddr, tfjsonpath.New("url"),
						knownvalue.StringExact("https://sandbox-router-svc."+ns+".svc.cluster.local:8443")),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGone(routerObjects(ns)[5:]...),
					checkGone(routerObjects(ns)[2]),
					checkRouterDeployment(ns, hasArgs("--authz-mode=allow-all", "--https-bind-address=:8443", "--http-bind-address=")),
					checkRouterDeployment(ns, func(_ *unstructured.Unstructured, _ []string, pod map[string]any) error {
						if pod["automountServiceAccountToken"] != false {
							return fmt.Errorf("automountServiceAccountToken = %v with nothing calling the API server", pod["automountServiceAccountToken"])
						}
						return nil
					}),
				),
			},
			{
				Config: configRouter(fmt.Sprintf("namespace = %q\nreplicas = 1", ns)),
				Check:  checkExists(routerObjects(ns)...),
			},
		},
	})
}
