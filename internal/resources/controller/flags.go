package controller

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"golang.org/x/mod/semver"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// The typed controller values of upstream's Helm chart (helm/values.yaml
// `controller.*` at v1.0.3, rendered into the container's args by
// helm/templates/_controller-args.tpl), as attributes of `controller`.
// Each becomes `--<flag>=<value>` in the chart's order, replacing the
// release's own arg for that flag (the release manifests set only
// --leader-elect and --extensions). `controller.extensions` is the
// resource's top-level `extensions`; `controller.extraArgs` is `args`.

// flagKind is the Go type of a controller flag (flag.BoolVar, IntVar,
// Float64Var, DurationVar, StringVar in cmd/agent-sandbox-controller/main.go).
type flagKind int

const (
	flagBool flagKind = iota
	flagInt
	flagFloat
	flagDuration
	flagString
)

// chartFlag is one typed value of the chart and the controller flag it
// renders.
type chartFlag struct {
	Attr  string // attribute in `controller`
	Value string // the chart's key under controller (helm/values.yaml)
	Flag  string // the controller's flag, without dashes
	Kind  flagKind
	// Min is the least value the controller starts with (ints), when the
	// controller checks one (HasMin).
	Min    int64
	HasMin bool
	// Since is the first release whose controller defines the flag; ""
	// for every release (v0.5.0 on).
	Since string
	// Extensions: read only by the extensions' controllers (the chart's
	// "only active when controller.extensions=true").
	Extensions bool
	Doc        string
}

// releasesRead are the releases whose cmd/agent-sandbox-controller/main.go
// the table below was read in (the ones the Go module proxy serves);
// TestChartFlagsAreTheReleasesFlags checks the table against each.
var releasesRead = []string{"v0.5.0", "v0.5.2", "v0.5.3", "v0.5.5", "v0.5.6", "v1.0.1", "v1.0.3"}

// chartFlags in the chart's order (_controller-args.tpl at v1.0.3). Flag
// lines are cmd/agent-sandbox-controller/main.go at v1.0.3; the checks
// the controller makes at start are main.go:193-200 (grace periods),
// :211-219 (workers, batch size) and :241-244 (burst) at v1.0.3.
var chartFlags = []chartFlag{
	{Attr: "leader_elect", Value: "leaderElect", Flag: "leader-elect", Kind: flagBool, // main.go:97
		Doc: "Leader election among the controller's replicas (`--leader-elect`, default `true`). The release's manifests already set `--leader-elect=true`; `false` replaces it."},
	{Attr: "cluster_domain", Value: "clusterDomain", Flag: "cluster-domain", Kind: flagString, // main.go:94
		Doc: "The cluster's DNS domain, used in the sandboxes' service FQDNs (`--cluster-domain`, default `cluster.local`)."},
	{Attr: "leader_election_namespace", Value: "leaderElectionNamespace", Flag: "leader-election-namespace", Kind: flagString, // main.go:100
		Doc: "Namespace of the leader election lease (`--leader-election-namespace`); unset, the controller's own namespace."},
	{Attr: "enable_tracing", Value: "enableTracing", Flag: "enable-tracing", Kind: flagBool, // main.go:102
		Doc: "OpenTelemetry tracing over OTLP (`--enable-tracing`, default `false`); the OTLP exporter reads the standard `OTEL_EXPORTER_OTLP_*` environment."},
	{Attr: "enable_pprof", Value: "enablePprof", Flag: "enable-pprof", Kind: flagBool, // main.go:103
		Doc: "The CPU profile endpoint `/debug/pprof/profile` on the metrics server (`--enable-pprof`, default `false`)."},
	{Attr: "enable_pprof_debug", Value: "enablePprofDebug", Flag: "enable-pprof-debug", Kind: flagBool, // main.go:105
		Doc: "Every pprof endpoint, including sensitive ones such as cmdline and heap (`--enable-pprof-debug`, default `false`; implies `enable_pprof`). Upstream warns it may expose sensitive information."},
	{Attr: "pprof_block_profile_rate", Value: "pprofBlockProfileRate", Flag: "pprof-block-profile-rate", Kind: flagInt, // main.go:108
		Doc: "Block profile sampling rate with `enable_pprof_debug` (`--pprof-block-profile-rate`, default `1000000`): `<= 0` disables, `1` samples every event, `N >= 2` samples about one blocking event per N nanoseconds."},
	{Attr: "pprof_mutex_profile_fraction", Value: "pprofMutexProfileFraction", Flag: "pprof-mutex-profile-fraction", Kind: flagInt, // main.go:111
		Doc: "Mutex contention sampling with `enable_pprof_debug` (`--pprof-mutex-profile-fraction`, default `10`): `<= 0` disables, `1` samples every event, `N > 1` about 1/N."},
	{Attr: "kube_api_qps", Value: "kubeApiQps", Flag: "kube-api-qps", Kind: flagFloat, // main.go:114
		Doc: "Client-side queries per second to the Kubernetes API (`--kube-api-qps`, default `-1`: no client-side limit)."},
	{Attr: "kube_api_burst", Value: "kubeApiBurst", Flag: "kube-api-burst", Kind: flagInt, Min: 1, HasMin: true, // main.go:115
		Doc: "Client-side burst to the Kubernetes API (`--kube-api-burst`, default `10`); at least 1."},
	{Attr: "sandbox_concurrent_workers", Value: "sandboxConcurrentWorkers", Flag: "sandbox-concurrent-workers", Kind: flagInt, Min: 1, HasMin: true, // main.go:129
		Doc: "Concurrent reconciles of the Sandbox controller (`--sandbox-concurrent-workers`, default `100`); at least 1."},
	{Attr: "sandbox_claim_concurrent_workers", Value: "sandboxClaimConcurrentWorkers", Flag: "sandbox-claim-concurrent-workers", Kind: flagInt, Min: 1, HasMin: true, Extensions: true, // main.go:130
		Doc: "Concurrent reconciles of the SandboxClaim controller (`--sandbox-claim-concurrent-workers`, default `50`); at least 1. Needs the extensions."},
	{Attr: "sandbox_warm_pool_concurrent_workers", Value: "sandboxWarmPoolConcurrentWorkers", Flag: "sandbox-warm-pool-concurrent-workers", Kind: flagInt, Min: 1, HasMin: true, Extensions: true, // main.go:131
		Doc: "Concurrent reconciles of the SandboxWarmPool controller (`--sandbox-warm-pool-concurrent-workers`, default `1`); at least 1. Needs the extensions."},
	{Attr: "sandbox_template_concurrent_workers", Value: "sandboxTemplateConcurrentWorkers", Flag: "sandbox-template-concurrent-workers", Kind: flagInt, Min: 1, HasMin: true, Extensions: true, // main.go:132
		Doc: "Concurrent reconciles of the SandboxTemplate controller (`--sandbox-template-concurrent-workers`, default `1`); at least 1. Needs the extensions."},
	{Attr: "sandbox_warm_pool_max_batch_size", Value: "sandboxWarmPoolMaxBatchSize", Flag: "sandbox-warm-pool-max-batch-size", Kind: flagInt, Min: 1, HasMin: true, Extensions: true, // main.go:133
		Doc: "Most sandboxes a warm pool creates or deletes in one batch (`--sandbox-warm-pool-max-batch-size`, default `300`); at least 1. Needs the extensions."},
	{Attr: "sandbox_warm_pool_readiness_grace_period", Value: "sandboxWarmPoolReadinessGracePeriod", Flag: "sandbox-warm-pool-readiness-grace-period", Kind: flagDuration, Since: "v0.5.6", Extensions: true, // main.go:143 (v0.5.6: :159)
		Doc: "How long a warm pool's sandbox may stay not Ready before it is replaced (`--sandbox-warm-pool-readiness-grace-period`, default `5m`), a Go duration greater than zero. Releases from v0.5.6 on; needs the extensions."},
	{Attr: "sandbox_warm_pool_unschedulable_recheck_interval", Value: "sandboxWarmPoolUnschedulableRecheckInterval", Flag: "sandbox-warm-pool-unschedulable-recheck-interval", Kind: flagDuration, Since: "v0.5.6", Extensions: true, // main.go:144 (v0.5.6: :160)
		Doc: "How often a pool holding unschedulable sandboxes past the grace period is checked again (`--sandbox-warm-pool-unschedulable-recheck-interval`, default `1m`), a Go duration greater than zero. Releases from v0.5.6 on; needs the extensions."},
	{Attr: "enable_warm_pool_eviction", Value: "enableWarmPoolEviction", Flag: "enable-warm-pool-eviction", Kind: flagBool, Extensions: true, // main.go:145
		Doc: "Mark the pods of warm pools' sandboxes as safe to evict (`--enable-warm-pool-eviction`, default `true`). Needs the extensions."},
}

// metricsCertDir is where metrics_cert_secret is mounted (upstream's
// example, k8s/controller.yaml:78 at v1.0.3).
const metricsCertDir = "/etc/metrics-certs"

// metricsCertVolume is the volume of metrics_cert_secret.
const metricsCertVolume = "metrics-certs"

// metricsTLSFlags are v1.0.3's metrics TLS flags (main.go:165-170 at
// v1.0.3), which the chart has no value for: metrics_secure_serving and
// metrics_cert_secret in `controller` (the Secret is mounted at
// metricsCertDir). Checked like chartFlags (release, args).
var metricsTLSFlags = []chartFlag{
	{Attr: "metrics_secure_serving", Flag: "metrics-secure-serving", Kind: flagBool, Since: "v1.0.3"},
	{Attr: "metrics_cert_secret", Flag: "metrics-cert-dir", Kind: flagString, Since: "v1.0.3"},
}

// metricsTLSAttributes are metrics_secure_serving and metrics_cert_secret.
func metricsTLSAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"metrics_secure_serving": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Serve the metrics over HTTPS (`--metrics-secure-serving`, v1.0.3 and later), on the same port: without " +
				"`metrics_cert_secret` the controller makes a self-signed certificate. The chart has no value for it.",
		},
		"metrics_cert_secret": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Name of a Secret in the controller's namespace with `tls.crt` and `tls.key` (e.g. cert-manager's), " +
				"mounted read-only at `" + metricsCertDir + "` and passed as `--metrics-cert-dir` (v1.0.3 and later). Needs " +
				"`metrics_secure_serving = true`. The Secret is not created by this resource.",
			Validators: []validator.String{validators.DNSSubdomainName()},
		},
	}
}

// metricsTLSFlagsSet renders the metrics TLS values that are set.
func metricsTLSFlagsSet(attrs map[string]attr.Value) []setFlag {
	var out []setFlag
	if v, ok := attrs["metrics_secure_serving"].(types.Bool); ok && !v.IsNull() && !v.IsUnknown() {
		out = append(out, setFlag{chartFlag: metricsTLSFlags[0], Arg: "--metrics-secure-serving=" + strconv.FormatBool(v.ValueBool())})
	}
	if v, ok := attrs["metrics_cert_secret"].(types.String); ok && !v.IsNull() && !v.IsUnknown() {
		out = append(out, setFlag{chartFlag: metricsTLSFlags[1], Arg: "--metrics-cert-dir=" + metricsCertDir})
	}
	return out
}

// chartFlagAttributes are the chart's typed controller values, in
// `controller`.
func chartFlagAttributes() map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(chartFlags))
	for _, f := range chartFlags {
		doc := f.Doc + " The chart's `controller." + f.Value + "`."
		switch f.Kind {
		case flagBool:
			out[f.Attr] = schema.BoolAttribute{Optional: true, MarkdownDescription: doc}
		case flagInt:
			a := schema.Int64Attribute{Optional: true, MarkdownDescription: doc}
			if f.HasMin {
				a.Validators = []validator.Int64{int64validator.AtLeast(f.Min)}
			}
			out[f.Attr] = a
		case flagFloat:
			out[f.Attr] = schema.Float64Attribute{Optional: true, MarkdownDescription: doc}
		case flagDuration:
			out[f.Attr] = schema.StringAttribute{Optional: true, MarkdownDescription: doc, Validators: []validator.String{validators.Duration()}}
		case flagString:
			v := validators.DNSLabelName() // a namespace
			if f.Attr == "cluster_domain" {
				v = validators.DNSSubdomainName()
			}
			out[f.Attr] = schema.StringAttribute{Optional: true, MarkdownDescription: doc, Validators: []validator.String{v}}
		}
	}
	return out
}

// chartFlagsModel holds the chart's typed controller values of
// controllerSettingsModel; they are read through chartFlags by name
// (flagValues), this only gives the framework their fields.
type chartFlagsModel struct {
	LeaderElect                                 types.Bool    `tfsdk:"leader_elect"`
	ClusterDomain                               types.String  `tfsdk:"cluster_domain"`
	LeaderElectionNamespace                     types.String  `tfsdk:"leader_election_namespace"`
	EnableTracing                               types.Bool    `tfsdk:"enable_tracing"`
	EnablePprof                                 types.Bool    `tfsdk:"enable_pprof"`
	EnablePprofDebug                            types.Bool    `tfsdk:"enable_pprof_debug"`
	PprofBlockProfileRate                       types.Int64   `tfsdk:"pprof_block_profile_rate"`
	PprofMutexProfileFraction                   types.Int64   `tfsdk:"pprof_mutex_profile_fraction"`
	KubeAPIQPS                                  types.Float64 `tfsdk:"kube_api_qps"`
	KubeAPIBurst                                types.Int64   `tfsdk:"kube_api_burst"`
	SandboxConcurrentWorkers                    types.Int64   `tfsdk:"sandbox_concurrent_workers"`
	SandboxClaimConcurrentWorkers               types.Int64   `tfsdk:"sandbox_claim_concurrent_workers"`
	SandboxWarmPoolConcurrentWorkers            types.Int64   `tfsdk:"sandbox_warm_pool_concurrent_workers"`
	SandboxTemplateConcurrentWorkers            types.Int64   `tfsdk:"sandbox_template_concurrent_workers"`
	SandboxWarmPoolMaxBatchSize                 types.Int64   `tfsdk:"sandbox_warm_pool_max_batch_size"`
	SandboxWarmPoolReadinessGracePeriod         types.String  `tfsdk:"sandbox_warm_pool_readiness_grace_period"`
	SandboxWarmPoolUnschedulableRecheckInterval types.String  `tfsdk:"sandbox_warm_pool_unschedulable_recheck_interval"`
	EnableWarmPoolEviction                      types.Bool    `tfsdk:"enable_warm_pool_eviction"`
	// v1.0.3's metrics TLS (metricsTLSFlags).
	MetricsSecureServing types.Bool   `tfsdk:"metrics_secure_serving"`
	MetricsCertSecret    types.String `tfsdk:"metrics_cert_secret"`
}

// setFlag is a typed value that is set, and the arg it renders.
type setFlag struct {
	chartFlag
	Arg string
}

// flagValues reads the typed values set (known and not null) in the
// `controller` object's attributes, as Go values (bool, int64, float64,
// string), keyed by attribute.
func flagValues(attrs map[string]attr.Value) map[string]any {
	out := map[string]any{}
	for _, f := range chartFlags {
		v, ok := attrs[f.Attr]
		if !ok || v.IsNull() || v.IsUnknown() {
			continue
		}
		switch x := v.(type) {
		case types.Bool:
			out[f.Attr] = x.ValueBool()
		case types.Int64:
			out[f.Attr] = x.ValueInt64()
		case types.Float64:
			out[f.Attr] = x.ValueFloat64()
		case types.String:
			out[f.Attr] = x.ValueString()
		}
	}
	return out
}

// renderFlags turns the typed values (flagValues) into the controller's
// args, in the chart's order, as the chart renders them
// (`--<flag>={{ value }}`), with one deliberate difference: an integer is
// written in decimal. Helm reads a values file's numbers as float64 and
// prints 1000000 as 1e+06, which the controller's flag.IntVar refuses, so
// the controller would not start (TestAccController_chartArgsMatchHelm
// shows it).
func renderFlags(values map[string]any) []setFlag {
	var out []setFlag
	for _, f := range chartFlags {
		v, ok := values[f.Attr]
		if !ok {
			continue
		}
		var s string
		switch x := v.(type) {
		case bool:
			s = strconv.FormatBool(x)
		case int64:
			s = strconv.FormatInt(x, 10)
		case float64:
			s = strconv.FormatFloat(x, 'g', -1, 64) // Go templates print a float64 so (%v)
		case string:
			s = x
		default:
			s = fmt.Sprint(x)
		}
		out = append(out, setFlag{chartFlag: f, Arg: "--" + f.Flag + "=" + s})
	}
	return out
}

// releasesWith names the releases read that define flags introduced in
// since, for messages.
func releasesWith(since string) string {
	var have []string
	for _, r := range releasesRead {
		if semver.Compare(r, since) >= 0 {
			have = append(have, r)
		}
	}
	return strings.Join(have, ", ")
}

// withChartFlags adds the chart's typed controller values to the
// `controller` attributes.
func withChartFlags(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	for k, v := range chartFlagAttributes() {
		attrs[k] = v
	}
	for k, v := range metricsTLSAttributes() {
		attrs[k] = v
	}
	return attrs
}

// validateFlags refuses a typed value that args also sets, one the
// release's controller does not define (it would exit at start: "flag
// provided but not defined"), and one read only by the extensions when
// the release is installed without them.
func validateFlags(m *controllerModel, s controllerSettings, diags *diag.Diagnostics) {
	ctl := path.Root("controller")
	byFlag := map[string]setFlag{}
	for _, f := range s.Flags {
		byFlag[f.Flag] = f
	}
	for i, a := range s.Args {
		if f, ok := byFlag[flagName(a)]; ok {
			diags.AddAttributeError(ctl.AtName("args").AtListIndex(i), "Flag set twice",
				fmt.Sprintf("%q sets --%s, which controller.%s sets too (as %s). Set it in one place: remove it from args, "+
					"or remove %s (the typed attribute is checked at plan).", a, f.Flag, f.Attr, f.Arg, f.Attr))
		}
	}
	version := m.Version.ValueString()
	known := !m.Version.IsUnknown() && versionRE.MatchString(version)
	custom := !m.Manifest.IsNull() || !m.ManifestFile.IsNull() || !m.ManifestURL.IsNull()
	noExtensions := !custom && !m.Extensions.IsNull() && !m.Extensions.IsUnknown() && !m.Extensions.ValueBool()
	secure := slices.ContainsFunc(s.Flags, func(f setFlag) bool { return f.Arg == "--metrics-secure-serving=true" })
	for _, f := range s.Flags {
		p := ctl.AtName(f.Attr)
		if known && f.Since != "" && semver.Compare(version, f.Since) < 0 {
			diags.AddAttributeError(p, "Flag not in this release",
				fmt.Sprintf("controller.%s renders --%s, a flag of the controller from %s on (the releases %s define it in "+
					"cmd/agent-sandbox-controller/main.go); the %s controller does not, and would exit at start with "+
					"\"flag provided but not defined\". Set version to %s or later, or remove %s.",
					f.Attr, f.Flag, f.Since, releasesWith(f.Since), version, f.Since, f.Attr))
		}
		if f.Attr == "metrics_cert_secret" && !secure {
			diags.AddAttributeError(p, "Certificate without secure serving",
				"The controller reads --metrics-cert-dir only with --metrics-secure-serving (cmd/agent-sandbox-controller/main.go:168 at "+
					"v1.0.3), so the certificate would never be used. Set metrics_secure_serving = true, or remove metrics_cert_secret.")
		}
		if f.Attr == "metrics_secure_serving" && secure && !m.Metrics.IsNull() && !m.Metrics.IsUnknown() {
			if sm, ok := m.Metrics.Attributes()["service_monitor"]; ok && !sm.IsNull() {
				diags.AddAttributeError(p, "ServiceMonitor scrapes over HTTP",
					"metrics.service_monitor scrapes /metrics over HTTP, as upstream's chart renders it (helm/templates/servicemonitor.yaml:18 "+
						"at v1.0.3); with metrics_secure_serving the controller serves HTTPS on that port and every scrape would fail. "+
						"Remove metrics_secure_serving, or metrics.service_monitor and scrape with a ServiceMonitor of your own that trusts the certificate.")
			}
		}
		if f.Extensions && noExtensions {
			diags.AddAttributeError(p, "Flag needs the extensions",
				fmt.Sprintf("controller.%s renders --%s, which only the extensions' controllers read; with extensions = false "+
					"the release's core-only controller runs without them, so it would have no effect. Remove extensions = false, "+
					"or remove %s.", f.Attr, f.Flag, f.Attr))
		}
	}
}
