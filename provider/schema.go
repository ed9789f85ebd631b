package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// providerSchema is the provider's configuration. Every attribute is
// optional: with none set the provider reads the environment variables
// named in each description, then the kubeconfig they point at.
func providerSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The agentsandbox provider declares the pieces that run untrusted AI-agent code safely on " +
			"Kubernetes and GKE: gVisor node pools, the agent-sandbox controller, hardened sandbox templates, warm pools, " +
			"sandboxes, claims and isolation network policies.\n\n" +
			"Clients are built lazily on first use: a plan that touches no Kubernetes object never contacts a cluster, " +
			"and the connection may use values that are only known after apply (for example a cluster created in the " +
			"same configuration).",
		Attributes: map[string]schema.Attribute{
			"field_manager": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Field manager name used for server-side apply. Defaults to `" + defaultFieldManager + "`, " +
					"or the `AGENTSANDBOX_FIELD_MANAGER` environment variable. Change it only when two configurations " +
					"must own different fields of the same objects.",
				Validators: []validator.String{
					stringvalidator.LengthBetween(1, 128),
				},
			},
		},
		Blocks: map[string]schema.Block{
			"kubernetes": kubernetesBlock(),
			"gke":        gkeBlock(),
		},
	}
}

func kubernetesBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "How to reach the Kubernetes API server. Explicit attributes win over environment " +
			"variables, which win over values read from the kubeconfig. When nothing is set, the files in " +
			"`KUBECONFIG` are used, as kubectl does; `~/.kube/config` is never read implicitly, so a misconfigured " +
			"run cannot silently reach whatever cluster a workstation was last pointed at.",
		Attributes: map[string]schema.Attribute{
			"config_path": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Path to a kubeconfig file. Environment: `KUBE_CONFIG_PATH`, then `KUBE_CONFIG_PATHS` " +
					"(a list separated like `PATH`), then `KUBECONFIG`.",
			},
			"config_context": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Context of the kubeconfig to use instead of its current context. Environment: `KUBE_CTX`.",
			},
			"host": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Address of the API server, e.g. `https://10.0.0.1:443`; without a scheme, `https` is used. " +
					"Overrides the kubeconfig's server. Credentials are never sent to an `http://` address unless " +
					"`allow_credentials_over_http` is true. Environment: `KUBE_HOST`.",
			},
			"token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "Bearer token. Never logged. Environment: `KUBE_TOKEN`.",
			},
			"cluster_ca_certificate": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "PEM-encoded certificate authority that signed the API server's certificate. " +
					"Environment: `KUBE_CLUSTER_CA_CERT_DATA`.",
			},
			"client_certificate": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "PEM-encoded client certificate for TLS client authentication. Environment: `KUBE_CLIENT_CERT_DATA`.",
			},
			"client_key": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "PEM-encoded private key of `client_certificate`. Never logged. Environment: `KUBE_CLIENT_KEY_DATA`.",
			},
			"insecure": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Skip verification of the API server's certificate. Off by default and never turned " +
					"on implicitly; use only against throw-away clusters. The connection is still encrypted: this does " +
					"not allow an `http://` host (see `allow_credentials_over_http`). Environment: `KUBE_INSECURE`.",
			},
			"allow_credentials_over_http": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Allow credentials (a token, an `exec` plugin's output, the GKE token, basic auth) to be " +
					"sent to an `http://` host, in clear text. Off by default: with an `http://` host and any credential the " +
					"provider refuses to connect and sends nothing (an address without a scheme means `https`). Set it only " +
					"for a throw-away cluster on a network you trust. Unrelated to `insecure`. Environment: " +
					"`KUBE_ALLOW_CREDENTIALS_OVER_HTTP`.",
			},
			"tls_server_name": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Server name to verify the API server's certificate against, when it differs from " +
					"the host (e.g. when connecting through an IP address). Environment: `KUBE_TLS_SERVER_NAME`.",
			},
			"proxy_url": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "URL of a proxy (`http`, `https` or `socks5`) for API server traffic. Environment: `KUBE_PROXY_URL`.",
			},
			"gke_cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "A GKE cluster resource name, `projects/P/locations/L/clusters/C`. The API server " +
					"address and CA come from the container API and the bearer token from the `gke` block's Google " +
					"credentials, so no kubeconfig or gcloud plugin is needed. Conflicts with `host`, `config_path` and `exec`.",
				Validators: []validator.String{
					stringvalidator.RegexMatches(gkeClusterNameRE, "must be a GKE cluster resource name of the form projects/PROJECT/locations/LOCATION/clusters/NAME"),
					stringvalidator.ConflictsWith(
						path.MatchRelative().AtParent().AtName("host"),
						path.MatchRelative().AtParent().AtName("config_path"),
					),
				},
			},
			"qps": schema.Float64Attribute{
				Optional:            true,
				MarkdownDescription: "Client-side rate limit, in requests per second, shared by every resource. Default 1000: a guard against runaway loops rather than a throttle, because Terraform's `-parallelism` already bounds the requests in flight, the API server protects itself with priority and fairness, and the provider honours its 429 + Retry-After answers. Lower it only for a server without priority and fairness.",
				Validators:          []validator.Float64{float64validator.Between(1, 10000)},
			},
			"burst": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Burst allowed above `qps`. Default 2000.",
				Validators:          []validator.Int64{int64validator.Between(1, 100000)},
			},
		},
		Blocks: map[string]schema.Block{
			"exec": schema.SingleNestedBlock{
				MarkdownDescription: "A credential plugin run to obtain a token or client certificate, as kubectl's " +
					"`users[].user.exec` (for example `gke-gcloud-auth-plugin` or `aws eks get-token`).",
				Attributes: map[string]schema.Attribute{
					"api_version": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "API version of the ExecCredential exchanged with the plugin: " +
							"`client.authentication.k8s.io/v1` or `client.authentication.k8s.io/v1beta1`. Required when the block is set.",
						Validators: []validator.String{
							stringvalidator.OneOf("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"),
						},
					},
					"command": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Command to run (looked up in `PATH`). Required when the block is set.",
						Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
					},
					"args": schema.ListAttribute{
						Optional:            true,
						ElementType:         stringType,
						MarkdownDescription: "Arguments passed to the command.",
					},
					"env": schema.MapAttribute{
						Optional:            true,
						ElementType:         stringType,
						MarkdownDescription: "Environment variables set for the command, on top of the provider's environment.",
					},
				},
			},
		},
	}
}

func gkeBlock() schema.SingleNestedBlock {
	return schema.SingleNestedBlock{
		MarkdownDescription: "How to reach the GKE container API, used by the `agentsandbox_gke_*` resources and by " +
			"`kubernetes.gke_cluster`. Without `credentials` or `access_token`, Application Default Credentials are used.",
		Attributes: map[string]schema.Attribute{
			"project": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Default project for GKE resources that do not name one. Environment: `GOOGLE_PROJECT`, " +
					"`GOOGLE_CLOUD_PROJECT`, `GCLOUD_PROJECT`, `CLOUDSDK_CORE_PROJECT`.",
			},
			"credentials": schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: "Google credentials: the JSON document itself, or the path of a file holding it. Never " +
					"logged. Environment: `GOOGLE_CREDENTIALS`, `GOOGLE_CLOUD_KEYFILE_JSON`, `GCLOUD_KEYFILE_JSON`. " +
					"Conflicts with `access_token`.",
				Validators: []validator.String{
					stringvalidator.ConflictsWith(path.MatchRelative().AtParent().AtName("access_token")),
				},
			},
			"access_token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "An OAuth2 access token used as is (it is not refreshed). Never logged. Environment: `GOOGLE_OAUTH_ACCESS_TOKEN`.",
			},
			"endpoint": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Base URL of the container API, for private or regional endpoints and for tests " +
					"against an emulator. Every request carries the Google " +
					"access token, so an `http://` endpoint is refused unless `allow_credentials_over_http` is true. " +
					"Environment: `GOOGLE_CONTAINER_CUSTOM_ENDPOINT`.",
			},
			"allow_credentials_over_http": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Send the Google access token to an `http://` `endpoint`, unencrypted. Defaults to " +
					"false: anyone on the network path could read and reuse the token. Only for an emulator on a network " +
					"you trust (the local stand-in of `make demo`).",
			},
			"request_timeout": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Timeout of a single HTTP request to the container API, as a Go duration (`30s`, `2m`). " +
					"Long-running operations are bounded by each resource's `timeouts` instead.",
				Validators: []validator.String{validators.Duration()},
			},
		},
	}
}
