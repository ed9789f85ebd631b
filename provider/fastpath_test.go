package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/big"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
)

// The fast path (package fastpath) answers the plan of an unchanged
// resource without the framework. These tests plan every resource type of
// the provider twice, once through the framework's server alone and once
// through the server Terraform gets (provider.NewProtocol6), and require
// the same answer field by field: on no-change requests, which the fast
// path must answer itself (so that the comparison is not vacuous), and on
// requests where something does change, which it must leave to the
// framework.

// fastpathObjects is a realistic configuration of every resource type.
var fastpathObjects = map[string]map[string]any{
	"agentsandbox_sandbox_template": {
		"name": "set-1", "namespace": "bench", "network_policy_management": "Unmanaged",
		"labels": map[string]any{"app.kubernetes.io/part-of": "bench"},
		"pod_template": map[string]any{
			"labels":           map[string]any{"app.kubernetes.io/component": "execution-sandbox"},
			"security_context": map[string]any{"run_as_user": 10001},
			"containers": []any{pt.Container(map[string]any{
				"ports": []any{map[string]any{"container_port": 8888}},
				"env":   []any{map[string]any{"name": "SET", "value": "set-1"}},
			})},
		},
	},
	"agentsandbox_warm_pool": {
		"name": "set-1", "namespace": "bench", "template": "set-1", "wait_for_ready": false,
		"labels": map[string]any{"app.kubernetes.io/part-of": "bench"},
	},
	"agentsandbox_network_policy": {
		"name": "set-1", "namespace": "bench", "ingress": []any{},
		"labels":       map[string]any{"app.kubernetes.io/part-of": "bench"},
		"pod_selector": map[string]any{"match_labels": map[string]any{"bench/set": "set-1"}},
	},
	"agentsandbox_sandbox": {
		"name": "workspace", "namespace": "agents", "service": true,
		"pod_template": map[string]any{"containers": []any{pt.Container(nil)}},
	},
	"agentsandbox_sandbox_claim": {
		"name": "session", "namespace": "agents", "warm_pool": "python",
	},
	"agentsandbox_controller": {
		"version": "v0.5.6", "manifest": string(bundleFile("v0.5.6/sandbox-with-extensions.yaml")),
	},
	"agentsandbox_sandbox_router": {
		"namespace": "routers", "replicas": 3, "authz_audiences": []any{"sandbox-router"},
		"allowed_clients": []any{map[string]any{"namespace": "agents"}},
	},
	"agentsandbox_gke_node_pool": {
		"location": "us-central1", "cluster": "agents", "name": "sandboxes", "machine_type": "e2-standard-4",
	},
	"agentsandbox_gke_addon": {
		"location": "us-central1", "cluster": "agents",
	},
	"agentsandbox_gke_pod_snapshots": {
		"location": "us-central1", "cluster": "agents",
	},
}

func bundleFile(name string) []byte {
	b, err := fs.ReadFile(bundles.FS(), name)
	if err != nil {
		panic(err)
	}
	return b
}

// fastpathServers returns the framework's server and the production one,
// both configured alike, with no environment.
func fastpathServers(t *testing.T) (framework tfprotov6.ProviderServer, fast *fastpath.Server, s *pt.Server) {
	t.Helper()
	noEnv := func(string) (string, bool) { return "", false }
	newP := func() *agentSandboxProvider { return &agentSandboxProvider{version: "test", lookupEnv: noEnv} }
	framework = providerserver.NewProtocol6(newP())()
	fast, err := newServer(newP())
	if err != nil {
		t.Fatal(err)
	}
	s = pt.New(t, New("test"))
	providerCfg := map[string]any{
		"kubernetes": map[string]any{"host": "https://127.0.0.1:1", "token": "t"},
		"gke":        map[string]any{"project": "agentsandbox-test", "access_token": "t"},
	}
	if errs := pt.Errors(s.ConfigureProvider(t, providerCfg)); len(errs) > 0 {
		t.Fatal(pt.Describe(errs))
	}
	cfg := pt.Dynamic(t, s.ProviderType(t), providerCfg)
	for _, srv := range []tfprotov6.ProviderServer{framework, fast} {
		resp, err := srv.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if errs := pt.Errors(resp.Diagnostics); len(errs) > 0 {
			t.Fatal(pt.Describe(errs))
		}
	}
	return framework, fast, s
}

// applied is a planned value with what only an apply knows (its unknown
// values) filled in with placeholders, as a state holds it.
func applied(t *testing.T, planned tftypes.Value) tftypes.Value {
	t.Helper()
	known, err := tftypes.Transform(planned, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		switch {
		case v.IsKnown():
			return v, nil
		case v.Type().Is(tftypes.String):
			return tftypes.NewValue(tftypes.String, "computed"), nil
		case v.Type().Is(tftypes.Bool):
			return tftypes.NewValue(tftypes.Bool, false), nil
		default:
			return tftypes.NewValue(v.Type(), nil), nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return known
}

// priorState is what a state holds after the object was created: the
// create plan, with what only the apply knows filled in, upgraded from its
// JSON form as Terraform does before planning.
func priorState(t *testing.T, srv tfprotov6.ProviderServer, s *pt.Server, typeName string, cfg map[string]any) tftypes.Value {
	t.Helper()
	typ := s.ResourceType(t, typeName)
	attrs, diags := s.PlanCreate(t, typeName, cfg)
	if errs := pt.Errors(diags); len(errs) > 0 {
		t.Fatalf("%s: %s", typeName, pt.Describe(errs))
	}
	known := applied(t, tftypes.NewValue(typ, attrs))
	raw, err := json.Marshal(jsonValue(t, known))
	if err != nil {
		t.Fatal(err)
	}
	up, err := srv.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: typeName, RawState: &tfprotov6.RawState{JSON: raw},
	})
	if err != nil || len(pt.Errors(up.Diagnostics)) > 0 {
		t.Fatalf("upgrade: %v %s", err, pt.Describe(up.Diagnostics))
	}
	v, err := up.UpgradedState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Equal(known) {
		t.Fatalf("%s: the upgraded state differs from the stored one", typeName)
	}
	return v
}

func jsonValue(t *testing.T, v tftypes.Value) any {
	t.Helper()
	if v.IsNull() {
		return nil
	}
	switch typ := v.Type(); {
	case typ.Is(tftypes.String):
		var s string
		_ = v.As(&s)
		return s
	case typ.Is(tftypes.Bool):
		var b bool
		_ = v.As(&b)
		return b
	case typ.Is(tftypes.Number):
		var f big.Float
		_ = v.As(&f)
		return json.Number(f.Text('g', -1))
	case typ.Is(tftypes.Object{}), typ.Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for k, e := range m {
			out[k] = jsonValue(t, e)
		}
		return out
	default:
		var l []tftypes.Value
		if err := v.As(&l); err != nil {
			t.Fatal(err)
		}
		out := []any{}
		for _, e := range l {
			out = append(out, jsonValue(t, e))
		}
		return out
	}
}

// withAttr returns obj with its top-level attribute name set to v.
func withAttr(t *testing.T, obj tftypes.Value, name string, v tftypes.Value) tftypes.Value {
	t.Helper()
	var attrs map[string]tftypes.Value
	if err := obj.As(&attrs); err != nil {
		t.Fatal(err)
	}
	if _, ok := attrs[name]; !ok {
		t.Fatalf("no attribute %q", name)
	}
	out := make(map[string]tftypes.Value, len(attrs)) // attrs is obj's own map
	for k, a := range attrs {
		out[k] = a
	}
	out[name] = v
	return tftypes.NewValue(obj.Type(), out)
}

// withPath returns v with the value at p replaced by nv.
func withPath(t *testing.T, v tftypes.Value, p *tftypes.AttributePath, nv tftypes.Value) tftypes.Value {
	t.Helper()
	found := false
	out, err := tftypes.Transform(v, func(at *tftypes.AttributePath, x tftypes.Value) (tftypes.Value, error) {
		if at.Equal(p) {
			found = true
			return nv, nil
		}
		return x, nil
	})
	if err != nil || !found {
		t.Fatalf("%s: %v (found: %v)", p, err, found)
	}
	return out
}

func dv(t *testing.T, typ tftypes.Type, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	d, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

// planCase is one PlanResourceChange request, as Terraform would send it.
type planCase struct {
	name               string
	prior, proposed    tftypes.Value
	config             map[string]any
	private            []byte
	fast               bool // the fast path must answer it
	either             bool // either may answer (only the answers must be equal)
	update             bool // an update: the framework plans a change
	wantDiags, replace bool // the framework's answer has diagnostics / a replacement (a control)
}

// comparePlans sends c to both servers and requires the same answer.
func comparePlans(t *testing.T, framework tfprotov6.ProviderServer, fast *fastpath.Server, s *pt.Server, typeName string, c planCase) {
	t.Helper()
	typ := s.ResourceType(t, typeName)
	// As Terraform's (cty's msgpack), an encoding of equal values gives
	// equal bytes; tftypes' encoding of maps is not ordered, so an
	// unchanged proposed state is sent as the prior state's bytes.
	prior := dv(t, typ, c.prior)
	proposed := prior
	if !c.proposed.Equal(c.prior) {
		proposed = dv(t, typ, c.proposed)
	}
	req := func() *tfprotov6.PlanResourceChangeRequest {
		return &tfprotov6.PlanResourceChangeRequest{
			TypeName:         typeName,
			PriorState:       prior,
			ProposedNewState: proposed,
			Config:           pt.Dynamic(t, typ, c.config),
			PriorPrivate:     c.private,
		}
	}
	want, err := framework.PlanResourceChange(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	fast0, _, _ := fastpath.Counts()
	got, err := fast.PlanResourceChange(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	fast1, _, _ := fastpath.Counts()
	if answered := fast1 > fast0; answered != c.fast && !c.either {
		t.Errorf("answered by the fast path: %v, want %v", answered, c.fast)
	}
	if (len(want.Diagnostics) > 0) != c.wantDiags {
		t.Errorf("control: the framework's diagnostics: %s", pt.Describe(want.Diagnostics))
	}
	if (len(want.RequiresReplace) > 0) != c.replace {
		t.Errorf("control: the framework's replacements: %v", want.RequiresReplace)
	}
	if g, w := diagStrings(got.Diagnostics), diagStrings(want.Diagnostics); g != w {
		t.Errorf("diagnostics:\n got  %s\n want %s", g, w)
	}
	if (got.PlannedState == nil) != (want.PlannedState == nil) {
		t.Fatalf("planned state: got %v, want %v", got.PlannedState, want.PlannedState)
	}
	if want.PlannedState != nil {
		gv, err1 := got.PlannedState.Unmarshal(typ)
		wv, err2 := want.PlannedState.Unmarshal(typ)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !gv.Equal(wv) {
			diffs, _ := gv.Diff(wv)
			t.Errorf("planned state differs: %v", diffs)
		}
		if c.fast && !c.update && !c.prior.IsNull() && !wv.Equal(c.proposed) {
			t.Errorf("control: the framework planned a change")
		}
	}
	if g, w := pathStrings(got.RequiresReplace), pathStrings(want.RequiresReplace); g != w {
		t.Errorf("requires replace: got %s, want %s", g, w)
	}
	if string(got.PlannedPrivate) != string(want.PlannedPrivate) {
		t.Errorf("planned private: got %q, want %q", got.PlannedPrivate, want.PlannedPrivate)
	}
	if (got.Deferred == nil) != (want.Deferred == nil) || (got.PlannedIdentity == nil) != (want.PlannedIdentity == nil) {
		t.Errorf("deferred/identity: got %v %v, want %v %v", got.Deferred, got.PlannedIdentity, want.Deferred, want.PlannedIdentity)
	}
}

func diagStrings(ds []*tfprotov6.Diagnostic) string {
	var out []string
	for _, d := range ds {
		out = append(out, fmt.Sprintf("%s|%s|%s|%s", d.Severity, pt.AttributePath(d.Attribute), d.Summary, d.Detail))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func pathStrings(ps []*tftypes.AttributePath) string {
	var out []string
	for _, p := range ps {
		out = append(out, pt.AttributePath(p))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// readMarker is a private state holding a read marker as package
// fastpath writes it, and with another key of the resource's own if
// another is set.
func readMarker(t *testing.T, typeName string, another bool) []byte {
	t.Helper()
	m, err := json.Marshal(map[string]any{
		"type":   typeName,
		"object": map[string]string{"v": "v1", "r": "things", "ns": "bench", "n": "set-1"},
		"uid":    "6f1c0d7e-1111-2222-3333-444455556666", "rv": "4711",
		"state_sha256":  strings.Repeat("ab", 32),
		"field_manager": "terraform-provider-agentsandbox", "binary": "a/b/c/d",
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string][]byte{fastpath.ReadMarkerKey: m}
	if another {
		keys["agentsandbox_import_read"] = []byte(`true`)
	}
	b, err := json.Marshal(keys)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

// TestFastPath_sameAnswerAsTheFramework: every resource type, unchanged and
// changed.
func TestFastPath_sameAnswerAsTheFramework(t *testing.T) {
	framework, fast, s := fastpathServers(t)
	ctx := context.Background()
	// The three types of a platform's bulk (the benchmark's sets) must be
	// answered by the fast path; the others may be, or may say why not.
	mustBeFast := map[string]bool{
		"agentsandbox_sandbox_template": true, "agentsandbox_warm_pool": true, "agentsandbox_network_policy": true,
		"agentsandbox_sandbox": true,
	}
	resources := (&agentSandboxProvider{}).Resources(ctx)
	if len(resources) != len(fastpathObjects) {
		t.Fatalf("the provider has %d resource types, the test configures %d", len(resources), len(fastpathObjects))
	}
	for typeName, cfg := range fastpathObjects {
		t.Run(typeName, func(t *testing.T) {
			ok, why := fast.Eligible(ctx, typeName)
			if mustBeFast[typeName] && !ok {
				t.Fatalf("not answered by the fast path: %s", why)
			}
			if !ok {
				t.Logf("not eligible: %s", why)
			}
			createOK, _ := fast.EligibleCreate(ctx, typeName)
			updateOK, updateWhy := fast.EligibleUpdate(ctx, typeName)
			if mustBeFast[typeName] && !updateOK {
				t.Fatalf("updates not answered by the fast path: %s", updateWhy)
			}
			typ := s.ResourceType(t, typeName)
			prior := priorState(t, framework, s, typeName, cfg)
			cases := []planCase{
				{name: "unchanged", prior: prior, proposed: prior, config: cfg, fast: ok},
				// A create whose proposed state is not its configuration
				// (placeholders in computed attributes): the create fast
				// path (fastpath_create_test.go) answers it when the type
				// is eligible.
				{name: "create", prior: tftypes.NewValue(typ, nil), proposed: prior, config: cfg, fast: createOK},
				// A destroy: the resource's ModifyPlan says nothing
				// (package fastpath's destroy.go).
				{name: "destroy", prior: prior, proposed: tftypes.NewValue(typ, nil), config: nil, fast: true},
				{name: "destroy with a read marker", prior: prior, proposed: tftypes.NewValue(typ, nil), config: nil, fast: true,
					private: readMarker(t, typeName, false)},
				{name: "destroy with another private key", prior: prior, proposed: tftypes.NewValue(typ, nil), config: nil,
					private: readMarker(t, typeName, true)},
				{name: "prior private state", prior: prior, proposed: prior, config: cfg,
					private: []byte(`{"agentsandbox_unrelated":{"a":1}}`)},
				// A refresh left its read marker (package fastpath): the
				// framework plans it as the prior private state.
				{name: "read marker", prior: prior, proposed: prior, config: cfg, fast: ok,
					private: readMarker(t, typeName, false)},
				{name: "read marker and another key", prior: prior, proposed: prior, config: cfg,
					private: readMarker(t, typeName, true)},
			}
			// A label added in the configuration.
			if _, has := cfg["labels"]; has {
				changed := map[string]any{}
				for k, v := range cfg {
					changed[k] = v
				}
				changed["labels"] = map[string]any{"app.kubernetes.io/part-of": "bench", "new": "label"}
				labels := pt.Value(typ.(tftypes.Object).AttributeTypes["labels"], changed["labels"])
				proposed := withAttr(t, prior, "labels", labels)
				cases = append(cases,
					planCase{name: "label added", prior: prior, proposed: proposed, config: changed, fast: updateOK, update: true},
					// The read marker an apply or a refresh leaves (package
					// fastpath) is planned as it is.
					planCase{name: "label added, read marker", prior: prior, proposed: proposed, config: changed, fast: updateOK, update: true,
						private: readMarker(t, typeName, false)},
					// Another key (an import marker) may matter to a plan
					// modifier: the framework's.
					planCase{name: "label added, another private key", prior: prior, proposed: proposed, config: changed, update: true,
						private: readMarker(t, typeName, true)})
				// A label whose value is known only at apply.
				unknownLabels := map[string]tftypes.Value{
					"app.kubernetes.io/part-of": str("bench"), "new": tftypes.NewValue(tftypes.String, tftypes.UnknownValue),
				}
				withUnknown := map[string]any{}
				for k, v := range changed {
					withUnknown[k] = v
				}
				withUnknown["labels"] = tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, unknownLabels)
				cases = append(cases, planCase{name: "label unknown until apply", prior: prior,
					proposed: withAttr(t, prior, "labels", tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, unknownLabels)),
					config:   withUnknown, fast: updateOK, update: true})
				// Every drift of changedCases with a label added as well: an
				// update whose plan also restores defaults or whose ModifyPlan
				// changes or says something.
				for _, c := range changedCases(t, typeName, typ, prior, cfg) {
					u := c
					u.name = c.name + ", label added"
					u.proposed = withAttr(t, c.proposed, "labels", labels)
					u.config = map[string]any{}
					for k, v := range c.config {
						u.config[k] = v
					}
					u.config["labels"] = changed["labels"]
					u.either, u.update = true, true
					cases = append(cases, u)
				}
			}
			// A volume claim's size respelled (1Gi -> 1024Mi) with a label
			// added: a plan modifier below the top level (sameQuantity)
			// keeps the prior spelling, so the fast path must leave it to
			// the framework.
			if _, has := typ.(tftypes.Object).AttributeTypes["volume_claim_templates"]; has {
				vct := func(size string) []any {
					return []any{map[string]any{"name": "data", "resources": map[string]any{"requests": map[string]any{"storage": size}}}}
				}
				with := map[string]any{}
				for k, v := range cfg {
					with[k] = v
				}
				with["volume_claim_templates"] = vct("1Gi")
				vprior := priorState(t, framework, s, typeName, with)
				respelled := map[string]any{}
				for k, v := range with {
					respelled[k] = v
				}
				respelled["volume_claim_templates"] = vct("1024Mi")
				respelled["labels"] = map[string]any{"new": "label"}
				vt := typ.(tftypes.Object).AttributeTypes
				proposed := withPath(t, vprior, tftypes.NewAttributePath().WithAttributeName("volume_claim_templates").WithElementKeyInt(0).
					WithAttributeName("resources").WithAttributeName("requests").WithAttributeName("storage"), str("1024Mi"))
				proposed = withAttr(t, proposed, "labels", pt.Value(vt["labels"], respelled["labels"]))
				cases = append(cases, planCase{name: "volume claim size respelled, label added", prior: vprior, proposed: proposed,
					config: respelled, update: true})
			}
			// A new name: the framework's RequiresReplace (through
			// RequiresReplaceIf) replaces the resource; never the fast path's.
			if name, has := cfg["name"].(string); has && typeName != "agentsandbox_network_policy" {
				renamed := map[string]any{}
				for k, v := range cfg {
					renamed[k] = v
				}
				renamed["name"] = name + "-renamed"
				cases = append(cases, planCase{name: "renamed", prior: prior, proposed: withAttr(t, prior, "name", str(name+"-renamed")),
					config: renamed, update: true, replace: true})
			}
			cases = append(cases, changedCases(t, typeName, typ, prior, cfg)...)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					comparePlans(t, framework, fast, s, typeName, c)
				})
			}
		})
	}
}

// changedCases are the requests where Terraform proposes the prior state
// (nothing changed in the configuration) and the framework still plans a
// change or says something: the fast path must see it and step aside.
func changedCases(t *testing.T, typeName string, typ tftypes.Type, prior tftypes.Value, cfg map[string]any) []planCase {
	t.Helper()
	drift := func(name, attr string, v tftypes.Value, wantDiags bool) planCase {
		d := withAttr(t, prior, attr, v)
		return planCase{name: name, prior: d, proposed: d, config: cfg, wantDiags: wantDiags}
	}
	switch typeName {
	case "agentsandbox_warm_pool":
		return []planCase{
			// Scaled out of band and refreshed; replicas is not configured,
			// so ModifyPlan plans the default back.
			drift("replicas scaled out of band", "replicas", tftypes.NewValue(tftypes.Number, big.NewFloat(3)), false),
			// update_strategy is not configured: its default is planned
			// back over an out-of-band edit.
			drift("default attribute edited out of band", "update_strategy", str("Recreate"), false),
		}
	case "agentsandbox_network_policy":
		warned := map[string]any{}
		for k, v := range cfg {
			warned[k] = v
		}
		delete(warned, "pod_selector")
		warned["template"] = "python"
		warned["name"] = sandboxapi.TemplateNetworkPolicyName("python")
		w := withAttr(t, prior, "template", str("python"))
		w = withAttr(t, w, "pod_selector", tftypes.NewValue(typ.(tftypes.Object).AttributeTypes["pod_selector"], nil))
		w = withAttr(t, w, "name", str(sandboxapi.TemplateNetworkPolicyName("python")))
		return []planCase{
			drift("spec edited out of band", "rendered", str(`{"podSelector":{}}`), false),
			{name: "warning on an unchanged policy", prior: w, proposed: w, config: warned, wantDiags: true},
		}
	case "agentsandbox_sandbox_template":
		container := tftypes.NewAttributePath().WithAttributeName("pod_template").WithAttributeName("containers").WithElementKeyInt(0)
		nested := func(name string, p *tftypes.AttributePath, v tftypes.Value) planCase {
			d := withPath(t, prior, p, v)
			return planCase{name: name, prior: d, proposed: d, config: cfg}
		}
		return []planCase{
			drift("managed policy rules edited out of band", "network_policy_rendered", str(`{"egress":[{}]}`), false),
			drift("default attribute edited out of band", "env_vars_injection_policy", str("Allowed"), false),
			// A default inside a list element: ports[0].protocol is not
			// configured.
			nested("nested default edited out of band", container.WithAttributeName("ports").WithElementKeyInt(0).WithAttributeName("protocol"), str("UDP")),
			// Inside an attribute whose parent has a default of its own
			// and no configuration: the parent's default replaces it.
			nested("default below a defaulted parent edited out of band",
				container.WithAttributeName("security_context").WithAttributeName("allow_privilege_escalation"),
				tftypes.NewValue(tftypes.Bool, true)),
		}
	case "agentsandbox_sandbox":
		return []planCase{
			drift("default attribute edited out of band", "shutdown_policy", str("Delete"), false),
		}
	}
	return nil
}
