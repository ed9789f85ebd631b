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
//
// With AGENTSANDBOX_FASTPATH=off in the environment (FastPathVar, read when
// the server is built) there is no fast path: nestedattr's layer is in
// front of the framework's server itself, and every call is the
// framework's.
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
// Each call builds a new server and reads FastPathVar again, so a test that
// sets the variable (t.Setenv) gets the servers it asks for.
func NewProtocol6WithError(version string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		return newProtocol6Server(&agentSandboxProvider{version: version, lookupEnv: osLookupEnv})
	}
}

// newProtocol6Server builds the chain for p, the fast path in it or not as
// p.lookupEnv's FastPathVar says. An invalid value builds the chain without
// the fast path and is the provider's configuration error (fastPathSetting.
// report): nothing is planned or applied with it.
func newProtocol6Server(p *agentSandboxProvider) (*nestedattr.Server, error) {
	p.fastPath = readFastPathSetting(p.lookupEnv)
	if !p.fastPath.on {
		fw, err := frameworkServer(p)
		if err != nil {
			return nil, err
		}
		return nestedattr.New(fw, p), nil
	}
	fast, err := newServer(p)
	if err != nil {
		return nil, err
	}
	return nestedattr.New(fast, p), nil
}

func frameworkServer(p *agentSandboxProvider) (fastpath.FrameworkServer, error) {
	fw, ok := providerserver.NewProtocol6(p)().(fastpath.FrameworkServer)
	if !ok {
		return nil, fmt.Errorf("the framework's protocol 6 server lacks a service fastpath.FrameworkServer expects")
	}
	return fw, nil
}

// newServer is the fast path in front of the framework's server of p,
// whatever the environment says (the fast path's own tests compare it with
// the framework).
func newServer(p *agentSandboxProvider) (*fastpath.Server, error) {
	fw, err := frameworkServer(p)
	if err != nil {
		return nil, err
	}
	return fastpath.New(fw, TypeName, p.Resources(context.Background()), p.resourceData), nil
}
