package realnode

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestProbesAreMeaningful checks the probe list itself (no cluster needed):
// a refusal proves something only if the same destination is reachable
// from a pod no policy selects, in the same step; every probe names its
// claim; destinations exist in the world the test builds.
func TestProbesAreMeaningful(t *testing.T) {
	roles := []string{"sandbox", "internet", "managed", "control", "router", "stranger", "impostor"}
	reachable := map[string]bool{} // step|from-kind|target
	for _, p := range Probes {
		if p.Want == Reachable && p.From == "control" {
			reachable[fmt.Sprintf("%d|%s", p.Step, p.Target())] = true
		}
		if p.Want == Reachable && p.To == "control" {
			reachable[fmt.Sprintf("%d|ingress|%s|%d", p.Step, p.From, p.Port)] = true
		}
	}
	seen := map[string]bool{}
	for _, p := range Probes {
		id := fmt.Sprintf("step %d %s -> %s", p.Step, p.From, p.Target())
		if seen[id] {
			t.Errorf("%s: duplicate probe", id)
		}
		seen[id] = true
		if p.Claim == "" || p.Check == "" || (p.Step != 1 && p.Step != 2) {
			t.Errorf("%s: claim %q, check %q, step %d", id, p.Claim, p.Check, p.Step)
		}
		if !slices.Contains(roles, p.From) {
			t.Errorf("%s: unknown source role %q", id, p.From)
		}
		if _, err := netip.ParseAddr(p.To); err != nil {
			if !slices.Contains(roles, p.To) {
				t.Errorf("%s: destination %q is neither an address nor a pod role", id, p.To)
			}
		} else if p.To != DNSIP && !slices.Contains(OutsideServers, p.To) {
			t.Errorf("%s: nothing serves %s in the outside namespace", id, p.To)
		}
		if p.Proto != ProtoHTTP && p.To != DNSIP {
			t.Errorf("%s: DNS probe to %s, which is not the DNS stand-in", id, p.To)
		}
		if p.Want != Refused {
			continue
		}
		var control string
		if slices.Contains(roles, p.To) {
			// Ingress: the same source reaches the same port of the control.
			control = fmt.Sprintf("%d|ingress|%s|%d", p.Step, p.From, p.Port)
		} else {
			control = fmt.Sprintf("%d|%s", p.Step, p.Target())
		}
		if !reachable[control] {
			t.Errorf("%s is refused, but no control probe shows it reachable without a policy (%s)", id, control)
		}
	}
	// Each check must expect both verdicts somewhere (a check that only
	// expects refusals would pass on a dead network), except the
	// deny-everything step, whose positives are the control's.
	for _, check := range []string{"egress", "egress_internet", "ingress", "managed_default"} {
		var verdicts []Verdict
		for _, p := range Probes {
			if p.Check == check && !slices.Contains(verdicts, p.Want) {
				verdicts = append(verdicts, p.Want)
			}
		}
		if len(verdicts) != 2 {
			t.Errorf("check %s expects only %v", check, verdicts)
		}
	}
}

// TestAllowListEgressMatchesAddresses ties the allow-list policy to the
// addresses: the allowed ones are inside an entry and outside its except
// list, the others not.
func TestAllowListEgressMatchesAddresses(t *testing.T) {
	allowed := func(addr string, port int) bool {
		a := netip.MustParseAddr(addr)
		for _, e := range AllowListEgress {
			if !netip.MustParsePrefix(e.CIDR).Contains(a) || e.Port != port {
				continue
			}
			excluded := false
			for _, x := range e.Except {
				excluded = excluded || netip.MustParsePrefix(x).Contains(a)
			}
			// The provider carves the metadata server out of every range.
			if !excluded && addr != MetadataIP {
				return true
			}
		}
		return false
	}
	for _, p := range Probes {
		if p.Check != "egress" || p.Proto != ProtoHTTP {
			continue
		}
		if got := allowed(p.To, p.Port); got != (p.Want == Reachable) {
			t.Errorf("%s: the allow-list allows it: %v, but the probe expects %s", p.Target(), got, p.Want)
		}
	}
	if !strings.HasSuffix(DNSName, ".") {
		t.Errorf("DNSName %q must be fully qualified", DNSName)
	}
}
