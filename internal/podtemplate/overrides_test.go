package podtemplate

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	corev1 "k8s.io/api/core/v1"
)

// TestOverrideConflictsNameTheAttribute: the error tells the user which
// attribute to use instead, and where in the override the conflict is.
func TestOverrideConflictsNameTheAttribute(t *testing.T) {
	h := newHarness(t)
	for override, want := range map[string][]string{
		`{"runtimeClassName": "runc"}`:                                             {"runtimeClassName", "`runtime_class_name`"},
		`{"serviceAccount": "x"}`:                                                  {"serviceAccount", "`service_account_name`"},
		`{"securityContext": {"seccompProfile": {"type": "Unconfined"}}}`:          {"securityContext.seccompProfile", "`security_context.seccomp_profile`"},
		`{"containers": [{"name": "main", "env": [{"name": "A", "value": "1"}]}]}`: {`containers[name="main"].env`, "`containers[*].env`"},
		`{"initContainers": [{"name": "main", "restartPolicy": "Always"}]}`:        {`initContainers[name="main"]`, "not declared in `init_containers`"},
		`{"containers": [{"name": "main", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]}`: {
			`containers[name="main"].securityContext.capabilities`, "`containers[*].security_context.capabilities`"},
		`{"containers": [{"image": "x"}]}`:                           {"containers[0] has no name"},
		`{"ephemeralContainers": [{"name": "debug", "image": "x"}]}`: {"ephemeralContainers is not allowed"},
	} {
		t.Run(override, func(t *testing.T) {
			ds := h.validate(set("pod_spec_overrides", override))
			errs := strings.Join(diagStrings(ds, tfprotov6.DiagnosticSeverityError), "\n")
			for _, w := range want {
				if !strings.Contains(errs, w) {
					t.Errorf("error does not mention %q:\n%s", w, errs)
				}
			}
		})
	}
}

// TestFlattenOverrides covers how pod_spec_overrides reads back.
func TestFlattenOverrides(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const yamlOverride = "# keep my comments\noverhead:\n  cpu: 1000m\nhostname: agent\ncontainers:\n- name: main\n  stdin: true\n"
	planned := h.plan(set("pod_spec_overrides", yamlOverride))
	pt, diags := Expand(ctx, planned)
	if diags.HasError() {
		t.Fatal(diags)
	}
	live := serverRoundTrip(t, pt)
	if live.Spec.Overhead.Cpu().String() != "1" {
		t.Fatalf("server did not canonicalise the override's quantity: %v", live.Spec.Overhead)
	}

	overrides := func(o types.Object) types.String { return mustDecode[Model](t, o).PodSpecOverrides }

	t.Run("same meaning keeps the text", func(t *testing.T) {
		if got := overrides(mustFlatten(t, live, planned)); got.ValueString() != yamlOverride {
			t.Errorf("pod_spec_overrides = %q, want the configured text", got.ValueString())
		}
	})
	t.Run("drift reports the live values of the override's fields", func(t *testing.T) {
		changed := *live.DeepCopy()
		changed.Spec.Hostname = "other"
		changed.Spec.Subdomain = "not-declared" // not in the override: reported as well
		got := overrides(mustFlatten(t, serverRoundTrip(t, changed), planned)).ValueString()
		want := `{"containers":[{"name":"main","stdin":true}],"hostname":"other","overhead":{"cpu":"1"},"subdomain":"not-declared"}`
		if got != want {
			t.Errorf("pod_spec_overrides = %s\nwant %s", got, want)
		}
	})
	t.Run("reported without a prior override", func(t *testing.T) {
		// The configuration has no override, so every field the typed
		// schema cannot express is an out-of-band addition: the plan must
		// show it (and the exclusive apply removes it).
		plain := h.plan(minimalPod())
		got := overrides(mustFlatten(t, live, plain))
		want := `{"containers":[{"name":"main","stdin":true}],"hostname":"agent","overhead":{"cpu":"1"}}`
		if got.ValueString() != want {
			t.Errorf("pod_spec_overrides = %v\nwant %s", got, want)
		}
	})
	t.Run("import collects what the typed schema cannot express", func(t *testing.T) {
		got := overrides(mustFlatten(t, live, Null())).ValueString()
		want := `{"containers":[{"name":"main","stdin":true}],"hostname":"agent","overhead":{"cpu":"1"}}`
		if got != want {
			t.Errorf("pod_spec_overrides = %s\nwant %s", got, want)
		}
	})
	t.Run("import of a typed-only object has no override", func(t *testing.T) {
		pt, _ := Expand(ctx, h.plan(fullPodWithoutOverrides()))
		got := overrides(mustFlatten(t, serverRoundTrip(t, pt), Null()))
		if !got.IsNull() {
			t.Errorf("pod_spec_overrides = %v, want null", got)
		}
	})
}

func fullPodWithoutOverrides() map[string]any {
	pod := fullPod()
	delete(pod, "pod_spec_overrides")
	// Without the override the proxy is a plain init container: no probes,
	// and the claim template mount needs the harness's claim_templates.
	pod["init_containers"] = []any{container("setup")}
	pod["containers"].([]any)[0].(map[string]any)["volume_mounts"] = []any{
		map[string]any{"name": "scratch", "mount_path": "/tmp"},
	}
	return pod
}

// TestMergeByName: typed entries keep their order, merged with the
// override's entry of the same name; the override's new entries follow.
func TestMergeByName(t *testing.T) {
	typed := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "a", Image: "a"}, {Name: "b", Image: "b"}},
		Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
	out, err := mergeOverrides(typed, `{"containers": [{"name": "b", "tty": true}], "volumes": [{"name": "w", "emptyDir": {}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Containers) != 2 || out.Containers[0].Name != "a" || out.Containers[1].Name != "b" || !out.Containers[1].TTY || out.Containers[1].Image != "b" {
		t.Errorf("containers = %+v", out.Containers)
	}
	if len(out.Volumes) != 2 || out.Volumes[0].EmptyDir == nil || out.Volumes[1].Name != "w" || out.Volumes[1].EmptyDir == nil {
		t.Errorf("volumes = %+v (an empty emptyDir in the override must survive)", out.Volumes)
	}
}

// TestParseOverridesNormalises: JSON and YAML with the same meaning give the
// same normalised form; quantities are canonical; false/empty drop out.
func TestParseOverridesNormalises(t *testing.T) {
	a, err := parseOverrides(`{"overhead": {"memory": "1024Mi"}, "hostNetwork": false, "hostAliases": []}`)
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseOverrides("overhead:\n  memory: 1Gi\n")
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(a) != jsonOf(b) || jsonOf(a) != `{"overhead":{"memory":"1Gi"}}` {
		t.Errorf("%s vs %s", jsonOf(a), jsonOf(b))
	}
	for _, s := range []string{"", "   ", "null", "{}"} {
		if m, err := parseOverrides(s); err != nil || len(m) != 0 {
			t.Errorf("%q: %v %v", s, m, err)
		}
	}
}
