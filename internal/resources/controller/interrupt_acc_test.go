package controller_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// TestAccController_interruptedInstall: terraform apply is interrupted
// (SIGINT, then SIGKILL if it has not stopped within 20 s) while the
// install waits for the controller's Deployment; once the cause is fixed,
// the next apply converges (the objects already written are in the state's
// inventory or taken over), the plan after it is empty, and the destroy
// removes the Deployment.
func TestAccController_interruptedInstall(t *testing.T) {
	acctest.PreCheck(t)
	rs := newReleaseServer(t)
	w := acctest.NewTFWork(t)
	config := func(extra string) string { return cliInstallConfig(rs.URL, extra) }
	// The controller's pods fit no node: the install waits.
	w.Write(config(`  controller = { node_selector = { "cloud.google.com/gke-nodepool" = "no-such-pool" } }`))
	p := w.Start("apply", "-auto-approve", "-input=false")
	acctest.WaitFor(t, 3*time.Minute, "the controller Deployment to be written", func(ctx context.Context) (bool, string, error) {
		_, err := acctest.GetObject(ctx, controllerDeployment)
		if apierrors.IsNotFound(err) {
			return false, "not yet", nil
		}
		return err == nil, fmt.Sprint(err), nil
	})
	time.Sleep(time.Second)
	killed := p.Interrupt(20 * time.Second)
	out, code := p.Wait()
	if code == 0 {
		t.Fatalf("the interrupted apply succeeded:\n%s", out)
	}
	t.Logf("interrupted install: exit %d, SIGKILL needed: %v", code, killed)

	w.Write(config(""))
	out, code = w.Run("apply", "-auto-approve", "-input=false")
	if code != 0 {
		t.Fatalf("the apply after the interruption exited %d:\n%s", code, out)
	}
	if m := regexp.MustCompile(`Apply complete! Resources: [^\n]*`).FindString(out); m != "" {
		t.Logf("converged: %s", m)
	}
	if err := checkDeploymentAvailable()(nil); err != nil {
		t.Fatal(err)
	}
	if out, code := w.Run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after it is not empty (exit %d):\n%s", code, out)
	}
	if out, code := w.Run("destroy", "-auto-approve", "-input=false"); code != 0 {
		t.Fatalf("destroy exited %d:\n%s", code, out)
	}
	if err := checkGone(controllerDeployment)(nil); err != nil {
		t.Fatal(err)
	}
}

// cliInstallConfig is a whole configuration for the terraform CLI (acctest.TFWork):
// an agentsandbox_controller installing v1.0.3 from the test's release server
// at releaseURL, with extra lines inside the resource. The pods fit no node
// when extra says so, which keeps the install waiting for its Deployment.
func cliInstallConfig(releaseURL, extra string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    agentsandbox = { source = "agentsandbox/agentsandbox" }
  }
}

provider "agentsandbox" {
  kubernetes {
    config_path = %s
  }
}

resource "agentsandbox_controller" "test" {
  version          = "v1.0.3"
  release_base_url = %q
%s
}
`, acctest.HCLString(acctest.Kubeconfig()), releaseURL, extra)
}
