package sandboxclaim

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	extv1beta1 "sigs.k8s.io/agent-sandbox/extensions/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/blueprint"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

func baseModel() resourceModel {
	return resourceModel{
		Metadata: object.Metadata{DataSourceMetadata: object.DataSourceMetadata{
			Name: types.StringValue("session"), Namespace: types.StringValue("agents"),
			Labels: types.MapNull(types.StringType), Annotations: types.MapNull(types.StringType),
		}},
		claimModel: claimModel{
			WarmPool:                types.StringValue("pool"),
			ShutdownTime:            types.StringNull(),
			TTLSecondsAfterFinished: types.Int64Null(),
			ShutdownPolicy:          types.StringValue("Retain"),
			Env:                     types.ListNull(envType),
			AdditionalPodMetadata:   types.ObjectNull(podMetadataType.AttrTypes),
		},
		WaitForReady: types.BoolValue(true),
	}
}

func envList(t *testing.T, kv ...string) types.List {
	t.Helper()
	var elems []attr.Value
	for i := 0; i+2 < len(kv)+1; i += 3 {
		container := types.StringNull()
		if kv[i+2] != "" {
			container = types.StringValue(kv[i+2])
		}
		o, d := types.ObjectValue(envType.AttrTypes, map[string]attr.Value{
			"name": types.StringValue(kv[i]), "value": types.StringValue(kv[i+1]), "container_name": container,
		})
		if d.HasError() {
			t.Fatal(d)
		}
		elems = append(elems, o)
	}
	l, d := types.ListValue(envType, elems)
	if d.HasError() {
		t.Fatal(d)
	}
	return l
}

func podMeta(t *testing.T, labels map[string]string) types.Object {
	t.Helper()
	l := types.MapNull(types.StringType)
	if labels != nil {
		l, _ = types.MapValueFrom(context.Background(), types.StringType, labels)
	}
	o, d := types.ObjectValue(podMetadataType.AttrTypes, map[string]attr.Value{"labels": l, "annotations": types.MapNull(types.StringType)})
	if d.HasError() {
		t.Fatal(d)
	}
	return o
}

func TestBuildMinimal(t *testing.T) {
	obj, diags := build(context.Background(), baseModel())
	if diags.HasError() {
		t.Fatal(diags)
	}
	got := fmt.Sprint(obj.Object["spec"])
	// The policy explicitly, nothing else: no empty env the controller's
	// adoption Update would drop again.
	want := fmt.Sprint(map[string]any{
		"warmPoolRef": map[string]any{"name": "pool"},
		"lifecycle":   map[string]any{"shutdownPolicy": "Retain"},
	})
	if got != want {
		t.Errorf("spec = %s\nwant   %s", got, want)
	}
}

func TestBuildEverything(t *testing.T) {
	m := baseModel()
	m.ShutdownTime = types.StringValue("2030-01-02T17:04:05+02:00")
	m.TTLSecondsAfterFinished = types.Int64Value(0)
	m.ShutdownPolicy = types.StringValue("Delete")
	m.Env = envList(t, "A", "1", "", "B", "2", "sidecar")
	m.AdditionalPodMetadata = podMeta(t, map[string]string{"sandbox.users.io/team": "a"})
	obj, diags := build(context.Background(), m)
	if diags.HasError() {
		t.Fatal(diags)
	}
	spec := obj.Object["spec"].(map[string]any)
	// The user's spelling of the instant is what is sent.
	if got, _, _ := unstructured.NestedString(spec, "lifecycle", "shutdownTime"); got != "2030-01-02T17:04:05+02:00" {
		t.Errorf("shutdownTime = %q", got)
	}
	if got, found, _ := unstructured.NestedInt64(spec, "lifecycle", "ttlSecondsAfterFinished"); !found || got != 0 {
		t.Errorf("ttl = %d (found %v): zero is a value", got, found)
	}
	if got := fmt.Sprint(spec["env"]); got != "[map[name:A value:1] map[containerName:sidecar name:B value:2]]" {
		t.Errorf("env = %s", got)
	}
	if got := fmt.Sprint(spec["additionalPodMetadata"]); got != "map[labels:map[sandbox.users.io/team:a]]" {
		t.Errorf("additionalPodMetadata = %s", got)
	}
}

func liveClaim(spec, status map[string]any) *unstructured.Unstructured {
	u := Kind.New()
	u.SetName("session")
	u.SetNamespace("agents")
	u.SetGeneration(3)
	u.Object["spec"] = spec
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestFlattenRoundTripsWhatWasBuilt(t *testing.T) {
	m := baseModel()
	m.ShutdownTime = types.StringValue("2030-01-02T17:04:05+02:00")
	m.Env = envList(t, "A", "1", "")
	m.AdditionalPodMetadata = podMeta(t, map[string]string{"sandbox.users.io/team": "a"})
	obj, _ := build(context.Background(), m)
	got := m
	if diags := flatten(context.Background(), obj, &got, "agentsandbox"); diags.HasError() {
		t.Fatal(diags)
	}
	for name, pair := range map[string][2]attr.Value{
		"shutdown_time": {got.ShutdownTime, m.ShutdownTime}, "env": {got.Env, m.Env},
		"additional_pod_metadata": {got.AdditionalPodMetadata, m.AdditionalPodMetadata},
		"ttl":                     {got.TTLSecondsAfterFinished, m.TTLSecondsAfterFinished}, "policy": {got.ShutdownPolicy, m.ShutdownPolicy},
	} {
		if !pair[0].Equal(pair[1]) {
			t.Errorf("%s = %v, want %v", name, pair[0], pair[1])
		}
	}
}

func TestFlattenTime(t *testing.T) {
	prior := types.StringValue("2030-01-02T17:04:05+02:00")
	for _, tc := range []struct {
		live  string
		prior types.String
		want  types.String
	}{
		// A controller re-encoding the claim writes UTC: same instant, kept.
		{"2030-01-02T15:04:05Z", prior, prior},
		// Fractions are dropped by such a re-encoding: still the same.
		{"2030-01-02T15:04:05Z", types.StringValue("2030-01-02T15:04:05.5Z"), types.StringValue("2030-01-02T15:04:05.5Z")},
		// Another instant is drift.
		{"2030-01-02T15:04:06Z", prior, types.StringValue("2030-01-02T15:04:06Z")},
		// Set out of band, or removed.
		{"2031-01-01T00:00:00Z", types.StringNull(), types.StringValue("2031-01-01T00:00:00Z")},
		{"", prior, types.StringNull()},
	} {
		if got := tfvalues.Time(tc.live, tc.prior); !got.Equal(tc.want) {
			t.Errorf("tfvalues.Time(%q, %v) = %v, want %v", tc.live, tc.prior, got, tc.want)
		}
	}
}

func TestFlattenEmptyVersusAbsent(t *testing.T) {
	ctx := context.Background()
	emptyEnv, _ := types.ListValue(envType, nil)
	emptyLabels := podMeta(t, map[string]string{})
	live := liveClaim(map[string]any{"warmPoolRef": map[string]any{"name": "pool"}, "env": []any{}}, nil)

	// Written as [] / {}: read back as such, though the server may drop them.
	m := baseModel()
	m.Env, m.AdditionalPodMetadata = emptyEnv, emptyLabels
	if flatten(ctx, live, &m, "agentsandbox"); !m.Env.Equal(emptyEnv) || !m.AdditionalPodMetadata.Equal(emptyLabels) {
		t.Errorf("env = %v, additional_pod_metadata = %v; want the configured empty values", m.Env, m.AdditionalPodMetadata)
	}
	// Not written: null, never an empty value.
	m = baseModel()
	if flatten(ctx, live, &m, "agentsandbox"); !m.Env.IsNull() || !m.AdditionalPodMetadata.IsNull() {
		t.Errorf("env = %v, additional_pod_metadata = %v; want null", m.Env, m.AdditionalPodMetadata)
	}
	// No lifecycle at all: the API's default policy.
	if m.ShutdownPolicy.ValueString() != "Retain" || !m.ShutdownTime.IsNull() || !m.TTLSecondsAfterFinished.IsNull() {
		t.Errorf("lifecycle = %v %v %v", m.ShutdownPolicy, m.ShutdownTime, m.TTLSecondsAfterFinished)
	}
	// Added out of band: shown, so that the plan removes them.
	live = liveClaim(map[string]any{"warmPoolRef": map[string]any{"name": "pool"},
		"env": []any{map[string]any{"name": "X", "value": "1"}}, "additionalPodMetadata": map[string]any{"labels": map[string]any{"a/b": "c"}}}, nil)
	m = baseModel()
	flatten(ctx, live, &m, "agentsandbox")
	if len(m.Env.Elements()) != 1 || m.AdditionalPodMetadata.IsNull() {
		t.Errorf("env = %v, additional_pod_metadata = %v; want the additions", m.Env, m.AdditionalPodMetadata)
	}
}

func TestFlattenStatus(t *testing.T) {
	live := liveClaim(map[string]any{"warmPoolRef": map[string]any{"name": "pool"}}, map[string]any{
		"sandbox":    map[string]any{"name": "pool-x2x", "podIPs": []any{"10.0.0.7"}},
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "DependenciesReady", "observedGeneration": int64(3), "lastTransitionTime": "2030-01-01T00:00:00Z", "message": ""}},
	})
	m := baseModel()
	m.WaitForReady = types.BoolNull() // as after an import
	flatten(context.Background(), live, &m, "agentsandbox")
	if m.SandboxName.ValueString() != "pool-x2x" || !m.Ready.ValueBool() || len(m.PodIPs.Elements()) != 1 || !m.WaitForReady.ValueBool() {
		t.Errorf("sandbox %v ready %v ips %v wait %v", m.SandboxName, m.Ready, m.PodIPs, m.WaitForReady)
	}
	// Before anything is bound: empty name and list, not null.
	live = liveClaim(map[string]any{"warmPoolRef": map[string]any{"name": "pool"}}, nil)
	flatten(context.Background(), live, &m, "agentsandbox")
	if m.SandboxName.ValueString() != "" || m.SandboxName.IsNull() || m.PodIPs.IsNull() || m.Ready.ValueBool() {
		t.Errorf("sandbox %v ready %v ips %v", m.SandboxName, m.Ready, m.PodIPs)
	}
}

func TestClaimReady(t *testing.T) {
	cond := func(status, reason string, gen int64) map[string]any {
		return map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": status, "reason": reason,
			"message": "the message", "observedGeneration": gen, "lastTransitionTime": "2030-01-01T00:00:00Z"}}}
	}
	for _, tc := range []struct {
		name   string
		status map[string]any
		ready  bool
		reason string
		fails  string
	}{
		{"ready", cond("True", "DependenciesReady", 3), true, "", ""},
		{"no condition", nil, false, "no Ready condition", ""},
		{"stale True", cond("True", "DependenciesReady", 2), false, "generation 3", ""},
		{"stale failure does not fail", cond("False", "WarmPoolNotFound", 2), false, "generation 3", ""},
		{"transient", cond("False", "SandboxNotReady", 3), false, "Ready=False (SandboxNotReady): the message", ""},
		{"adoption race", cond("False", "AdoptionConflict", 3), false, "AdoptionConflict", ""},
		{"pool missing", cond("False", "WarmPoolNotFound", 3), false, "", "WarmPoolNotFound"},
		{"metadata refused", cond("False", "InvalidMetadata", 3), false, "", "InvalidMetadata"},
		{"expired", cond("False", "ClaimExpired", 3), false, "", "ClaimExpired"},
		// The controller recovers from a missing template by itself
		// (within a minute on v0.5.x): the wait goes on, and a timeout
		// names the reason and what to do.
		{"template missing", cond("False", "TemplateNotFound", 3), false, "Ready=False (TemplateNotFound): the message; the controller retries by itself", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready, reason, err := claimReady(liveClaim(map[string]any{"warmPoolRef": map[string]any{"name": "pool"}}, tc.status), nil, podMetadataWant{})
			if tc.fails != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fails) {
					t.Fatalf("err = %v, want a failure with %s", err, tc.fails)
				}
				return
			}
			if err != nil || ready != tc.ready || !strings.Contains(reason, tc.reason) {
				t.Errorf("ready=%v reason=%q err=%v; want %v, %q", ready, reason, err, tc.ready, tc.reason)
			}
		})
	}
}

func TestEveryTerminalReasonSaysWhatToDo(t *testing.T) {
	for reason, hint := range terminalReasons {
		if len(hint) < 40 {
			t.Errorf("%s: hint %q is too thin to act on", reason, hint)
		}
	}
}

func TestAppliedFingerprint(t *testing.T) {
	ctx := context.Background()
	a := baseModel()
	b := baseModel()
	b.Env, _ = types.ListValue(envType, nil) // [] is no variables, like null
	fa, _ := appliedOf(ctx, a)
	fb, _ := appliedOf(ctx, b)
	if fa != fb {
		t.Errorf("null and [] env differ: %v %v", fa, fb)
	}
	b.Env = envList(t, "TOKEN", "secret", "")
	fb, _ = appliedOf(ctx, b)
	if fb.Env == "" || fb.Env == fa.Env || strings.Contains(fb.Env, "secret") {
		t.Errorf("env fingerprint = %q", fb.Env)
	}
	b.WarmPool = types.StringValue("other")
	fb, _ = appliedOf(ctx, b)
	if fb.WarmPool != "other" {
		t.Errorf("warm pool = %q", fb.WarmPool)
	}
}

// TestClaimReadyForwardedCondition: v0.5.x copy the sandbox's Ready
// condition onto the claim, observedGeneration included (the sandbox's
// generation, 5 here, not the claim's 3 after an update). The wait then
// asks the sandbox whether that condition is current and carries the
// claim's pod metadata.
func TestClaimReadyForwardedCondition(t *testing.T) {
	readyCond := map[string]any{"type": "Ready", "status": "True", "reason": "DependenciesReady", "message": "",
		"observedGeneration": int64(2), "lastTransitionTime": "2030-01-01T00:00:00Z"}
	claim := liveClaim(map[string]any{"warmPoolRef": map[string]any{"name": "pool"}}, map[string]any{
		"sandbox":    map[string]any{"name": "pool-x2x"},
		"conditions": []any{readyCond},
	})
	sandbox := func(gen int64, cond map[string]any, labels map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "pool-x2x", "generation": gen},
			"spec":     map[string]any{"podTemplate": map[string]any{"metadata": map[string]any{"labels": labels}}},
			"status":   map[string]any{"conditions": []any{cond}},
		}}
		return u
	}
	staleCond := map[string]any{"type": "Ready", "status": "True", "reason": "DependenciesReady", "observedGeneration": int64(1), "lastTransitionTime": "2030-01-01T00:00:00Z"}
	want := podMetadataWant{labels: map[string]string{"sandbox.users.io/session": "s2"}, removedLabels: []string{"sandbox.users.io/old"}}
	for _, tc := range []struct {
		name   string
		sb     *unstructured.Unstructured
		want   podMetadataWant
		ready  bool
		reason string
	}{
		{"lifecycle change: the sandbox's condition is current", sandbox(2, readyCond, nil), podMetadataWant{}, true, ""},
		{"pod labels copied", sandbox(2, readyCond, map[string]any{"sandbox.users.io/session": "s2"}), want, true, ""},
		{"pod label not yet copied", sandbox(2, readyCond, map[string]any{"sandbox.users.io/session": "s1"}), want, false, "not yet copied pod label sandbox.users.io/session"},
		{"pod label not yet removed", sandbox(2, readyCond, map[string]any{"sandbox.users.io/session": "s2", "sandbox.users.io/old": "x"}), want, false, "not yet removed pod label sandbox.users.io/old"},
		{"sandbox changed since (its metadata synced)", sandbox(3, readyCond, nil), podMetadataWant{}, true, ""},
		{"claim behind its sandbox", sandbox(1, staleCond, nil), podMetadataWant{}, false, "does not yet show its sandbox's Ready condition"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(name string) (*unstructured.Unstructured, error) {
				if name != "pool-x2x" {
					t.Errorf("read sandbox %q", name)
				}
				return tc.sb, nil
			}
			ready, reason, err := claimReady(claim, get, tc.want)
			if err != nil || ready != tc.ready || !strings.Contains(reason, tc.reason) {
				t.Errorf("ready=%v reason=%q err=%v; want %v, %q", ready, reason, err, tc.ready, tc.reason)
			}
		})
	}
	// Releases that write the claim's own generation (v1.0, upstream main
	// 365a29c8): current by the claim, and still checked against the
	// sandbox for the pod metadata.
	v10 := map[string]any{"type": "Ready", "status": "True", "reason": "DependenciesReady", "message": "",
		"observedGeneration": int64(3), "lastTransitionTime": "2030-01-01T00:00:00Z"}
	claim10 := liveClaim(map[string]any{"warmPoolRef": map[string]any{"name": "pool"}}, map[string]any{
		"sandbox": map[string]any{"name": "pool-x2x"}, "conditions": []any{v10},
	})
	get := func(string) (*unstructured.Unstructured, error) { return sandbox(2, readyCond, nil), nil }
	if ready, reason, err := claimReady(claim10, get, podMetadataWant{}); !ready || err != nil {
		t.Errorf("v1.0 condition: ready=%v reason=%q err=%v", ready, reason, err)
	}
	if ready, reason, _ := claimReady(claim10, get, want); ready || !strings.Contains(reason, "not yet copied") {
		t.Errorf("v1.0 condition, metadata not yet on the sandbox: ready=%v reason=%q", ready, reason)
	}

	// Without the sandbox (Read, the data source) the forwarded condition
	// is what `ready` shows.
	c, _ := object.Decode[extv1beta1.SandboxClaim](Kind, claim)
	if st := readStatus(c); !st.ready || !st.forwarded {
		t.Errorf("readStatus of a forwarded True condition: %+v", st)
	}
}

func TestWantPodMetadata(t *testing.T) {
	obj := liveClaim(map[string]any{"additionalPodMetadata": map[string]any{"labels": map[string]any{"a/b": "2"}}}, nil)
	prior := liveClaim(map[string]any{"additionalPodMetadata": map[string]any{
		"labels": map[string]any{"a/b": "1", "a/c": "x"}, "annotations": map[string]any{"n": "v"}}}, nil)
	w := wantPodMetadata(obj, prior)
	if fmt.Sprint(w) != fmt.Sprint(podMetadataWant{labels: map[string]string{"a/b": "2"}, removedLabels: []string{"a/c"}, removedAnnotations: []string{"n"}}) {
		t.Errorf("got %+v", w)
	}
}

// TestDerivedTypesFitTheModels: the object types derived from the schema
// read into, and convert back from, the models the code uses.
func TestDerivedTypesFitTheModels(t *testing.T) {
	ctx := context.Background()
	if err := tfvalues.CheckModel(ctx, envType, &envModel{}); err != nil {
		t.Error(err)
	}
	if err := tfvalues.CheckModel(ctx, podMetadataType, &podMetadataModel{}); err != nil {
		t.Error(err)
	}
}

// TestDataSourceVolumeClaimTemplates: the data source shows a claim's volume
// claim templates as another client wrote them (no configuration to take a
// spelling from), and null when it has none.
func TestDataSourceVolumeClaimTemplates(t *testing.T) {
	ctx := context.Background()
	live := liveClaim(map[string]any{
		"warmPoolRef": map[string]any{"name": "pool"},
		"volumeClaimTemplates": []any{map[string]any{
			"metadata": map[string]any{"name": "workspace", "labels": map[string]any{"team": "a"}},
			"spec": map[string]any{
				"accessModes":      []any{"ReadWriteOnce"},
				"storageClassName": "fast",
				"resources":        map[string]any{"requests": map[string]any{"storage": "1G"}},
			},
		}},
	}, nil)
	var m dataSourceModel
	if diags := flattenDataSource(ctx, live, &m); diags.HasError() {
		t.Fatal(diags)
	}
	var got []blueprint.VolumeClaimTemplateModel
	if diags := m.VolumeClaimTemplates.ElementsAs(ctx, &got, false); diags.HasError() {
		t.Fatal(diags)
	}
	if len(got) != 1 {
		t.Fatalf("volume_claim_templates = %v, want one", m.VolumeClaimTemplates)
	}
	v := got[0]
	var res blueprint.ClaimResourcesModel
	var req blueprint.ClaimRequestsModel
	if d := v.Resources.As(ctx, &res, basetypesObjectAsOptions); d.HasError() {
		t.Fatal(d)
	}
	if d := res.Requests.As(ctx, &req, basetypesObjectAsOptions); d.HasError() {
		t.Fatal(d)
	}
	if v.Name.ValueString() != "workspace" || v.StorageClassName.ValueString() != "fast" || req.Storage.ValueString() != "1G" ||
		fmt.Sprint(v.AccessModes) != `["ReadWriteOnce"]` || fmt.Sprint(v.Labels) != `{"team":"a"}` || !v.VolumeMode.IsNull() {
		t.Errorf("volume_claim_templates[0] = %+v, storage %s", v, req.Storage)
	}

	none := liveClaim(map[string]any{"warmPoolRef": map[string]any{"name": "pool"}}, nil)
	if diags := flattenDataSource(ctx, none, &m); diags.HasError() {
		t.Fatal(diags)
	}
	if !m.VolumeClaimTemplates.IsNull() || !m.VolumeClaimTemplates.ElementType(ctx).Equal(blueprint.VolumeClaimTemplateType) {
		t.Errorf("no templates: volume_claim_templates = %v (%s), want a null list of the schema's type", m.VolumeClaimTemplates, m.VolumeClaimTemplates.ElementType(ctx))
	}
}

// TestFlattenServiceFQDN: the claim's status.sandbox.serviceFQDN (v1.0.1 and
// later) is read into service_fqdn by the resource and the data source; a
// claim without it (v0.5.x, which have no such field; nothing bound yet; a
// sandbox without a Service) reads as null, not as an empty name.
func TestFlattenServiceFQDN(t *testing.T) {
	ctx := context.Background()
	spec := map[string]any{"warmPoolRef": map[string]any{"name": "pool"}}
	ready := []any{map[string]any{"type": "Ready", "status": "True", "reason": "DependenciesReady", "observedGeneration": int64(3), "lastTransitionTime": "2030-01-01T00:00:00Z", "message": ""}}
	const fqdn = "pool-x2x.agents.svc.cluster.local"
	for _, tc := range []struct {
		name   string
		status map[string]any
		want   types.String
	}{
		{"v1.0.1 and later, with a Service", map[string]any{
			"sandbox":    map[string]any{"name": "pool-x2x", "podIPs": []any{"10.0.0.7"}, "serviceFQDN": fqdn},
			"conditions": ready,
		}, types.StringValue(fqdn)},
		{"v0.5.x: name and pod IPs only", map[string]any{
			"sandbox":    map[string]any{"name": "pool-x2x", "podIPs": []any{"10.0.0.7"}},
			"conditions": ready,
		}, types.StringNull()},
		{"written empty", map[string]any{
			"sandbox": map[string]any{"name": "pool-x2x", "serviceFQDN": ""},
		}, types.StringNull()},
		{"no status yet", nil, types.StringNull()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := liveClaim(spec, tc.status)
			m := baseModel()
			m.ServiceFQDN = types.StringValue("stale.agents.svc.cluster.local") // replaced, whatever it was
			if diags := flatten(ctx, live, &m, "agentsandbox"); diags.HasError() {
				t.Fatal(diags)
			}
			if !m.ServiceFQDN.Equal(tc.want) {
				t.Errorf("resource: service_fqdn = %v, want %v", m.ServiceFQDN, tc.want)
			}
			var d dataSourceModel
			if diags := flattenDataSource(ctx, live, &d); diags.HasError() {
				t.Fatal(diags)
			}
			if !d.ServiceFQDN.Equal(tc.want) {
				t.Errorf("data source: service_fqdn = %v, want %v", d.ServiceFQDN, tc.want)
			}
		})
	}
}

// TestModifyPlanServiceFQDN: an in-place update keeps the claim's sandbox,
// so the plan keeps the service FQDN the state has (known while planning);
// a replacement, or a state without one (not reported yet, or a release
// before v1.0.1), leaves it unknown for the apply to fill in.
func TestModifyPlanServiceFQDN(t *testing.T) {
	ctx := context.Background()
	r := NewResource()
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	sch := sr.Schema
	tt, d := sch.TypeAtPath(ctx, path.Root("timeouts"))
	if d.HasError() {
		t.Fatal(d)
	}
	timeoutsType := tt.(attr.TypeWithAttributeTypes).AttributeTypes()
	const fqdn = "pool-a-x2x.agents.svc.cluster.local"
	state := func(fqdn types.String) resourceModel {
		m := baseModel()
		m.ID = types.StringValue("agents/session")
		m.ForceConflicts = types.BoolValue(false)
		m.VolumeClaimTemplates = types.ListNull(blueprint.VolumeClaimTemplateType)
		m.SandboxName = types.StringValue("pool-a-x2x")
		m.PodIPs, _ = types.ListValueFrom(ctx, types.StringType, []string{"10.0.0.7"})
		m.ServiceFQDN = fqdn
		m.Ready = types.BoolValue(true)
		m.Timeouts.Object = types.ObjectNull(timeoutsType)
		return m
	}
	// proposed is what the framework hands ModifyPlan: the configuration's
	// change, the computed status unknown because the plan differs.
	proposed := func(prior resourceModel, change func(*resourceModel)) resourceModel {
		m := prior
		change(&m)
		m.SandboxName, m.ServiceFQDN, m.Ready = types.StringUnknown(), types.StringUnknown(), types.BoolUnknown()
		m.PodIPs = types.ListUnknown(types.StringType)
		return m
	}
	later := func(m *resourceModel) { m.ShutdownTime = types.StringValue("2040-01-01T00:00:00Z") }
	otherPool := func(m *resourceModel) { m.WarmPool = types.StringValue("other") }
	for _, tc := range []struct {
		name   string
		prior  types.String
		change func(*resourceModel)
		want   types.String
	}{
		{"in place, reported", types.StringValue(fqdn), later, types.StringValue(fqdn)},
		{"in place, not reported", types.StringNull(), later, types.StringUnknown()},
		{"replaced", types.StringValue(fqdn), otherPool, types.StringUnknown()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prior := state(tc.prior)
			plan := proposed(prior, tc.change)
			req := resource.ModifyPlanRequest{
				State: tfsdk.State{Schema: sch}, Plan: tfsdk.Plan{Schema: sch}, Config: tfsdk.Config{Schema: sch},
			}
			if d := req.State.Set(ctx, &prior); d.HasError() {
				t.Fatal(d)
			}
			if d := req.Plan.Set(ctx, &plan); d.HasError() {
				t.Fatal(d)
			}
			resp := resource.ModifyPlanResponse{Plan: req.Plan}
			r.(resource.ResourceWithModifyPlan).ModifyPlan(ctx, req, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatal(resp.Diagnostics)
			}
			var got types.String
			if d := resp.Plan.GetAttribute(ctx, path.Root("service_fqdn"), &got); d.HasError() {
				t.Fatal(d)
			}
			if !got.Equal(tc.want) {
				t.Errorf("planned service_fqdn = %v, want %v", got, tc.want)
			}
		})
	}
}
