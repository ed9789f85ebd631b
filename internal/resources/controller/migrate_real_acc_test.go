package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/testenv"
)

// helmRelease is the release name upstream's chart README installs under
// (helm/README.md at v1.0.3).
const helmRelease = "agent-sandbox"

var podGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// TestAccController_migrateFromHelmAndKubectl runs the three migration
// paths of the install guide against the real Helm v4 CLI (built from the
// Go module proxy by tools/helm/build.sh), upstream's chart from the module
// sigs.k8s.io/agent-sandbox@v1.0.3 (helm/), the real kubectl, and the real
// v1.0.3 controller reconciling a template, a warm pool, a claim and a
// sandbox throughout:
//
//  1. `helm install` → agentsandbox_controller takes it over: the chart's
//     Deployment (another selector) is replaced, Helm's fields are taken
//     over and its labels removed, `helm list` is empty once the release
//     record is forgotten as the warning says;
//  2. `terraform destroy` (keep_crds_on_destroy) → `helm install` again;
//  3. `kubectl apply -f sandbox-with-extensions.yaml` → taken over: no
//     kubectl field manager and no last-applied-configuration left.
//
// Through all of it no sandbox pod is lost or restarted: every pod's UID is
// the same at the end as after the first `helm install`.
func TestAccController_migrateFromHelmAndKubectl(t *testing.T) {
	t.Parallel()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("needs kubectl on PATH (CONTRIBUTING.md, What you need)")
	}
	c := acctest.StartOwnCluster(t, testenv.Options{
		Profile: &releases.V103,
		// Helm installs the CRDs; the real controller starts once they
		// are served, as its pod would.
		NoCRDs:         true,
		Controller:     testenv.RealController(releases.V103, ""),
		ControllerWait: -1,
	})
	ctx := t.Context()
	helm := buildHelm(t, c.Root)
	chart := moduleDir(t, "sigs.k8s.io/agent-sandbox@v1.0.3") + "/helm"
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig, "HELM_CACHE_HOME="+t.TempDir(),
			"HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		t.Logf("$ %s %s\n%s", filepath.Base(name), strings.Join(args, " "), out)
		return string(out)
	}
	// The guide's commands, exactly.
	helmInstall := func() {
		t0 := time.Now()
		run(helm, "install", helmRelease, chart, "--namespace", controllerNS, "--create-namespace",
			"--set", "image.tag=v1.0.3", "--set", "controller.extensions=true", "--wait", "--timeout", "2m")
		t.Logf("helm install took %s", time.Since(t0).Round(time.Millisecond))
	}
	helmList := func() []map[string]any {
		var list []map[string]any
		if err := json.Unmarshal([]byte(run(helm, "list", "-n", controllerNS, "-o", "json")), &list); err != nil {
			t.Fatalf("helm list -o json: %v", err)
		}
		return list
	}

	helmInstall()
	dyn := c.Dynamic
	createSandboxWorld(t, dyn)
	before := sandboxPods(t, dyn)
	t.Logf("sandbox pods after helm install: %v", before)
	podsKept := func() error {
		now, err := sandboxPodsNow(ctx, dyn)
		if err != nil {
			return err
		}
		var lost []string
		for name, uid := range before {
			if now[name] != uid {
				lost = append(lost, fmt.Sprintf("%s (uid %s, now %q)", name, uid, now[name]))
			}
		}
		if len(lost) > 0 {
			return fmt.Errorf("%d of %d sandbox pods lost or restarted: %s", len(lost), len(before), strings.Join(lost, "; "))
		}
		return nil
	}

	rs := newReleaseServer(t)
	config := acctest.ConfigCompose(c.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_controller" "test" {
  version          = "v1.0.3"
  release_base_url = %q
}
`, rs.URL))
	takenOver := func(tool string, leftover func(*unstructured.Unstructured) string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			if err := podsKept(); err != nil {
				return err
			}
			for _, ref := range []acctest.ObjectRef{
				{GVR: namespaceGVR, Name: controllerNS}, controllerDeployment,
				{GVR: serviceGVR, Namespace: controllerNS, Name: controllerName},
				{GVR: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, Name: controllerName},
				{GVR: crdGVR, Name: sandboxCRDs[0]},
			} {
				obj, err := dyn.Resource(ref.GVR).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("after taking over the %s install: %s: %w", tool, ref, err)
				}
				if l := leftover(obj); l != "" {
					return fmt.Errorf("after taking over the %s install, %s still has %s", tool, ref, l)
				}
			}
			dep, err := dyn.Resource(deploymentGVR).Namespace(controllerNS).Get(ctx, controllerName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			sel, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "selector", "matchLabels")
			if fmt.Sprint(sel) != "map[app:agent-sandbox-controller]" {
				return fmt.Errorf("controller Deployment selects %v, want the release's app=agent-sandbox-controller", sel)
			}
			svc, err := dyn.Resource(serviceGVR).Namespace(controllerNS).Get(ctx, controllerName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			ssel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
			if fmt.Sprint(ssel) != "map[app:agent-sandbox-controller]" {
				return fmt.Errorf("controller Service selects %v, want the release's app=agent-sandbox-controller (the chart's keys removed)", ssel)
			}
			// The old Deployment is gone with its pods: only the
			// release's controller pods are left in the namespace.
			pods, err := dyn.Resource(podGVR).Namespace(controllerNS).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, p := range pods.Items {
				if p.GetLabels()["app"] != controllerName || p.GetDeletionTimestamp() != nil {
					return fmt.Errorf("pod %s (labels %v) left in %s after the takeover", p.GetName(), p.GetLabels(), controllerNS)
				}
			}
			return nil
		}
	}
	helmLeftover := func(obj *unstructured.Unstructured) string {
		for k := range obj.GetLabels() {
			if strings.HasPrefix(k, "helm.sh/") || strings.HasPrefix(k, "app.kubernetes.io/") {
				return "Helm's label " + k
			}
		}
		for k := range obj.GetAnnotations() {
			if strings.HasPrefix(k, "meta.helm.sh/") {
				return "Helm's annotation " + k
			}
		}
		return foreignManager(obj)
	}
	kubectlLeftover := func(obj *unstructured.Unstructured) string {
		if _, ok := obj.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			return "kubectl's last-applied-configuration annotation"
		}
		return foreignManager(obj)
	}

	// Path 1: helm install → agentsandbox_controller.
	t0 := time.Now()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:           config,
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check: resource.ComposeAggregateTestCheckFunc(
				takenOver("Helm", helmLeftover),
				func(*terraform.State) error {
					// Helm's record is still there until forgotten, as the
					// warning says; then helm list is empty.
					if l := helmList(); len(l) != 1 || l[0]["name"] != helmRelease {
						return fmt.Errorf("helm list before forgetting the release: %v, want %s", l, helmRelease)
					}
					run(kubectl, "-n", controllerNS, "delete", "secret", "-l", "owner=helm,name="+helmRelease)
					if l := helmList(); len(l) != 0 {
						return fmt.Errorf("helm list after forgetting the release: %v, want none", l)
					}
					// The pod replacement restarts the controller: so does
					// the process that plays it, and the sandboxes stay.
					if err := c.ReplaceController(ctx, testenv.RealController(releases.V103, c.Root)); err != nil {
						return err
					}
					return sandboxWorldReady(ctx, dyn)
				},
			),
		}, {
			// Nothing left to take over: the plan stays empty, and a
			// refresh finds no drift.
			Config:   config,
			PlanOnly: true,
		}},
		CheckDestroy: func(*terraform.State) error {
			// Path 2: back to Helm after destroy; the CRDs and every
			// sandbox object stay (keep_crds_on_destroy).
			if _, err := dyn.Resource(namespaceGVR).Get(ctx, controllerNS, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("namespace %s after destroy, want it deleted: %w", controllerNS, err)
			}
			for _, name := range sandboxCRDs {
				if _, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{}); err != nil {
					return fmt.Errorf("CRD %s after destroy with keep_crds_on_destroy: %w", name, err)
				}
			}
			return podsKept()
		},
	})
	t.Logf("path 1 (helm install → agentsandbox_controller, then destroy) took %s", time.Since(t0).Round(time.Millisecond))

	t0 = time.Now()
	helmInstall()
	if l := helmList(); len(l) != 1 || l[0]["status"] != "deployed" {
		t.Fatalf("helm list after installing again: %v, want %s deployed", l, helmRelease)
	}
	if err := c.ReplaceController(ctx, testenv.RealController(releases.V103, c.Root)); err != nil {
		t.Fatal(err)
	}
	if err := sandboxWorldReady(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	if err := podsKept(); err != nil {
		t.Fatalf("after going back to Helm: %v", err)
	}
	t.Logf("path 2 (back to helm install) took %s", time.Since(t0).Round(time.Millisecond))

	// Path 3: from kubectl apply -f of the release asset.
	t0 = time.Now()
	// The chart's own Namespace holds Helm's release record, so the
	// uninstall deletes the record with the namespace before it purges it,
	// and says so (helm v4.3.2: "Failed to purge the release: release: not
	// found"); everything else is uninstalled.
	uninstall := exec.CommandContext(ctx, helm, "uninstall", helmRelease, "--namespace", controllerNS, "--wait", "--timeout", "2m")
	uninstall.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	if out, err := uninstall.CombinedOutput(); err != nil && !strings.Contains(string(out), "Failed to purge the release: release: not found") {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	} else {
		t.Logf("$ helm uninstall %s --namespace %s\n%s", helmRelease, controllerNS, out)
	}
	if err := waitFor(ctx, 2*time.Minute, func() error {
		if _, err := dyn.Resource(namespaceGVR).Get(ctx, controllerNS, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s still there after helm uninstall: %w", controllerNS, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	asset := filepath.Join(c.Root, "internal/sandboxapi/bundles/v1.0.3/sandbox-with-extensions.yaml")
	run(kubectl, "apply", "-f", asset)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:           config,
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check:            takenOver("kubectl", kubectlLeftover),
		}},
		CheckDestroy: func(*terraform.State) error { return podsKept() },
	})
	t.Logf("path 3 (kubectl apply → agentsandbox_controller, then destroy) took %s", time.Since(t0).Round(time.Millisecond))
	t.Logf("sandbox pods at the end: %v", sandboxPods(t, dyn))
}

// foreignManager names a field manager of another installer left on obj.
func foreignManager(obj *unstructured.Unstructured) string {
	for _, e := range obj.GetManagedFields() {
		if slices.Contains([]string{"helm", "kubectl", "kubectl-client-side-apply", "kubectl-create"}, e.Manager) {
			return "fields managed by " + e.Manager
		}
	}
	return ""
}

// buildHelm builds (or finds cached) the Helm CLI with tools/helm/build.sh.
func buildHelm(t *testing.T, root string) string {
	t.Helper()
	t0 := time.Now()
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, "tools/helm/build.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("building the Helm CLI (tools/helm/build.sh; `make helm` builds it ahead): %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("helm: %s (%s)", lines[len(lines)-1], time.Since(t0).Round(time.Millisecond))
	return lines[len(lines)-1]
}

// moduleDir is where the Go module cache holds module@version.
func moduleDir(t *testing.T, mod string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "mod", "download", "-json", mod).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", mod, err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download -json %s: no directory in %s (%v)", mod, out, err)
	}
	return info.Dir
}

// The sandbox world the migration must keep: a template, a warm pool of
// two, a claim taking one of them, and a long-lived sandbox, in default.
func createSandboxWorld(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	pod := func(name string) map[string]any {
		return map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
			"name": name, "image": "registry.example/" + name + ":1",
		}}}}
	}
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxTemplate",
			"metadata": map[string]any{"name": "python"},
			"spec":     map[string]any{"networkPolicyManagement": "Unmanaged", "podTemplate": pod("python")}}},
		{Object: map[string]any{"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxWarmPool",
			"metadata": map[string]any{"name": "python"},
			"spec":     map[string]any{"replicas": int64(2), "sandboxTemplateRef": map[string]any{"name": "python"}}}},
		{Object: map[string]any{"apiVersion": "extensions.agents.x-k8s.io/v1beta1", "kind": "SandboxClaim",
			"metadata": map[string]any{"name": "first"},
			"spec":     map[string]any{"warmPoolRef": map[string]any{"name": "python"}}}},
		{Object: map[string]any{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
			"metadata": map[string]any{"name": "workspace"},
			"spec":     map[string]any{"podTemplate": pod("agent")}}},
	}
	for i, o := range objs {
		gvr := upgradeKinds[i]
		if _, err := dyn.Resource(gvr).Namespace("default").Create(t.Context(), o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	if err := sandboxWorldReady(t.Context(), dyn); err != nil {
		t.Fatal(err)
	}
}

// sandboxWorldReady waits until the pool has 2 ready sandboxes, the claim
// is Ready and there are 4 sandbox pods (2 warm, the claimed one, the
// long-lived one).
func sandboxWorldReady(ctx context.Context, dyn dynamic.Interface) error {
	return waitFor(ctx, 2*time.Minute, func() error {
		pool, err := dyn.Resource(upgradeKinds[1]).Namespace("default").Get(ctx, "python", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ready, _, _ := unstructured.NestedInt64(pool.Object, "status", "readyReplicas"); ready != 2 {
			return fmt.Errorf("warm pool python has %d ready sandboxes, want 2", ready)
		}
		claim, err := dyn.Resource(upgradeKinds[2]).Namespace("default").Get(ctx, "first", metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(claim.Object, "status", "conditions")
		ready := false
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
				ready = true
			}
		}
		if !ready {
			return fmt.Errorf("claim first not Ready: %v", conds)
		}
		pods, err := sandboxPodsNow(ctx, dyn)
		if err != nil {
			return err
		}
		if len(pods) != 4 {
			return fmt.Errorf("%d sandbox pods %v, want 4", len(pods), pods)
		}
		return nil
	})
}

// sandboxPods is sandboxPodsNow, failing the test on error.
func sandboxPods(t *testing.T, dyn dynamic.Interface) map[string]types.UID {
	t.Helper()
	pods, err := sandboxPodsNow(t.Context(), dyn)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// sandboxPodsNow maps each running sandbox pod in default to its UID.
func sandboxPodsNow(ctx context.Context, dyn dynamic.Interface) (map[string]types.UID, error) {
	list, err := dyn.Resource(podGVR).Namespace("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]types.UID{}
	for _, p := range list.Items {
		if p.GetDeletionTimestamp() == nil {
			out[p.GetName()] = p.GetUID()
		}
	}
	return out, nil
}
