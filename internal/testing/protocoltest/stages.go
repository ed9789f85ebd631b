package protocoltest

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// ExpectRefused (validate) and the functions here (plan, provider
// validate, provider configure) assert the stage that catches each bad
// input: a case listed for plan must pass validation and be refused by the
// plan of a new object, so a check that moves to another stage, or gets
// lost, fails its table.

// ExpectRefusedAtPlan requires each case's configuration of typeName to pass
// validation with no error and then to be refused by planning a new object,
// with an error at the case's path mentioning all its words. Neither stage
// may send a request to Kubernetes.
func (s *Server) ExpectRefusedAtPlan(t *testing.T, typeName string, cases []BadInput) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			before := kube.RequestCount()
			if errs := Errors(s.ValidateResource(t, typeName, tc.Config)); len(errs) > 0 {
				t.Fatalf("refused at validate, not plan:\n  %s", Describe(errs))
			}
			_, diags := s.Plan(t, typeName, tc.Config)
			ExpectErrorAt(t, diags, tc.Path, tc.Mentions...)
			if n := kube.RequestCount() - before; n != 0 {
				t.Errorf("validation and planning sent %d requests: %v", n, kube.RequestCounts())
			}
		})
	}
}

// ProviderType is the value type of the provider block's schema.
func (s *Server) ProviderType(t testing.TB) tftypes.Type {
	t.Helper()
	schemas, err := s.srv.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return schemas.Provider.ValueType()
}

// ValidateProvider returns the diagnostics of ValidateProviderConfig.
func (s *Server) ValidateProvider(t testing.TB, cfg map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := s.srv.ValidateProviderConfig(context.Background(), &tfprotov6.ValidateProviderConfigRequest{
		Config: Dynamic(t, s.ProviderType(t), cfg),
	})
	if err != nil {
		t.Fatal(err)
	}
	return observe("provider", "", resp.Diagnostics)
}

// ConfigureProvider returns the diagnostics of ConfigureProvider for cfg
// (the server is then configured with it).
func (s *Server) ConfigureProvider(t testing.TB, cfg map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := s.srv.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{
		Config: Dynamic(t, s.ProviderType(t), cfg),
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.fast != nil {
		// Configured, the fast path has no provider data to give and
		// leaves every validation to the framework.
		if _, err := s.fast.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{
			Config: Dynamic(t, s.ProviderType(t), cfg),
		}); err != nil {
			t.Fatal(err)
		}
	}
	return observe("provider", "", resp.Diagnostics)
}

// ExpectProviderRefused requires each provider configuration to be refused
// by ValidateProviderConfig at the case's path, with no request sent.
func ExpectProviderRefused(t *testing.T, s func(t *testing.T) *Server, cases []BadInput) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			before := kube.RequestCount()
			ExpectErrorAt(t, s(t).ValidateProvider(t, tc.Config), tc.Path, tc.Mentions...)
			if n := kube.RequestCount() - before; n != 0 {
				t.Errorf("validation sent %d requests: %v", n, kube.RequestCounts())
			}
		})
	}
}

// ExpectProviderRefusedAtConfigure requires each provider configuration to
// pass ValidateProviderConfig and to be refused by ConfigureProvider (what
// only the environment or local files show), with no request sent.
func ExpectProviderRefusedAtConfigure(t *testing.T, s func(t *testing.T) *Server, cases []BadInput) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			before := kube.RequestCount()
			srv := s(t)
			if errs := Errors(srv.ValidateProvider(t, tc.Config)); len(errs) > 0 {
				t.Fatalf("refused at validate, not configure:\n  %s", Describe(errs))
			}
			ExpectErrorAt(t, srv.ConfigureProvider(t, tc.Config), tc.Path, tc.Mentions...)
			if n := kube.RequestCount() - before; n != 0 {
				t.Errorf("validation and configure sent %d requests: %v", n, kube.RequestCounts())
			}
		})
	}
}

// ImportThenPlan imports id into the resource typeName, as an import block
// does (ImportResourceState), and plans cfg over the imported state with the
// private state the import left, returning the plan's diagnostics. The
// resource's Read is skipped (it needs a cluster); what is checked is what
// the plan makes of the imported identity.
func (s *Server) ImportThenPlan(t testing.TB, typeName, id string, cfg map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	got := s.importOne(t, typeName, id)
	return s.planOver(t, typeName, got.State, got.Private, cfg)
}

// ImportThenRead imports id into the resource typeName and reads it, as
// terraform import and an import block do, returning the read's
// diagnostics and whether the object is still in the state. The provider
// must have been configured (ConfigureProvider) with clients that can read.
func (s *Server) ImportThenRead(t testing.TB, typeName, id string) ([]*tfprotov6.Diagnostic, bool) {
	t.Helper()
	read := s.importRead(t, typeName, id)
	kept := false
	if read.NewState != nil {
		v, err := read.NewState.Unmarshal(s.ResourceType(t, typeName))
		if err != nil {
			t.Fatal(err)
		}
		kept = !v.IsNull()
	}
	return read.Diagnostics, kept
}

// ImportReadPlan is terraform import followed by terraform plan: it imports
// id into the resource typeName, reads it, and plans cfg over what the read
// left (state and private state), returning the read's and the plan's
// diagnostics, in that order. The provider must have been configured with
// clients that can read.
func (s *Server) ImportReadPlan(t testing.TB, typeName, id string, cfg map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	read := s.importRead(t, typeName, id)
	if errs := Errors(read.Diagnostics); len(errs) > 0 || read.NewState == nil {
		t.Fatalf("read after the import of %q:\n  %s", id, Describe(read.Diagnostics))
	}
	return append(read.Diagnostics, s.planOver(t, typeName, read.NewState, read.Private, cfg)...)
}

// planOver plans cfg over the prior state and private state of the resource
// typeName, returning the plan's diagnostics.
func (s *Server) planOver(t testing.TB, typeName string, state *tfprotov6.DynamicValue, private []byte, cfg map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	c := Dynamic(t, s.ResourceType(t, typeName), cfg)
	resp, err := s.srv.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: state, PriorPrivate: private, ProposedNewState: c, Config: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	return observe("resource", typeName, resp.Diagnostics)
}

// importOne imports id into the resource typeName and fails t unless the
// import succeeds with exactly one object.
func (s *Server) importOne(t testing.TB, typeName, id string) *tfprotov6.ImportedResource {
	t.Helper()
	imp, err := s.srv.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{TypeName: typeName, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if errs := Errors(imp.Diagnostics); len(errs) > 0 || len(imp.ImportedResources) != 1 {
		t.Fatalf("import of %q: %d objects\n  %s", id, len(imp.ImportedResources), Describe(imp.Diagnostics))
	}
	return imp.ImportedResources[0]
}

// importRead imports id and reads the imported object.
func (s *Server) importRead(t testing.TB, typeName, id string) *tfprotov6.ReadResourceResponse {
	t.Helper()
	got := s.importOne(t, typeName, id)
	resp, err := s.srv.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
		TypeName: typeName, CurrentState: got.State, Private: got.Private,
	})
	if err != nil {
		t.Fatal(err)
	}
	observe("resource", typeName, resp.Diagnostics)
	return resp
}
