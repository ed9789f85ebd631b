package isolationreport

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

func str(desc string) schema.StringAttribute {
	return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
}

func boolean(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{Computed: true, MarkdownDescription: desc}
}

func count(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{Computed: true, MarkdownDescription: desc}
}

func stringList(desc string) schema.ListAttribute {
	return schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: desc}
}

func probeAttribute(direction, desc string) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		Optional:            true,
		MarkdownDescription: desc,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Key of the verdict in every sandbox's `network." + direction + "` map; lower-case letters, digits " +
					"and `_`, and not one of the built-in keys.",
				Validators: []validator.String{validators.Valid("Invalid name", "lower-case letters, digits and _", validName)},
			},
			"address": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "An IPv4 or IPv6 address. Exactly one of `address` and `namespace` is set.",
				Validators:          []validator.String{validators.IPAddress()},
			},
			"namespace": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "A pod's namespace (with `labels`, the pod's labels). Exactly one of `address` and `namespace` is set.",
				Validators:          []validator.String{validators.DNSLabelName()},
			},
			"labels": schema.MapAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The pod's labels, with `namespace`.",
				Validators:          []validator.Map{validators.Labels()},
			},
			"port": schema.Int64Attribute{
				Required:            true,
				MarkdownDescription: "Destination port (on the sandbox for `sources`).",
				Validators:          []validator.Int64{int64validator.Between(1, 65535)},
			},
			"protocol": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "`TCP` (when unset), `UDP` or `SCTP`.",
				Validators:          []validator.String{stringvalidator.OneOf("TCP", "UDP", "SCTP")},
			},
		}},
	}
}

func reachAttribute(desc string) schema.MapNestedAttribute {
	return schema.MapNestedAttribute{
		Computed:            true,
		MarkdownDescription: desc,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"address":    str("What was evaluated (addresses, or which pods), in words."),
			"port":       count("The port evaluated; 0 means \"some port\" of the protocol (any port a rule allows counts)."),
			"protocol":   str("`TCP`, `UDP` or `SCTP`."),
			"verdict":    str("`allowed`, `denied`, or `unknown` when the cluster publishes no address for it (e.g. no API server endpoints)."),
			"allowed_by": stringList("The NetworkPolicies with a rule that allows it (empty when allowed because nothing isolates the pod)."),
			"reason":     str("Why, in words: the policies that allow it, or those that isolate the pod without allowing it."),
		}},
	}
}

var schemaDescription = "A posture report of the sandboxes **as they run now**: for a namespace (and optionally a label " +
	"selector), every Sandbox (created directly, a warm pool's member, or a claim's) and its pod, with the runtime " +
	"it really got, the service account token it really has, its process security settings, the NetworkPolicies " +
	"that select it and reachability verdicts for the addresses that matter, plus a list of violations, each with a " +
	"human message and the attribute it comes from. Made for `check` blocks and `postcondition`s, so that a plan " +
	"warns or fails when a sandbox is not isolated.\n\n" +
	"It is read during `terraform plan` when its configuration is known (and again at apply when it depends on " +
	"something the apply changes). It costs one list per kind (Sandboxes, Pods, NetworkPolicies, ServiceAccounts, " +
	"Namespaces, RuntimeClasses, the `kubernetes` Service's EndpointSlices), one GET of the `kubernetes` Service and " +
	"four SubjectAccessReviews per service account in use, however many sandboxes there are. When the cluster " +
	"cannot be reached the read fails and says so; inside a `check` block that is a warning, not an error.\n\n" +
	"Reachability is evaluated with NetworkPolicy semantics (internal/netpolicy: isolation per direction, union of " +
	"policies, namespace and pod selectors, ipBlock with except, ports, protocols, named ports): what the policies " +
	"allow, not a packet test. A pod on the host network is reported reachable everywhere, since NetworkPolicies do " +
	"not govern it. The verdicts hold for an enforcer that applies NetworkPolicies as the API defines them; " +
	"`make testacc-e2e` compares them with a real one (kube-router on a real gVisor node): every probe from or to a " +
	"sandbox, allowed and refused, gets the verdict the packet got."

func dataSourceSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: schemaDescription,
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Namespace whose sandboxes are reported.",
				Validators:          []validator.String{validators.DNSLabelName()},
			},
			"selector": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "A label selector in Kubernetes syntax (`app.kubernetes.io/component=execution-sandbox`, " +
					"`tier in (a,b)`, `!legacy`), matched against the labels of each sandbox's pod template (the labels its " +
					"pod gets, which NetworkPolicies select). Unset: every sandbox of the namespace.",
				Validators: []validator.String{validators.Valid("Invalid label selector",
					"a Kubernetes label selector", validSelector)},
			},
			"isolating_runtime_classes": schema.SetAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "RuntimeClasses you declare as isolating the host kernel, besides gVisor's (recognised by " +
					"their handler, `runsc` or `gvisor`). Pods using one are reported with `runtime.isolation = \"declared\"` " +
					"instead of a *Sandbox runs without gVisor* violation, and the read warns that the provider did not verify " +
					"it. Meant for runtimes the provider cannot recognise, such as the pods of GKE MicroVM node pools " +
					"(`sandbox_type = \"MICROVM\"`), whose RuntimeClass and handler GKE does not document: name one only after " +
					"checking on the cluster that its handler runs each pod in its own VM or kernel.",
				Validators: []validator.Set{setvalidator.ValueStringsAre(validators.DNSSubdomainName())},
			},
			"router_namespace": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Namespace of the sandbox router to report on (`router`). Default `" + defaultRouterNamespace +
					"`, where upstream's manifests and `agentsandbox_sandbox_router` put it.",
				Validators: []validator.String{validators.DNSLabelName()},
			},
			"router": schema.SingleNestedAttribute{
				Computed: true,
				MarkdownDescription: "The sandbox router (Deployment `" + routerDeployment + "` in `router_namespace`), the door " +
					"upstream's clients reach sandboxes through: whether it is installed, its authorization as its flags set it, " +
					"and who reaches its proxy port through the NetworkPolicies of both ends. `--authz-mode=allow-all` (or no " +
					"`--authz-mode`, upstream's default) is the violation *Sandbox router without authorization*; TokenReview " +
					"without `--authz-tokenreview-require-token=true` is *Sandbox router lets tokenless requests through*; an " +
					"allow-all router that other namespaces reach is also *Sandbox router reachable from every namespace*. Not " +
					"installed: no violation.",
				Attributes: map[string]schema.Attribute{
					"installed":      boolean("Whether the router's Deployment exists."),
					"namespace":      str("The namespace looked in."),
					"authz_mode":     str("`tokenreview`, `scoped-token` or `allow-all` (also when the flag is absent); empty when not installed."),
					"requires_token": boolean("Whether a request without a credential is refused (401)."),
					"policies":       stringList("The NetworkPolicies of its namespace that select the router's pods."),
					"reachable_from": reachAttribute("Who reaches the router's proxy port (8080, or 8443 when it serves only HTTPS): " +
						"`report_namespace` (any pod of the report's namespace, its sandboxes among them; absent when that is the " +
						"router's namespace) and `other_namespaces`. Port-forwarding does not cross the pod network and is not evaluated."),
				},
			},
			"destinations": probeAttribute("egress", "More destinations to evaluate for every sandbox (egress, and for a pod "+
				"also that pod's ingress), besides the built-in ones."),
			"sources": probeAttribute("ingress", "More sources to evaluate for every sandbox (ingress, and for a pod also "+
				"that pod's egress), besides the built-in ones."),
			"id": str("The namespace, and the selector when set (`<namespace>` or `<namespace>?<selector>`)."),
			"sandboxes": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "One entry per sandbox, sorted by name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":      str("Name of the Sandbox."),
					"namespace": str("Its namespace."),
					"origin":    str("`warm_pool` (a pool's member), `claim` (adopted by or created for a SandboxClaim) or `sandbox` (created directly)."),
					"owner":     str("Name of the warm pool or claim; empty for `sandbox`."),
					"template":  str("Name of the SandboxTemplate it was made from; empty for a sandbox created directly."),
					"pod":       str("Name of its pod; empty when it has none (suspended, or not created yet: then the report is about its pod template)."),
					"runtime": schema.SingleNestedAttribute{
						Computed:            true,
						MarkdownDescription: "Where and how the pod runs.",
						Attributes: map[string]schema.Attribute{
							"runtime_class_name": str("The pod's RuntimeClass; empty for the node's default runtime."),
							"handler":            str("That RuntimeClass's handler (`runsc` or GKE's `gvisor` for gVisor); empty when it does not exist or could not be read."),
							"gvisor":             boolean("Whether the handler is gVisor's."),
							"isolation": str("What isolates the pod from the host kernel, as far as the report can tell: `gvisor` (a gVisor " +
								"handler), `declared` (its RuntimeClass is in `isolating_runtime_classes`: your word, not verified), or " +
								"empty (nothing known: the pod gets a *Sandbox runs without gVisor* violation)."),
							"node": str("The node the pod landed on; empty when not scheduled."),
						},
					},
					"identity": schema.SingleNestedAttribute{
						Computed:            true,
						MarkdownDescription: "What the sandbox may do in the Kubernetes API.",
						Attributes: map[string]schema.Attribute{
							"service_account": str("The pod's service account."),
							"token_mounted": boolean("Whether a token of it is mounted into the pod: from the pod's projected token volume when the " +
								"pod was admitted, otherwise from automountServiceAccountToken (the pod's, else the account's)."),
							"permissions": stringList("Which of the dangerous actions the account may perform, by SubjectAccessReview: `get secrets`, " +
								"`create pods`, `create pods/exec` (in the namespace) and `* * cluster-wide` (anything in any namespace)."),
						},
					},
					"process": schema.SingleNestedAttribute{
						Computed:            true,
						MarkdownDescription: "The process security settings of its containers (init containers included), taken together.",
						Attributes: map[string]schema.Attribute{
							"run_as_non_root":           boolean("Whether every container must run as non-root and none runs as UID 0."),
							"privileged":                boolean("Whether any container is privileged."),
							"privilege_escalation":      boolean("Whether any container may gain privileges (allowPrivilegeEscalation not false)."),
							"capabilities_added":        stringList("Capabilities added back by any container."),
							"all_capabilities_dropped":  boolean("Whether every container drops ALL capabilities."),
							"seccomp":                   str("The seccomp profile types in effect, comma-separated (`RuntimeDefault`, `Localhost`, `Unconfined` also for none)."),
							"host_network":              boolean("hostNetwork."),
							"host_pid":                  boolean("hostPID."),
							"host_ipc":                  boolean("hostIPC."),
							"host_path_volumes":         stringList("Paths of the hostPath volumes."),
							"containers_without_limits": stringList("Containers (and sidecars) without a CPU or memory limit."),
						},
					},
					"network": schema.SingleNestedAttribute{
						Computed:            true,
						MarkdownDescription: "The NetworkPolicies that select the pod and what they let through.",
						Attributes: map[string]schema.Attribute{
							"policies":         stringList("Names of the NetworkPolicies of the namespace that select the pod."),
							"ingress_isolated": boolean("Whether some policy isolates its ingress (only what a rule allows gets in)."),
							"egress_isolated":  boolean("Whether some policy isolates its egress."),
							"egress": reachAttribute("Verdicts for traffic from the sandbox, by destination: `metadata_server_ipv4` " +
								"(169.254.169.254:80), `metadata_server_ipv6` (fd00:ec2::254:80, AWS), `metadata_server_ipv6_gce` " +
								"(fd20:ce::254:80, GCE/GKE), `kubernetes_api_service` (the `kubernetes` Service), " +
								"`kubernetes_api_endpoints` (the API server's own addresses, which enforcers see after the Service's " +
								"translation), `cluster_dns` (UDP 53 to kube-dns pods or NodeLocal DNSCache 169.254.20.10, or the " +
								"pod's own nameservers with dnsPolicy None), `internet_ipv4` (8.8.8.8:443), `internet_ipv6` " +
								"(2001:4860:4860::8888:443), `other_namespaces` (some pod of any other namespace, some TCP port), " +
								"`same_template` (the other sandboxes of its template on its first container port, both ends' " +
								"policies; absent for a sandbox without a template), plus `destinations`."),
							"ingress": reachAttribute("Verdicts for traffic to the sandbox, by source: `from_other_namespaces`, " +
								"`from_same_namespace` (some pod, any labels, some TCP port), `from_internet` (8.8.8.8), " +
								"`from_sandbox_router` (the router of `router_namespace` on the sandbox's first container port, through the " +
								"router's own egress policies and the sandbox's ingress ones; when no router is installed, a pod labelled " +
								"app=sandbox-router there, through the sandbox's ingress only), " +
								"`from_same_template`, plus `sources`."),
						},
					},
					"sandboxd": schema.ListNestedAttribute{
						Computed: true,
						MarkdownDescription: "The containers that run upstream's in-sandbox runtime daemon, sandboxd (`packages/sandboxd`): " +
							"those whose command is a program named `sandboxd`, or that set no command and whose image's repository is " +
							"named `sandboxd`; empty when none does. sandboxd has no authentication (v1.0.3 has no token option): its " +
							"REST port reads and writes the sandbox's files, its gRPC port runs commands, so the NetworkPolicies are " +
							"its only guard. One that anything but the router reaches is the violation *sandboxd reachable beyond the router*.",
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"container":      str("The container's name."),
							"rest_port":      count("Its REST port (`--rest-port`, default 8080): files and `/v1/health`."),
							"grpc_port":      count("Its gRPC port (`--grpc-port`, default 9090): the ProcessService, which runs commands."),
							"listen_host":    str("The address it listens on (`--listen-host`, default `0.0.0.0`); on loopback nothing outside the pod reaches it."),
							"authentication": str("`none`: sandboxd checks no credential."),
							"reachable_beyond_router": boolean("Whether any source of `reachable_from` (any pod of the namespace or of " +
								"another one, the internet) reaches either port."),
							"reachable_from": reachAttribute("Who reaches its ports through the sandbox's ingress policies, by source " +
								"and port: `rest_from_same_namespace`, `rest_from_other_namespaces`, `rest_from_internet` and the same " +
								"with `grpc_`. The router's path is `network.ingress.from_sandbox_router`."),
						}},
					},
					"violations": schema.ListNestedAttribute{
						Computed:            true,
						MarkdownDescription: "This sandbox's violations (as in the top-level `violations`, without `sandbox`).",
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"title":     str("Short title."),
							"message":   str("What is wrong and why it matters."),
							"attribute": str("Where it comes from."),
						}},
					},
				},
				},
			},
			"violations": schema.ListNestedAttribute{
				Computed: true,
				MarkdownDescription: "Every violation of every sandbox. Titles match the warnings the template and sandbox " +
					"resources give when a hardened default is loosened: `Sandbox runs without gVisor`, `RuntimeClass does not " +
					"exist`, `Service account token mounted into the sandbox`, `Sandbox's service account is powerful`, `Sandbox " +
					"may run as root` (`Sandbox container may run as root`), `Sandbox runs as root`, `Privileged sandbox container`, `Privilege escalation allowed`, " +
					"`Capabilities added`, `Not all capabilities dropped`, `Sandbox runs without a syscall filter`, `Sandbox runs " +
					"without AppArmor`, `Unmasked /proc`, `Sandbox shares a host namespace`, `Host directory mounted into the " +
					"sandbox`, `Missing resource limits`; and for the network `No NetworkPolicy isolates the sandbox's ingress` " +
					"(or `egress`), `Metadata server reachable`, `Kubernetes API reachable`, `Sandboxes of the same template can " +
					"reach each other`.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"sandbox": str("`<namespace>/<name>` of the sandbox."),
					"title":   str("Short title."),
					"message": str("What is wrong and why it matters."),
					"attribute": str("Where it comes from: the `pod_template` attribute of the template or sandbox that sets it " +
						"(`pod_template.containers[0].security_context.privileged`), or the report's own attribute for the " +
						"network (`network.egress.metadata_server_ipv4`)."),
				}},
			},
			"summary": schema.SingleNestedAttribute{
				Computed:            true,
				MarkdownDescription: "Counts.",
				Attributes: map[string]schema.Attribute{
					"sandboxes":          count("Sandboxes reported."),
					"pods":               count("Of them, with a pod."),
					"clean":              count("Of them, without any violation."),
					"violations":         count("Violations in all."),
					"gvisor":             count("Sandboxes running in gVisor."),
					"declared_isolating": count("Sandboxes whose RuntimeClass `isolating_runtime_classes` declares isolating."),
					"token_mounted":      count("Sandboxes with a service account token mounted."),
					"ingress_isolated":   count("Sandboxes whose ingress some policy isolates."),
					"egress_isolated":    count("Sandboxes whose egress some policy isolates."),
				},
			},
		},
	}
}
