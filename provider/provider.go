// Package provider defines the agentsandbox provider: its configuration
// schema, how that configuration (and the environment) becomes connection
// settings, and the list of resources and data sources it serves.
package provider

import (
	"context"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/cluster"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/controller"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/gke"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/isolationreport"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/networkpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandbox"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxclaim"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/sandboxtemplate"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/resources/warmpool"
)

// RegistryAddress is where the provider is published.
const RegistryAddress = "registry.terraform.io/agentsandbox/agentsandbox"

// TypeName is the provider's local name and the prefix of every resource type.
const TypeName = "agentsandbox"

var (
	_ provider.Provider                   = (*agentSandboxProvider)(nil)
	_ provider.ProviderWithValidateConfig = (*agentSandboxProvider)(nil)
)

// New returns a constructor for the provider, as providerserver and the
// acceptance-test factories expect.
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &agentSandboxProvider{version: version, lookupEnv: osLookupEnv}
	}
}

type agentSandboxProvider struct {
	version string
	// lookupEnv is os.LookupEnv in production; tests replace it so that
	// precedence can be checked without touching the process environment.
	lookupEnv func(string) (string, bool)
	// configured is what Configure handed to resources, for the fast path
	// (provider/server.go), which configures resources the way the
	// framework does.
	configured atomic.Pointer[conn.Meta]
	// fastPath is FastPathVar as the server was built with it (server.go);
	// the zero value (a provider served without NewProtocol6) reports
	// nothing.
	fastPath fastPathSetting
}

// resourceData returns what Configure handed to resources, and false
// before Configure has run.
func (p *agentSandboxProvider) resourceData() (any, bool) {
	m := p.configured.Load()
	return m, m != nil
}

func (p *agentSandboxProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = TypeName
	resp.Version = p.version
}

func (p *agentSandboxProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = providerSchema()
}

func (p *agentSandboxProvider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	p.fastPath.report(ctx, &resp.Diagnostics)
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(cfg.validate()...)
	resp.Diagnostics.Append(cfg.validateLocal()...)
}

// Configure resolves the configuration and the environment into connection
// settings but builds no client and contacts nothing: the clients are made
// on first use (conn.Meta), so a cluster created in the same apply, whose
// address is unknown while planning, can still be configured here.
func (p *agentSandboxProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	p.fastPath.report(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	settings, diags := cfg.resolve(p.lookupEnv, p.version)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(checkKubeconfig(cfg, settings)...)
	meta := conn.New(settings)
	resp.ResourceData = meta
	resp.DataSourceData = meta
	p.configured.Store(meta)
}

func (p *agentSandboxProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		networkpolicy.NewResource,
		controller.NewResource,
		controller.NewRouterResource,
		gke.NewNodePoolResource,
		gke.NewAddonResource,
		gke.NewPodSnapshotsResource,
		sandboxtemplate.NewResource,
		sandbox.NewResource,
		warmpool.NewResource,
		sandboxclaim.NewResource,
	}
}

func (p *agentSandboxProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		cluster.NewDataSource,
		gke.NewClusterDataSource,
		networkpolicy.NewDataSource,
		sandboxtemplate.NewDataSource,
		sandbox.NewDataSource,
		warmpool.NewDataSource,
		sandboxclaim.NewDataSource,
		isolationreport.NewDataSource,
	}
}
