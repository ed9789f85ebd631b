package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccController_killedInstall: terraform apply is killed (SIGKILL, a
// lost CI runner: Terraform saves no state) while the install waits for
// the controller's Deployment. The next apply converges without an import:
// the objects the killed apply wrote are taken over (the Deployment keeps
// its uid: nothing is made twice), the plan after it is empty, and the
// destroy removes every object of the inventory but the CRDs (kept by
// keep_crds_on_destroy): nothing is orphaned. The provider process of the
// killed terraform exits by itself within seconds.
func TestAccController_killedInstall(t *testing.T) {
	acctest.PreCheck(t)
	rs := newReleaseServer(t)
	w := acctest.NewTFWork(t)
	config := func(extra string) string { return cliInstallConfig(rs.URL, extra) }
	// The controller's pods fit no node: the install waits.
	w.Write(config(`  controller = { node_selector = { "cloud.google.com/gke-nodepool" = "no-such-pool" } }`))
	p := w.Start("apply", "-auto-approve", "-input=false")
	var uid string
	acctest.WaitFor(t, 3*time.Minute, "the controller Deployment to be written", func(ctx context.Context) (bool, string, error) {
		dep, err := acctest.GetObject(ctx, controllerDeployment)
		if apierrors.IsNotFound(err) {
			return false, "not yet", nil
		}
		if err == nil {
			uid = string(dep.GetUID())
		}
		return err == nil, fmt.Sprint(err), nil
	})
	time.Sleep(time.Second)
	p.Kill()
	out, code := p.Wait()
	if code == 0 {
		t.Fatalf("the killed apply succeeded:\n%s", out)
	}
	// The provider the killed terraform started sees its parent gone and
	// exits (main.exitWhenOrphaned) instead of running on under init.
	killed := time.Now()
	acctest.WaitFor(t, 15*time.Second, "the orphaned provider to exit", func(context.Context) (bool, string, error) {
		out, err := exec.Command("pgrep", "-af", w.Provider()).CombinedOutput()
		return err != nil, strings.TrimSpace(string(out)), nil
	})
	t.Logf("the killed apply's provider exited %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	state, _ := w.Run("state", "list")
	t.Logf("killed install: exit %d; resources in the state: %q", code, strings.TrimSpace(state))

	w.Write(config(""))
	out, code = w.Run("apply", "-auto-approve", "-input=false")
	if code != 0 {
		t.Fatalf("the apply after the kill exited %d (an import should not be needed):\n%s", code, out)
	}
	t.Logf("converged: %s", regexp.MustCompile(`Apply complete! Resources: [^\n]*`).FindString(out))
	if err := checkDeploymentAvailable()(nil); err != nil {
		t.Fatal(err)
	}
	dep, err := acctest.GetObject(t.Context(), controllerDeployment)
	if err != nil {
		t.Fatal(err)
	}
	if string(dep.GetUID()) != uid {
		t.Errorf("the Deployment was made again (uid %s, was %s): it should have been taken over", dep.GetUID(), uid)
	}
	if out, code := w.Run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after it is not empty (exit %d):\n%s", code, out)
	}

	inventory := stateInventory(t, w)
	if out, code := w.Run("destroy", "-auto-approve", "-input=false"); code != 0 {
		t.Fatalf("destroy exited %d:\n%s", code, out)
	}
	left, kept := orphans(t, inventory)
	if len(left) > 0 {
		t.Errorf("after the destroy %d objects of the inventory are left: %v", len(left), left)
	}
	t.Logf("destroy: %d inventory objects removed, %d CRDs kept (keep_crds_on_destroy), 0 left", len(inventory)-kept, kept)
}

type inventoryItem struct {
	APIVersion string `json:"api_version"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// stateInventory reads the controller's inventory from terraform show.
func stateInventory(t *testing.T, w *acctest.TFWork) []inventoryItem {
	t.Helper()
	out, code := w.Run("show", "-json")
	if code != 0 {
		t.Fatalf("terraform show -json exited %d:\n%s", code, out)
	}
	var doc struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Values struct {
						Inventory map[string]inventoryItem `json:"inventory"`
					} `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &doc); err != nil {
		t.Fatalf("terraform show -json: %v", err)
	}
	var items []inventoryItem
	for _, r := range doc.Values.RootModule.Resources {
		for _, it := range r.Values.Inventory {
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		t.Fatal("the state has no inventory")
	}
	return items
}

// orphans returns the inventory objects that still exist (and are not
// being deleted), CRDs aside, and how many CRDs there were.
func orphans(t *testing.T, items []inventoryItem) (left []string, crds int) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(acctest.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	for _, it := range items {
		if it.Kind == "CustomResourceDefinition" {
			crds++
			continue
		}
		gv, err := schema.ParseGroupVersion(it.APIVersion)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mapper.RESTMapping(gv.WithKind(it.Kind).GroupKind(), gv.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", it.APIVersion, it.Kind, err)
		}
		ref := acctest.ObjectRef{GVR: m.Resource, Namespace: it.Namespace, Name: it.Name}
		obj, err := acctest.GetObject(t.Context(), ref)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			t.Fatalf("get %s: %v", ref, err)
		case obj.GetDeletionTimestamp() == nil:
			left = append(left, ref.String())
		}
	}
	return left, crds
}
