package provider

import (
	"context"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
)

// The fast path also answers ValidateResourceConfig
// (internal/fastpath/validate.go). This test validates configurations of
// every resource type through the framework's server alone and through the
// server Terraform gets, and requires the same diagnostics (as multisets),
// on an unconfigured provider (as `terraform validate` and the validation
// before a plan see it) and on a configured one:
//
//   - configurations generated from each schema (the create fast path's
//     generator: every attribute set, only the required ones, alternating
//     nulls, unknown leaves, collections and objects, empty collections);
//     generated values break most validators, so these hold many errors;
//   - the realistic objects of the fast path tests (the bench's), a rich
//     template, and variants with unknowns.
//
// Every bad-input table of every resource (protocoltest's ExpectRefused and
// every other ValidateResource) compares the fast path with the framework
// too: see protocoltest.Server.ValidateResource.

// compareValidate validates cfg through both servers, requires the same
// diagnostics, and reports whether the fast path answered.
func compareValidate(t *testing.T, framework tfprotov6.ProviderServer, fast *fastpath.Server, typ tftypes.Type, typeName string, cfg tftypes.Value) ([]*tfprotov6.Diagnostic, bool) {
	t.Helper()
	req := func() *tfprotov6.ValidateResourceConfigRequest {
		return &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: dv(t, typ, cfg)}
	}
	want, err := framework.ValidateResourceConfig(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	got, answered := fast.ValidateFast(context.Background(), req())
	if !answered {
		return want.Diagnostics, false
	}
	if d := pt.DiffDiagnostics(got.Diagnostics, want.Diagnostics); d != "" {
		t.Errorf("diagnostics differ:\n%s", d)
	}
	// And through the protocol method, which counts.
	a0, _ := fastpath.ValidateCounts()
	got2, err := fast.ValidateResourceConfig(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	if a1, _ := fastpath.ValidateCounts(); a1 != a0+1 {
		t.Errorf("ValidateResourceConfig did not count an answered validation")
	}
	if d := pt.DiffDiagnostics(got2.Diagnostics, want.Diagnostics); d != "" {
		t.Errorf("diagnostics of ValidateResourceConfig differ:\n%s", d)
	}
	return want.Diagnostics, true
}

func TestFastPathValidate_sameAnswerAsTheFramework(t *testing.T) {
	ctx := context.Background()
	for _, configured := range []bool{false, true} {
		name := "unconfigured"
		if configured {
			name = "configured"
		}
		t.Run(name, func(t *testing.T) {
			var framework tfprotov6.ProviderServer
			var fast *fastpath.Server
			var s *pt.Server
			if configured {
				framework, fast, s = fastpathServers(t)
			} else {
				noEnv := func(string) (string, bool) { return "", false }
				newP := func() *agentSandboxProvider { return &agentSandboxProvider{version: "test", lookupEnv: noEnv} }
				framework = providerserver.NewProtocol6(newP())()
				var err error
				if fast, err = newServer(newP()); err != nil {
					t.Fatal(err)
				}
				s = pt.New(t, New("test"))
			}
			schemas, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
			if err != nil {
				t.Fatal(err)
			}
			names := make([]string, 0, len(schemas.ResourceSchemas))
			for n := range schemas.ResourceSchemas {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, typeName := range names {
				t.Run(typeName, func(t *testing.T) {
					ok, why := fast.EligibleValidate(ctx, typeName)
					if !ok {
						t.Fatalf("not validated by the fast path: %s", why)
					}
					block := schemas.ResourceSchemas[typeName].Block
					typ := block.ValueType()
					type vcase struct {
						name string
						cfg  tftypes.Value
					}
					var cases []vcase
					for _, mode := range []genMode{genAll, genRequired, genAlternate, genAlternateOther, genUnknownLeaves, genUnknownCollections, genUnknownObjects, genEmptyCollections} {
						g := &generator{mode: mode}
						cases = append(cases, vcase{"generated " + mode.String(), g.block(block, true)})
					}
					for n, cfg := range validateObjects(typeName) {
						cases = append(cases, vcase{n, pt.Value(s.ResourceType(t, typeName), cfg)})
					}
					answered, withDiags := 0, 0
					for _, c := range cases {
						t.Run(c.name, func(t *testing.T) {
							diags, ok := compareValidate(t, framework, fast, typ, typeName, c.cfg)
							if !ok {
								t.Errorf("left to the framework (its diagnostics: %s)", pt.Describe(diags))
								return
							}
							answered++
							if len(diags) > 0 {
								withDiags++
							}
						})
					}
					t.Logf("%d configurations answered with the framework's diagnostics (%d with diagnostics)", answered, withDiags)
					if withDiags == 0 {
						t.Errorf("control: no configuration had diagnostics")
					}
				})
			}
		})
	}
}

// validateObjects are the realistic configurations of a type, with
// unknowns.
func validateObjects(typeName string) map[string]map[string]any {
	out := map[string]map[string]any{}
	if cfg, ok := fastpathObjects[typeName]; ok {
		out["realistic"] = cfg
		for k := range cfg {
			if k == "timeouts" {
				continue
			}
			out["realistic, "+k+" unknown"] = with(cfg, map[string]any{k: pt.Unknown})
		}
	}
	if typeName == "agentsandbox_sandbox_template" {
		out["rich"] = richTemplate()
		out["rich, unknown containers"] = with(richTemplate(), map[string]any{"pod_template": map[string]any{"containers": pt.Unknown}})
		out["rich, unknown container"] = with(richTemplate(), map[string]any{"pod_template": map[string]any{"containers": []any{pt.Unknown}}})
		out["rich, unknown image"] = with(richTemplate(), map[string]any{"pod_template": map[string]any{
			"containers": []any{pt.Container(map[string]any{"image": pt.Unknown})}}})
		out["rich, one port"] = with(richTemplate(), map[string]any{"pod_template": map[string]any{
			"containers": []any{pt.Container(map[string]any{"ports": []any{map[string]any{"container_port": 80}}})}}})
	}
	return out
}
