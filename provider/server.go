package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/fastpath"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/nestedattr"
)

// NewProtocol6 returns the constructor of the server Terraform talks to:
// the framework's protocol 6 server with the fast path in front of it
// (package fastpath: plans of unchanged resources and state upgrades at the
// current version are answered without the framework's conversions; every
// other call is the framework's), and in front of both the layer that makes
// diagnostics of nested attributes readable (package nestedattr).
func NewProtocol6(version string) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer {
		srv, err := NewProtocol6WithError(version)()
		if err != nil {
			panic(err)
		}
		return srv
	}
}

// NewProtocol6WithError is NewProtocol6 for the acceptance tests' factories.
func NewProtocol6WithError(version string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		p := &agentSandboxProvider{version: version, lookupEnv: osLookupEnv}
		fast, err := newServer(p)
		if err != nil {
			return nil, err
		}
		return nestedattr.New(fast, p), nil
	}
}

func newServer(p *agentSandboxProvider) (*fastpath.Server, error) {
	fw, ok := providerserver.NewProtocol6(p)().(fastpath.FrameworkServer)
	if !ok {
		return nil, fmt.Errorf("the framework's protocol 6 server lacks a service fastpath.FrameworkServer expects")
	}
	return fastpath.New(fw, TypeName, p.Resources(context.Background()), p.resourceData), nil
}
