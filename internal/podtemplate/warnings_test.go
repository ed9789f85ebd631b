package podtemplate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// TestLoosenedDefaultsWarn: every hardened default, loosened explicitly,
// produces a warning at that attribute, saying what the risk is; and the
// configuration is still valid (a warning, not an error).
func TestLoosenedDefaultsWarn(t *testing.T) {
	h := newHarness(t)
	csc := func(v map[string]any) map[string]any { return set("containers.0.security_context", v) }
	for _, tc := range []struct {
		name string
		pod  map[string]any
		want []string // paths
		risk string   // a phrase of the detail
	}{
		{"no runtime class", set("runtime_class_name", ""),
			[]string{"pod_template.runtime_class_name"}, "untrusted code shares the host kernel"},
		{"other runtime class", set("runtime_class_name", "runc"),
			[]string{"pod_template.runtime_class_name"}, "shares the host kernel"},
		{"token mounted", set("automount_service_account_token", true),
			[]string{"pod_template.automount_service_account_token"}, "code in the sandbox can call the Kubernetes API as the pod's service account"},
		{"pod may run as root", set("security_context", map[string]any{"run_as_non_root": false}),
			[]string{"pod_template.security_context.run_as_non_root"}, "root"},
		{"pod runs as root", set("security_context", map[string]any{"run_as_non_root": false, "run_as_user": 0}),
			[]string{"pod_template.security_context.run_as_non_root", "pod_template.security_context.run_as_user"}, "root"},
		{"pod seccomp unconfined", set("security_context", map[string]any{"seccomp_profile": map[string]any{"type": "Unconfined"}}),
			[]string{"pod_template.security_context.seccomp_profile.type"}, "every kernel syscall"},
		{"privileged", csc(map[string]any{"privileged": true, "allow_privilege_escalation": true}),
			[]string{c0 + ".security_context.allow_privilege_escalation", c0 + ".security_context.privileged"}, "host's devices"},
		{"privilege escalation", csc(map[string]any{"allow_privilege_escalation": true}),
			[]string{c0 + ".security_context.allow_privilege_escalation"}, "setuid"},
		{"capabilities added", csc(map[string]any{"capabilities": map[string]any{"add": []any{"NET_RAW"}}}),
			[]string{c0 + ".security_context.capabilities.add"}, "NET_RAW"},
		{"nothing dropped", csc(map[string]any{"capabilities": map[string]any{"drop": []any{}}}),
			[]string{c0 + ".security_context.capabilities.drop"}, "keeps the runtime's default capabilities"},
		{"some dropped", csc(map[string]any{"capabilities": map[string]any{"drop": []any{"NET_RAW"}}}),
			[]string{c0 + ".security_context.capabilities.drop"}, "ALL"},
		{"container may run as root", csc(map[string]any{"run_as_non_root": false}),
			[]string{c0 + ".security_context.run_as_non_root"}, "root"},
		{"container runs as root", csc(map[string]any{"run_as_non_root": false, "run_as_user": 0}),
			[]string{c0 + ".security_context.run_as_non_root", c0 + ".security_context.run_as_user"}, "root"},
		{"container root under a permissive pod", sets("security_context", map[string]any{"run_as_non_root": false},
			"containers.0.security_context", map[string]any{"run_as_user": 0}),
			[]string{c0 + ".security_context.run_as_user", "pod_template.security_context.run_as_non_root"}, "root"},
		{"container seccomp unconfined", csc(map[string]any{"seccomp_profile": map[string]any{"type": "Unconfined"}}),
			[]string{c0 + ".security_context.seccomp_profile.type"}, "syscall"},
		{"init container loosened", set("init_containers", []any{with(container("setup"), "security_context", map[string]any{"allow_privilege_escalation": true})}),
			[]string{"pod_template.init_containers[0].security_context.allow_privilege_escalation"}, "setuid"},
		{"host network via override", set("pod_spec_overrides", `{"hostNetwork": true}`),
			[]string{"pod_template.pod_spec_overrides"}, "bypasses NetworkPolicies"},
		{"host PID and IPC via override", set("pod_spec_overrides", "hostPID: true\nhostIPC: true\n"),
			[]string{"pod_template.pod_spec_overrides", "pod_template.pod_spec_overrides"}, "node"},
		{"hostPath via override", set("pod_spec_overrides", `{"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}`),
			[]string{"pod_template.pod_spec_overrides"}, "node's files"},
		{"AppArmor unconfined via override", set("pod_spec_overrides",
			`{"securityContext": {"appArmorProfile": {"type": "Unconfined"}}, "containers": [{"name": "main", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}]}`),
			[]string{"pod_template.pod_spec_overrides", "pod_template.pod_spec_overrides"}, "AppArmor"},
		{"unmasked proc via override", set("pod_spec_overrides", `{"containers": [{"name": "main", "securityContext": {"procMount": "Unmasked"}}]}`),
			[]string{"pod_template.pod_spec_overrides"}, "/proc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := h.validate(tc.pod)
			if errs := diagStrings(ds, tfprotov6.DiagnosticSeverityError); len(errs) > 0 {
				t.Fatalf("loosening is an error, want a warning: %v", errs)
			}
			if got := diagPaths(ds, tfprotov6.DiagnosticSeverityWarning); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("warnings at %v, want %v", got, tc.want)
			}
			found := false
			for _, d := range ds {
				if d.Severity == tfprotov6.DiagnosticSeverityWarning && strings.Contains(d.Detail, tc.risk) {
					found = true
				}
			}
			if !found {
				t.Errorf("no warning names the risk %q: %v", tc.risk, diagStrings(ds, tfprotov6.DiagnosticSeverityWarning))
			}
		})
	}
}

// TestHardenedValuesDoNotWarn: spelling out the hardened values (or
// tightening further) is not a warning.
func TestHardenedValuesDoNotWarn(t *testing.T) {
	h := newHarness(t)
	pod := sets(
		"runtime_class_name", "gvisor",
		"automount_service_account_token", false,
		"security_context", map[string]any{"run_as_non_root": true, "run_as_user": 1000, "seccomp_profile": map[string]any{"type": "RuntimeDefault"}},
		"containers.0.security_context", map[string]any{
			"allow_privilege_escalation": false, "privileged": false, "read_only_root_filesystem": true,
			"run_as_non_root": true, "run_as_user": 1000,
			"capabilities":    map[string]any{"drop": []any{"ALL", "NET_RAW"}},
			"seccomp_profile": map[string]any{"type": "Localhost", "localhost_profile": "strict.json"},
		},
		"pod_spec_overrides", `{"hostNetwork": false, "hostUsers": false}`,
	)
	if ds := h.validate(pod); len(ds) > 0 {
		t.Errorf("diagnostics: %v %v", diagStrings(ds, tfprotov6.DiagnosticSeverityError), diagStrings(ds, tfprotov6.DiagnosticSeverityWarning))
	}
}

// TestPlannedDefaultsDoNotWarn: Validate may also be given the plan (from
// ModifyPlan), where the defaults are filled in; they are the hardened
// values and must not warn.
func TestPlannedDefaultsDoNotWarn(t *testing.T) {
	h := newHarness(t)
	planned := h.plan(with(minimalPod(), "init_containers", []any{container("setup")}))
	if ds := Validate(context.Background(), path.Root("pod_template"), planned, Options{}); len(ds) > 0 {
		t.Errorf("diagnostics on the planned defaults: %v", ds)
	}
}
