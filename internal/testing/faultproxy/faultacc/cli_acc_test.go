package faultacc_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/networkpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/warmpool"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// header is the terraform and provider blocks of a CLI test configuration,
// talking to the test cluster directly.
func header() string {
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
`, acctest.HCLString(acctest.Kubeconfig()))
}

// retriesLogged counts the provider's retries in a TF_LOG_PATH log, by
// reason ("429 Too Many Requests", "409 Conflict", ...).
func retriesLogged(t *testing.T, logPath string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	re := regexp.MustCompile(`reason="([^"]*)"|reason=(\S+)`)
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, "retrying Kubernetes API request") {
			continue
		}
		reason := "unknown"
		if m := re.FindStringSubmatch(line); m != nil {
			reason = m[1] + m[2]
		}
		out[reason]++
	}
	return out
}

// TestAccConcurrency_200ObjectsParallelism30: 200 network policies applied
// with -parallelism=30 are all created with no 409 or 429 surfacing, the
// next plan is empty, and the destroy removes all of them.
func TestAccConcurrency_200ObjectsParallelism30(t *testing.T) {
	t.Parallel()
	acctest.PreCheck(t)
	ns := acctest.Namespace(t)
	const n = 200
	w := acctest.NewTFWork(t)
	logPath := filepath.Join(t.TempDir(), "provider.log")
	w.Env = append(w.Env, "TF_LOG_PROVIDER=DEBUG", "TF_LOG_PATH="+logPath)
	w.Write(header() + fmt.Sprintf(`
resource "agentsandbox_network_policy" "p" {
  count        = %d
  name         = "p-${count.index}"
  namespace    = %q
  labels       = { batch = "concurrency" }
  pod_selector = { match_labels = { app = "p-${count.index}" } }
  allow_dns    = true
}
`, n, ns))
	surfaced := regexp.MustCompile(`\b(409|429)\b|Too Many Requests|Conflict|already exists`)

	begin := time.Now()
	out, code := w.Run("apply", "-auto-approve", "-input=false", "-parallelism=30")
	applied := time.Since(begin)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("Apply complete! Resources: %d added", n)) {
		t.Fatalf("apply exited %d:\n%s", code, tail(out, 4000))
	}
	if m := surfaced.FindString(out); m != "" {
		t.Errorf("the apply surfaced %q:\n%s", m, tail(out, 4000))
	}
	list, err := acctest.Dynamic(t).Resource(networkpolicy.Kind.GVR).Namespace(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: "batch=concurrency"})
	if err != nil || len(list.Items) != n {
		t.Fatalf("policies in the cluster: %d (%v), want %d", len(list.Items), err, n)
	}
	if out, code := w.Run("plan", "-input=false", "-detailed-exitcode", "-parallelism=30"); code != 0 {
		t.Fatalf("the plan after the apply is not empty (exit %d):\n%s", code, tail(out, 4000))
	}
	begin = time.Now()
	if out, code := w.Run("destroy", "-auto-approve", "-input=false", "-parallelism=30"); code != 0 || surfaced.MatchString(out) {
		t.Fatalf("destroy exited %d:\n%s", code, tail(out, 4000))
	}
	destroyed := time.Since(begin)
	list, err = acctest.Dynamic(t).Resource(networkpolicy.Kind.GVR).Namespace(ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: "batch=concurrency"})
	if err != nil || len(list.Items) != 0 {
		t.Fatalf("policies left after the destroy: %d (%v)", len(list.Items), err)
	}
	t.Logf("%d policies, -parallelism=30: apply %s, destroy %s; provider retries by reason: %v",
		n, applied.Round(time.Second), destroyed.Round(time.Second), retriesLogged(t, logPath))
}

// poolConfig is a template and a warm pool of it; with pending = true the
// template's pods ask for a node no node matches, so the pool's apply
// waits (until interrupted).
func poolConfig(ns string, pending bool) string {
	selector := ""
	if pending {
		selector = `node_selector = { "cloud.google.com/gke-nodepool" = "no-such-pool" }`
	}
	return header() + fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "python" {
  name                      = "python"
  namespace                 = %[1]q
  network_policy_management = "Unmanaged"
  pod_template = {
    %[2]s
    containers = [{
      name      = "python"
      image     = "registry.example/python-runtime:1"
      resources = { limits = { cpu = "500m", memory = "256Mi" } }
    }]
  }
}

resource "agentsandbox_warm_pool" "pool" {
  name      = "pool"
  namespace = %[1]q
  template  = agentsandbox_sandbox_template.python.name
  replicas  = 2
  # Idle sandboxes follow a template change at once (the pending ones of
  # the interrupted apply are replaced when the template is fixed).
  update_strategy = "Recreate"
  timeouts {
    create = "5m"
  }
}
`, ns, selector)
}

// TestAccInterrupt_warmPoolCreate: terraform apply is interrupted (SIGINT,
// then SIGKILL if it has not stopped within 20 s) while it waits for a new
// warm pool; the next apply converges: exactly one pool and one template,
// the pool's sandboxes ready (the apply waits for them), the plan after it
// empty, nothing left over after the destroy.
func TestAccInterrupt_warmPoolCreate(t *testing.T) {
	t.Parallel()
	interruptPoolCreate(t, func(p *acctest.TFProc) bool { return p.Interrupt(20 * time.Second) })
}

// TestAccInterrupt_warmPoolCreateKilled: the same, but terraform is killed
// (SIGKILL, a lost CI runner) without a SIGINT first, so it cannot save
// the state of the operation in flight. The next apply either converges at
// once or refuses the objects it does not know with the import command;
// after those imports the apply converges. Nothing is duplicated or lost.
func TestAccInterrupt_warmPoolCreateKilled(t *testing.T) {
	t.Parallel()
	interruptPoolCreate(t, func(p *acctest.TFProc) bool { p.Kill(); return true })
}

var importHint = regexp.MustCompile(`terraform import (agentsandbox_[a-z_]+)\.NAME (\S+)`)

func interruptPoolCreate(t *testing.T, interrupt func(*acctest.TFProc) bool) {
	acctest.PreCheck(t)
	ns := acctest.Namespace(t)
	w := acctest.NewTFWork(t)
	w.Write(poolConfig(ns, true))
	dyn := acctest.Dynamic(t)
	pools := dyn.Resource(warmpool.Kind.GVR).Namespace(ns)

	p := w.Start("apply", "-auto-approve", "-input=false")
	acctest.WaitFor(t, 3*time.Minute, "the warm pool to be created", func(ctx context.Context) (bool, string, error) {
		l, err := pools.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil //nolint:nilerr // a failed list is a status to retry, not the end of the wait
		}
		return len(l.Items) == 1, fmt.Sprintf("%d pools", len(l.Items)), nil
	})
	time.Sleep(2 * time.Second) // well inside the wait for readiness
	killed := interrupt(p)
	out, code := p.Wait()
	if code == 0 {
		t.Fatalf("the interrupted apply succeeded:\n%s", tail(out, 3000))
	}
	t.Logf("interrupted apply: exit %d, killed: %v", code, killed)

	// The cause is fixed (a node the pods fit on) and apply runs again.
	w.Write(poolConfig(ns, false))
	out, code = w.Run("apply", "-auto-approve", "-input=false")
	if code != 0 && killed {
		// Objects created in the moment of the kill are not in the state:
		// the apply names each with its import command.
		hints := importHint.FindAllStringSubmatch(out, -1)
		if len(hints) == 0 {
			t.Fatalf("the apply after the kill exited %d without an import command:\n%s", code, tail(out, 4000))
		}
		addr := map[string]string{"agentsandbox_warm_pool": "agentsandbox_warm_pool.pool",
			"agentsandbox_sandbox_template": "agentsandbox_sandbox_template.python"}
		for _, h := range hints {
			if o, c := w.Run("import", "-input=false", addr[h[1]], h[2]); c != 0 {
				t.Fatalf("import %s %s exited %d:\n%s", addr[h[1]], h[2], c, tail(o, 3000))
			}
			t.Logf("imported %s %s as the error said", addr[h[1]], h[2])
		}
		out, code = w.Run("apply", "-auto-approve", "-input=false")
	}
	if code != 0 {
		t.Fatalf("the apply after the interruption exited %d:\n%s", code, tail(out, 6000))
	}
	if m := regexp.MustCompile(`Apply complete! Resources: [^\n]*`).FindString(out); m != "" {
		t.Logf("converged: %s", m)
	}
	if out, code := w.Run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after it is not empty (exit %d):\n%s", code, tail(out, 3000))
	}
	l, err := pools.List(context.Background(), metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Items[0].GetName() != "pool" {
		t.Fatalf("pools after convergence: %v (%v), want exactly pool", names(l.Items), err)
	}
	tl, err := dyn.Resource(sandboxtemplate.Kind.GVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(tl.Items) != 1 {
		t.Fatalf("templates after convergence: %v (%v), want exactly python", names(tl.Items), err)
	}
	if out, code := w.Run("destroy", "-auto-approve", "-input=false"); code != 0 {
		t.Fatalf("destroy exited %d:\n%s", code, tail(out, 3000))
	}
	l, _ = pools.List(context.Background(), metav1.ListOptions{})
	tl, _ = dyn.Resource(sandboxtemplate.Kind.GVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if len(l.Items)+len(tl.Items) != 0 {
		t.Fatalf("left after the destroy: pools %v, templates %v", names(l.Items), names(tl.Items))
	}
}

func names(items []unstructured.Unstructured) []string {
	out := make([]string, len(items))
	for i, u := range items {
		out[i] = u.GetName()
	}
	return out
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
