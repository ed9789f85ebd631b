package podtemplate

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"
)

// roundTripCases are configurations whose plan must read back unchanged
// after the API server has stored them ("no perpetual diff").
func roundTripCases() map[string]map[string]any {
	odd := minimalPod()
	odd = with(odd, "containers.0.resources", map[string]any{
		// Spellings the server canonicalises: 1000m -> 1, 1024Mi -> 1Gi,
		// 0.5 -> 500m, 536870912 -> 512Mi.
		"limits":   map[string]any{"cpu": "1000m", "memory": "1024Mi"},
		"requests": map[string]any{"cpu": "0.5", "memory": "536870912"},
	})
	odd = with(odd, "volumes", []any{map[string]any{"name": "scratch", "empty_dir": map[string]any{"size_limit": "2048Mi"}}})
	odd = with(odd, "containers.0.volume_mounts", []any{map[string]any{"name": "scratch", "mount_path": "/scratch", "read_only": false}})

	empties := minimalPod()
	for p, v := range map[string]any{
		"labels": map[string]any{}, "annotations": map[string]any{}, "node_selector": map[string]any{},
		"tolerations": []any{}, "image_pull_secrets": []any{}, "volumes": []any{}, "init_containers": []any{},
		"containers.0.command": []any{}, "containers.0.args": []any{}, "containers.0.env": []any{},
		"containers.0.ports": []any{}, "containers.0.volume_mounts": []any{},
		"containers.0.resources.requests":               map[string]any{},
		"containers.0.security_context":                 map[string]any{"capabilities": map[string]any{"add": []any{}}},
		"security_context":                              map[string]any{"supplemental_groups": []any{}},
		"dns_config":                                    map[string]any{"nameservers": []any{"8.8.8.8"}, "searches": []any{}, "options": []any{}},
		"containers.0.readiness_probe":                  map[string]any{"http_get": map[string]any{"port": 80, "path": "", "http_headers": []any{}}, "initial_delay_seconds": 0},
		"containers.0.liveness_probe":                   map[string]any{"exec": map[string]any{"command": []any{"true"}}, "failure_threshold": 1},
		"containers.0.startup_probe":                    map[string]any{"grpc": map[string]any{"port": 9000, "service": ""}},
		"containers.0.security_context.run_as_non_root": nil,
	} {
		if v != nil {
			empties = with(empties, p, v)
		}
	}

	defaulted := minimalPod()
	defaulted = with(defaulted, "containers.0.ports", []any{map[string]any{"container_port": 80}})
	defaulted = with(defaulted, "containers.0.readiness_probe", map[string]any{"grpc": map[string]any{"port": 9000}})
	defaulted = with(defaulted, "containers.0.env", []any{map[string]any{"name": "A", "value": ""}})
	defaulted = with(defaulted, "volumes", []any{
		map[string]any{"name": "c", "config_map": map[string]any{"name": "c", "default_mode": "440"}},
		map[string]any{"name": "d", "empty_dir": map[string]any{}},
	})

	loosened := minimalPod()
	for p, v := range map[string]any{
		"runtime_class_name":              "",
		"automount_service_account_token": true,
		"security_context":                map[string]any{"run_as_non_root": false, "run_as_user": 0, "seccomp_profile": map[string]any{"type": "Unconfined"}},
		"containers.0.security_context": map[string]any{
			"privileged": true, "allow_privilege_escalation": true,
			"capabilities": map[string]any{"add": []any{"NET_ADMIN"}, "drop": []any{}},
		},
	} {
		loosened = with(loosened, p, v)
	}

	otherRuntime := with(minimalPod(), "runtime_class_name", "kata")

	return map[string]map[string]any{
		"minimal":          minimalPod(),
		"full":             fullPod(),
		"odd spellings":    odd,
		"empty values":     empties,
		"server defaults":  defaulted,
		"loosened":         loosened,
		"other runtime":    otherRuntime,
		"override only":    with(minimalPod(), "pod_spec_overrides", "hostname: agent\nsubdomain: sandboxes\n"),
		"empty override":   with(minimalPod(), "pod_spec_overrides", ""),
		"override is json": with(minimalPod(), "pod_spec_overrides", `{"containers":[{"name":"main","envFrom":[{"configMapRef":{"name":"env"}}]}]}`),
	}
}

// TestRoundTrip: plan -> Expand -> API server (CRD pruning, defaulting,
// validation) -> typed read -> Flatten(live, plan) gives back exactly the plan.
func TestRoundTrip(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for name, pod := range roundTripCases() {
		t.Run(name, func(t *testing.T) {
			planned := h.plan(pod, fullPodExtra)
			pt, diags := Expand(ctx, planned)
			if diags.HasError() {
				t.Fatal(diags)
			}
			live := serverRoundTrip(t, pt)
			got, diags := Flatten(ctx, live, planned)
			if diags.HasError() {
				t.Fatal(diags)
			}
			if d := valueDiff("pod_template", planned, got); len(d) > 0 {
				t.Errorf("read back differs from the plan:\n%s", join(d))
			}
			// Reading again with the new state as prior is stable.
			again, _ := Flatten(ctx, live, got)
			if d := valueDiff("pod_template", got, again); len(d) > 0 {
				t.Errorf("second read differs:\n%s", join(d))
			}
		})
	}
}

// TestImportRoundTrip: with no prior (import, data source) Flatten
// expresses the live object completely: expanding what it read gives the
// same object back, and reading that again is stable.
func TestImportRoundTrip(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for name, pod := range roundTripCases() {
		t.Run(name, func(t *testing.T) {
			pt, diags := Expand(ctx, h.plan(pod, fullPodExtra))
			if diags.HasError() {
				t.Fatal(diags)
			}
			live := serverRoundTrip(t, pt)
			imported, diags := Flatten(ctx, live, Null())
			if diags.HasError() {
				t.Fatal(diags)
			}
			again, diags := Expand(ctx, imported)
			if diags.HasError() {
				t.Fatal(diags)
			}
			if relive := serverRoundTrip(t, again); !equality.Semantic.DeepEqual(relive, live) {
				t.Errorf("the imported state expands to a different object:\nlive   %+v\nagain  %+v", live.Spec, relive.Spec)
			}
			if d := valueDiff("pod_template", imported, mustFlatten(t, live, imported)); len(d) > 0 {
				t.Errorf("refresh after import differs:\n%s", join(d))
			}
		})
	}
}

// TestFlattenKeepsSpelling covers the normalisations one by one.
func TestFlattenKeepsSpelling(t *testing.T) {
	h := newHarness(t)
	pod := with(minimalPod(), "containers.0.resources", map[string]any{
		"limits": map[string]any{"cpu": "1000m", "memory": "1024Mi"},
	})
	planned := h.plan(pod)
	pt, _ := Expand(context.Background(), planned)
	live := serverRoundTrip(t, pt)
	lim := live.Spec.Containers[0].Resources.Limits
	// The server (as read through the typed API) really did canonicalise.
	if lim.Cpu().String() != "1" || lim.Memory().String() != "1Gi" {
		t.Fatalf("expected canonical quantities from the server, got %s %s", lim.Cpu(), lim.Memory())
	}
	got := mustFlatten(t, live, planned)
	if d := valueDiff("pod_template", planned, got); len(d) > 0 {
		t.Errorf("%s", join(d))
	}
	// Without a prior the server's spelling is reported.
	imported := mustFlatten(t, live, Null())
	c := mustDecode[ContainerModel](t, mustDecode[Model](t, imported).Containers.Elements()[0].(types.Object))
	r := mustDecode[ResourcesModel](t, c.Resources)
	if r.Limits.Elements()["cpu"].(types.String).ValueString() != "1" {
		t.Errorf("imported cpu limit = %v, want the server's 1", r.Limits)
	}
}

// TestDrift: an out-of-band change to a managed field shows up, exactly at
// that attribute.
func TestDrift(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	base := fullPod()
	planned := h.plan(base, fullPodExtra)
	pt, diags := Expand(ctx, planned)
	if diags.HasError() {
		t.Fatal(diags)
	}
	stored := serverRoundTrip(t, pt)
	for _, tc := range []struct {
		name   string
		change func(*agentsv1beta1.PodTemplate)
		want   []string
	}{
		{"image", func(p *agentsv1beta1.PodTemplate) { p.Spec.Containers[0].Image = "evil:latest" },
			[]string{"pod_template.containers[0].image"}},
		{"cpu limit", func(p *agentsv1beta1.PodTemplate) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
		}, []string{`pod_template.containers[0].resources.limits["cpu"]`}},
		{"memory limit removed", func(p *agentsv1beta1.PodTemplate) {
			delete(p.Spec.Containers[0].Resources.Limits, corev1.ResourceMemory)
		}, []string{`pod_template.containers[0].resources.limits`}},
		{"label value", func(p *agentsv1beta1.PodTemplate) { p.ObjectMeta.Labels["app"] = "other" },
			[]string{`pod_template.labels["app"]`}},
		{"label added", func(p *agentsv1beta1.PodTemplate) { p.ObjectMeta.Labels["extra"] = "x" },
			[]string{`pod_template.labels`}},
		{"runtime class removed", func(p *agentsv1beta1.PodTemplate) { p.Spec.RuntimeClassName = nil },
			[]string{"pod_template.runtime_class_name"}},
		{"token mounted", func(p *agentsv1beta1.PodTemplate) { on := true; p.Spec.AutomountServiceAccountToken = &on },
			[]string{"pod_template.automount_service_account_token"}},
		{"escalation allowed", func(p *agentsv1beta1.PodTemplate) {
			on := true
			p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = &on
		}, []string{"pod_template.containers[0].security_context.allow_privilege_escalation"}},
		{"capabilities kept", func(p *agentsv1beta1.PodTemplate) { p.Spec.Containers[0].SecurityContext.Capabilities.Drop = nil },
			[]string{"pod_template.containers[0].security_context.capabilities.drop"}},
		{"security context removed", func(p *agentsv1beta1.PodTemplate) { p.Spec.SecurityContext = nil },
			[]string{"pod_template.security_context"}},
		{"seccomp unconfined", func(p *agentsv1beta1.PodTemplate) {
			p.Spec.SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined
		}, []string{"pod_template.security_context.seccomp_profile.type"}},
		{"env value", func(p *agentsv1beta1.PodTemplate) { p.Spec.Containers[0].Env[0].Value = "other" },
			[]string{"pod_template.containers[0].env[0].value"}},
		{"container added", func(p *agentsv1beta1.PodTemplate) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "miner", Image: "miner"})
		}, []string{"pod_template.containers"}},
		{"volume removed", func(p *agentsv1beta1.PodTemplate) { p.Spec.Volumes = p.Spec.Volumes[1:] },
			[]string{"pod_template.volumes"}},
		{"size limit", func(p *agentsv1beta1.PodTemplate) {
			q := resource.MustParse("1Gi")
			p.Spec.Volumes[0].EmptyDir.SizeLimit = &q
		}, []string{"pod_template.volumes[0].empty_dir.size_limit"}},
		{"toleration", func(p *agentsv1beta1.PodTemplate) { p.Spec.Tolerations[0].Value = "runc" },
			[]string{"pod_template.tolerations[0].value"}},
		{"probe period", func(p *agentsv1beta1.PodTemplate) { p.Spec.Containers[0].ReadinessProbe.PeriodSeconds = 60 },
			[]string{"pod_template.containers[0].readiness_probe.period_seconds"}},
		{"override field changed", func(p *agentsv1beta1.PodTemplate) { p.Spec.Hostname = "other" },
			[]string{"pod_template.pod_spec_overrides"}},
		{"override container field removed", func(p *agentsv1beta1.PodTemplate) { p.Spec.Containers[0].Lifecycle = nil },
			[]string{"pod_template.pod_spec_overrides"}},
		{"unmodelled field added", func(p *agentsv1beta1.PodTemplate) { p.Spec.SchedulerName = "custom" },
			[]string{"pod_template.pod_spec_overrides"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := *stored.DeepCopy()
			tc.change(&live)
			// Through the server again, as a real edit would go.
			live = serverRoundTrip(t, live)
			got := mustFlatten(t, live, planned)
			if d := diffPaths(valueDiff("pod_template", planned, got)); fmt.Sprint(d) != fmt.Sprint(tc.want) {
				t.Errorf("drift at %v, want %v", d, tc.want)
			}
		})
	}
}

func mustFlatten(t *testing.T, live agentsv1beta1.PodTemplate, prior types.Object) types.Object {
	t.Helper()
	got, diags := Flatten(context.Background(), live, prior)
	if diags.HasError() {
		t.Fatal(diags)
	}
	return got
}

// valueDiff lists "path: want != got" for every attribute where two values
// differ; a list or map whose length differs is reported once, at itself.
func valueDiff(p string, want, got attr.Value) []string {
	if want.Equal(got) {
		return nil
	}
	if want.IsNull() || got.IsNull() || want.IsUnknown() || got.IsUnknown() {
		return []string{fmt.Sprintf("%s: %v != %v", p, want, got)}
	}
	switch w := want.(type) {
	case types.Object:
		g := got.(types.Object)
		var out []string
		for _, k := range sortedAttrKeys(w.Attributes()) {
			out = append(out, valueDiff(p+"."+k, w.Attributes()[k], g.Attributes()[k])...)
		}
		return out
	case types.List:
		g := got.(types.List)
		if len(w.Elements()) != len(g.Elements()) {
			return []string{fmt.Sprintf("%s: %v != %v", p, want, got)}
		}
		var out []string
		for i := range w.Elements() {
			out = append(out, valueDiff(fmt.Sprintf("%s[%d]", p, i), w.Elements()[i], g.Elements()[i])...)
		}
		return out
	case types.Map:
		g := got.(types.Map)
		if len(w.Elements()) != len(g.Elements()) {
			return []string{fmt.Sprintf("%s: %v != %v", p, want, got)}
		}
		var out []string
		for _, k := range sortedAttrKeys(w.Elements()) {
			gv, ok := g.Elements()[k]
			if !ok {
				return []string{fmt.Sprintf("%s: %v != %v", p, want, got)}
			}
			out = append(out, valueDiff(fmt.Sprintf("%s[%q]", p, k), w.Elements()[k], gv)...)
		}
		return out
	}
	return []string{fmt.Sprintf("%s: %v != %v", p, want, got)}
}

// diffPaths is the path part of valueDiff's lines.
func diffPaths(lines []string) []string {
	var out []string
	for _, l := range lines {
		for i := 0; i+1 < len(l); i++ {
			if l[i] == ':' && l[i+1] == ' ' {
				out = append(out, l[:i])
				break
			}
		}
	}
	return out
}

func sortedAttrKeys(m map[string]attr.Value) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func join(lines []string) string {
	s := ""
	for _, l := range lines {
		s += "  " + l + "\n"
	}
	return s
}
