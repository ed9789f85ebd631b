package nestedattr

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// refuse answers a configuration with a fraction in a nested integer before
// the framework reads it; nil when there is none (or the configuration
// cannot be decoded, which the framework then reports).
func (sh shape) refuse(cfg *tfprotov6.DynamicValue) []*tfprotov6.Diagnostic {
	if !sh.nestedInts || cfg == nil || sh.typ == nil {
		return nil
	}
	v, err := cfg.Unmarshal(sh.typ)
	if err != nil {
		return nil
	}
	return Fractions(sh.attrs, v)
}

func (s *Server) ValidateProviderConfig(ctx context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	if d := s.provider.refuse(req.Config); d != nil {
		return &tfprotov6.ValidateProviderConfigResponse{Diagnostics: d}, nil
	}
	resp, err := s.Inner.ValidateProviderConfig(ctx, req)
	if resp != nil {
		s.provider.Locate(resp.Diagnostics)
	}
	return resp, err
}

func (s *Server) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	if d := s.provider.refuse(req.Config); d != nil {
		return &tfprotov6.ConfigureProviderResponse{Diagnostics: d}, nil
	}
	resp, err := s.Inner.ConfigureProvider(ctx, req)
	if resp != nil {
		s.provider.Locate(resp.Diagnostics)
	}
	return resp, err
}

func (s *Server) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	sh := s.resources[req.TypeName]
	if d := sh.refuse(req.Config); d != nil {
		return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: d}, nil
	}
	resp, err := s.Inner.ValidateResourceConfig(ctx, req)
	if resp != nil {
		sh.Locate(resp.Diagnostics)
	}
	return resp, err
}

func (s *Server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	sh := s.resources[req.TypeName]
	// A value unknown at validation (another resource's output) is known
	// here.
	if d := sh.refuse(req.Config); d != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: d}, nil
	}
	resp, err := s.Inner.PlanResourceChange(ctx, req)
	if resp != nil {
		sh.Locate(resp.Diagnostics)
	}
	return resp, err
}

func (s *Server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	resp, err := s.Inner.ApplyResourceChange(ctx, req)
	if resp != nil {
		s.resources[req.TypeName].Locate(resp.Diagnostics)
	}
	return resp, err
}

func (s *Server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	resp, err := s.Inner.ReadResource(ctx, req)
	if resp != nil {
		s.resources[req.TypeName].Locate(resp.Diagnostics)
	}
	return resp, err
}

func (s *Server) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	resp, err := s.Inner.ImportResourceState(ctx, req)
	if resp != nil {
		s.resources[req.TypeName].Locate(resp.Diagnostics)
	}
	return resp, err
}

func (s *Server) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	sh := s.dataSources[req.TypeName]
	if d := sh.refuse(req.Config); d != nil {
		return &tfprotov6.ValidateDataResourceConfigResponse{Diagnostics: d}, nil
	}
	resp, err := s.Inner.ValidateDataResourceConfig(ctx, req)
	if resp != nil {
		sh.Locate(resp.Diagnostics)
	}
	return resp, err
}

func (s *Server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	sh := s.dataSources[req.TypeName]
	if d := sh.refuse(req.Config); d != nil {
		return &tfprotov6.ReadDataSourceResponse{Diagnostics: d}, nil
	}
	resp, err := s.Inner.ReadDataSource(ctx, req)
	if resp != nil {
		sh.Locate(resp.Diagnostics)
	}
	return resp, err
}
