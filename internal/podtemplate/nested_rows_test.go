package podtemplate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The rows here complete the bad-input table so that every validator and
// check inside pod_template has one (issue 37; TestMain's coverage check
// lists any that has none). A container's attributes are the same for
// containers and init_containers, and a probe's for the three probes, so
// their rows are written once and placed in each.

// containerRows are (attribute inside a container, bad value, where the
// error is relative to the container) for every validated attribute of a
// container; volumes holds a volume named "v" so that mounts are checked
// for their own attribute.
func containerRows() []struct {
	name, attr string
	value      any
	at         string
} {
	vf := func(src string, ref map[string]any) []any {
		return []any{map[string]any{"name": "A", "value_from": map[string]any{src: ref}}}
	}
	mount := func(m map[string]any) []any {
		out := map[string]any{"name": "v", "mount_path": "/data"}
		for k, v := range m {
			out[k] = v
		}
		return []any{out}
	}
	return []struct {
		name, attr string
		value      any
		at         string
	}{
		{"env name with =", "env", []any{map[string]any{"name": "A=B", "value": "x"}}, "env[0].name"},
		{"config map key with a space", "env", vf("config_map_key_ref", map[string]any{"name": "c", "key": "a key"}), "env[0].value_from.config_map_key_ref.key"},
		{"config map name with _", "env", vf("config_map_key_ref", map[string]any{"name": "Bad_Name", "key": "k"}), "env[0].value_from.config_map_key_ref.name"},
		{"secret key with a space", "env", vf("secret_key_ref", map[string]any{"name": "s", "key": "a key"}), "env[0].value_from.secret_key_ref.key"},
		{"secret name with _", "env", vf("secret_key_ref", map[string]any{"name": "Bad_Name", "key": "k"}), "env[0].value_from.secret_key_ref.name"},
		{"field path not served", "env", vf("field_ref", map[string]any{"field_path": "spec.secrets"}), "env[0].value_from.field_ref.field_path"},
		{"pull policy typo", "image_pull_policy", "Sometimes", "image_pull_policy"},
		{"port zero", "ports", []any{map[string]any{"container_port": 0}}, "ports[0].container_port"},
		{"port name with _", "ports", []any{map[string]any{"container_port": 80, "name": "HTTP_PORT"}}, "ports[0].name"},
		{"port protocol HTTP", "ports", []any{map[string]any{"container_port": 80, "protocol": "HTTP"}}, "ports[0].protocol"},
		{"limit in GB", "resources", map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1GB"}}, `resources.limits["memory"]`},
		{"request as words", "resources", map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"},
			"requests": map[string]any{"cpu": "a little"}}, `resources.requests["cpu"]`},
		{"capability in lower case", "security_context", map[string]any{"capabilities": map[string]any{"add": []any{"net_admin"}}}, "security_context.capabilities.add[0]"},
		{"dropped capability in lower case", "security_context", map[string]any{"capabilities": map[string]any{"drop": []any{"all"}}}, "security_context.capabilities.drop[0]"},
		{"negative group", "security_context", map[string]any{"run_as_group": -1}, "security_context.run_as_group"},
		{"negative user", "security_context", map[string]any{"run_as_user": -1}, "security_context.run_as_user"},
		{"seccomp type typo", "security_context", map[string]any{"seccomp_profile": map[string]any{"type": "Strict"}}, "security_context.seccomp_profile.type"},
		{"profile without Localhost", "security_context", map[string]any{"seccomp_profile": map[string]any{"localhost_profile": "x.json"}},
			"security_context.seccomp_profile.localhost_profile"},
		{"relative mount path", "volume_mounts", mount(map[string]any{"mount_path": "data"}), "volume_mounts[0].mount_path"},
		{"mount of no volume", "volume_mounts", mount(map[string]any{"name": "nope"}), "volume_mounts[0].name"},
		{"mount name in capitals", "volume_mounts", mount(map[string]any{"name": "Data"}), "volume_mounts[0].name"},
		{"empty Localhost profile", "security_context", map[string]any{"seccomp_profile": map[string]any{"type": "Localhost", "localhost_profile": ""}},
			"security_context.seccomp_profile.localhost_profile"},
		{"sub path out of the volume", "volume_mounts", mount(map[string]any{"sub_path": "../etc"}), "volume_mounts[0].sub_path"},
		{"empty working dir", "working_dir", "", "working_dir"},
	}
}

// probeRows are (attribute inside a probe, bad value) rows; the probe
// otherwise checks a TCP port.
func probeRows() []struct {
	name string
	set  map[string]any
	at   string
} {
	tcp := map[string]any{"port": 80}
	return []struct {
		name string
		set  map[string]any
		at   string
	}{
		{"empty command", map[string]any{"exec": map[string]any{"command": []any{}}}, "exec.command"},
		{"zero failure threshold", map[string]any{"tcp_socket": tcp, "failure_threshold": 0}, "failure_threshold"},
		{"grpc port zero", map[string]any{"grpc": map[string]any{"port": 0}}, "grpc.port"},
		{"header name with a space", map[string]any{"http_get": map[string]any{"port": 80, "http_headers": []any{map[string]any{"name": "X Y", "value": "1"}}}},
			"http_get.http_headers[0].name"},
		{"http port too high", map[string]any{"http_get": map[string]any{"port": "99999"}}, "http_get.port"},
		{"scheme FTP", map[string]any{"http_get": map[string]any{"port": 80, "scheme": "FTP"}}, "http_get.scheme"},
		{"negative initial delay", map[string]any{"tcp_socket": tcp, "initial_delay_seconds": -1}, "initial_delay_seconds"},
		{"zero period", map[string]any{"tcp_socket": tcp, "period_seconds": 0}, "period_seconds"},
		{"zero success threshold", map[string]any{"tcp_socket": tcp, "success_threshold": 0}, "success_threshold"},
		{"tcp port name with _", map[string]any{"tcp_socket": map[string]any{"port": "my_port"}}, "tcp_socket.port"},
		{"zero timeout", map[string]any{"tcp_socket": tcp, "timeout_seconds": 0}, "timeout_seconds"},
	}
}

// nestedRows places containerRows and probeRows in containers[0] and in
// init_containers[0] (a sidecar, which may have probes), and adds the
// pod-level rows.
func nestedRows() []badCase {
	withVolume := func(pod map[string]any) map[string]any {
		return with(pod, "volumes", []any{map[string]any{"name": "v", "empty_dir": map[string]any{}}})
	}
	places := []struct {
		name string
		at   string
		put  func(attr string, v any) map[string]any
	}{
		{"container", "pod_template.containers[0]", func(attr string, v any) map[string]any {
			return withVolume(set("containers.0."+attr, v))
		}},
		{"sidecar", "pod_template.init_containers[0]", func(attr string, v any) map[string]any {
			return withVolume(sets("init_containers", []any{with(container("proxy"), attr, v)},
				"pod_spec_overrides", `{"initContainers": [{"name": "proxy", "restartPolicy": "Always"}]}`))
		}},
	}
	var out []badCase
	for _, pl := range places {
		for _, r := range containerRows() {
			out = append(out, badCase{pl.name + ": " + r.name, pl.put(r.attr, r.value), []string{pl.at + "." + r.at}})
		}
		for _, probe := range []string{"liveness_probe", "readiness_probe", "startup_probe"} {
			for _, r := range probeRows() {
				if r.at == "success_threshold" && probe != "readiness_probe" {
					// Liveness and startup probes allow only 1: 0 is
					// refused for both reasons, 2 for that one.
					out = append(out, badCase{pl.name + " " + probe + ": success threshold 2",
						pl.put(probe, map[string]any{"tcp_socket": map[string]any{"port": 80}, "success_threshold": 2}),
						[]string{pl.at + "." + probe + "." + r.at}})
				}
				out = append(out, badCase{pl.name + " " + probe + ": " + r.name, pl.put(probe, r.set),
					[]string{pl.at + "." + probe + "." + r.at}})
			}
		}
	}
	sel := func(m map[string]any) map[string]any {
		return set("affinity", map[string]any{"pod_anti_affinity": map[string]any{"preferred": []any{map[string]any{
			"weight": 1, "topology_key": "kubernetes.io/hostname", "label_selector": m}}}})
	}
	anti := func(k string, v any) map[string]any {
		term := map[string]any{"weight": 1, "topology_key": "kubernetes.io/hostname",
			"label_selector": map[string]any{"match_labels": map[string]any{"app": "x"}}}
		term[k] = v
		return set("affinity", map[string]any{"pod_anti_affinity": map[string]any{"preferred": []any{term}}})
	}
	const aa = "pod_template.affinity.pod_anti_affinity.preferred[0]"
	required := func(expr map[string]any) map[string]any {
		return set("affinity", map[string]any{"node_affinity": map[string]any{"required": []any{map[string]any{
			"match_expressions": []any{expr}}}}})
	}
	vol := func(v map[string]any) map[string]any {
		v["name"] = "v"
		return set("volumes", []any{v})
	}
	items := func(item map[string]any) []any { return []any{item} }
	out = append(out, []badCase{
		{"node affinity key with a space", required(map[string]any{"key": "a key", "operator": "Exists"}),
			[]string{"pod_template.affinity.node_affinity.required[0].match_expressions[0].key"}},
		{"Gt with two values", required(map[string]any{"key": "k", "operator": "Gt", "values": []any{"1", "2"}}),
			[]string{"pod_template.affinity.node_affinity.required[0].match_expressions[0].values"}},
		{"anti-affinity key with a space", sel(map[string]any{"match_expressions": []any{map[string]any{"key": "a key", "operator": "Exists"}}}),
			[]string{aa + ".label_selector.match_expressions[0].key"}},
		{"anti-affinity operator Has", sel(map[string]any{"match_expressions": []any{map[string]any{"key": "app", "operator": "Has"}}}),
			[]string{aa + ".label_selector.match_expressions[0].operator"}},
		{"anti-affinity label key with a space", sel(map[string]any{"match_labels": map[string]any{"a key": "x"}}),
			[]string{aa + `.label_selector.match_labels["a key"]`}},
		// Label values in selectors and node requirements: the API server
		// refuses the pod (metav1validation.ValidateLabelSelectorRequirement,
		// core validation ValidateNodeSelectorRequirement).
		{"anti-affinity expression value with a slash", sel(map[string]any{"match_expressions": []any{map[string]any{"key": "app", "operator": "In", "values": []any{"a/b"}}}}),
			[]string{aa + ".label_selector.match_expressions[0].values[0]"}},
		{"node affinity value with a space", required(map[string]any{"key": "pool", "operator": "In", "values": []any{"gpu pool"}}),
			[]string{"pod_template.affinity.node_affinity.required[0].match_expressions[0].values[0]"}},
		{"anti-affinity namespace with _", anti("namespaces", []any{"team_a"}), []string{aa + ".namespaces[0]"}},
		{"anti-affinity empty topology key", anti("topology_key", ""), []string{aa + ".topology_key"}},
		{"dns option without a name", set("dns_config", map[string]any{"nameservers": []any{"1.1.1.1"}, "options": []any{map[string]any{"name": ""}}}),
			[]string{"pod_template.dns_config.options[0].name"}},
		{"33 dns searches", set("dns_config", map[string]any{"nameservers": []any{"1.1.1.1"}, "searches": searches(33)}),
			[]string{"pod_template.dns_config.searches"}},
		{"negative fs group", set("security_context", map[string]any{"fs_group": -1}), []string{"pod_template.security_context.fs_group"}},
		{"negative pod group", set("security_context", map[string]any{"run_as_group": -1}), []string{"pod_template.security_context.run_as_group"}},
		{"negative supplemental group", set("security_context", map[string]any{"supplemental_groups": []any{-1}}),
			[]string{"pod_template.security_context.supplemental_groups[0]"}},
		{"init container name in capitals", sets("init_containers", []any{container("Setup")}), []string{"pod_template.init_containers[0].name"}},
		{"empty pod Localhost profile", set("security_context", map[string]any{"seccomp_profile": map[string]any{"type": "Localhost", "localhost_profile": ""}}),
			[]string{"pod_template.security_context.seccomp_profile.localhost_profile"}},
		{"toleration value with a space", set("tolerations", []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "ai agents"}}),
			[]string{"pod_template.tolerations[0].value"}},
		{"toleration key with a space", set("tolerations", []any{map[string]any{"key": "a key", "operator": "Exists"}}), []string{"pod_template.tolerations[0].key"}},
		{"config map item key with a space", vol(map[string]any{"config_map": map[string]any{"name": "c", "items": items(map[string]any{"key": "a key", "path": "p"})}}),
			[]string{"pod_template.volumes[0].config_map.items[0].key"}},
		{"config map item absolute path", vol(map[string]any{"config_map": map[string]any{"name": "c", "items": items(map[string]any{"key": "k", "path": "/p"})}}),
			[]string{"pod_template.volumes[0].config_map.items[0].path"}},
		{"config map name with _", vol(map[string]any{"config_map": map[string]any{"name": "Bad_Name"}}), []string{"pod_template.volumes[0].config_map.name"}},
		{"claim name with _", vol(map[string]any{"persistent_volume_claim": map[string]any{"claim_name": "Bad_Name"}}),
			[]string{"pod_template.volumes[0].persistent_volume_claim.claim_name"}},
		{"secret mode not octal", vol(map[string]any{"secret": map[string]any{"secret_name": "s", "default_mode": "0999"}}),
			[]string{"pod_template.volumes[0].secret.default_mode"}},
		{"secret item key with a space", vol(map[string]any{"secret": map[string]any{"secret_name": "s", "items": items(map[string]any{"key": "a key", "path": "p"})}}),
			[]string{"pod_template.volumes[0].secret.items[0].key"}},
		{"secret name with _", vol(map[string]any{"secret": map[string]any{"secret_name": "Bad_Name"}}), []string{"pod_template.volumes[0].secret.secret_name"}},
	}...)
	return out
}

// TestNestedBadInputs: each row is refused by validation with errors at
// exactly its attribute, each naming that attribute in its text (package
// nestedattr), and nowhere else.
func TestNestedBadInputs(t *testing.T) {
	h := newHarness(t)
	for _, tc := range nestedRows() {
		t.Run(tc.name, func(t *testing.T) {
			ds := h.validate(tc.pod)
			got := diagPaths(ds, tfprotov6.DiagnosticSeverityError)
			if fmt.Sprint(dedupe(got)) != fmt.Sprint(tc.want) {
				t.Fatalf("errors at %v, want %v\n%s", got, tc.want, strings.Join(diagStrings(ds, tfprotov6.DiagnosticSeverityError), "\n"))
			}
			for _, d := range ds {
				if d.Severity == tfprotov6.DiagnosticSeverityError && !strings.Contains(d.Detail, tc.want[0]) {
					t.Errorf("the error does not name %s in its text: %s: %s", tc.want[0], d.Summary, d.Detail)
				}
			}
		})
	}
}

func searches(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("d%d.example.com", i)
	}
	return out
}

// dedupe drops repeats from a sorted list (two validators of one
// attribute may both refuse a value).
func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
