package realnode

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// The isolation report (data.agentsandbox_isolation_report) cross-checked
// with the enforcer: every probe that starts from a sandbox or ends at one
// is also given to the report, as an extra destination (egress) or source
// (ingress), and after each step the report's verdict must be what the
// packet really did. The report is read again after the probes ran (a
// step with the same configuration, where the data source is read at
// plan), so it sees what they saw, the controller's managed policy
// included. TestAccReportAgreesWithTheProbesClaims runs the same
// configuration on the local cluster (policies stored, not enforced) and
// compares the report with each probe's expected verdict instead.

const reportAddress = "data.agentsandbox_isolation_report.e2e"

// sandboxRoles are the pods the report reports on, by the template their
// warm pool is made of.
var sandboxRoles = map[string]string{"sandbox": allowListTemplate, "internet": internetTemplate, "managed": managedTemplate}

// helperPeers are the helper pods that connect to sandboxes: their
// namespace and labels (helperPod in TestE2E).
var helperPeers = map[string]struct {
	ns     string
	labels map[string]string
}{
	"router":   {routerNS, map[string]string{"app": "sandbox-router"}},
	"stranger": {routerNS, map[string]string{"app": "not-the-router"}},
	"impostor": {sandboxNS, map[string]string{"app": "sandbox-router"}},
}

// reported says whether the report has a verdict for the probe, and under
// which key of which direction.
func reported(p Probe) (direction, key string, ok bool) {
	switch {
	case sandboxRoles[p.From] != "" && isAddr(p.To):
		proto := "tcp"
		if p.Proto == ProtoDNSUDP {
			proto = "udp"
		}
		return "egress", fmt.Sprintf("probe_%s_%s_%d", proto, strings.NewReplacer(".", "_", ":", "_").Replace(p.To), p.Port), true
	case sandboxRoles[p.To] != "" && helperPeers[p.From].ns != "":
		return "ingress", fmt.Sprintf("probe_from_%s_%d", p.From, p.Port), true
	}
	return "", "", false
}

func protocolOf(p Probe) string {
	if p.Proto == ProtoDNSUDP {
		return "UDP"
	}
	return "TCP"
}

// reportConfig is the data source with every probe the report can answer.
func reportConfig() string {
	seen := map[string]bool{}
	var dests, srcs []string
	for _, p := range Probes {
		dir, key, ok := reported(p)
		if !ok || seen[dir+key] {
			continue
		}
		seen[dir+key] = true
		if dir == "egress" {
			dests = append(dests, fmt.Sprintf("    { name = %q, address = %q, port = %d, protocol = %q },", key, p.To, p.Port, protocolOf(p)))
			continue
		}
		peer := helperPeers[p.From]
		var labels []string
		for k, v := range peer.labels {
			labels = append(labels, fmt.Sprintf("%q = %q", k, v))
		}
		sort.Strings(labels)
		srcs = append(srcs, fmt.Sprintf("    { name = %q, namespace = %q, labels = { %s }, port = %d },", key, peer.ns, strings.Join(labels, ", "), p.Port))
	}
	sort.Strings(dests)
	sort.Strings(srcs)
	return fmt.Sprintf(`
# The isolation report of the sandboxes, with every probe as an extra
# destination or source (internal/testing/realnode/report_test.go).
data "agentsandbox_isolation_report" "e2e" {
  namespace = %q
  destinations = [
%s
  ]
  sources = [
%s
  ]
  depends_on = [
    agentsandbox_warm_pool.e2e, agentsandbox_warm_pool.internet, agentsandbox_warm_pool.managed,
    agentsandbox_network_policy.e2e, agentsandbox_network_policy.internet,
  ]
}
`, sandboxNS, strings.Join(dests, "\n"), strings.Join(srcs, "\n"))
}

// reportVerdicts locates the verdicts of one report that a probe's packet
// answers: the report's address in the state and, from its attributes,
// the prefixes of the verdicts (reachability entries: <prefix>verdict,
// <prefix>reason). ok false: the report has nothing to say about the
// probe.
type reportVerdicts func(p Probe) (address string, prefixes func(a map[string]string) []string, ok bool)

// sandboxesOf are the prefixes of the report's sandboxes of template.
func sandboxesOf(a map[string]string, template string) []string {
	n, _ := strconv.Atoi(a["sandboxes.#"])
	var out []string
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("sandboxes.%d.", i)
		if a[p+"template"] == template {
			out = append(out, p)
		}
	}
	return out
}

// e2eVerdicts: TestE2E's probes from or to a sandbox, in its one report,
// for every sandbox of the probe's template.
func e2eVerdicts(p Probe) (string, func(map[string]string) []string, bool) {
	dir, key, ok := reported(p)
	if !ok {
		return "", nil, false
	}
	role := p.From
	if dir == "ingress" {
		role = p.To
	}
	return reportAddress, func(a map[string]string) []string {
		var out []string
		for _, prefix := range sandboxesOf(a, sandboxRoles[role]) {
			out = append(out, prefix+"network."+dir+"."+key+".")
		}
		return out
	}, true
}

// crossCheck compares TestE2E's report in the state with the probes of
// the step: for every probe the report answers, its verdict for every
// sandbox of the probe's template must be what the packet did.
func crossCheck(t *testing.T, s *terraform.State, step int, list []ProbeResult, what string) {
	t.Helper()
	compareWithReports(t, "TestE2E/report", s, step, list, what, e2eVerdicts)
}

// compareWithReports compares the reports in the state with the probes
// of the step: every verdict locate finds for a probe must be what the
// packet did (its Got, "ok:..." or "fail:...").
func compareWithReports(t *testing.T, test string, s *terraform.State, step int, list []ProbeResult, what string, locate reportVerdicts) {
	t.Helper()
	checked, agreed := 0, 0
	for _, r := range list {
		if r.Step != step {
			continue
		}
		address, prefixes, ok := locate(r.Probe)
		if !ok {
			continue
		}
		rs := s.RootModule().Resources[address]
		if rs == nil {
			t.Fatalf("%s is not in the state", address)
		}
		a := rs.Primary.Attributes
		observed := "denied"
		if strings.HasPrefix(r.Got, "ok:") {
			observed = "allowed"
		}
		list := prefixes(a)
		if len(list) == 0 {
			t.Errorf("%s has no verdict for %s -> %s", address, r.From, r.Target())
			continue
		}
		for _, p := range list {
			checked++
			verdict, reason := a[p+"verdict"], a[p+"reason"]
			ok := verdict == observed
			if ok {
				agreed++
			}
			detail := fmt.Sprintf("%s %s: report %s, %s %s (%s) [%s]", address, strings.TrimSuffix(p, "."), verdict, what, observed, r.Got, reason)
			summary.add(test, fmt.Sprintf("step %d %s -> %s", step, r.From, r.Target()), ok, detail)
			t.Logf("crosscheck step %d\t%s -> %s\t%s %s: report=%s\t%s=%s", step, r.From, r.Target(), address, p, verdict, what, observed)
			if !ok {
				t.Errorf("step %d, %s -> %s: %s %s says %s (%s), the %s was %s (%s)", step, r.From, r.Target(), address, p, verdict, reason, what, observed, r.Got)
			}
		}
	}
	if checked == 0 {
		t.Errorf("step %d: no probe was compared with the report", step)
	}
	t.Logf("step %d: the reports agree with the %s on %d of %d probe verdicts", step, what, agreed, checked)
}

// recordedResults returns the recorded outcomes of the probes.
func recordedResults() []ProbeResult {
	results.mu.Lock()
	defer results.mu.Unlock()
	return append([]ProbeResult(nil), results.list...)
}

// claimedResults are the probes' expected verdicts as outcomes.
func claimedResults() []ProbeResult {
	var out []ProbeResult
	for _, p := range Probes {
		got := "fail: (expected)"
		if p.Want == Reachable {
			got = "ok: (expected)"
		}
		out = append(out, ProbeResult{Probe: p, Got: got})
	}
	return out
}

// TestReportCoversEverySandboxProbe: every probe from or to a sandbox has
// a verdict key in the report, valid as a name and unique per destination;
// only the control pod's probes (not a sandbox) have none.
func TestReportCoversEverySandboxProbe(t *testing.T) {
	keys := map[string]string{}
	covered := 0
	for _, p := range Probes {
		dir, key, ok := reported(p)
		if !ok {
			if p.From != "control" && p.To != "control" {
				t.Errorf("probe %s -> %s has no report verdict", p.From, p.Target())
			}
			continue
		}
		covered++
		if len(key) > 63 || strings.Trim(key, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
			t.Errorf("key %q is not a valid name", key)
		}
		target := fmt.Sprintf("%s %s %d %s", dir, p.To, p.Port, protocolOf(p))
		if dir == "ingress" {
			target = fmt.Sprintf("%s %s %d", dir, p.From, p.Port)
		}
		if prev, ok := keys[dir+key]; ok && prev != target {
			t.Errorf("key %q names both %s and %s", key, prev, target)
		}
		keys[dir+key] = target
	}
	if covered == 0 {
		t.Fatal("no probe is covered")
	}
	if !strings.Contains(reportConfig(), `name = "probe_udp_169_254_20_10_53"`) {
		t.Errorf("the DNS probe is missing from the configuration:\n%s", reportConfig())
	}
}

// TestAccReportAgreesWithTheProbesClaims applies the end-to-end
// configuration to the local cluster (kwok nodes: nothing runs, nothing is
// enforced) and compares the report's verdict for every sandbox probe with
// the verdict the probe expects: the report reads the documented claims as
// the e2e run checks them. make testacc-e2e compares it with real packets.
func TestAccReportAgreesWithTheProbesClaims(t *testing.T) {
	acctest.PreCheck(t)
	cs := acctest.Clientset(t)
	// Only the sandboxes' namespace: the router's (agent-sandbox-system)
	// is the controller's, which other tests of the shared cluster
	// install; the report needs no namespace of a source to exist.
	_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sandboxNS}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cs.CoreV1().Namespaces().Delete(ctx, sandboxNS, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", sandboxNS, err)
		}
	})
	config := func(strict bool) string {
		return acctest.ConfigCompose(acctest.ProviderConfig(), templateConfig(strict), reportConfig())
	}
	compare := func(step int) func(*terraform.State) error {
		return func(s *terraform.State) error {
			t.Run(fmt.Sprintf("step_%d", step), func(t *testing.T) { crossCheck(t, s, step, claimedResults(), "claim") })
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(false)},
			// Read again at plan: the controller's managed policy exists.
			{Config: config(false), Check: compare(1)},
			{Config: config(true)},
			{Config: config(true), Check: compare(2)},
		},
	})
}
