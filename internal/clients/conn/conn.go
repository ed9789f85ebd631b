// Package conn owns the provider's clients: the resolved connection settings
// and the lazily built, shared Kubernetes and GKE clients that every
// resource and data source receives through Configure.
//
// Clients are built on first use and at most once per provider instance, so
// that (a) a plan touching no Kubernetes object never contacts a cluster and
// (b) a cluster whose address is unknown while planning (created in the same
// apply) does not break Configure.
package conn

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/gkeapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// Settings is the provider configuration after environment fallbacks.
type Settings struct {
	FieldManager string
	Kube         kube.Config
	// KubeUnknown is true while planning when a connection attribute depends
	// on a value known only after apply.
	KubeUnknown bool
	GKE         gkeapi.Config
	GKEUnknown  bool
}

// Meta is handed to every resource and data source.
type Meta struct {
	settings Settings

	kubeOnce   sync.Once
	kubeClient *kube.Client
	kubeErr    error

	gkeOnce   sync.Once
	gkeClient *gkeapi.Client
	gkeErr    error
}

// New returns a Meta that has not built any client yet.
func New(s Settings) *Meta {
	m := &Meta{settings: s}
	if s.Kube.GKECluster != "" && s.Kube.GKECredentials == nil {
		m.settings.Kube.GKECredentials = m.gkeClusterCredentials
	}
	return m
}

// FieldManager is the server-side apply field manager of every write.
func (m *Meta) FieldManager() string { return m.settings.FieldManager }

// GKEProject is the provider's default project ("" when none is configured).
func (m *Meta) GKEProject() string { return m.settings.GKE.Project }

// GKECluster is the cluster named by kubernetes.gke_cluster ("" when the
// connection does not come from GKE), so resources can ask the container
// API about the cluster they install into.
func (m *Meta) GKECluster() string { return m.settings.Kube.GKECluster }

// Kube returns the shared Kubernetes client, building it on first use.
func (m *Meta) Kube(ctx context.Context) (*kube.Client, diag.Diagnostics) {
	var diags diag.Diagnostics
	if m.settings.KubeUnknown {
		diags.AddError("Kubernetes connection not known yet",
			"The provider's kubernetes block uses values that are only known after apply (for example the "+
				"endpoint of a cluster created in this configuration), so the cluster cannot be read during this "+
				"plan. Apply the cluster first (terraform apply -target=...), or keep the connection settings known at plan time.")
		return nil, diags
	}
	m.kubeOnce.Do(func() {
		tflog.Debug(ctx, "building the Kubernetes client", map[string]any{"host": m.settings.Kube.Host, "config_paths": m.settings.Kube.ConfigPaths, "context": m.settings.Kube.ConfigContext, "gke_cluster": m.settings.Kube.GKECluster})
		m.kubeClient, m.kubeErr = kube.NewClient(ctx, m.settings.Kube)
	})
	if m.kubeErr != nil {
		diags.AddError("Cannot configure the Kubernetes client",
			fmt.Sprintf("%s\n\nCheck the provider's kubernetes block and the KUBE_* / KUBECONFIG environment variables.", m.kubeErr))
		return nil, diags
	}
	return m.kubeClient, diags
}

// GKE returns the shared container API client, building it on first use.
func (m *Meta) GKE(ctx context.Context) (*gkeapi.Client, diag.Diagnostics) {
	var diags diag.Diagnostics
	if m.settings.GKEUnknown {
		diags.AddError("GKE connection not known yet",
			"The provider's gke block uses values that are only known after apply, so the container API cannot be "+
				"called during this plan.")
		return nil, diags
	}
	m.gkeOnce.Do(func() {
		tflog.Debug(ctx, "building the GKE client", map[string]any{"project": m.settings.GKE.Project, "endpoint": m.settings.GKE.Endpoint})
		m.gkeClient, m.gkeErr = gkeapi.NewService(ctx, m.settings.GKE)
	})
	if m.gkeErr != nil {
		diags.AddError("Cannot configure the GKE client",
			fmt.Sprintf("%s\n\nCheck the provider's gke block, GOOGLE_CREDENTIALS / GOOGLE_OAUTH_ACCESS_TOKEN, or "+
				"Application Default Credentials (gcloud auth application-default login).", m.gkeErr))
		return nil, diags
	}
	return m.gkeClient, diags
}

func (m *Meta) gkeClusterCredentials(ctx context.Context, cluster string) (*kube.ClusterCredentials, error) {
	g, diags := m.GKE(ctx)
	if diags.HasError() {
		return nil, fmt.Errorf("kubernetes.gke_cluster needs the GKE client: %s", diags[0].Detail())
	}
	return g.ClusterCredentials(ctx, cluster)
}

// FromProviderData is the one Configure helper of every resource and data
// source. It returns nil without error while the provider is not configured
// yet (Terraform calls Configure on resources before the provider's own
// Configure during validation).
func FromProviderData(data any) (*Meta, diag.Diagnostics) {
	var diags diag.Diagnostics
	if data == nil {
		return nil, diags
	}
	m, ok := data.(*Meta)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *conn.Meta, got %T. This is a bug in the provider; please report it.", data))
		return nil, diags
	}
	return m, diags
}

// ForClients returns a Meta around clients that already exist, for unit
// tests of resources and for tools embedding the provider's logic. Either
// client may be nil when the caller never needs it.
func ForClients(fieldManager string, k *kube.Client, g *gkeapi.Client) *Meta {
	m := &Meta{settings: Settings{FieldManager: fieldManager}}
	m.kubeOnce.Do(func() { m.kubeClient = k })
	m.gkeOnce.Do(func() { m.gkeClient = g })
	if k == nil {
		m.kubeErr = fmt.Errorf("no Kubernetes client was given")
	}
	if g == nil {
		m.gkeErr = fmt.Errorf("no GKE client was given")
	}
	return m
}
