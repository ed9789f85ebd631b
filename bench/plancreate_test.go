package main

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// BenchmarkPlanCreate is the provider's side of planning the creation of
// one object (what Terraform asks for every new resource instance, in the
// plan walk and again in the apply walk), through the framework's server
// alone and through the server Terraform gets (the fast path in front,
// internal/fastpath/create.go), per object:
//
//	go test ./bench -run '^$' -bench PlanCreate -cpuprofile /tmp/cpu.out
func BenchmarkPlanCreate(b *testing.B) {
	benchPlans(b, fastpath.CreateCounts, func(b *testing.B, _ *protocoltest.Server, typeName string, typ tftypes.Type) *tfprotov6.PlanResourceChangeRequest {
		cfg, err := tfprotov6.NewDynamicValue(typ, protocoltest.Value(typ, benchObjects[typeName]))
		if err != nil {
			b.Fatal(err)
		}
		null, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
		if err != nil {
			b.Fatal(err)
		}
		// As Terraform sends a create: null prior state, the
		// configuration as the proposed new state.
		return &tfprotov6.PlanResourceChangeRequest{TypeName: typeName, PriorState: &null, ProposedNewState: &cfg, Config: &cfg}
	})
}

// BenchmarkPlanUpdate is the provider's side of planning an in-place
// update of one object (the update phase of `make bench`: a label added),
// through the framework's server alone and through the server Terraform
// gets (internal/fastpath/update.go), per object:
//
//	go test ./bench -run '^$' -bench PlanUpdate -cpuprofile /tmp/cpu.out
func BenchmarkPlanUpdate(b *testing.B) {
	benchPlans(b, fastpath.UpdateCounts, func(b *testing.B, s *protocoltest.Server, typeName string, typ tftypes.Type) *tfprotov6.PlanResourceChangeRequest {
		prior := stateFor(b, s, typeName, benchObjects[typeName])
		cfg := map[string]any{}
		for k, v := range benchObjects[typeName] {
			cfg[k] = v
		}
		cfg["labels"] = map[string]any{"app.kubernetes.io/part-of": "bench", "bench/gen": "2"}
		var attrs map[string]tftypes.Value
		if err := prior.As(&attrs); err != nil {
			b.Fatal(err)
		}
		proposed := make(map[string]tftypes.Value, len(attrs))
		for k, v := range attrs {
			proposed[k] = v
		}
		proposed["labels"] = protocoltest.Value(typ.(tftypes.Object).AttributeTypes["labels"], cfg["labels"])
		dv := func(v tftypes.Value) *tfprotov6.DynamicValue {
			d, err := tfprotov6.NewDynamicValue(typ, v)
			if err != nil {
				b.Fatal(err)
			}
			return &d
		}
		return &tfprotov6.PlanResourceChangeRequest{TypeName: typeName, PriorState: dv(prior),
			ProposedNewState: dv(tftypes.NewValue(typ, proposed)), Config: dv(protocoltest.Value(typ, cfg))}
	})
}

// benchPlans plans req's request for each type of the sets scenario
// through both servers; counts are the fast path's counts of that kind of
// plan (answered, delegated), a control that only the fastpath server's
// plans were answered by it.
func benchPlans(b *testing.B, counts func() (int64, int64),
	req func(b *testing.B, s *protocoltest.Server, typeName string, typ tftypes.Type) *tfprotov6.PlanResourceChangeRequest) {
	s := protocoltest.New(b, provider.New("bench"))
	ctx := context.Background()
	b.Setenv(provider.FastPathVar, "on") // the fast path is what is measured
	servers := []struct {
		name string
		srv  tfprotov6.ProviderServer
	}{
		{"framework", providerserver.NewProtocol6(provider.New("bench")())()},
		{"fastpath", provider.NewProtocol6("bench")()},
	}
	for _, sv := range servers {
		conf, err := sv.srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: protocoltest.Dynamic(b, s.ProviderType(b),
			map[string]any{"kubernetes": map[string]any{"host": "https://127.0.0.1:1", "token": "bench"}})})
		if err != nil || hasError(conf.Diagnostics) {
			b.Fatalf("configure: %v %v", err, describe(conf.Diagnostics))
		}
	}
	for _, typeName := range []string{"agentsandbox_sandbox_template", "agentsandbox_warm_pool", "agentsandbox_network_policy"} {
		r := req(b, s, typeName, s.ResourceType(b, typeName))
		for _, sv := range servers {
			b.Run(typeName+"/"+sv.name, func(b *testing.B) {
				b.ReportAllocs()
				fast0, _ := counts()
				cpu0 := processCPU(b)
				b.ResetTimer()
				for b.Loop() {
					p, err := sv.srv.PlanResourceChange(ctx, r)
					if err != nil || hasError(p.Diagnostics) || p.PlannedState == nil {
						b.Fatalf("plan: %v %v", err, describe(p.Diagnostics))
					}
					if len(p.RequiresReplace) > 0 {
						b.Fatalf("plan replaces %v", p.RequiresReplace)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
				if fast1, _ := counts(); (fast1 > fast0) != (sv.name == "fastpath") {
					b.Fatalf("%s: the fast path answered %d plans", sv.name, fast1-fast0)
				}
			})
		}
	}
}
