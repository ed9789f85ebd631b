package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// isolatedFactories serves the provider with an empty environment, so a
// KUBECONFIG or KUBE_* variable of the machine running the tests cannot
// change what these tests prove.
func isolatedFactories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"agentsandbox": providerserver.NewProtocol6WithError(&agentSandboxProvider{
			version:   "test",
			lookupEnv: func(string) (string, bool) { return "", false },
		}),
	}
}

func providerBlock(f *fakeAPIServer, token string) string {
	return fmt.Sprintf(`
provider "agentsandbox" {
  kubernetes {
    host                   = %q
    token                  = %q
    cluster_ca_certificate = %q
  }
}
`, f.URL, token, f.CAPEM)
}

// A plan and apply whose configuration has no Kubernetes object to read or
// write must not contact the cluster at all: clients are built lazily.
func TestProvider_lazyClientsMakeNoRequests(t *testing.T) {
	f := newFakeAPIServer(t, "lazy-token")
	before := kube.RequestCount()
	config := func(count int) string {
		return providerBlock(f, "lazy-token") + fmt.Sprintf(`
resource "terraform_data" "unrelated" {
  input = "hello"
}

data "agentsandbox_cluster" "this" {
  count = %d
}
`, count)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: isolatedFactories(),
		Steps: []resource.TestStep{
			{
				Config: config(0),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					if n := f.Requests(); n != 0 {
						return fmt.Errorf("the API server saw %d requests (%v); want 0", n, f.paths)
					}
					if n := kube.RequestCount() - before; n != 0 {
						return fmt.Errorf("the request counter says %d requests; want 0", n)
					}
					return nil
				},
			},
			{
				// Positive control: the same server and counter do see
				// requests once a data source needs the cluster.
				Config: config(1),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.agentsandbox_cluster.this[0]", tfjsonpath.New("server_version"), knownvalue.StringExact("v1.37.2-fake")),
					statecheck.ExpectKnownValue("data.agentsandbox_cluster.this[0]", tfjsonpath.New("gvisor_runtime_class"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.agentsandbox_cluster.this[0]", tfjsonpath.New("runtime_handler"), knownvalue.StringExact("runsc")),
					statecheck.ExpectKnownValue("data.agentsandbox_cluster.this[0]", tfjsonpath.New("sandbox_api_versions"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact("agents.x-k8s.io/v1alpha1"),
						knownvalue.StringExact("agents.x-k8s.io/v1beta1"),
						knownvalue.StringExact("extensions.agents.x-k8s.io/v1beta1"),
					})),
				},
				Check: func(*terraform.State) error {
					if f.Requests() == 0 || kube.RequestCount()-before == 0 {
						return fmt.Errorf("expected requests once the data source is read: server %d, counter %d", f.Requests(), kube.RequestCount()-before)
					}
					return nil
				},
			},
		},
	})
}

// The connection may depend on values known only after apply (a cluster
// created in the same configuration): Configure must accept unknown values
// and the data source is read once they are known.
func TestProvider_connectionUnknownAtPlan(t *testing.T) {
	f := newFakeAPIServer(t, "later-token")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: isolatedFactories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = {
    endpoint = %q
    ca       = %q
  }
}

provider "agentsandbox" {
  kubernetes {
    host                   = terraform_data.cluster.output.endpoint
    cluster_ca_certificate = terraform_data.cluster.output.ca
    token                  = "later-token"
  }
}

data "agentsandbox_cluster" "this" {
  depends_on = [terraform_data.cluster]
}
`, f.URL, f.CAPEM),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("host"), knownvalue.StringExact(f.URL)),
				statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("server_version"), knownvalue.StringExact("v1.37.2-fake")),
			},
		}},
	})
}

// TLS verification is on unless insecure = true is set explicitly.
func TestProvider_insecureRequiresExplicitOptIn(t *testing.T) {
	f := newFakeAPIServer(t, "")
	config := func(extra string) string {
		return fmt.Sprintf(`
provider "agentsandbox" {
  kubernetes {
    host = %q
    %s
  }
}

data "agentsandbox_cluster" "this" {}
`, f.URL, extra)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: isolatedFactories(),
		Steps: []resource.TestStep{
			{
				// Neither a CA nor insecure: the self-signed server is refused.
				Config:      config(""),
				ExpectError: regexp.MustCompile(`(?s)certificate.*(unknown authority|not trusted)`),
			},
			{
				Config: config("insecure = true"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("server_version"), knownvalue.StringExact("v1.37.2-fake")),
				},
			},
		},
	})
}

// A client certificate and key authenticate, and a wrong token is reported
// as the server's 401 with advice, not as a crash.
func TestProvider_clientCertificateAndUnauthorized(t *testing.T) {
	f := newFakeAPIServer(t, "right-token")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: isolatedFactories(),
		Steps: []resource.TestStep{
			{
				Config:      providerBlock(f, "wrong-token") + `data "agentsandbox_cluster" "this" {}`,
				ExpectError: regexp.MustCompile(`(?i)unauthori[sz]ed`),
			},
			{
				Config: fmt.Sprintf(`
provider "agentsandbox" {
  kubernetes {
    host                   = %q
    token                  = "right-token"
    cluster_ca_certificate = %q
    client_certificate     = %q
    client_key             = %q
  }
}

data "agentsandbox_cluster" "this" {}
`, f.URL, f.CAPEM, f.ClientCert, f.ClientKey),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.agentsandbox_cluster.this", tfjsonpath.New("gvisor_runtime_class"), knownvalue.Bool(true)),
				},
			},
		},
	})
}
