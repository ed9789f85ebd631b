package controller

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/router"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// Defaults of agentsandbox_sandbox_router. Those that are upstream's cite
// sandbox-router/deploy/deployment.yaml at v1.0.3 (the line of the flag).
const (
	// routerDefaultNamespace is where upstream's template controller expects
	// the router: the NetworkPolicy it manages for a template admits only
	// pods labelled app=sandbox-router in this namespace
	// (extensions/controllers/sandboxtemplate_controller.go:193-204).
	routerDefaultNamespace     = "agent-sandbox-system"
	routerDefaultReplicas      = 2               // deployment.yaml:19
	routerDefaultClusterDomain = "cluster.local" // deployment.yaml:63
	routerDefaultProxyTimeout  = "180s"          // deployment.yaml:64
	routerDefaultRetries       = 3               // deployment.yaml:67
	routerDefaultMinAvailable  = 1               // pdb.yaml:15
	routerDefaultSandboxPort   = 8888            // networkpolicy.yaml:58, the SDK's default port

	authzTokenReview = "tokenreview"
	authzScopedToken = "scoped-token"
	authzAllowAll    = "allow-all"
)

// noCommaRE is a value that can be one element of a comma-separated flag.
var noCommaRE = regexp.MustCompile(`^[^,\s]+$`)

// routerModel is agentsandbox_sandbox_router's Terraform data.
type routerModel struct {
	installedModel // inventory, timeouts

	ID                              types.String `tfsdk:"id"`
	Version                         types.String `tfsdk:"version"`
	Namespace                       types.String `tfsdk:"namespace"`
	Replicas                        types.Int64  `tfsdk:"replicas"`
	Image                           types.String `tfsdk:"image"`
	ImageRegistry                   types.String `tfsdk:"image_registry"`
	ImagePullPolicy                 types.String `tfsdk:"image_pull_policy"`
	ImagePullSecrets                types.List   `tfsdk:"image_pull_secrets"`
	Resources                       types.Object `tfsdk:"resources"`
	ClusterDomain                   types.String `tfsdk:"cluster_domain"`
	ProxyTimeout                    types.String `tfsdk:"proxy_timeout"`
	UpstreamMaxRetries              types.Int64  `tfsdk:"upstream_max_retries"`
	CacheEnabled                    types.Bool   `tfsdk:"cache_enabled"`
	CacheNamespace                  types.String `tfsdk:"cache_namespace"`
	AuthzMode                       types.String `tfsdk:"authz_mode"`
	AuthzRequireToken               types.Bool   `tfsdk:"authz_require_token"`
	AuthzAudiences                  types.List   `tfsdk:"authz_audiences"`
	AuthzScopedTokenSecret          types.Object `tfsdk:"authz_scoped_token_secret"`
	AuthzScopedTokenVerificationKey types.Object `tfsdk:"authz_scoped_token_verification_keys_secret"`
	TLSSecretName                   types.String `tfsdk:"tls_secret_name"`
	PDBMinAvailable                 types.Int64  `tfsdk:"pdb_min_available"`
	TopologySpread                  types.Bool   `tfsdk:"topology_spread"`
	NodeSelector                    types.Map    `tfsdk:"node_selector"`
	Tolerations                     types.List   `tfsdk:"tolerations"`
	Affinity                        types.String `tfsdk:"affinity"`
	NetworkPolicy                   types.Bool   `tfsdk:"network_policy"`
	AllowedClients                  types.List   `tfsdk:"allowed_clients"`
	AllowClientsFromAllNamespaces   types.Bool   `tfsdk:"allow_clients_from_all_namespaces"`
	MetricsNamespace                types.String `tfsdk:"metrics_namespace"`
	SandboxNamespaces               types.Set    `tfsdk:"sandbox_namespaces"`
	SandboxPorts                    types.List   `tfsdk:"sandbox_ports"`
	APIServerCIDRs                  types.List   `tfsdk:"api_server_cidrs"`
	DNSCIDRs                        types.List   `tfsdk:"dns_cidrs"`
	Wait                            types.Bool   `tfsdk:"wait"`
	ServiceName                     types.String `tfsdk:"service_name"`
	ServicePort                     types.Int64  `tfsdk:"service_port"`
	URL                             types.String `tfsdk:"url"`
}

type secretKeyModel struct {
	Name types.String `tfsdk:"name"`
	Key  types.String `tfsdk:"key"`
}

type clientModel struct {
	Namespace types.String `tfsdk:"namespace"`
	PodLabels types.Map    `tfsdk:"pod_labels"`
}

// routerVersionValid refuses a release without a router, naming those
// that have one.
var routerVersionValid = validators.Valid("Release without a sandbox router",
	"must be a release of agent-sandbox that ships the Go sandbox router: "+strings.Join(router.Versions(), ", ")+
		" (v0.5.5 and older have no sandbox-router/; v0.5.1, v0.5.4, v1.0.0 and v1.0.2 are not served by the Go module "+
		"proxy, so this provider has not read their manifests)",
	router.Has)

func secretKeyAttribute(description, defaultKey string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the Secret, in the router's namespace. This resource does not create it.",
				Validators:          []validator.String{validators.DNSSubdomainName()},
			},
			"key": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Key of the Secret holding the value, e.g. `" + defaultKey + "`.",
				Validators:          []validator.String{validators.ConfigMapKey()},
			},
		},
	}
}

func (r *routerResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	pod := podSettingsAttributes()
	pullPolicy, _ := pod["image_pull_policy"].(schema.StringAttribute)
	pullPolicy.MarkdownDescription = "The router container's `imagePullPolicy`: `Always`, `IfNotPresent` (the release's) or `Never`."
	pullSecrets, _ := pod["image_pull_secrets"].(schema.ListAttribute)
	pullSecrets.MarkdownDescription = "Names of Secrets in the router's namespace holding credentials for the registry of the " +
		"router image, e.g. a private mirror with `image_registry` or `image`. The Secrets are not created by this resource."
	affinity, _ := pod["affinity"].(schema.StringAttribute)
	affinity.MarkdownDescription = strings.Replace(affinity.MarkdownDescription, "The controller pod's `affinity` (the chart's `affinity`)",
		"The router pods' `affinity`", 1)

	resp.Schema = schema.Schema{
		MarkdownDescription: "Installs the Go **sandbox router** of an agent-sandbox release, the one entry point upstream's " +
			"clients (the Go and Python SDKs) use to reach sandboxes, from that release's own deploy manifests " +
			"(`sandbox-router/deploy/` of the module `sigs.k8s.io/agent-sandbox`, embedded in the provider byte for byte), " +
			"**hardened by default**:\n\n" +
			"* authorization on: `--authz-mode=tokenreview` with `--authz-tokenreview-require-token=true`, so a request " +
			"without a valid Kubernetes bearer token is refused with 401 (upstream's default is `allow-all`);\n" +
			"* non-root, read-only root filesystem, no capabilities, no privilege escalation, seccomp `RuntimeDefault`, " +
			"resource limits;\n" +
			"* the service-account token is mounted only because TokenReview and the Pod-IP cache need it (with " +
			"`authz_mode = \"scoped-token\"` and `cache_enabled = false` it is not);\n" +
			"* NetworkPolicies: nothing reaches the proxy port over the pod network but the clients named in " +
			"`allowed_clients` (port-forwarding, the SDKs' default mode, does not cross the pod network), metrics only " +
			"from `metrics_namespace`, and the router reaches only sandbox pods (on `sandbox_ports`), DNS and the API server.\n\n" +
			"Every loosening is an attribute of its own with a plan-time warning: `authz_mode = \"allow-all\"`, " +
			"`authz_require_token = false`, `allow_clients_from_all_namespaces = true`, `network_policy = false`.\n\n" +
			"The router is its own resource rather than part of `agentsandbox_controller` because it is optional, scales " +
			"and is exposed on its own, and a platform may run it in several namespaces; it installs with the controller's " +
			"installer (staged server-side apply, inventory in state, prune on upgrade, drift repaired on the next apply). " +
			"In `agent-sandbox-system` (the default) it is where the NetworkPolicies that upstream's template controller " +
			"manages expect it; elsewhere, those policies do not admit it. See the guide *Hardening choices*, section *The sandbox router*.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`<namespace>/<version>`, e.g. `agent-sandbox-system/v1.0.3`; also the import ID.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"version": schema.StringAttribute{
				Optional: true, Computed: true,
				Default: stringdefault.StaticString(router.DefaultVersion),
				MarkdownDescription: "Release whose router to install: " + strings.Join(router.Versions(), ", ") + " (the releases " +
					"that ship `sandbox-router/`). Default `" + router.DefaultVersion + "`, the release the provider is built " +
					"against; use the version of your `agentsandbox_controller`. Changing it upgrades in place.",
				Validators: []validator.String{routerVersionValid},
			},
			"namespace": schema.StringAttribute{
				Optional: true, Computed: true,
				Default: stringdefault.StaticString(routerDefaultNamespace),
				MarkdownDescription: "Namespace to run the router in; it must exist (the controller's creates `" + routerDefaultNamespace +
					"`). Default `" + routerDefaultNamespace + "`, the only namespace the NetworkPolicies upstream's template " +
					"controller manages admit the router from. Changing it replaces the router. Outside that namespace the " +
					"cluster-scoped RBAC objects are named `<upstream name>-<namespace>` so that routers of several namespaces coexist.",
				Validators:    []validator.String{validators.DNSLabelName()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"replicas": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:             int64default.StaticInt64(routerDefaultReplicas),
				MarkdownDescription: fmt.Sprintf("Router replicas. Default %d (upstream's, for availability).", routerDefaultReplicas),
				Validators:          []validator.Int64{int64validator.Between(0, 100)},
			},
			"image": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The router image, e.g. `mirror.example.com/agent-sandbox/sandbox-router-go@sha256:...`. " +
					"Unset: the release manifest's, `registry.k8s.io/agent-sandbox/sandbox-router-go:latest`, a floating tag " +
					"(upstream's manifests name no versioned router image), so pin a digest or a build of the release's " +
					"`sandbox-router/` here. Conflicts with `image_registry`.",
				Validators: []validator.String{validators.ImageReference(), stringvalidator.ConflictsWith(path.MatchRoot("image_registry"))},
			},
			"image_registry": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Rewrite the release's router image to this registry (host, optional port and path), " +
					"keeping repository and tag, as `agentsandbox_controller`'s `image_registry` does: with " +
					"`mirror.example.com/k8s` the image is `mirror.example.com/k8s/agent-sandbox/sandbox-router-go:latest`.",
				Validators: []validator.String{stringvalidator.RegexMatches(imageRegistryRE,
					"must be a registry host with an optional port and path, without scheme or tag, e.g. mirror.example.com:5000/k8s")},
			},
			"image_pull_policy":  pullPolicy,
			"image_pull_secrets": pullSecrets,
			"resources": resourcesAttribute("Replaces the router container's requests and limits (the release's: requests " +
				"`{ cpu = \"250m\", memory = \"256Mi\" }`, limits `{ cpu = \"2\", memory = \"1Gi\" }`). Without `limits` a " +
				"plan warns: one router's load could then starve its node."),
			"cluster_domain": schema.StringAttribute{
				Optional: true, Computed: true,
				Default:             stringdefault.StaticString(routerDefaultClusterDomain),
				MarkdownDescription: "The cluster's DNS suffix (`--cluster-domain`), used to build sandbox FQDNs and `url`. Default `" + routerDefaultClusterDomain + "`.",
				Validators:          []validator.String{validators.DNSSubdomainName()},
			},
			"proxy_timeout": schema.StringAttribute{
				Optional: true, Computed: true,
				Default:             stringdefault.StaticString(routerDefaultProxyTimeout),
				MarkdownDescription: "Total time budget of one proxied request (`--proxy-timeout`), a Go duration. Default `" + routerDefaultProxyTimeout + "`.",
				Validators:          []validator.String{validators.Duration()},
			},
			"upstream_max_retries": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default:             int64default.StaticInt64(routerDefaultRetries),
				MarkdownDescription: fmt.Sprintf("Extra dial attempts to a sandbox not answering yet (`--upstream-max-retries`). Default %d.", routerDefaultRetries),
				Validators:          []validator.Int64{int64validator.Between(0, 100)},
			},
			"cache_enabled": schema.BoolAttribute{
				Optional: true, Computed: true,
				Default: booldefault.StaticBool(true),
				MarkdownDescription: "The router's Pod-IP cache (`--cache-enabled`, the release's default): it watches sandbox pods " +
					"(label `" + sandboxapi.LabelSandboxNameHash + "`) and dials their IPs, which needs get/list/watch on pods: " +
					"the release's ClusterRole `sandbox-router` (rbac.yaml), or a Role in `cache_namespace`. `false` routes by DNS " +
					"only and installs no pod-reading RBAC.",
			},
			"cache_namespace": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Watch sandbox pods of this namespace only (`--cache-namespace`), and grant the pod read access " +
					"as a Role and RoleBinding there instead of the release's ClusterRole, as rbac.yaml suggests for routers " +
					"serving one namespace.",
				Validators: []validator.String{validators.DNSLabelName()},
			},
			"authz_mode": schema.StringAttribute{
				Optional: true, Computed: true,
				Default: stringdefault.StaticString(authzTokenReview),
				MarkdownDescription: "How the router authorizes each request (`--authz-mode`): `tokenreview` (default: the " +
					"`Authorization: Bearer` token must be one the API server authenticates, checked with a TokenReview; the " +
					"release's rbac-tokenreview.yaml grants `system:auth-delegator`), `scoped-token` (a per-sandbox token " +
					"signed with `authz_scoped_token_secret`, or from v1.0.3 verified with `authz_scoped_token_verification_keys_secret`), " +
					"or `allow-all` (upstream's default: anyone who reaches the router reaches every sandbox; a plan warns).",
				Validators: []validator.String{stringvalidator.OneOf(authzTokenReview, authzScopedToken, authzAllowAll)},
			},
			"authz_require_token": schema.BoolAttribute{
				Optional: true, Computed: true,
				Default: booldefault.StaticBool(true),
				MarkdownDescription: "With `tokenreview`: refuse requests without a bearer token (`--authz-tokenreview-require-token`). " +
					"Default `true`; upstream's default, `false`, lets tokenless requests through (for client roll-outs), and a " +
					"plan warns.",
			},
			"authz_audiences": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "With `tokenreview`: audiences the token must carry (`--authz-tokenreview-audiences`), e.g. " +
					"`[\"sandbox-router\"]` for projected service-account tokens minted for the router only. Unset: no audience check.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthBetween(1, 253),
					stringvalidator.RegexMatches(noCommaRE, "must not contain a comma or white space"))},
			},
			"authz_scoped_token_secret": secretKeyAttribute("With `scoped-token`: the Secret key holding the shared HMAC-SHA256 "+
				"secret of v1 scoped tokens (`--authz-scoped-token-secret-file`), mounted read-only into the router.", "hmac-secret"),
			"authz_scoped_token_verification_keys_secret": secretKeyAttribute("With `scoped-token`, from v1.0.3: the Secret key "+
				"holding the JSON key set of Ed25519 public keys of v2 scoped tokens (`--authz-scoped-token-verification-keys-file`, "+
				"which needs `cache_enabled`), mounted read-only.", "keys.json"),
			"tls_secret_name": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "A `kubernetes.io/tls` Secret (keys `tls.crt`, `tls.key`) in the router's namespace: the router " +
					"then serves HTTPS on 8443 (`--https-bind-address`, `--tls-cert-file`, `--tls-key-file`) and plain HTTP is " +
					"turned off; the Service, the NetworkPolicy, `service_port` and `url` follow.",
				Validators: []validator.String{validators.DNSSubdomainName()},
			},
			"pdb_min_available": schema.Int64Attribute{
				Optional: true, Computed: true,
				Default: int64default.StaticInt64(routerDefaultMinAvailable),
				MarkdownDescription: fmt.Sprintf("`minAvailable` of the release's PodDisruptionBudget. Default %d; `0` installs no "+
					"PodDisruptionBudget. With `replicas` at or below it, voluntary evictions (node drains) block.", routerDefaultMinAvailable),
				Validators: []validator.Int64{int64validator.Between(0, 100)},
			},
			"topology_spread": schema.BoolAttribute{
				Optional: true, Computed: true,
				Default:             booldefault.StaticBool(true),
				MarkdownDescription: "Keep the release's topology spread constraints (replicas spread over zones and nodes, `ScheduleAnyway`). Default `true`.",
			},
			"node_selector": labelsAttribute("Node labels the router pods must run on."),
			"tolerations":   tolerationsAttribute("Tolerations of the router pods."),
			"affinity":      affinity,
			"network_policy": schema.BoolAttribute{
				Optional: true, Computed: true,
				Default: booldefault.StaticBool(true),
				MarkdownDescription: "Install the router's NetworkPolicy (the release's networkpolicy.yaml, its rules rendered " +
					"from the attributes below). Default `true`; `false` leaves the router open to every pod and free to reach " +
					"anything, and a plan warns.",
			},
			"allowed_clients": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "Who may reach the proxy port over the pod network: each entry admits the pods of one " +
					"namespace, optionally only those with `pod_labels`. Unset: nobody (clients that port-forward, the SDKs' " +
					"default, are not affected: port-forwarding does not cross the pod network).",
				Validators: []validator.List{listvalidator.SizeAtLeast(1)},
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"namespace": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "Namespace of the clients (matched by its `kubernetes.io/metadata.name` label).",
							Validators:          []validator.String{validators.DNSLabelName()},
						},
						"pod_labels": labelsAttribute("Only pods with all these labels. Unset: every pod of the namespace."),
					},
				},
			},
			"allow_clients_from_all_namespaces": schema.BoolAttribute{
				Optional: true, Computed: true,
				Default: booldefault.StaticBool(false),
				MarkdownDescription: "Admit every pod of every namespace to the proxy port, as the release's example policy does. " +
					"Default `false`; `true` is a loosening, and a plan warns.",
			},
			"metrics_namespace": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Namespace allowed to scrape the metrics port (9090), e.g. `monitoring`. Unset: none.",
				Validators:          []validator.String{validators.DNSLabelName()},
			},
			"sandbox_namespaces": schema.SetAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Namespaces whose sandbox pods the router may reach. Unset: sandbox pods (label `" +
					sandboxapi.LabelSandboxNameHash + "`) of every namespace.",
				Validators: []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(validators.DNSLabelName())},
			},
			"sandbox_ports": schema.ListAttribute{
				Optional: true, ElementType: types.Int64Type,
				MarkdownDescription: fmt.Sprintf("Ports of sandbox pods the router may reach. Unset: `[%d]`, the port the SDKs and "+
					"the release's policy use.", routerDefaultSandboxPort),
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueInt64sAre(int64validator.Between(1, 65535))},
			},
			"api_server_cidrs": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Addresses of the Kubernetes API server (e.g. GKE's control-plane endpoint as a /32), which " +
					"TokenReview and the Pod-IP cache call on 443 and 6443. Unset: the release's rule, the `default` namespace " +
					"on those ports, which many network plugins do not match to an API server outside the pod network: set this " +
					"when the router's TokenReviews time out.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(validators.CIDR())},
			},
			"dns_cidrs": schema.ListAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Addresses of the cluster DNS the router resolves sandboxes with (`<sandbox>.<namespace>.svc." +
					"<cluster_domain>`, when the Pod-IP cache does not know them), on UDP and TCP 53, e.g. `[\"169.254.20.10/32\"]` " +
					"for NodeLocal DNSCache, whose node-local address no namespace selector matches. Unset: the release's rule, " +
					"the pods of `kube-system`. Set: these addresses instead.",
				Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(validators.CIDR())},
			},
			"wait": schema.BoolAttribute{
				Optional: true, Computed: true,
				Default:             booldefault.StaticBool(true),
				MarkdownDescription: "Wait until the router Deployment is available (and pruned objects are gone). Default `true`.",
			},
			"service_name": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The router's Service, `" + routerServiceName + "` (the name upstream's clients look for).",
			},
			"service_port": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: "The Service's proxy port: 8080, or 8443 with `tls_secret_name`.",
			},
			"url": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "In-cluster URL of the router, e.g. `http://sandbox-router-svc.agent-sandbox-system.svc.cluster.local:8080` " +
					"(the Go SDK's `APIURL`, the Python SDK's `api_url`).",
			},
			"inventory": schema.MapNestedAttribute{
				Computed: true,
				MarkdownDescription: "The objects applied, keyed `Kind[.group]/[namespace/]name`. A refresh sets `drift` on objects " +
					"deleted or changed outside Terraform, and the next apply repairs them.",
				NestedObject: schema.NestedAttributeObject{Attributes: inventoryAttributes},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}
