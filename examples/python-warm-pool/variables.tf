variable "kubeconfig" {
  description = "Path of the kubeconfig file of the cluster, e.g. \"~/.kube/config\". Null uses the files in KUBECONFIG."
  type        = string
  default     = null
}

variable "kube_context" {
  description = "Context of the kubeconfig to use. Null uses its current context."
  type        = string
  default     = null
}

variable "namespace" {
  description = "Existing namespace the sandboxes run in."
  type        = string
  default     = "default"
}

variable "agent_sandbox_version" {
  description = "Release of agent-sandbox whose controller and sandbox router to install."
  type        = string
  default     = "v1.0.3"
}

variable "release_base_url" {
  description = "Mirror of the agent-sandbox release assets, laid out as <base>/<tag>/<asset>. Null downloads from GitHub."
  type        = string
  default     = null
}

variable "runtime_image" {
  description = "The Python runtime image (upstream's examples/python-runtime-sandbox: the API the SDKs' default runtime calls through the router, on 8888)."
  type        = string
  default     = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
}

variable "router_image" {
  description = "The router image, pinned by digest (e.g. a build of the release's sandbox-router/ in your registry). Null uses the release manifest's floating registry.k8s.io/agent-sandbox/sandbox-router-go:latest."
  type        = string
  default     = null
}

variable "allow_internet" {
  description = "Let the sandboxes reach public addresses (pip, git); private and link-local ranges and the metadata server stay blocked."
  type        = bool
  default     = false
}

variable "pool_size" {
  description = "Number of pre-started sandboxes."
  type        = number
  default     = 2
}
