package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/selfstats"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// TestMain lets the test binary act as the provider wrapper too: the
// benchmark links copies of its own executable into the plugin directories
// (see wrap.go), and under `go test` that executable is this binary.
func TestMain(m *testing.M) {
	if isWrapper() {
		os.Exit(runWrapper())
	}
	os.Exit(m.Run())
}

// TestSmoke keeps `make bench` working: two sets through both floors and this
// provider, every phase, against the acceptance-test cluster. It checks what
// the benchmark reports rather than how fast anything is (wall times are
// never asserted): every phase succeeded, the no-change plans were empty, a
// refresh reads each object exactly once, a plan without refresh sends
// nothing, an update writes each object once, and the provider's own request
// counter agrees with the API server's.
func TestSmoke(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("TF_ACC not set: the benchmark smoke run needs a cluster (make test provides one)")
	}
	const n = 2
	res, err := runBench(context.Background(), options{
		N: []int{n}, Scenarios: "sets", Providers: "floor,floor-json,agentsandbox", Parallelism: 10,
		Out: t.TempDir(), Label: "smoke",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.write(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	objects := 3 * n
	fastPathOn, err := provider.FastPath()
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]bool{}
	for _, r := range res.Runs {
		phases[r.Provider+" "+r.Phase] = true
		if r.Error != "" {
			t.Errorf("%s %s: %s", r.Provider, r.Phase, r.Error)
		}
		// The API server's counts are cluster-wide: inside make test other
		// packages run beside this one (and the agent-sandbox controller and the
		// garbage collector act on what changes), so the per-phase checks
		// below use the provider's own counter, and the server's count is a
		// lower bound of it. `make bench` runs on a cluster of its own.
		if isFloor(r.Provider) {
			continue
		}
		if r.ProviderProcesses == 0 || r.ProviderRSS == 0 {
			t.Errorf("%s: no provider process measured", r.Phase)
		}
		// The API server counts a watch when it ends, the provider when it
		// starts: a watch may land in the next phase on one side only, so
		// watches are left out of the comparisons.
		api, own := withoutWatches(r.APIRequests), withoutWatches(r.ProviderRequests)
		// The server may count more than the provider (other clients, see
		// above), never fewer.
		if r.ProviderRequests == nil {
			t.Errorf("%s: the provider wrote no request counters", r.Phase)
		} else if sum(api) < sum(own) {
			t.Errorf("%s: provider counted %d requests (%v), the API server only %d (%v)", r.Phase, sum(own), own, sum(api), api)
		}
		var gets, writes int64
		for k, n := range own {
			if strings.HasPrefix(k, "GET ") || strings.HasPrefix(k, "LIST ") {
				gets += n
			} else {
				writes += n
			}
		}
		// fastPhase names the phase for the fast path's counts below, ""
		// (no expectation) with the fast path switched off
		// (AGENTSANDBOX_FASTPATH=off in the environment the provider
		// processes inherit): then nothing may reach it. The request
		// counts after them hold either way.
		fastPhase := r.Phase
		if !fastPathOn {
			fastPhase = ""
			if f := r.FastPath; f != nil && *f != (selfstats.FastPathCounts{}) {
				t.Errorf("%s: fast path counts %+v with the fast path off, want none", r.Phase, f)
			}
		}
		// The state last written by an apply (create, update or
		// -refresh-only) carries a read marker for every object: the next
		// plan's refreshes and plans are all the fast path's. Under the real
		// Terraform this shows that the marker an apply writes hashes the
		// state as Terraform sends it back.
		// Except, in the plan right after the create, the templates and
		// warm pools: make test's cluster runs upstream's real controller,
		// which after a create writes each pool's status (observedGeneration,
		// selector) and labels its template (sandbox-template-ref-hash:
		// extensions/controllers/sandboxtemplate_controller.go:175 at v1.0.3),
		// changes the framework must read (`make bench` runs no controller).
		// The network policies must be the fast path's there too.
		switch fastPhase {
		case "plan", "plan after refresh", "plan after update":
			changed := int64(0)
			if r.Phase == "plan" {
				changed = 2 * n
			}
			if f := r.FastPath; f == nil || f.ReadsFast < int64(objects)-changed || f.ReadsFast+f.ReadsFramework != int64(objects) ||
				f.PlansFast != int64(objects) || f.ValidationsFast < int64(objects) || f.ValidationsFramework != 0 {
				t.Errorf("%s: fast path counts %+v, want every read (%d, but for %d templates and pools a controller changed), every plan and every validation answered by the fast path",
					r.Phase, f, objects, changed)
			}
		}
		// An apply's marker also certifies the plan of its new state under
		// its configuration (internal/fastpath/plan.go): every plan of a
		// state no refresh changed since is answered from it, which shows
		// that Terraform sends an unchanged configuration with the bytes
		// it sent the apply. Not the templates and pools the stand-in
		// controller changed after the create (see above): their refresh
		// is a new state, marked by the read without a configuration.
		switch fastPhase {
		case "plan -refresh=false", "plan after update":
			if f := r.FastPath; f == nil || f.PlansByMarker != int64(objects) {
				t.Errorf("%s: fast path counts %+v, want every plan (%d) answered from the apply's plan marker", r.Phase, f, objects)
			}
		case "plan", "plan after refresh":
			if f := r.FastPath; f == nil || f.PlansByMarker < int64(objects)-2*n {
				t.Errorf("%s: fast path counts %+v, want every plan (%d) but for %d templates and pools answered from the apply's plan marker",
					r.Phase, f, objects, 2*n)
			}
		case "update":
			// The plan of each in-place update (internal/fastpath/update.go),
			// once in the plan and once more when the apply plans again.
			if f := r.FastPath; f == nil || f.UpdatesFast != 2*int64(objects) {
				t.Errorf("update: fast path counts %+v, want every update's plan (%d, twice) answered by the fast path", f, objects)
			}
		case "destroy":
			// The plan of each destroy (internal/fastpath/destroy.go).
			if f := r.FastPath; f == nil || f.DestroysFast != int64(objects) {
				t.Errorf("destroy: fast path counts %+v, want every destroy's plan (%d) answered by the fast path", f, objects)
			}
		}
		switch fastPhase {
		case "apply", "update":
			if f := r.FastPath; f == nil || f.AppliesMarked != int64(objects) || f.AppliesUnmarked != 0 {
				t.Errorf("%s: fast path counts %+v, want every create or update (%d) marked", r.Phase, f, objects)
			}
		}
		switch r.Phase {
		case "plan", "apply -refresh-only", "plan after refresh", "plan after update":
			if gets != int64(objects) || writes != 0 {
				t.Errorf("%s: %d reads and %d writes, want one GET per object (%d) and nothing else: %v", r.Phase, gets, writes, objects, own)
			}
		case "plan -refresh=false":
			if gets+writes != 0 {
				t.Errorf("%s: %d requests, want none: %v", r.Phase, gets+writes, own)
			}
		case "update":
			if writes != int64(objects) {
				t.Errorf("update: %d writes, want one per object (%d): %v", writes, objects, own)
			}
		case "destroy":
			// The refresh's GET and one DELETE per object; deletions still
			// pending (the warm pools, deleted in the foreground) share one
			// watch, and a pool gone before that watch saw it costs one
			// more GET.
			var deletes, watches int64
			for k, n := range r.ProviderRequests {
				switch {
				case strings.HasPrefix(k, "DELETE "):
					deletes += n
				case strings.HasPrefix(k, "WATCH "):
					watches += n
				}
			}
			if deletes != int64(objects) || gets > int64(objects)+int64(objects)/3 || watches > 1 {
				t.Errorf("destroy: %d DELETEs, %d reads, %d watches; want one DELETE and one GET per object (%d), at most one GET more per warm pool, one shared watch: %v",
					deletes, gets, watches, objects, r.ProviderRequests)
			}
		}
	}
	for _, p := range []string{"apply", "plan", "plan -refresh=false", "apply -refresh-only", "plan after refresh", "update", "plan after update", "destroy"} {
		for _, s := range []string{"floor", "floor-json", "agentsandbox"} {
			if !phases[s+" "+p] {
				t.Errorf("no result for %s %s", s, p)
			}
		}
	}
}

func withoutWatches(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, n := range m {
		if !strings.HasPrefix(k, "WATCH ") {
			out[k] = n
		}
	}
	return out
}
