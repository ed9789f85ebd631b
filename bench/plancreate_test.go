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
	s := protocoltest.New(b, provider.New("bench"))
	ctx := context.Background()
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
		typ := s.ResourceType(b, typeName)
		cfg, err := tfprotov6.NewDynamicValue(typ, protocoltest.Value(typ, benchObjects[typeName]))
		if err != nil {
			b.Fatal(err)
		}
		null, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
		if err != nil {
			b.Fatal(err)
		}
		for _, sv := range servers {
			b.Run(typeName+"/"+sv.name, func(b *testing.B) {
				b.ReportAllocs()
				fast0, _ := fastpath.CreateCounts()
				cpu0 := processCPU(b)
				b.ResetTimer()
				for b.Loop() {
					// As Terraform sends a create: null prior state, the
					// configuration as the proposed new state.
					p, err := sv.srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
						TypeName: typeName, PriorState: &null, ProposedNewState: &cfg, Config: &cfg,
					})
					if err != nil || hasError(p.Diagnostics) || p.PlannedState == nil {
						b.Fatalf("plan: %v %v", err, describe(p.Diagnostics))
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
				// Control: the fast path answered every plan of its server.
				if fast1, _ := fastpath.CreateCounts(); (fast1 > fast0) != (sv.name == "fastpath") {
					b.Fatalf("%s: the fast path answered %d plans", sv.name, fast1-fast0)
				}
			})
		}
	}
}
