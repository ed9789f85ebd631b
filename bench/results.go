package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/selfstats"
)

// Results is everything one run measured; it is written as JSON and as a
// markdown report with the same numbers.
type Results struct {
	Label         string    `json:"label"`
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished"`
	Commit        string    `json:"commit"`
	Cores         int       `json:"cores"`
	CPU           string    `json:"cpu"`
	Terraform     string    `json:"terraform_version"`
	Go            string    `json:"go_version"`
	ServerVersion string    `json:"server_version"`
	Parallelism   int       `json:"parallelism"`
	QPS           float64   `json:"agentsandbox_qps,omitempty"`
	Burst         int       `json:"agentsandbox_burst,omitempty"`
	Subjects      []subject `json:"subjects"`
	Runs          []Run     `json:"runs"`
}

// Run is one phase of one scenario for one subject.
type Run struct {
	Scenario string     `json:"scenario"`
	N        int        `json:"n"`
	Objects  int        `json:"objects"`
	Provider string     `json:"provider"`
	Phase    string     `json:"phase"`
	Seconds  float64    `json:"wall_seconds"`
	Load     [3]float64 `json:"load_before"`
	Exit     int        `json:"exit_code"`
	Error    string     `json:"error,omitempty"`
	// TerraformCPU is terraform's CPU time including the provider processes it ran.
	TerraformCPU float64 `json:"terraform_cpu_seconds"`
	// From the API server's apiserver_request_total, "VERB resource".
	APIRequests map[string]int64 `json:"api_requests"`
	APITotal    int64            `json:"api_requests_total"`
	// From wait4 of every provider process of the phase.
	ProviderProcesses int     `json:"provider_processes"`
	ProviderCPU       float64 `json:"provider_cpu_seconds"`
	ProviderRSS       int64   `json:"provider_peak_rss_bytes"`
	// This provider's own counters (AGENTSANDBOX_STATS_DIR), "METHOD resource";
	// absent for providers that do not write them.
	ProviderRequests    map[string]int64 `json:"provider_requests,omitempty"`
	ProviderTotal       int64            `json:"provider_requests_total,omitempty"`
	ProviderRequestsAll int64            `json:"provider_requests_all_paths,omitempty"`
	ProviderRetries     int64            `json:"provider_retries,omitempty"`
	// What package fastpath answered and handed to the framework, summed
	// over the phase's provider processes (their stats files).
	FastPath *selfstats.FastPathCounts `json:"fastpath,omitempty"`
	// The largest of the phase's provider processes' Go heap high-water
	// marks (their stats files): what of the peak RSS was heap.
	ProviderHeapSys      uint64 `json:"provider_heap_sys_bytes,omitempty"`
	ProviderHeapPeakLive uint64 `json:"provider_heap_peak_live_bytes,omitempty"`
}

func newResults(o options, subjects []subject) *Results {
	commit, _ := exec.Command("git", "describe", "--always", "--dirty").Output()
	return &Results{
		Label: o.Label, Started: time.Now().UTC(), Commit: strings.TrimSpace(string(commit)),
		Cores: runtime.NumCPU(), CPU: cpuModel(), Terraform: terraformVersion(), Go: runtime.Version(),
		Parallelism: o.Parallelism, QPS: o.QPS, Burst: o.Burst, Subjects: subjects,
	}
}

func (r *Results) add(run Run) { r.Runs = append(r.Runs, run) }

func (r *Results) write(dir string) error {
	r.Finished = time.Now().UTC()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	base := filepath.Join(dir, r.Label)
	if err := os.WriteFile(base+".json", append(js, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".md", []byte(r.Markdown()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: results in %s.md and %s.json\n", base, base)
	return nil
}

func (r *Results) find(scenario string, n int, provider, phase string) *Run {
	for i := range r.Runs {
		x := &r.Runs[i]
		if x.Scenario == scenario && x.N == n && x.Provider == provider && x.Phase == phase {
			return x
		}
	}
	return nil
}

func (r *Results) ordered(scenario string) (ns []int, providers, phases []string) {
	seenN, seenP, seenPh := map[int]bool{}, map[string]bool{}, map[string]bool{}
	for _, x := range r.Runs {
		if x.Scenario != scenario {
			continue
		}
		if !seenN[x.N] {
			seenN[x.N] = true
			ns = append(ns, x.N)
		}
		if !seenP[x.Provider] {
			seenP[x.Provider] = true
			providers = append(providers, x.Provider)
		}
		if !seenPh[x.Phase] {
			seenPh[x.Phase] = true
			phases = append(phases, x.Phase)
		}
	}
	sort.Ints(ns)
	return ns, providers, phases
}

// primary is the subject the ratios are about: the first configuration of
// this provider.
func (r *Results) primary() string {
	for _, s := range r.Subjects {
		if s.Kind == kindAgentsandbox {
			return s.Name
		}
	}
	return ""
}

func (r *Results) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark %s\n\n", r.Label)
	fmt.Fprintf(&b, "- commit `%s`, %s to %s\n", r.Commit, r.Started.Format(time.RFC3339), r.Finished.Format(time.RFC3339))
	fmt.Fprintf(&b, "- machine: %d cores (%s); Terraform %s; %s; API server %s\n", r.Cores, r.CPU, r.Terraform, r.Go, r.ServerVersion)
	fmt.Fprintf(&b, "- terraform -parallelism=%d", r.Parallelism)
	if r.QPS > 0 || r.Burst > 0 {
		fmt.Fprintf(&b, "; agentsandbox kubernetes.qps=%g burst=%d", r.QPS, r.Burst)
	}
	b.WriteString("\n- subjects:")
	for _, s := range r.Subjects {
		fmt.Fprintf(&b, " %s (%s", s.Name, s.Kind)
		if s.Opts.QPS > 0 || s.Opts.Burst > 0 {
			fmt.Fprintf(&b, ", qps %g burst %d", s.Opts.QPS, s.Opts.Burst)
		}
		b.WriteString(")")
	}
	b.WriteString("\n- seconds are wall time of the whole terraform command; requests are the API server's apiserver_request_total " +
		"on the benchmark's resources; provider CPU and peak RSS are summed / maxed over the phase's provider processes (wait4); " +
		"load is the 1-minute load average when the phase started\n")
	for _, x := range r.Runs {
		if x.Error != "" {
			fmt.Fprintf(&b, "- **error** %s N=%d %s %s: %s\n", x.Scenario, x.N, x.Provider, x.Phase, x.Error)
		}
	}
	for _, sc := range []string{"sets", "teams"} {
		ns, providers, phases := r.ordered(sc)
		for _, n := range ns {
			objects := 0
			for _, x := range r.Runs {
				if x.Scenario == sc && x.N == n {
					objects = x.Objects
				}
			}
			if sc == "sets" {
				fmt.Fprintf(&b, "\n## sets, N=%d (%d objects: template + warm pool + network policy per set)\n\n", n, objects)
			} else {
				fmt.Fprintf(&b, "\n## teams, %d module instances (%d objects: template, warm pool of 2 with waiting, policy, claim), upstream's v1.0.3 controller\n\n", n, objects)
			}
			r.wallTable(&b, sc, n, providers, phases)
			r.requestTable(&b, sc, n, providers, phases)
			r.providerTable(&b, sc, n, providers, phases)
		}
		if sc == "sets" && len(ns) > 1 {
			r.flatTable(&b, ns, providers, phases)
		}
	}
	return b.String()
}

func (r *Results) wallTable(b *strings.Builder, sc string, n int, providers, phases []string) {
	prim := r.primary()
	var ratios [][2]string
	for _, f := range providers {
		if !isFloor(f) {
			continue
		}
		for _, p := range withoutFloors(providers) {
			ratios = append(ratios, [2]string{p, f})
		}
	}
	for _, p := range withoutFloors(providers) {
		if p != prim && prim != "" {
			ratios = append(ratios, [2]string{prim, p})
		}
	}
	cols := slices.Clone(providers)
	for _, rt := range ratios {
		cols = append(cols, rt[0]+" / "+rt[1])
	}
	table(b, "Wall seconds (load)", cols, "---:|", phases, func(ph string) (cells []string) {
		for _, p := range providers {
			if x := r.find(sc, n, p, ph); x != nil {
				cells = append(cells, fmt.Sprintf("%.2f (%.1f)%s", x.Seconds, x.Load[0], errMark(x)))
			} else {
				cells = append(cells, "")
			}
		}
		for _, rt := range ratios {
			x, y := r.find(sc, n, rt[0], ph), r.find(sc, n, rt[1], ph)
			if x != nil && y != nil && y.Seconds > 0 {
				cells = append(cells, fmt.Sprintf("%.2f", x.Seconds/y.Seconds))
			} else {
				cells = append(cells, "")
			}
		}
		return cells
	})
}

func (r *Results) requestTable(b *strings.Builder, sc string, n int, providers, phases []string) {
	withReq := withoutFloors(providers)
	if len(withReq) == 0 {
		return
	}
	table(b, "API requests: total, per object, by verb and resource (API server); [the provider's own count on the same resources]",
		withReq, "---|", phases, func(ph string) (cells []string) {
			for _, p := range withReq {
				x := r.find(sc, n, p, ph)
				if x == nil {
					cells = append(cells, "")
					continue
				}
				c := fmt.Sprintf("%d (%.2f/obj): %s", x.APITotal, float64(x.APITotal)/float64(x.Objects), verbs(x.APIRequests))
				if x.ProviderRequests != nil {
					c += fmt.Sprintf(" [%d]", x.ProviderTotal)
				}
				cells = append(cells, c)
			}
			return cells
		})
}

func (r *Results) providerTable(b *strings.Builder, sc string, n int, providers, phases []string) {
	table(b, "Provider CPU seconds (ms per object) / peak RSS MiB; terraform CPU seconds including providers",
		providers, "---:|", phases, func(ph string) (cells []string) {
			for _, p := range providers {
				x := r.find(sc, n, p, ph)
				switch {
				case x == nil:
					cells = append(cells, "")
				case !isFloor(p):
					cells = append(cells, fmt.Sprintf("%.2f (%.2f) / %.0f; tf %.2f", x.ProviderCPU, 1000*x.ProviderCPU/float64(x.Objects), float64(x.ProviderRSS)/(1<<20), x.TerraformCPU))
				default:
					cells = append(cells, fmt.Sprintf("tf %.2f", x.TerraformCPU))
				}
			}
			return cells
		})
}

// table writes a Markdown table under title: a phase column, then cols,
// each aligned by sep ("---|", or "---:|" for numbers), and a row per phase
// with the cells row gives it ("" leaves a cell empty).
func table(b *strings.Builder, title string, cols []string, sep string, phases []string, row func(phase string) []string) {
	b.WriteString(title + "\n\n| phase |")
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n|---|" + strings.Repeat(sep, len(cols)) + "\n")
	for _, ph := range phases {
		fmt.Fprintf(b, "| %s |", ph)
		for _, c := range row(ph) {
			if c == "" {
				b.WriteString(" |")
			} else {
				b.WriteString(" " + c + " |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// withoutFloors is providers without the floors (the subjects that run no
// provider process).
func withoutFloors(providers []string) []string {
	var out []string
	for _, p := range providers {
		if !isFloor(p) {
			out = append(out, p)
		}
	}
	return out
}

// flatTable shows whether the cost per object stays flat as N grows.
func (r *Results) flatTable(b *strings.Builder, ns []int, providers, phases []string) {
	b.WriteString("\n## Cost per object across N (wall ms per object; last column: largest N / smallest N)\n\n| subject | phase |")
	for _, n := range ns {
		fmt.Fprintf(b, " N=%d |", n)
	}
	b.WriteString(" ratio |\n|---|---|")
	for range len(ns) + 1 {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, p := range providers {
		for _, ph := range phases {
			fmt.Fprintf(b, "| %s | %s |", p, ph)
			var first, last float64
			for _, n := range ns {
				x := r.find("sets", n, p, ph)
				if x == nil {
					b.WriteString(" |")
					continue
				}
				v := 1000 * x.Seconds / float64(x.Objects)
				if first == 0 {
					first = v
				}
				last = v
				fmt.Fprintf(b, " %.2f |", v)
			}
			if first > 0 {
				fmt.Fprintf(b, " %.2f |\n", last/first)
			} else {
				b.WriteString(" |\n")
			}
		}
	}
}

func verbs(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func errMark(x *Run) string {
	if x.Error != "" {
		return " **error**"
	}
	return ""
}
