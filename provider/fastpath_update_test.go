package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
)

// TestFastPathUpdate_schemaWalk plans updates of every resource type's
// schema (on a resource with nothing but the schema, as
// TestFastPathCreate_schemaWalk does for creates) through the framework's
// server alone and through the fast path's, from a state made of one
// generated configuration to another, and requires the same answer field
// by field. The name and namespace stay as they were (a rename is a
// replacement, always the framework's); every other difference between the
// configurations is an update. Each pair runs twice: as generated, and with
// the volume claim templates kept as well (a change below their nested
// plan modifier is the framework's); in the second run the bulk types must
// be answered by the fast path for every pair of configurations with known
// values.
func TestFastPathUpdate_schemaWalk(t *testing.T) {
	ctx := context.Background()
	framework, fast, schemas, names := schemaOnlyServers(t)
	mustAnswerKnown := map[string]bool{
		"agentsandbox_sandbox_template": true, "agentsandbox_warm_pool": true, "agentsandbox_network_policy": true,
	}
	known := []genMode{genAll, genRequired, genAlternate, genAlternateOther, genEmptyCollections}
	all := append(append([]genMode{}, known...), genUnknownLeaves, genUnknownCollections, genUnknownObjects)
	for _, typeName := range names {
		t.Run(typeName, func(t *testing.T) {
			if ok, why := fast.EligibleUpdate(ctx, typeName); !ok {
				t.Logf("not eligible: %s", why)
			}
			block := schemas.ResourceSchemas[typeName].Block
			typ := block.ValueType()
			computed := map[string]bool{}
			for _, a := range block.Attributes {
				computed[a.Name] = a.Computed
			}
			answered := 0
			for _, keepClaims := range []bool{false, true} {
				kept := []string{"name", "namespace"}
				suffix := ""
				if keepClaims {
					kept, suffix = append(kept, "volume_claim_templates"), ", claim templates kept"
				}
				for _, from := range known {
					prior := stateOf(t, framework, typ, typeName, (&generator{mode: from}).block(block, true))
					for _, to := range all {
						t.Run(from.String()+" to "+to.String()+suffix, func(t *testing.T) {
							cfg := keep(t, (&generator{mode: to}).block(block, true), prior, kept)
							proposed := proposedNew(t, prior, cfg, computed)
							if proposed.Equal(prior) {
								t.Skip("no change")
							}
							u0, _ := fastpath.UpdateCounts()
							resp := comparePlan(t, framework, fast, typ, typeName, prior, proposed, cfg)
							u1, _ := fastpath.UpdateCounts()
							if len(resp.Diagnostics) > 0 {
								t.Errorf("control: the framework's diagnostics: %s", pt.Describe(resp.Diagnostics))
							}
							if u1 > u0 {
								answered++
							} else if keepClaims && mustAnswerKnown[typeName] && len(resp.RequiresReplace) == 0 && to != genUnknownLeaves &&
								to != genUnknownCollections && to != genUnknownObjects {
								t.Errorf("not answered by the fast path")
							}
						})
					}
				}
			}
			t.Logf("%d updates answered by the fast path", answered)
			if mustAnswerKnown[typeName] && answered == 0 {
				t.Errorf("no update answered by the fast path")
			}
		})
	}
}

// stateOf is the framework's plan of a create of cfg with what only an
// apply knows (unknown values) filled in, as a state holds it (applied).
func stateOf(t *testing.T, framework tfprotov6.ProviderServer, typ tftypes.Type, typeName string, cfg tftypes.Value) tftypes.Value {
	t.Helper()
	resp, err := framework.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: dv(t, typ, tftypes.NewValue(typ, nil)), ProposedNewState: dv(t, typ, cfg), Config: dv(t, typ, cfg),
	})
	if err != nil || len(pt.Errors(resp.Diagnostics)) > 0 {
		t.Fatalf("create plan: %v %s", err, pt.Describe(resp.Diagnostics))
	}
	planned, err := resp.PlannedState.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return applied(t, planned)
}

// keep returns cfg with the top-level attributes names as the prior state
// has them (those it has).
func keep(t *testing.T, cfg, prior tftypes.Value, names []string) tftypes.Value {
	t.Helper()
	for _, n := range names {
		v, _, err := tftypes.WalkAttributePath(prior, tftypes.NewAttributePath().WithAttributeName(n))
		if err != nil {
			continue
		}
		cfg = withAttr(t, cfg, n, v.(tftypes.Value))
	}
	return cfg
}

// proposedNew is what Terraform proposes, at the top level: the
// configuration, and the prior value of a computed attribute whose
// configuration is null.
func proposedNew(t *testing.T, prior, cfg tftypes.Value, computed map[string]bool) tftypes.Value {
	t.Helper()
	var pa, ca map[string]tftypes.Value
	if err := prior.As(&pa); err != nil {
		t.Fatal(err)
	}
	if err := cfg.As(&ca); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]tftypes.Value, len(ca))
	for n, v := range ca {
		out[n] = v
		if v.IsNull() && computed[n] {
			out[n] = pa[n]
		}
	}
	return tftypes.NewValue(cfg.Type(), out)
}

// comparePlan plans an update through both servers and requires the same
// answer; it returns the framework's.
func comparePlan(t *testing.T, framework tfprotov6.ProviderServer, fast *fastpath.Server, typ tftypes.Type, typeName string, prior, proposed, config tftypes.Value) *tfprotov6.PlanResourceChangeResponse {
	t.Helper()
	req := func() *tfprotov6.PlanResourceChangeRequest {
		return &tfprotov6.PlanResourceChangeRequest{TypeName: typeName,
			PriorState: dv(t, typ, prior), ProposedNewState: dv(t, typ, proposed), Config: dv(t, typ, config)}
	}
	want, err := framework.PlanResourceChange(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	got, err := fast.PlanResourceChange(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	sameAnswer(t, typ, got, want)
	return want
}
