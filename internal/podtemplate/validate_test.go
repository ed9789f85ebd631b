package podtemplate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// badCase is one invalid configuration and the exact attribute paths of the
// errors it must produce (no more, no fewer).
type badCase struct {
	name string
	pod  map[string]any
	want []string
}

func set(p string, v any) map[string]any { return with(minimalPod(), p, v) }

func sets(kv ...any) map[string]any {
	pod := minimalPod()
	for i := 0; i < len(kv); i += 2 {
		pod = with(pod, kv[i].(string), kv[i+1])
	}
	return pod
}

const c0 = "pod_template.containers[0]"

func badCases() []badCase {
	probe := func(p map[string]any) map[string]any { return set("containers.0.readiness_probe", p) }
	tcp := map[string]any{"port": 80}
	return []badCase{
		// metadata
		{"bad label key", set("labels", map[string]any{"-bad": "x"}), []string{`pod_template.labels["-bad"]`}},
		{"reserved label key", set("labels", map[string]any{"agents.x-k8s.io/sandbox-name-hash": "x"}), []string{`pod_template.labels["agents.x-k8s.io/sandbox-name-hash"]`}},
		{"reserved annotation key", set("annotations", map[string]any{"extensions.agents.x-k8s.io/x": "y"}), []string{`pod_template.annotations["extensions.agents.x-k8s.io/x"]`}},
		{"bad label value", set("labels", map[string]any{"app": "a b"}), []string{`pod_template.labels["app"]`}},
		{"bad annotation key", set("annotations", map[string]any{"a/b/c": "x"}), []string{`pod_template.annotations["a/b/c"]`}},
		// containers
		{"no containers", set("containers", []any{}), []string{"pod_template.containers"}},
		{"bad container name", set("containers.0.name", "Main_1"), []string{c0 + ".name"}},
		{"duplicate container name", set("init_containers", []any{container("main")}), []string{"pod_template.init_containers[0].name"}},
		{"image with space", set("containers.0.image", "python 3"), []string{c0 + ".image"}},
		{"empty image", set("containers.0.image", ""), []string{c0 + ".image"}},
		{"image with capitals", set("containers.0.image", "Python:3.13"), []string{c0 + ".image"}},
		{"image with a short digest", set("containers.0.image", "python@sha256:abc"), []string{c0 + ".image"}},
		{"image with an empty tag", set("containers.0.image", "python:"), []string{c0 + ".image"}},
		{"init container image with capitals", set("init_containers", []any{with(container("setup"), "image", "busybox:Latest@sha256:1")}),
			[]string{"pod_template.init_containers[0].image"}},
		{"bad image pull policy", set("containers.0.image_pull_policy", "Sometimes"), []string{c0 + ".image_pull_policy"}},
		{"empty working dir", set("containers.0.working_dir", ""), []string{c0 + ".working_dir"}},
		// resources
		{"missing memory limit", set("containers.0.resources.limits", map[string]any{"cpu": "1"}), []string{c0 + ".resources.limits"}},
		{"missing both limits", set("containers.0.resources.limits", map[string]any{"ephemeral-storage": "1Gi"}), []string{c0 + ".resources.limits"}},
		{"no limits", set("containers.0.resources", map[string]any{"requests": map[string]any{"cpu": "1"}}), []string{c0 + ".resources.limits"}},
		{"no resources", set("containers.0.resources", nil), []string{c0 + ".resources"}},
		{"bad quantity", set("containers.0.resources.limits.memory", "1Gx"), []string{c0 + `.resources.limits["memory"]`}},
		{"negative quantity", set("containers.0.resources.limits.cpu", "-1"), []string{c0 + `.resources.limits["cpu"]`}},
		{"bad resource name", set("containers.0.resources.limits.gpu", "1"), []string{c0 + `.resources.limits["gpu"]`}},
		{"zero cpu limit", set("containers.0.resources.limits.cpu", "0"), []string{c0 + `.resources.limits["cpu"]`}},
		{"zero memory limit", set("containers.0.resources.limits.memory", "0Mi"), []string{c0 + `.resources.limits["memory"]`}},
		{"both limits zero", set("containers.0.resources.limits", map[string]any{"cpu": "0", "memory": "0"}),
			[]string{c0 + `.resources.limits["cpu"]`, c0 + `.resources.limits["memory"]`}},
		{"request above limit", set("containers.0.resources.requests", map[string]any{"cpu": "1500m"}), []string{c0 + `.resources.requests["cpu"]`}},
		// env
		{"env value and value_from", set("containers.0.env", []any{map[string]any{"name": "A", "value": "x",
			"value_from": map[string]any{"field_ref": map[string]any{"field_path": "metadata.name"}}}}), []string{c0 + ".env[0].value_from"}},
		{"env two sources", set("containers.0.env", []any{map[string]any{"name": "A", "value_from": map[string]any{
			"field_ref":      map[string]any{"field_path": "metadata.name"},
			"secret_key_ref": map[string]any{"name": "s", "key": "k"}}}}), []string{c0 + ".env[0].value_from"}},
		{"env no source", set("containers.0.env", []any{map[string]any{"name": "A", "value_from": map[string]any{}}}), []string{c0 + ".env[0].value_from"}},
		{"env bad name", set("containers.0.env", []any{map[string]any{"name": "A=B", "value": "x"}}), []string{c0 + ".env[0].name"}},
		{"env duplicate", set("containers.0.env", []any{map[string]any{"name": "A", "value": "x"}, map[string]any{"name": "A", "value": "y"}}), []string{c0 + ".env[1].name"}},
		{"env bad secret name", set("containers.0.env", []any{map[string]any{"name": "A", "value_from": map[string]any{
			"secret_key_ref": map[string]any{"name": "Bad_Name", "key": "k"}}}}), []string{c0 + ".env[0].value_from.secret_key_ref.name"}},
		// ports
		{"port too high", set("containers.0.ports", []any{map[string]any{"container_port": 70000}}), []string{c0 + ".ports[0].container_port"}},
		{"port zero", set("containers.0.ports", []any{map[string]any{"container_port": 0}}), []string{c0 + ".ports[0].container_port"}},
		{"unknown protocol", set("containers.0.ports", []any{map[string]any{"container_port": 80, "protocol": "HTTP"}}), []string{c0 + ".ports[0].protocol"}},
		{"duplicate port", set("containers.0.ports", []any{map[string]any{"container_port": 80}, map[string]any{"container_port": 80, "protocol": "TCP"}}), []string{c0 + ".ports[1].container_port"}},
		{"bad port name", set("containers.0.ports", []any{map[string]any{"container_port": 80, "name": "HTTP_PORT"}}), []string{c0 + ".ports[0].name"}},
		{"duplicate port name", set("containers.0.ports", []any{map[string]any{"container_port": 80, "name": "web"}, map[string]any{"container_port": 81, "name": "web"}}), []string{c0 + ".ports[1].name"}},
		// volumes and mounts
		{"mount of unknown volume", set("containers.0.volume_mounts", []any{map[string]any{"name": "nope", "mount_path": "/x"}}), []string{c0 + ".volume_mounts[0].name"}},
		{"relative mount path", sets("volumes", []any{map[string]any{"name": "v", "empty_dir": map[string]any{}}},
			"containers.0.volume_mounts", []any{map[string]any{"name": "v", "mount_path": "tmp"}}), []string{c0 + ".volume_mounts[0].mount_path"}},
		{"sub path escapes", sets("volumes", []any{map[string]any{"name": "v", "empty_dir": map[string]any{}}},
			"containers.0.volume_mounts", []any{map[string]any{"name": "v", "mount_path": "/x", "sub_path": "a/../../etc"}}), []string{c0 + ".volume_mounts[0].sub_path"}},
		{"duplicate mount path", sets("volumes", []any{map[string]any{"name": "v", "empty_dir": map[string]any{}}},
			"containers.0.volume_mounts", []any{map[string]any{"name": "v", "mount_path": "/x"}, map[string]any{"name": "v", "mount_path": "/x"}}), []string{c0 + ".volume_mounts[1].mount_path"}},
		{"volume two sources", set("volumes", []any{map[string]any{"name": "v", "empty_dir": map[string]any{},
			"secret": map[string]any{"secret_name": "s"}}}), []string{"pod_template.volumes[0]"}},
		{"volume no source", set("volumes", []any{map[string]any{"name": "v"}}), []string{"pod_template.volumes[0]"}},
		{"duplicate volume", set("volumes", []any{map[string]any{"name": "v", "empty_dir": map[string]any{}}, map[string]any{"name": "v", "empty_dir": map[string]any{}}}), []string{"pod_template.volumes[1].name"}},
		{"bad volume name", set("volumes", []any{map[string]any{"name": "V.1", "empty_dir": map[string]any{}}}), []string{"pod_template.volumes[0].name"}},
		{"unknown medium", set("volumes", []any{map[string]any{"name": "v", "empty_dir": map[string]any{"medium": "Disk"}}}), []string{"pod_template.volumes[0].empty_dir.medium"}},
		{"bad size limit", set("volumes", []any{map[string]any{"name": "v", "empty_dir": map[string]any{"size_limit": "1Gx"}}}), []string{"pod_template.volumes[0].empty_dir.size_limit"}},
		{"bad default mode", set("volumes", []any{map[string]any{"name": "v", "config_map": map[string]any{"name": "c", "default_mode": "0999"}}}), []string{"pod_template.volumes[0].config_map.default_mode"}},
		{"bad item path", set("volumes", []any{map[string]any{"name": "v", "secret": map[string]any{"secret_name": "s", "items": []any{map[string]any{"key": "k", "path": "/etc/passwd"}}}}}), []string{"pod_template.volumes[0].secret.items[0].path"}},
		// probes
		{"probe two handlers", probe(map[string]any{"tcp_socket": tcp, "exec": map[string]any{"command": []any{"true"}}}), []string{c0 + ".readiness_probe"}},
		{"probe no handler", probe(map[string]any{"period_seconds": 5}), []string{c0 + ".readiness_probe"}},
		{"liveness success threshold", set("containers.0.liveness_probe", map[string]any{"tcp_socket": tcp, "success_threshold": 2}), []string{c0 + ".liveness_probe.success_threshold"}},
		{"probe bad port", probe(map[string]any{"http_get": map[string]any{"port": "99999"}}), []string{c0 + ".readiness_probe.http_get.port"}},
		{"probe bad scheme", probe(map[string]any{"http_get": map[string]any{"port": 80, "scheme": "FTP"}}), []string{c0 + ".readiness_probe.http_get.scheme"}},
		{"probe bad header", probe(map[string]any{"http_get": map[string]any{"port": 80, "http_headers": []any{map[string]any{"name": "Bad Header", "value": "x"}}}}), []string{c0 + ".readiness_probe.http_get.http_headers[0].name"}},
		{"probe zero period", probe(map[string]any{"tcp_socket": tcp, "period_seconds": 0}), []string{c0 + ".readiness_probe.period_seconds"}},
		{"probe on init container", set("init_containers", []any{with(container("setup"), "readiness_probe", map[string]any{"tcp_socket": tcp})}), []string{"pod_template.init_containers[0].readiness_probe"}},
		// pod
		{"bad runtime class", set("runtime_class_name", "GVisor!"), []string{"pod_template.runtime_class_name"}},
		{"unknown dns policy", set("dns_policy", "Cluster"), []string{"pod_template.dns_policy"}},
		{"dns None without servers", set("dns_policy", "None"), []string{"pod_template.dns_config"}},
		{"nameserver not an IP", set("dns_config", map[string]any{"nameservers": []any{"dns.google"}}), []string{"pod_template.dns_config.nameservers[0]"}},
		{"too many nameservers", set("dns_config", map[string]any{"nameservers": []any{"1.1.1.1", "8.8.8.8", "9.9.9.9", "8.8.4.4"}}), []string{"pod_template.dns_config.nameservers"}},
		{"unknown taint effect", set("tolerations", []any{map[string]any{"key": "k", "operator": "Exists", "effect": "NoRun"}}), []string{"pod_template.tolerations[0].effect"}},
		{"unknown toleration operator", set("tolerations", []any{map[string]any{"key": "k", "operator": "In"}}), []string{"pod_template.tolerations[0].operator"}},
		{"Exists with value", set("tolerations", []any{map[string]any{"key": "k", "operator": "Exists", "value": "v"}}), []string{"pod_template.tolerations[0].value"}},
		{"toleration without key", set("tolerations", []any{map[string]any{"operator": "Equal", "value": "v"}}), []string{"pod_template.tolerations[0].operator"}},
		{"toleration seconds without NoExecute", set("tolerations", []any{map[string]any{"key": "k", "operator": "Exists", "effect": "NoSchedule", "toleration_seconds": 5}}), []string{"pod_template.tolerations[0].toleration_seconds"}},
		{"unknown affinity operator", set("affinity", map[string]any{"node_affinity": map[string]any{"required": []any{map[string]any{"match_expressions": []any{
			map[string]any{"key": "k", "operator": "Has"}}}}}}), []string{"pod_template.affinity.node_affinity.required[0].match_expressions[0].operator"}},
		{"In without values", set("affinity", map[string]any{"node_affinity": map[string]any{"required": []any{map[string]any{"match_expressions": []any{
			map[string]any{"key": "k", "operator": "In"}}}}}}), []string{"pod_template.affinity.node_affinity.required[0].match_expressions[0].values"}},
		{"Gt not an integer", set("affinity", map[string]any{"node_affinity": map[string]any{"required": []any{map[string]any{"match_expressions": []any{
			map[string]any{"key": "k", "operator": "Gt", "values": []any{"abc"}}}}}}}), []string{"pod_template.affinity.node_affinity.required[0].match_expressions[0].values"}},
		{"anti-affinity weight", set("affinity", map[string]any{"pod_anti_affinity": map[string]any{"preferred": []any{map[string]any{
			"weight": 101, "topology_key": "kubernetes.io/hostname", "label_selector": map[string]any{"match_labels": map[string]any{"app": "x"}}}}}}),
			[]string{"pod_template.affinity.pod_anti_affinity.preferred[0].weight"}},
		{"anti-affinity Exists with values", set("affinity", map[string]any{"pod_anti_affinity": map[string]any{"preferred": []any{map[string]any{
			"weight": 1, "topology_key": "kubernetes.io/hostname", "label_selector": map[string]any{"match_expressions": []any{
				map[string]any{"key": "app", "operator": "Exists", "values": []any{"x"}}}}}}}}),
			[]string{"pod_template.affinity.pod_anti_affinity.preferred[0].label_selector.match_expressions[0].values"}},
		{"bad priority class", set("priority_class_name", "High"), []string{"pod_template.priority_class_name"}},
		{"negative grace period", set("termination_grace_period_seconds", -1), []string{"pod_template.termination_grace_period_seconds"}},
		{"bad service account", set("service_account_name", "my_sa"), []string{"pod_template.service_account_name"}},
		{"bad pull secret", set("image_pull_secrets", []any{"ok", "Bad"}), []string{"pod_template.image_pull_secrets[1]"}},
		{"bad node selector key", set("node_selector", map[string]any{"bad key": "x"}), []string{`pod_template.node_selector["bad key"]`}},
		// security
		{"unknown seccomp type", set("security_context", map[string]any{"seccomp_profile": map[string]any{"type": "Strict"}}), []string{"pod_template.security_context.seccomp_profile.type"}},
		{"Localhost without profile", set("security_context", map[string]any{"seccomp_profile": map[string]any{"type": "Localhost"}}), []string{"pod_template.security_context.seccomp_profile.localhost_profile"}},
		{"profile without Localhost", set("containers.0.security_context", map[string]any{"seccomp_profile": map[string]any{"localhost_profile": "x.json"}}), []string{c0 + ".security_context.seccomp_profile.localhost_profile"}},
		{"root with run_as_non_root", set("security_context", map[string]any{"run_as_user": 0}), []string{"pod_template.security_context.run_as_user"}},
		{"container root with pod run_as_non_root", set("containers.0.security_context", map[string]any{"run_as_user": 0}), []string{c0 + ".security_context.run_as_user"}},
		{"negative uid", set("security_context", map[string]any{"run_as_user": -1}), []string{"pod_template.security_context.run_as_user"}},
		{"privileged without escalation", set("containers.0.security_context", map[string]any{"privileged": true}), []string{c0 + ".security_context.privileged"}},
		{"bad capability", set("containers.0.security_context", map[string]any{"capabilities": map[string]any{"add": []any{"net_admin"}}}), []string{c0 + ".security_context.capabilities.add[0]"}},
		// overrides
		{"overrides not JSON or YAML", set("pod_spec_overrides", "{nope"), []string{"pod_template.pod_spec_overrides"}},
		{"overrides a list", set("pod_spec_overrides", `[1, 2]`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides unknown field", set("pod_spec_overrides", `{"hostNetwrk": true}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides wrong type", set("pod_spec_overrides", `{"hostNetwork": "yes"}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides runtime class", set("pod_spec_overrides", `{"runtimeClassName": "runc"}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides token", set("pod_spec_overrides", "automountServiceAccountToken: true"), []string{"pod_template.pod_spec_overrides"}},
		{"overrides pod runAsNonRoot", set("pod_spec_overrides", `{"securityContext": {"runAsNonRoot": false}}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides container image", set("pod_spec_overrides", `{"containers": [{"name": "main", "image": "x"}]}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides container privileged", set("pod_spec_overrides", `{"containers": [{"name": "main", "securityContext": {"privileged": true}}]}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides container limits", set("pod_spec_overrides", `{"containers": [{"name": "main", "resources": {"limits": {"cpu": "8"}}}]}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides undeclared container", set("pod_spec_overrides", `{"containers": [{"name": "miner", "image": "x"}]}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides typed volume", sets("volumes", []any{map[string]any{"name": "v", "empty_dir": map[string]any{}}},
			"pod_spec_overrides", `{"volumes": [{"name": "v", "hostPath": {"path": "/"}}]}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides ephemeral containers", set("pod_spec_overrides", `{"ephemeralContainers": [{"name": "debug", "image": "x"}]}`), []string{"pod_template.pod_spec_overrides"}},
		{"overrides node affinity required", set("pod_spec_overrides", `{"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "Exists"}]}]}}}}`), []string{"pod_template.pod_spec_overrides"}},
	}
}

// TestBadInputs: every bad input is refused by validation, with an error at
// exactly the attribute the user has to fix.
func TestBadInputs(t *testing.T) {
	h := newHarness(t)
	cases := badCases()
	if len(cases) < 30 {
		t.Fatalf("only %d bad-input cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := h.validate(tc.pod)
			got := diagPaths(ds, tfprotov6.DiagnosticSeverityError)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("errors at %v, want %v\n%s", got, tc.want, strings.Join(diagStrings(ds, tfprotov6.DiagnosticSeverityError), "\n"))
			}
			for _, d := range ds {
				if d.Severity == tfprotov6.DiagnosticSeverityError && (d.Summary == "" || d.Detail == "") {
					t.Errorf("diagnostic without summary or detail: %+v", d)
				}
			}
		})
	}
}

// TestGoodInputs: valid edge cases produce no error.
func TestGoodInputs(t *testing.T) {
	h := newHarness(t)
	for name, pod := range map[string]map[string]any{
		"sidecar probe": sets(
			"init_containers", []any{with(container("proxy"), "readiness_probe", map[string]any{"tcp_socket": map[string]any{"port": "http"}})},
			"pod_spec_overrides", `{"initContainers": [{"name": "proxy", "restartPolicy": "Always"}]}`),
		"mount of claim template": set("containers.0.volume_mounts", []any{map[string]any{"name": "workspace", "mount_path": "/work"}}),
		"mount of override volume": sets(
			"containers.0.volume_mounts", []any{map[string]any{"name": "token", "mount_path": "/var/run/token"}},
			"pod_spec_overrides", `{"volumes": [{"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]}`),
		"root made explicit":           set("security_context", map[string]any{"run_as_user": 0, "run_as_non_root": false}),
		"container root made explicit": set("containers.0.security_context", map[string]any{"run_as_user": 0, "run_as_non_root": false}),
		"privileged made explicit":     set("containers.0.security_context", map[string]any{"privileged": true, "allow_privilege_escalation": true}),
		"Localhost profile":            set("security_context", map[string]any{"seccomp_profile": map[string]any{"type": "Localhost", "localhost_profile": "p.json"}}),
		"request equal to limit":       set("containers.0.resources.requests", map[string]any{"cpu": "1000m", "memory": "1Gi"}),
		"extended resource":            set("containers.0.resources.limits", map[string]any{"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}),
		"toleration of everything":     set("tolerations", []any{map[string]any{"operator": "Exists"}}),
		"empty overrides":              set("pod_spec_overrides", ""),
		"yaml overrides":               set("pod_spec_overrides", "hostname: agent\nsetHostnameAsFQDN: false\n"),
		"override of unowned security field": set("pod_spec_overrides",
			`{"securityContext": {"sysctls": [{"name": "net.ipv4.ping_group_range", "value": "0 1"}]}, "containers": [{"name": "main", "securityContext": {"seLinuxOptions": {"level": "s0"}}}]}`),
		"dns None with servers": sets("dns_policy", "None", "dns_config", map[string]any{"nameservers": []any{"8.8.8.8"}}),
		"probe port by number":  set("containers.0.readiness_probe", map[string]any{"http_get": map[string]any{"port": 8080}}),
	} {
		t.Run(name, func(t *testing.T) {
			if errs := diagStrings(h.validate(pod, fullPodExtra), tfprotov6.DiagnosticSeverityError); len(errs) > 0 {
				t.Errorf("unexpected errors: %v", errs)
			}
		})
	}
}

// TestValidateSkipsUnknowns: values unknown at plan time are not judged
// (and nothing panics); what is known is still checked.
func TestValidateSkipsUnknowns(t *testing.T) {
	h := newHarness(t)
	for name, tc := range map[string]struct {
		pod   map[string]any
		extra map[string]any
		want  []string
	}{
		"whole template":   {pod: nil, want: nil},
		"containers":       {pod: set("containers", unknown)},
		"limits":           {pod: set("containers.0.resources.limits", unknown)},
		"a limit":          {pod: set("containers.0.resources.limits.memory", unknown)},
		"image":            {pod: set("containers.0.image", unknown)},
		"runtime class":    {pod: set("runtime_class_name", unknown)},
		"security context": {pod: set("security_context", unknown)},
		"overrides":        {pod: set("pod_spec_overrides", unknown)},
		"volumes": {pod: sets("volumes", unknown,
			"containers.0.volume_mounts", []any{map[string]any{"name": "x", "mount_path": "/x"}})},
		"claim templates": {pod: set("containers.0.volume_mounts", []any{map[string]any{"name": "x", "mount_path": "/x"}}),
			extra: map[string]any{"claim_templates": unknown}},
		"overrides that may add a volume": {pod: sets("pod_spec_overrides", unknown,
			"containers.0.volume_mounts", []any{map[string]any{"name": "x", "mount_path": "/x"}})},
		"overrides that may make a sidecar": {pod: sets("pod_spec_overrides", unknown,
			"init_containers", []any{with(container("proxy"), "readiness_probe", map[string]any{"tcp_socket": map[string]any{"port": 80}})})},
		"known part still checked": {pod: sets("containers.0.image", unknown, "containers.0.resources.limits", map[string]any{"cpu": "1"}),
			want: []string{c0 + ".resources.limits"}},
	} {
		t.Run(name, func(t *testing.T) {
			var pod any = tc.pod
			if tc.pod == nil && name == "whole template" {
				pod = unknown
			}
			var extra []map[string]any
			if tc.extra != nil {
				extra = append(extra, tc.extra)
			}
			ds := h.validate(pod, extra...)
			if got := diagPaths(ds, tfprotov6.DiagnosticSeverityError); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("errors at %v, want %v: %v", got, tc.want, diagStrings(ds, tfprotov6.DiagnosticSeverityError))
			}
		})
	}
}

// TestValidateUsesGivenPath: diagnostics are rooted at the caller's path.
func TestValidateUsesGivenPath(t *testing.T) {
	h := newHarness(t)
	obj := h.object(set("runtime_class_name", ""))
	ds := Validate(context.Background(), path.Root("spec").AtName("pod"), obj, Options{})
	if len(ds) != 1 {
		t.Fatalf("diagnostics: %v", ds)
	}
	d := ds[0].(interface{ Path() path.Path })
	if d.Path().String() != "spec.pod.runtime_class_name" {
		t.Errorf("path %s", d.Path())
	}
}
