package main

import (
	"context"
	"encoding/json"
	"math/big"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/protocoltest"
	"github.com/agentsandbox/terraform-provider-agentsandbox/provider"
)

// The provider's side of a plan with no changes, per object, without a
// cluster or a terraform binary: what Terraform asks of the provider for
// every resource instance of `terraform plan -refresh=false` (the state is
// upgraded, the configuration validated, the change planned). The sets
// scenario of the benchmark measures the same thing end to end; this one
// can be profiled directly:
//
//	go test ./bench -run '^$' -bench PlanNoChange -cpuprofile /tmp/cpu.out

var benchObjects = map[string]map[string]any{
	"agentsandbox_sandbox_template": {
		"name": "set-1", "namespace": "bench", "network_policy_management": "Unmanaged",
		"labels": map[string]any{"app.kubernetes.io/part-of": "bench", "bench/gen": "1"},
		"pod_template": map[string]any{
			"labels":           map[string]any{"app.kubernetes.io/component": "execution-sandbox", "bench/set": "set-1"},
			"security_context": map[string]any{"run_as_user": 10001},
			"containers": []any{map[string]any{
				"name": "python-runtime", "image": "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0",
				"ports": []any{map[string]any{"container_port": 8888}},
				"env":   []any{map[string]any{"name": "SET", "value": "set-1"}},
				"resources": map[string]any{
					"requests": map[string]any{"cpu": "500m", "memory": "1Gi"},
					"limits":   map[string]any{"cpu": "1", "memory": "1Gi"},
				},
			}},
		},
	},
	"agentsandbox_warm_pool": {
		"name": "set-1", "namespace": "bench", "template": "set-1", "replicas": 0, "wait_for_ready": false,
		"labels": map[string]any{"app.kubernetes.io/part-of": "bench", "bench/gen": "1"},
	},
	"agentsandbox_network_policy": {
		"name": "set-1", "namespace": "bench", "ingress": []any{},
		"labels":       map[string]any{"app.kubernetes.io/part-of": "bench", "bench/gen": "1"},
		"pod_selector": map[string]any{"match_labels": map[string]any{"bench/set": "set-1"}},
	},
}

// stateFor plans the object's creation and fills what only an apply would
// know (computed values) with placeholders, which is what a state holds.
func stateFor(t testing.TB, s *protocoltest.Server, typeName string, cfg map[string]any) tftypes.Value {
	t.Helper()
	typ := s.ResourceType(t, typeName)
	attrs, diags := s.PlanCreate(t, typeName, cfg)
	if errs := protocoltest.Errors(diags); len(errs) > 0 {
		t.Fatalf("%s: %s", typeName, protocoltest.Describe(errs))
	}
	planned := tftypes.NewValue(typ, attrs)
	known, err := tftypes.Transform(planned, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsKnown() {
			return v, nil
		}
		switch {
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

func BenchmarkPlanNoChange(b *testing.B) {
	s := protocoltest.New(b, provider.New("bench"))
	// The server Terraform gets (with the fast path), configured as by
	// the benchmark's provider block (settings only: nothing is
	// contacted while planning unchanged objects).
	b.Setenv(provider.FastPathVar, "on") // the fast path is what is measured
	srv := provider.NewProtocol6("bench")()
	ctx := context.Background()
	conf, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: protocoltest.Dynamic(b, s.ProviderType(b),
		map[string]any{"kubernetes": map[string]any{"host": "https://127.0.0.1:1", "token": "bench"}})})
	if err != nil || hasError(conf.Diagnostics) {
		b.Fatalf("configure: %v %v", err, describe(conf.Diagnostics))
	}
	for _, typeName := range []string{"agentsandbox_sandbox_template", "agentsandbox_warm_pool", "agentsandbox_network_policy"} {
		b.Run(typeName, func(b *testing.B) {
			typ := s.ResourceType(b, typeName)
			cfgVal := protocoltest.Value(typ, benchObjects[typeName])
			cfg, err := tfprotov6.NewDynamicValue(typ, cfgVal)
			if err != nil {
				b.Fatal(err)
			}
			state := stateFor(b, s, typeName, benchObjects[typeName])
			stateDV, err := tfprotov6.NewDynamicValue(typ, state)
			if err != nil {
				b.Fatal(err)
			}
			raw, err := stateDV.Unmarshal(typ)
			if err != nil {
				b.Fatal(err)
			}
			stateJSON, err := jsonOf(raw)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := processCPU(b)
			b.ResetTimer()
			for b.Loop() {
				up, err := srv.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
					TypeName: typeName, RawState: &tfprotov6.RawState{JSON: stateJSON},
				})
				if err != nil || hasError(up.Diagnostics) {
					b.Fatalf("upgrade: %v %v", err, describe(up.Diagnostics))
				}
				v, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: &cfg})
				if err != nil || hasError(v.Diagnostics) {
					b.Fatalf("validate: %v %v", err, describe(v.Diagnostics))
				}
				p, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
					TypeName: typeName, PriorState: up.UpgradedState, ProposedNewState: up.UpgradedState, Config: &cfg,
				})
				if err != nil || hasError(p.Diagnostics) {
					b.Fatalf("plan: %v %v", err, describe(p.Diagnostics))
				}
				if len(p.RequiresReplace) > 0 {
					b.Fatalf("plan replaces %v", p.RequiresReplace)
				}
			}
			b.StopTimer()
			// CPU time (all threads, the garbage collector's too) per
			// object: unlike ns/op, it hardly depends on how busy the
			// machine is.
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the user and system CPU time of this process so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// jsonOf encodes a value as Terraform writes it into a state file.
func jsonOf(v tftypes.Value) ([]byte, error) {
	g, err := goValue(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(g)
}

func goValue(v tftypes.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	typ := v.Type()
	switch {
	case typ.Is(tftypes.String):
		var s string
		err := v.As(&s)
		return s, err
	case typ.Is(tftypes.Bool):
		var b bool
		err := v.As(&b)
		return b, err
	case typ.Is(tftypes.Number):
		var f big.Float
		err := v.As(&f)
		return json.Number(f.Text('g', -1)), err
	case typ.Is(tftypes.Object{}), typ.Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			return nil, err
		}
		out := map[string]any{}
		for k, e := range m {
			g, err := goValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	default: // list, set, tuple
		var l []tftypes.Value
		if err := v.As(&l); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(l))
		for _, e := range l {
			g, err := goValue(e)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	}
}

func hasError(diags []*tfprotov6.Diagnostic) bool {
	return len(protocoltest.Errors(diags)) > 0
}

func describe(diags []*tfprotov6.Diagnostic) string { return protocoltest.Describe(diags) }

// BenchmarkValidate validates the configuration of one object of the sets
// scenario (ValidateResourceConfig, once per object in every plan and
// apply) through the framework's server alone and through the server
// Terraform gets (the fast path, internal/fastpath/validate.go), both
// configured as by the benchmark's provider block, and checks that the
// fast path answered every validation of its server.
func BenchmarkValidate(b *testing.B) {
	s := protocoltest.New(b, provider.New("bench"))
	ctx := context.Background()
	providerCfg := protocoltest.Dynamic(b, s.ProviderType(b),
		map[string]any{"kubernetes": map[string]any{"host": "https://127.0.0.1:1", "token": "bench"}})
	b.Setenv(provider.FastPathVar, "on") // the fast path is what is measured
	servers := map[string]tfprotov6.ProviderServer{
		"framework": providerserver.NewProtocol6(provider.New("bench")())(),
		"fastpath":  provider.NewProtocol6("bench")(),
	}
	for _, srv := range servers {
		conf, err := srv.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: providerCfg})
		if err != nil || hasError(conf.Diagnostics) {
			b.Fatalf("configure: %v %v", err, describe(conf.Diagnostics))
		}
	}
	for _, typeName := range []string{"agentsandbox_sandbox_template", "agentsandbox_warm_pool", "agentsandbox_network_policy"} {
		for _, name := range []string{"framework", "fastpath"} {
			srv := servers[name]
			b.Run(typeName+"/"+name, func(b *testing.B) {
				typ := s.ResourceType(b, typeName)
				cfg, err := tfprotov6.NewDynamicValue(typ, protocoltest.Value(typ, benchObjects[typeName]))
				if err != nil {
					b.Fatal(err)
				}
				fast0, fw0 := fastpath.ValidateCounts()
				b.ReportAllocs()
				cpu0 := processCPU(b)
				b.ResetTimer()
				for b.Loop() {
					v, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: &cfg})
					if err != nil || len(v.Diagnostics) > 0 {
						b.Fatalf("validate: %v %v", err, describe(v.Diagnostics))
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
				fast1, fw1 := fastpath.ValidateCounts()
				if name == "fastpath" && (fast1-fast0 != int64(b.N) || fw1 != fw0) {
					b.Fatalf("the fast path answered %d of %d validations", fast1-fast0, b.N)
				}
			})
		}
	}
}
