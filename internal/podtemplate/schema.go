package podtemplate

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/labelselector"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/validators"
)

// The hardened defaults. They are schema Defaults (so a plan shows them) and
// the reference the warnings compare against.
const (
	// DefaultRuntimeClassName is the gVisor RuntimeClass GKE Sandbox and the
	// open-source installation both use.
	DefaultRuntimeClassName = "gvisor"
	// DefaultSeccompProfile is the container runtime's default syscall filter.
	DefaultSeccompProfile = "RuntimeDefault"
	// DropAllCapabilities is the capability every container drops by default.
	DropAllCapabilities = "ALL"
)

// Attribute returns the `pod_template` attribute for a resource schema: a
// required single nested attribute. The caller may change Required/Optional
// or the description on the returned value; everything inside is shared.
func Attribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Required: true,
		MarkdownDescription: "The pod behind the sandbox: its labels and annotations and a typed, hardened subset " +
			"of the Kubernetes PodSpec. Security-relevant fields default to the hardened value, and loosening one " +
			"produces a plan-time warning. PodSpec fields without an attribute can be set through `pod_spec_overrides`.",
		Attributes: podAttributes(),
	}
}

func podAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"labels": schema.MapAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Labels of the pod. Keys under `agents.x-k8s.io/` and `extensions.agents.x-k8s.io/` " +
				"belong to the agent-sandbox controller and are refused.",
			Validators: []validator.Map{validators.Labels(sandboxapi.ReservedPrefix, sandboxapi.ReservedExtensionsPrefix)},
		},
		"annotations": schema.MapAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Annotations of the pod. Keys under `agents.x-k8s.io/` and " +
				"`extensions.agents.x-k8s.io/` belong to the agent-sandbox controller and are refused.",
			Validators: []validator.Map{validators.Annotations(sandboxapi.ReservedPrefix, sandboxapi.ReservedExtensionsPrefix)},
		},
		"containers": schema.ListNestedAttribute{
			Required: true,
			MarkdownDescription: "The containers of the pod, at least one. Every container must set CPU and memory " +
				"limits and gets the hardened `security_context` unless it loosens it explicitly.",
			NestedObject: schema.NestedAttributeObject{Attributes: containerAttributes()},
			Validators:   []validator.List{listvalidator.SizeAtLeast(1)},
		},
		"init_containers": schema.ListNestedAttribute{
			Optional: true,
			MarkdownDescription: "Containers run to completion, in order, before the `containers` start. Same " +
				"attributes and rules as `containers`; probes are only allowed on an init container made a " +
				"sidecar with `restartPolicy: Always` in `pod_spec_overrides`.",
			NestedObject: schema.NestedAttributeObject{Attributes: containerAttributes()},
		},
		"volumes": schema.ListNestedAttribute{
			Optional: true,
			MarkdownDescription: "Volumes the containers can mount, each with exactly one source. A volume claim " +
				"template of the sandbox needs no entry here: mount it by the claim template's name (the controller " +
				"adds the volume, replacing one of the same name).",
			NestedObject: schema.NestedAttributeObject{Attributes: volumeAttributes()},
		},
		"runtime_class_name": schema.StringAttribute{
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(DefaultRuntimeClassName),
			MarkdownDescription: "RuntimeClass of the pod. Defaults to `" + DefaultRuntimeClassName + "`, which runs " +
				"the sandbox in gVisor's user-space kernel. `\"\"` runs it with the node's default runtime: untrusted " +
				"code then shares the host kernel, and the plan warns about it (as it does for any other RuntimeClass). " +
				"When the cluster can be read, the plan looks any other RuntimeClass up: one the cluster does not have fails the " +
				"plan (no pod could ever start). `" + DefaultRuntimeClassName + "` is not looked up: GKE creates it with the " +
				"first GKE Sandbox node pool, possibly in the same apply.",
			Validators: []validator.String{runtimeClassName},
		},
		"automount_service_account_token": schema.BoolAttribute{
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
			MarkdownDescription: "Whether the service account token is mounted into the pod. Defaults to `false`; " +
				"`true` lets code in the sandbox call the Kubernetes API as the pod's service account (the plan warns).",
		},
		"service_account_name": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Service account the pod runs as. Unset means the namespace's `default` account.",
			Validators:          []validator.String{validators.DNSSubdomainName()},
		},
		"node_selector": schema.MapAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Node labels the pod's node must have. GKE labels gVisor nodes " +
				"`sandbox.gke.io/runtime = gvisor` and schedules `gvisor` pods onto them without a selector.",
			Validators: []validator.Map{validators.Labels()},
		},
		"tolerations": schema.ListNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Taints the pod tolerates.",
			NestedObject:        schema.NestedAttributeObject{Attributes: TolerationAttributes()},
		},
		"affinity": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "The essentials of pod scheduling affinity: required node affinity and preferred pod " +
				"anti-affinity. Other affinity rules can be given in `pod_spec_overrides`.",
			Attributes: affinityAttributes(),
		},
		"dns_policy": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "DNS policy of the pod: `ClusterFirst`, `ClusterFirstWithHostNet`, `Default` or `None` " +
				"(which needs `dns_config.nameservers`). Unset lets a template's managed network policy (which blocks " +
				"cluster DNS) choose public resolvers for the sandboxes made from it.",
			Validators: []validator.String{stringvalidator.OneOf("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")},
		},
		"dns_config": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "DNS settings merged into the pod's resolver configuration (all of it with `dns_policy = \"None\"`).",
			Attributes:          dnsConfigAttributes(),
		},
		"image_pull_secrets": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Names of Secrets in the sandbox's namespace holding registry credentials.",
			Validators:          []validator.List{listvalidator.ValueStringsAre(validators.DNSSubdomainName())},
		},
		"priority_class_name": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "PriorityClass of the pod.",
			Validators:          []validator.String{validators.DNSSubdomainName()},
		},
		"termination_grace_period_seconds": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Seconds the pod gets to stop after SIGTERM before it is killed. Unset means 30.",
			Validators:          []validator.Int64{int64validator.AtLeast(0)},
		},
		"security_context": podSecurityContextAttribute(),
		"pod_spec_overrides": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Escape hatch: PodSpec fields the typed attributes do not cover, as a JSON or YAML " +
				"string in Kubernetes' own field names, for example " +
				"`jsonencode({ containers = [{ name = \"main\", lifecycle = { preStop = { exec = { command = [\"/drain\"] } } } }] })`. " +
				"It is merged under the typed attributes and may not set anything they own: the plan fails and names " +
				"the attribute to use instead. Containers and init containers are matched by name and must be declared " +
				"in `containers`/`init_containers`; extra volumes need names of their own. Unknown field names are " +
				"refused, and so are fields the cluster's CRD does not serve: an agent-sandbox release serves the " +
				"PodSpec of the Kubernetes version it was built with (v0.5.6: 1.36), which may lack fields of the " +
				"provider's (1.37); when the cluster can be read at plan, each field is checked against its CRD. " +
				"Setting host namespaces, hostPath volumes, an unconfined AppArmor profile or an unmasked " +
				"/proc here produces a plan-time warning.",
		},
	}
}

// containerAttributes is shared by containers and init containers.
func containerAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Name of the container, unique in the pod (an RFC 1123 label).",
			Validators:          []validator.String{validators.DNSLabelName()},
		},
		"image": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Container image reference, e.g. `python:3.12-slim` or `us-docker.pkg.dev/p/r/img@sha256:...`.",
			// As the kubelet parses it: capitals or a malformed digest would
			// otherwise only fail on the node (InvalidImageName).
			Validators: []validator.String{validators.ImageReference()},
		},
		"image_pull_policy": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "`Always`, `IfNotPresent` or `Never`. Unset lets Kubernetes choose (Always for `:latest`).",
			Validators:          []validator.String{validators.ImagePullPolicy()},
		},
		"command": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Entrypoint, replacing the image's ENTRYPOINT. `$(VAR)` expands environment variables.",
		},
		"args": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "Arguments, replacing the image's CMD. `$(VAR)` expands environment variables.",
		},
		"working_dir": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Working directory; unset means the image's.",
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"env": schema.ListNestedAttribute{
			Optional: true,
			MarkdownDescription: "Environment variables, in order (a later one may refer to an earlier one with " +
				"`$(NAME)`). Each has either `value` or `value_from`.",
			NestedObject: schema.NestedAttributeObject{Attributes: envAttributes()},
		},
		"ports": schema.ListNestedAttribute{
			Optional: true,
			MarkdownDescription: "Ports the container listens on. Informational for Kubernetes, but a sandbox's " +
				"headless Service and probes can refer to them by name.",
			NestedObject: schema.NestedAttributeObject{Attributes: portAttributes()},
		},
		"resources": schema.SingleNestedAttribute{
			Required: true,
			MarkdownDescription: "Compute resources. `limits` must set `cpu` and `memory`: an untrusted workload " +
				"without limits can starve its node.",
			Attributes: map[string]schema.Attribute{
				"limits": schema.MapAttribute{
					Required:    true,
					ElementType: types.StringType,
					MarkdownDescription: "Maximum resources, by name: `cpu` and `memory` are required and must be above zero (the kubelet " +
						"reads a zero limit as no limit), e.g. " +
						"`{ cpu = \"1\", memory = \"1Gi\" }`. Quantities keep the spelling you give them.",
					Validators: resourceMapValidators(),
				},
				"requests": schema.MapAttribute{
					Optional:    true,
					ElementType: types.StringType,
					MarkdownDescription: "Resources reserved for scheduling, by name; each at most the limit. " +
						"Unset requests equal the limits.",
					Validators: resourceMapValidators(),
				},
			},
		},
		"volume_mounts": schema.ListNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Volumes mounted into the container, by the name of a `volumes` entry or of a volume claim template.",
			NestedObject:        schema.NestedAttributeObject{Attributes: volumeMountAttributes()},
		},
		"readiness_probe": probeAttribute("Readiness probe: while it fails the pod is not Ready (and a sandbox is not reported ready)."),
		"liveness_probe":  probeAttribute("Liveness probe: the container is restarted when it fails. `success_threshold` must be 1."),
		"startup_probe": probeAttribute("Startup probe: the other probes wait until it succeeds once; the container is " +
			"restarted when it fails. `success_threshold` must be 1."),
		"security_context": containerSecurityContextAttribute(),
	}
}

func resourceMapValidators() []validator.Map { return validators.ResourceList() }

func envAttributes() map[string]schema.Attribute {
	keyRef := func(what, nameAttr string) schema.SingleNestedAttribute {
		return schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "A key of a " + what + " in the sandbox's namespace.",
			Attributes: map[string]schema.Attribute{
				nameAttr: schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "Name of the " + what + ".",
					Validators:          []validator.String{validators.DNSSubdomainName()},
				},
				"key": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "Key within the " + what + ".",
					Validators:          []validator.String{validators.ConfigMapKey()},
				},
				"optional": schema.BoolAttribute{
					Optional:            true,
					MarkdownDescription: "Whether the container may start when the " + what + " or key is missing (the variable is then unset).",
				},
			},
		}
	}
	return map[string]schema.Attribute{
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Name of the variable: printable ASCII without `=`.",
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1), stringvalidator.RegexMatches(envName, "must be printable ASCII characters other than '='")},
		},
		"value": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Literal value. `$(NAME)` expands an earlier variable; `$$` escapes `$`.",
		},
		"value_from": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Where the value comes from: exactly one of `secret_key_ref`, `config_map_key_ref` or `field_ref`.",
			Attributes: map[string]schema.Attribute{
				"secret_key_ref":     keyRef("Secret", "name"),
				"config_map_key_ref": keyRef("ConfigMap", "name"),
				"field_ref": schema.SingleNestedAttribute{
					Optional:            true,
					MarkdownDescription: "A field of the pod, e.g. `metadata.name`, `metadata.namespace` or `status.podIP`.",
					Attributes: map[string]schema.Attribute{
						"field_path": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "Path of the field, e.g. `status.podIP`, `spec.nodeName` or `metadata.labels['app']`.",
							Validators:          []validator.String{validators.EnvFieldPath()},
						},
						"api_version": schema.StringAttribute{
							Optional:            true,
							MarkdownDescription: "API version the path is written in; unset means `v1`.",
						},
					},
				},
			},
		},
	}
}

func portAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"name": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Name of the port (an IANA service name such as `http`), unique in the container.",
			Validators:          []validator.String{validators.PortName()},
		},
		"container_port": portNumberAttribute(),
		"protocol": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			Default:             stringdefault.StaticString("TCP"),
			MarkdownDescription: "`TCP` (default), `UDP` or `SCTP`.",
			Validators:          []validator.String{validators.Protocol()},
		},
	}
}

func volumeMountAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Name of the volume (a `volumes` entry or a volume claim template).",
			Validators:          []validator.String{validators.DNSLabelName()},
		},
		"mount_path": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Absolute path in the container, unique in the container.",
			Validators:          []validator.String{stringvalidator.RegexMatches(absPath, "must be an absolute path")},
		},
		"sub_path": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Relative path within the volume to mount instead of its root.",
			Validators:          []validator.String{relPath},
		},
		"read_only": schema.BoolAttribute{
			Optional:            true,
			MarkdownDescription: "Mount read-only.",
		},
	}
}

func probeAttribute(desc string) schema.SingleNestedAttribute {
	seconds := func(d string, minimum int64) schema.Int64Attribute {
		return schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: d,
			Validators:          []validator.Int64{int64validator.AtLeast(minimum)},
		}
	}
	return schema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: desc + " Exactly one of `exec`, `http_get`, `tcp_socket` or `grpc`.",
		Attributes: map[string]schema.Attribute{
			"exec": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Run a command in the container; exit status 0 is success.",
				Attributes: map[string]schema.Attribute{
					"command": schema.ListAttribute{
						Required:            true,
						ElementType:         types.StringType,
						MarkdownDescription: "Command and arguments (not run in a shell).",
						Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
					},
				},
			},
			"http_get": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "HTTP GET against the pod; a status from 200 to 399 is success.",
				Attributes: map[string]schema.Attribute{
					"path": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Request path, e.g. `/healthz`.",
					},
					"port": probePortAttribute(),
					"host": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Host to connect to; unset means the pod IP.",
					},
					"scheme": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "`HTTP` (when unset) or `HTTPS` (certificates are not verified).",
						Validators:          []validator.String{stringvalidator.OneOf("HTTP", "HTTPS")},
					},
					"http_headers": schema.ListNestedAttribute{
						Optional:            true,
						MarkdownDescription: "Extra request headers.",
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"name": schema.StringAttribute{
								Required:            true,
								MarkdownDescription: "Header name.",
								Validators:          []validator.String{stringvalidator.RegexMatches(headerName, "must be an HTTP header name")},
							},
							"value": schema.StringAttribute{
								Required:            true,
								MarkdownDescription: "Header value.",
							},
						}},
					},
				},
			},
			"tcp_socket": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Open a TCP connection; success when it connects.",
				Attributes: map[string]schema.Attribute{
					"port": probePortAttribute(),
					"host": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Host to connect to; unset means the pod IP.",
					},
				},
			},
			"grpc": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "gRPC health check (grpc.health.v1) against the pod.",
				Attributes: map[string]schema.Attribute{
					"port": portNumberAttribute(),
					"service": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Service name sent in the health check request; unset means the server's overall health.",
					},
				},
			},
			"initial_delay_seconds": seconds("Seconds after the container starts before the first probe. Unset means 0.", 0),
			"period_seconds":        seconds("Seconds between probes. Unset means 10.", 1),
			"timeout_seconds":       seconds("Seconds before a probe times out. Unset means 1.", 1),
			"success_threshold":     seconds("Consecutive successes that count as success after a failure. Unset means 1.", 1),
			"failure_threshold":     seconds("Consecutive failures that count as failure. Unset means 3.", 1),
		},
	}
}

// portNumberAttribute is a port given by number only: a container's
// container_port and a gRPC probe's port.
func portNumberAttribute() schema.Int64Attribute {
	return schema.Int64Attribute{
		Required:            true,
		MarkdownDescription: "Port number, 1-65535.",
		Validators:          []validator.Int64{int64validator.Between(1, 65535)},
	}
}

// probePortAttribute is the port of an http_get or tcp_socket probe: a
// number or a container port's name.
func probePortAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		Required: true,
		MarkdownDescription: "Port number (1-65535; a number in the configuration is fine) or the name of a " +
			"container port, e.g. `http`.",
		Validators: []validator.String{validators.Port()},
	}
}

func volumeAttributes() map[string]schema.Attribute {
	items := schema.ListNestedAttribute{
		Optional: true,
		MarkdownDescription: "Keys to project, each to a file path; unset projects every key to a file named " +
			"like the key.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"key": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Key to project.",
				Validators:          []validator.String{validators.ConfigMapKey()},
			},
			"path": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Relative file path to project the key to.",
				Validators:          []validator.String{relPath},
			},
		}},
	}
	defaultMode := schema.StringAttribute{
		Optional:            true,
		MarkdownDescription: "Permission bits of the files, in octal, e.g. `\"0440\"`. Unset means `0644`.",
		Validators:          []validator.String{stringvalidator.RegexMatches(octalMode, "must be octal permission bits from 0000 to 0777, e.g. \"0440\"")},
	}
	optional := schema.BoolAttribute{
		Optional:            true,
		MarkdownDescription: "Whether the pod may start when the object or a listed key is missing.",
	}
	return map[string]schema.Attribute{
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Name of the volume, unique in the pod (an RFC 1123 label); `volume_mounts` refer to it.",
			Validators:          []validator.String{validators.DNSLabelName()},
		},
		"empty_dir": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "A directory that lives as long as the pod (it does not survive suspension).",
			Attributes: map[string]schema.Attribute{
				"medium": schema.StringAttribute{
					Optional:            true,
					MarkdownDescription: "`Memory` for a tmpfs (counted against the memory limit); unset means node storage.",
					Validators:          []validator.String{stringvalidator.OneOf("Memory")},
				},
				"size_limit": schema.StringAttribute{
					Optional:            true,
					MarkdownDescription: "Maximum size as a quantity, e.g. `1Gi`; the pod is evicted beyond it.",
					Validators:          []validator.String{validators.NonNegativeQuantity()},
				},
			},
		},
		"config_map": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Keys of a ConfigMap in the sandbox's namespace as files.",
			Attributes: map[string]schema.Attribute{
				"name": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "Name of the ConfigMap.",
					Validators:          []validator.String{validators.DNSSubdomainName()},
				},
				"items":        items,
				"default_mode": defaultMode,
				"optional":     optional,
			},
		},
		"secret": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Keys of a Secret in the sandbox's namespace as files.",
			Attributes: map[string]schema.Attribute{
				"secret_name": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "Name of the Secret.",
					Validators:          []validator.String{validators.DNSSubdomainName()},
				},
				"items":        items,
				"default_mode": defaultMode,
				"optional":     optional,
			},
		},
		"persistent_volume_claim": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "An existing PersistentVolumeClaim in the sandbox's namespace. (A volume claim " +
				"template's claim needs no volume: mount it by the template's name.)",
			Attributes: map[string]schema.Attribute{
				"claim_name": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "Name of the claim.",
					Validators:          []validator.String{validators.DNSSubdomainName()},
				},
				"read_only": schema.BoolAttribute{
					Optional:            true,
					MarkdownDescription: "Mount the claim read-only.",
				},
			},
		},
	}
}

// TolerationAttributes are the attributes of one toleration. seconds are
// validators of toleration_seconds on top of the API server's rules (the
// Deployments' tolerations refuse a negative value, which Kubernetes would
// read as 0).
func TolerationAttributes(seconds ...validator.Int64) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"key": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Taint key; unset (with `operator = \"Exists\"`) tolerates every taint.",
			Validators:          []validator.String{validators.QualifiedName()},
		},
		"operator": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "`Equal` (when unset: the taint's value must equal `value`) or `Exists` (any value).",
			Validators:          []validator.String{stringvalidator.OneOf("Equal", "Exists")},
		},
		"value": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Taint value to match with `Equal`.",
			Validators:          []validator.String{validators.LabelValue()},
		},
		"effect": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "`NoSchedule`, `PreferNoSchedule` or `NoExecute`; unset matches every effect.",
			Validators:          []validator.String{stringvalidator.OneOf("NoSchedule", "PreferNoSchedule", "NoExecute")},
		},
		"toleration_seconds": schema.Int64Attribute{
			Optional: true,
			MarkdownDescription: "With `effect = \"NoExecute\"`: seconds the pod stays on a node after the taint " +
				"appears; unset means forever.",
			Validators: seconds,
		},
	}
}

func affinityAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"node_affinity": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Node affinity.",
			Attributes: map[string]schema.Attribute{
				"required": schema.ListNestedAttribute{
					Required: true,
					MarkdownDescription: "Node selector terms, any of which a node must match for the pod to be " +
						"scheduled there (requiredDuringSchedulingIgnoredDuringExecution).",
					Validators: []validator.List{listvalidator.SizeAtLeast(1)},
					NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
						"match_expressions": nodeRequirements(),
					}},
				},
			},
		},
		"pod_anti_affinity": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Pod anti-affinity: keep the pod away from pods matching a selector.",
			Attributes: map[string]schema.Attribute{
				"preferred": schema.ListNestedAttribute{
					Required: true,
					MarkdownDescription: "Weighted preferences the scheduler tries to honour " +
						"(preferredDuringSchedulingIgnoredDuringExecution).",
					Validators: []validator.List{listvalidator.SizeAtLeast(1)},
					NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
						"weight": schema.Int64Attribute{
							Required:            true,
							MarkdownDescription: "Weight of the preference, 1-100.",
							Validators:          []validator.Int64{int64validator.Between(1, 100)},
						},
						"topology_key": schema.StringAttribute{
							Required: true,
							MarkdownDescription: "Node label whose value defines \"the same place\", e.g. " +
								"`kubernetes.io/hostname` (spread over nodes) or `topology.kubernetes.io/zone`.",
							Validators: []validator.String{validators.QualifiedName()},
						},
						"label_selector": podsToAvoid(),
						"namespaces": schema.ListAttribute{
							Optional:            true,
							ElementType:         types.StringType,
							MarkdownDescription: "Namespaces of those pods; unset means the sandbox's namespace.",
							Validators:          []validator.List{listvalidator.ValueStringsAre(validators.DNSLabelName())},
						},
					}},
				},
			},
		},
	}
}

// nodeRequirements is node affinity's match_expressions: required, at
// least one, with the node selector operators.
func nodeRequirements() schema.ListNestedAttribute {
	a := labelselector.Requirements("node", labelselector.NodeOperators)
	a.Required, a.Optional = true, false
	a.Validators = []validator.List{listvalidator.SizeAtLeast(1)}
	return a
}

// podsToAvoid is pod anti-affinity's required label_selector.
func podsToAvoid() schema.SingleNestedAttribute {
	a := labelselector.Attribute("Pods to keep away from.", "pod")
	a.Required, a.Optional = true, false
	return a
}

func dnsConfigAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"nameservers": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "IP addresses of name servers, at most 3.",
			Validators: []validator.List{
				listvalidator.SizeAtMost(3),
				listvalidator.ValueStringsAre(validators.IPAddress()),
			},
		},
		"searches": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "DNS search domains, at most 32.",
			Validators:          []validator.List{listvalidator.SizeAtMost(32)},
		},
		"options": schema.ListNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Resolver options, e.g. `{ name = \"ndots\", value = \"2\" }`.",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "Option name.",
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"value": schema.StringAttribute{
					Optional:            true,
					MarkdownDescription: "Option value.",
				},
			}},
		},
	}
}

// seccompProfileAttributes is shared by the pod and container security
// contexts. The pod's profile defaults to RuntimeDefault; a container's is
// unset (inheriting the pod's) unless given.
func seccompProfileAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"type": schema.StringAttribute{
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString(DefaultSeccompProfile),
			MarkdownDescription: "`RuntimeDefault` (default: the runtime's syscall filter), `Localhost` (a profile " +
				"file on the node, named by `localhost_profile`) or `Unconfined` (no filter; the plan warns).",
			Validators: []validator.String{stringvalidator.OneOf("RuntimeDefault", "Localhost", "Unconfined")},
		},
		"localhost_profile": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "With `type = \"Localhost\"`: path of the profile relative to the kubelet's seccomp directory.",
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
		},
	}
}

func podSecurityContextAttribute() schema.SingleNestedAttribute {
	attrs := map[string]schema.Attribute{
		"run_as_non_root": schema.BoolAttribute{
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(true),
			MarkdownDescription: "Refuse to start containers whose user is root. Defaults to `true` (an image " +
				"without a non-root USER then needs `run_as_user`); `false` lets code run as root (the plan warns).",
		},
		"run_as_user": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "UID the containers run as; unset means the image's USER. `0` (root) needs `run_as_non_root = false` and produces a warning.",
			Validators:          []validator.Int64{int64validator.AtLeast(0)},
		},
		"run_as_group": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Primary GID of the containers' processes.",
			Validators:          []validator.Int64{int64validator.AtLeast(0)},
		},
		"fs_group": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Supplementary GID that owns mounted volumes, so a non-root user can write to them.",
			Validators:          []validator.Int64{int64validator.AtLeast(0)},
		},
		"supplemental_groups": schema.ListAttribute{
			Optional:            true,
			ElementType:         types.Int64Type,
			MarkdownDescription: "Additional GIDs of the containers' first process.",
			Validators:          []validator.List{listvalidator.ValueInt64sAre(int64validator.AtLeast(0))},
		},
		"seccomp_profile": schema.SingleNestedAttribute{
			Optional:            true,
			Computed:            true,
			Default:             objectdefault.StaticValue(defaultSeccompProfile()),
			MarkdownDescription: "Syscall filter of all containers. Defaults to `{ type = \"RuntimeDefault\" }`.",
			Attributes:          seccompProfileAttributes(),
		},
	}
	return schema.SingleNestedAttribute{
		Optional: true,
		Computed: true,
		Default: objectdefault.StaticValue(types.ObjectValueMust(attrTypes(attrs), map[string]attr.Value{
			"run_as_non_root":     types.BoolValue(true),
			"run_as_user":         types.Int64Null(),
			"run_as_group":        types.Int64Null(),
			"fs_group":            types.Int64Null(),
			"supplemental_groups": types.ListNull(types.Int64Type),
			"seccomp_profile":     defaultSeccompProfile(),
		})),
		MarkdownDescription: "Pod-level security settings. Defaults to `run_as_non_root = true` and the " +
			"`RuntimeDefault` seccomp profile; a container's own `security_context` overrides them for that container.",
		Attributes: attrs,
	}
}

func defaultSeccompProfile() types.Object {
	return types.ObjectValueMust(attrTypes(seccompProfileAttributes()), map[string]attr.Value{
		"type":              types.StringValue(DefaultSeccompProfile),
		"localhost_profile": types.StringNull(),
	})
}

func containerSecurityContextAttribute() schema.SingleNestedAttribute {
	capsAttrs := map[string]schema.Attribute{
		"add": schema.ListAttribute{
			Optional:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Capabilities to add back, e.g. `[\"NET_BIND_SERVICE\"]`. Each one widens what " +
				"code in the sandbox may do (the plan warns).",
			Validators: []validator.List{listvalidator.ValueStringsAre(validators.CapabilityName("NET_BIND_SERVICE"))},
		},
		"drop": schema.ListAttribute{
			Optional:            true,
			Computed:            true,
			ElementType:         types.StringType,
			Default:             listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{types.StringValue(DropAllCapabilities)})),
			MarkdownDescription: "Capabilities to drop. Defaults to `[\"ALL\"]`; a list without `ALL` keeps the runtime's default set (the plan warns).",
			Validators:          []validator.List{listvalidator.ValueStringsAre(validators.CapabilityName("NET_RAW, or ALL"))},
		},
	}
	capsDefault := types.ObjectValueMust(attrTypes(capsAttrs), map[string]attr.Value{
		"add":  types.ListNull(types.StringType),
		"drop": types.ListValueMust(types.StringType, []attr.Value{types.StringValue(DropAllCapabilities)}),
	})
	attrs := map[string]schema.Attribute{
		"allow_privilege_escalation": schema.BoolAttribute{
			Optional: true,
			Computed: true,
			Default:  booldefault.StaticBool(false),
			MarkdownDescription: "Whether a process may gain more privileges than its parent (setuid binaries, " +
				"file capabilities). Defaults to `false`; `true` produces a warning.",
		},
		"capabilities": schema.SingleNestedAttribute{
			Optional:            true,
			Computed:            true,
			Default:             objectdefault.StaticValue(capsDefault),
			MarkdownDescription: "Linux capabilities. Defaults to dropping `ALL`.",
			Attributes:          capsAttrs,
		},
		"privileged": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Run the container privileged: every capability and the host's devices. Needs " +
				"`allow_privilege_escalation = true` and produces a warning.",
		},
		"read_only_root_filesystem": schema.BoolAttribute{
			Optional:            true,
			MarkdownDescription: "Mount the container's root filesystem read-only (write to volumes instead).",
		},
		"run_as_non_root": schema.BoolAttribute{
			Optional:            true,
			MarkdownDescription: "Overrides the pod's `run_as_non_root` for this container; `false` produces a warning.",
		},
		"run_as_user": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Overrides the pod's `run_as_user` for this container. `0` (root) needs `run_as_non_root = false` and produces a warning.",
			Validators:          []validator.Int64{int64validator.AtLeast(0)},
		},
		"run_as_group": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Overrides the pod's `run_as_group` for this container.",
			Validators:          []validator.Int64{int64validator.AtLeast(0)},
		},
		"seccomp_profile": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Overrides the pod's seccomp profile for this container; `Unconfined` produces a warning.",
			Attributes:          seccompProfileAttributes(),
		},
	}
	return schema.SingleNestedAttribute{
		Optional: true,
		Computed: true,
		Default: objectdefault.StaticValue(types.ObjectValueMust(attrTypes(attrs), map[string]attr.Value{
			"allow_privilege_escalation": types.BoolValue(false),
			"capabilities":               capsDefault,
			"privileged":                 types.BoolNull(),
			"read_only_root_filesystem":  types.BoolNull(),
			"run_as_non_root":            types.BoolNull(),
			"run_as_user":                types.Int64Null(),
			"run_as_group":               types.Int64Null(),
			"seccomp_profile":            types.ObjectNull(attrTypes(seccompProfileAttributes())),
		})),
		MarkdownDescription: "Security settings of the container. Defaults to `allow_privilege_escalation = false` " +
			"and dropping all capabilities; user and seccomp settings are inherited from the pod unless set here.",
		Attributes: attrs,
	}
}

// attrTypes is the object type of a set of nested attributes; defaults need
// it before the attribute that holds them exists.
func attrTypes(attrs map[string]schema.Attribute) map[string]attr.Type {
	out := make(map[string]attr.Type, len(attrs))
	for name, a := range attrs {
		out[name] = a.GetType()
	}
	return out
}
