package realnode

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"
	"sigs.k8s.io/agent-sandbox/sandbox-router/authz"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

// The claim latency benchmark (scripts/bench-claims.sh, not run in CI):
// on the real node, an agent's wait from asking the official Go SDK for a
// sandbox to the answer of its first command, from a warm pool (a sandbox
// is ready and waiting) and cold (a pool of zero: the claim creates the
// sandbox), beside upstream's own claim latency metrics read from the
// release's controller.
const (
	// BenchVar turns the benchmark on; BenchOutVar names its JSON result.
	BenchVar    = "AGENTSANDBOX_BENCH"
	BenchOutVar = "AGENTSANDBOX_BENCH_OUT"
	benchNS     = "bench"
	warmPool    = "python-runtime-warm"
	coldPool    = "python-runtime-cold"
)

// BenchSeries is one kind of claim's measurements, in milliseconds.
type BenchSeries struct {
	N       int       `json:"n"`
	P50     float64   `json:"p50_ms"`
	P95     float64   `json:"p95_ms"`
	Min     float64   `json:"min_ms"`
	Max     float64   `json:"max_ms"`
	Samples []float64 `json:"samples_ms"`
	// LaunchTypes counts the controller's launch_type of the claims
	// (upstream's metrics label: warm or cold).
	LaunchTypes map[string]int `json:"launch_types"`
}

// BenchResult is the benchmark's output.
type BenchResult struct {
	Release string `json:"release"`
	Started string `json:"started"`
	// Load is /proc/loadavg before and after each series.
	Load         map[string]string      `json:"load"`
	Warm         BenchSeries            `json:"warm"`
	Cold         BenchSeries            `json:"cold"`
	Metrics      map[string]MetricStats `json:"upstream_metrics"`
	MetricsNotes string                 `json:"upstream_metrics_notes"`
}

// MetricStats is one of upstream's histograms over the run, per
// launch_type: count, mean, and p50/p95 interpolated within the buckets
// (what Prometheus' histogram_quantile does).
type MetricStats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
}

func TestBenchClaims(t *testing.T) {
	if os.Getenv(BenchVar) != "1" {
		t.Skip("the claim latency benchmark: scripts/bench-claims.sh")
	}
	requireEnv(t)
	metricsAddr := os.Getenv(MetricsAddrVar)
	if metricsAddr == "" {
		t.Fatalf("%s must name the controller's metrics address", MetricsAddrVar)
	}
	n := 20
	if v, err := strconv.Atoi(os.Getenv("AGENTSANDBOX_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	cs := acctest.Clientset(t)
	cfg := acctest.RESTConfig(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNS}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	res := BenchResult{Release: releases.Default.Name, Started: time.Now().UTC().Format(time.RFC3339), Load: map[string]string{}}
	config := acctest.ConfigCompose(acctest.ProviderConfig(), fmt.Sprintf(`
resource "agentsandbox_sandbox_template" "bench" {
  name      = %[1]q
  namespace = %[2]q
  pod_template = {
    security_context = { run_as_user = 1000, run_as_group = 1000 }
    containers = [{
      name      = "runtime"
      image     = %[3]q
      ports     = [{ name = "http", container_port = %[4]d }]
      resources = { limits = { cpu = "500m", memory = "512Mi" } }
      # Commands and files live in a volume (the runtime's SANDBOX_BASE_DIR),
      # not in the image (whose files are root's).
      env           = [{ name = "SANDBOX_BASE_DIR", value = "/workspace" }]
      volume_mounts = [{ name = "workspace", mount_path = "/workspace" }]
      readiness_probe = { http_get = { path = "/", port = "http" }, period_seconds = 1 }
    }]
    volumes = [{ name = "workspace", empty_dir = { size_limit = "1Gi" } }]
  }
  network_policy_management = "Unmanaged"
}

resource "agentsandbox_warm_pool" "warm" {
  name      = %[5]q
  namespace = %[2]q
  template  = agentsandbox_sandbox_template.bench.name
  replicas  = 1
}

# A pool of zero: every claim creates its sandbox (a cold start).
resource "agentsandbox_warm_pool" "cold" {
  name      = %[6]q
  namespace = %[2]q
  template  = agentsandbox_sandbox_template.bench.name
  replicas  = 0
}
`, sdkTemplate, benchNS, runtimeImage(), runtimePort, warmPool, coldPool),
		// The SDK's port-forward mode goes through the router of the
		// namespace, with scoped tokens as team A's in TestE2ESDK.
		routerConfig("bench", benchNS, scopedTokenAuthz))
	secret := scopedTokenSecret(t, cs, benchNS)
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	startOutsideWith(t, outsideOptions{Hosts: hosts})
	serveClusterDNS(t, cs, hosts, benchNS)
	token := func(ns, name string) string {
		if ns == "" || name == "" {
			return ""
		}
		tok, _ := authz.MintScopedToken(secret, ns, name, time.Hour)
		return tok
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			Check: func(*terraform.State) error {
				before := scrapeMetrics(t, metricsAddr)
				res.Load["warm_before"] = loadavg()
				res.Warm = benchSeries(t, cs, cfg, token, warmPool, n, true)
				res.Load["warm_after"] = loadavg()
				mid := scrapeMetrics(t, metricsAddr)
				res.Load["cold_before"] = loadavg()
				res.Cold = benchSeries(t, cs, cfg, token, coldPool, n, false)
				res.Load["cold_after"] = loadavg()
				after := scrapeMetrics(t, metricsAddr)
				res.Metrics = map[string]MetricStats{}
				for _, name := range []string{"agent_sandbox_claim_startup_latency_ms", "agent_sandbox_claim_controller_startup_latency_ms", "agent_sandbox_client_claim_startup_latency_ms"} {
					for _, phase := range []struct {
						launch   string
						from, to promHist
					}{{"warm", before, mid}, {"cold", mid, after}} {
						if st, ok := histStats(phase.from, phase.to, name, phase.launch); ok {
							res.Metrics[name+"{launch_type="+phase.launch+"}"] = st
						}
					}
				}
				res.MetricsNotes = "histograms scraped from the controller's /metrics before and after each series (the difference is the series); " +
					"p50/p95 interpolated within upstream's buckets (100, 250, 500, 750, 1000, 1250, 1500, 2000, 2500, 5000, 10000, ... ms) as histogram_quantile does. " +
					"agent_sandbox_claim_startup_latency_ms is recorded only for claims a mutating webhook annotated (none here)."
				return nil
			},
		}},
	})
	data, _ := json.MarshalIndent(res, "", "  ")
	t.Logf("%s", data)
	if out := os.Getenv(BenchOutVar); out != "" {
		if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// benchSeries claims n sandboxes from pool one after the other; each is
// timed from sandbox.New to the answer of its first command (`true`,
// through the router), then closed (the claim deleted). Warm: before each
// claim the pool is ready again (its replacement sandbox Ready), so that
// every claim is served warm.
func benchSeries(t *testing.T, cs kubernetes.Interface, cfg *rest.Config, token func(ns, name string) string, pool string, n int, warm bool) BenchSeries {
	ctx := context.Background()
	s := BenchSeries{LaunchTypes: map[string]int{}}
	for i := 0; i < n; i++ {
		if warm {
			waitPoolReady(t, pool)
		}
		t0 := time.Now()
		opts := sdkOptions(cfg, token)
		opts.WarmPoolName, opts.Namespace = pool, benchNS
		sb, err := sandbox.New(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := sb.Open(ctx); err != nil {
			t.Fatalf("claim %d from %s: %v", i, pool, err)
		}
		r, err := sb.Run(ctx, "true")
		elapsed := time.Since(t0)
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("claim %d from %s: first command: %v %+v", i, pool, err, r)
		}
		lt := "unknown"
		if p, err := cs.CoreV1().Pods(benchNS).Get(ctx, sb.PodName(), metav1.GetOptions{}); err == nil {
			// A warm pool's pod was created before the claim.
			lt = "cold"
			if p.CreationTimestamp.Time.Before(t0.Add(-time.Second)) {
				lt = "warm"
			}
		}
		s.LaunchTypes[lt]++
		s.Samples = append(s.Samples, float64(elapsed.Microseconds())/1000)
		t.Logf("%s claim %d: %s (%s)", pool, i, elapsed.Round(time.Millisecond), lt)
		if err := sb.Close(ctx); err != nil {
			t.Fatalf("closing claim %d: %v", i, err)
		}
	}
	sorted := append([]float64(nil), s.Samples...)
	sort.Float64s(sorted)
	s.N = len(sorted)
	s.P50, s.P95 = quantile(sorted, 0.50), quantile(sorted, 0.95)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	return s
}

// quantile is the nearest-rank quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// waitPoolReady waits until the warm pool reports all its replicas ready.
func waitPoolReady(t *testing.T, pool string) {
	t.Helper()
	dyn := acctest.Dynamic(t)
	err := eventually(context.Background(), 3*time.Minute, 200*time.Millisecond, func() error {
		u, err := dyn.Resource(sandboxapi.SandboxWarmPoolGVR).Namespace(benchNS).Get(context.Background(), pool, metav1.GetOptions{})
		if err != nil {
			return err
		}
		want, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		if ready < want {
			return fmt.Errorf("warm pool %s: %d of %d ready", pool, ready, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// promHist is a scrape: metric name{labels} of each _bucket, _sum and
// _count line -> value.
type promHist map[string]float64

func scrapeMetrics(t *testing.T, addr string) promHist {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("controller metrics: %v", err)
	}
	defer resp.Body.Close()
	h := promHist{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "agent_sandbox_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			h[line[:i]] = v
		}
	}
	return h
}

// histStats is the difference of one histogram between two scrapes, for
// one launch_type (summed over templates).
func histStats(from, to promHist, name, launch string) (MetricStats, bool) {
	buckets := map[float64]float64{}
	var count, sum float64
	for k, v := range to {
		if !strings.Contains(k, `launch_type="`+launch+`"`) {
			continue
		}
		d := v - from[k]
		switch {
		case strings.HasPrefix(k, name+"_bucket{"):
			le := k[strings.Index(k, `le="`)+4:]
			le = le[:strings.IndexByte(le, '"')]
			b, err := strconv.ParseFloat(le, 64)
			if le == "+Inf" {
				b, err = math.Inf(1), nil
			}
			if err == nil {
				buckets[b] += d
			}
		case strings.HasPrefix(k, name+"_sum{"):
			sum += d
		case strings.HasPrefix(k, name+"_count{"):
			count += d
		}
	}
	if count == 0 {
		return MetricStats{}, false
	}
	var bounds []float64
	for b := range buckets {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	q := func(q float64) float64 {
		rank := q * count
		prevB, prevC := 0.0, 0.0
		for _, b := range bounds {
			c := buckets[b]
			if c >= rank {
				if math.IsInf(b, 1) {
					return prevB
				}
				if c == prevC {
					return b
				}
				return prevB + (b-prevB)*(rank-prevC)/(c-prevC)
			}
			prevB, prevC = b, c
		}
		return prevB
	}
	return MetricStats{Count: int(count), Mean: sum / count, P50: q(0.5), P95: q(0.95)}, true
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}
