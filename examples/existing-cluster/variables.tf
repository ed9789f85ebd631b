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
  description = "Release of the open-source agent-sandbox controller to install."
  type        = string
  default     = "v1.0.3"
}

variable "release_base_url" {
  description = "Mirror of the agent-sandbox release assets, laid out as <base>/<tag>/<asset>. Null downloads from GitHub."
  type        = string
  default     = null
}

variable "pool_size" {
  description = "Number of pre-started sandboxes."
  type        = number
  default     = 3
}
