package provider

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	pt "github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
)

// The kill switch (FastPathVar): "off" builds the chain without the fast
// path, so that every call is the framework's; anything but on, off or
// nothing is refused.

func envWith(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// fastPathCalls is the sum of every counter of package fastpath: each call
// that reaches a fast path moves at least one of them (a plan, read or
// validation answered or handed on, an upgrade answered, an apply marked
// or not).
func fastPathCalls() int64 {
	var sum int64
	p1, p2, p3 := fastpath.Counts()
	v1, v2 := fastpath.ValidateCounts()
	r1, r2 := fastpath.ReadCounts()
	c1, c2 := fastpath.CreateCounts()
	u1, u2 := fastpath.UpdateCounts()
	a1, a2 := fastpath.ApplyMarkCounts()
	for _, n := range []int64{p1, p2, p3, v1, v2, r1, r2, c1, c2, u1, u2, a1, a2} {
		sum += n
	}
	return sum
}

func TestFastPathSwitch_chain(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      map[string]string
		fast     bool
		refusing bool
	}{
		{"unset", nil, true, false},
		{"empty", map[string]string{FastPathVar: ""}, true, false},
		{"on", map[string]string{FastPathVar: "on"}, true, false},
		{"off", map[string]string{FastPathVar: "off"}, false, false},
		{"Off", map[string]string{FastPathVar: "Off"}, false, true},
		{"false", map[string]string{FastPathVar: "false"}, false, true},
		{"0", map[string]string{FastPathVar: "0"}, false, true},
		{"spaces", map[string]string{FastPathVar: " off"}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, err := newProtocol6Server(&agentSandboxProvider{version: "test", lookupEnv: envWith(c.env)})
			if err != nil {
				t.Fatal(err)
			}
			_, isFast := srv.Inner.(*fastpath.Server)
			if isFast != c.fast {
				t.Fatalf("behind nestedattr is a %T; want the fast path: %v", srv.Inner, c.fast)
			}
			ctx := context.Background()
			schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
			if err != nil || len(schemas.Diagnostics) > 0 {
				t.Fatalf("schema: %v %s", err, pt.Describe(schemas.Diagnostics))
			}
			cfg := pt.Dynamic(t, schemas.Provider.ValueType(), map[string]any{"kubernetes": map[string]any{"host": "https://127.0.0.1:1", "token": "t"}})
			vresp, err := srv.ValidateProviderConfig(ctx, &tfprotov6.ValidateProviderConfigRequest{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			cresp, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			for name, diags := range map[string][]*tfprotov6.Diagnostic{"validate": vresp.Diagnostics, "configure": cresp.Diagnostics} {
				errs := pt.Errors(diags)
				if !c.refusing {
					if len(errs) > 0 {
						t.Errorf("%s: %s", name, pt.Describe(errs))
					}
					continue
				}
				if len(errs) != 1 || errs[0].Summary != "Invalid "+FastPathVar ||
					!strings.Contains(errs[0].Detail, `is "`+c.env[FastPathVar]+`"`) || !strings.Contains(errs[0].Detail, `"on"`) || !strings.Contains(errs[0].Detail, `"off"`) {
					t.Errorf("%s: want one error naming %s, its value and the values it takes; got %s", name, FastPathVar, pt.Describe(diags))
				}
			}
		})
	}
}

// With the switch off, no call reaches the fast path: validation, plans
// (create, no change, destroy), the state upgrade and the read all leave
// every counter of package fastpath where it was. The same calls with the
// switch on move them (the control).
func TestFastPathSwitch_offReachesNoFastPath(t *testing.T) {
	const typeName = "agentsandbox_sandbox_template"
	f := newFakeAPIServer(t, "")
	providerCfg := map[string]any{"kubernetes": map[string]any{"host": f.URL, "token": "t", "cluster_ca_certificate": f.CAPEM}}
	resCfg := fastpathObjects[typeName]
	for _, mode := range []string{"off", "on"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			srv, err := newProtocol6Server(&agentSandboxProvider{version: "test", lookupEnv: envWith(map[string]string{FastPathVar: mode})})
			if err != nil {
				t.Fatal(err)
			}
			schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
			if err != nil {
				t.Fatal(err)
			}
			typ := schemas.ResourceSchemas[typeName].ValueType()
			pcfg := pt.Dynamic(t, schemas.Provider.ValueType(), providerCfg)
			config := pt.Dynamic(t, typ, resCfg)
			null := dv(t, typ, tftypes.NewValue(typ, nil))
			check := func(what string, diags []*tfprotov6.Diagnostic, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if errs := pt.Errors(diags); len(errs) > 0 {
					t.Fatalf("%s: %s", what, pt.Describe(errs))
				}
			}

			before := fastPathCalls()
			vp, err := srv.ValidateProviderConfig(ctx, &tfprotov6.ValidateProviderConfigRequest{Config: pcfg})
			check("validate provider", vp.Diagnostics, err)
			vr, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: config})
			check("validate", vr.Diagnostics, err)
			cp, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: pcfg})
			check("configure", cp.Diagnostics, err)
			create, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: typeName, PriorState: null, ProposedNewState: config, Config: config})
			check("plan create", create.Diagnostics, err)
			planned, err := create.PlannedState.Unmarshal(typ)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(jsonValue(t, applied(t, planned)))
			if err != nil {
				t.Fatal(err)
			}
			up, err := srv.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: typeName, RawState: &tfprotov6.RawState{JSON: raw}})
			check("upgrade", up.Diagnostics, err)
			same, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: typeName, PriorState: up.UpgradedState, ProposedNewState: up.UpgradedState, Config: config})
			check("plan no change", same.Diagnostics, err)
			destroy, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: typeName, PriorState: up.UpgradedState, ProposedNewState: null, Config: null})
			check("plan destroy", destroy.Diagnostics, err)
			// The fake API server has no templates: the read finds it gone.
			read, err := srv.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: typeName, CurrentState: up.UpgradedState})
			check("read", read.Diagnostics, err)
			moved := fastPathCalls() - before
			t.Logf("fast path counters moved by %d", moved)

			switch _, isFast := srv.Inner.(*fastpath.Server); {
			case mode == "off" && isFast:
				t.Fatal("the fast path is in the chain")
			case mode == "off" && moved != 0:
				t.Errorf("%d calls reached a fast path", moved)
			case mode == "on" && moved < 6:
				// validate, three plans, upgrade, read
				t.Errorf("the fast path's counters moved by %d over 6 calls", moved)
			}
			if mode == "off" {
				if _, ok := srv.Inner.(fastpath.FrameworkServer); !ok {
					t.Errorf("behind nestedattr is a %T", srv.Inner)
				}
			}
		})
	}
}

// Through the terraform CLI: a refused value stops the plan with the
// variable's name and value in front of the user.
func TestFastPathSwitch_refusedValueThroughTerraform(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			"agentsandbox": func() (tfprotov6.ProviderServer, error) {
				return newProtocol6Server(&agentSandboxProvider{version: "test", lookupEnv: envWith(map[string]string{FastPathVar: "disabled"})})
			},
		},
		Steps: []resource.TestStep{{
			Config:      `data "agentsandbox_cluster" "this" {}`,
			ExpectError: regexp.MustCompile(`(?s)Invalid AGENTSANDBOX_FASTPATH.*AGENTSANDBOX_FASTPATH is\s+"disabled".*must be\s+"on"`),
		}},
	})
}
