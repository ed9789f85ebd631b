variable "project" {
  description = "Google Cloud project of the GKE cluster."
  type        = string
}

variable "location" {
  description = "Region or zone of the GKE cluster."
  type        = string
}

variable "cluster" {
  description = "Name of an existing GKE Standard cluster (it keeps its own system node pool)."
  type        = string
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

variable "gke_endpoint" {
  description = "Base URL of the GKE container API. Null uses Google's; `make demo` points it at the local GKE emulator."
  type        = string
  default     = null
}

variable "gke_access_token" {
  description = "OAuth2 access token for the container API and the cluster. Null uses Application Default Credentials."
  type        = string
  default     = null
  sensitive   = true
}

variable "gke_allow_credentials_over_http" {
  description = "Send the access token to an http:// gke_endpoint, unencrypted. Only for `make demo`'s local GKE emulator; never for a real endpoint."
  type        = bool
  default     = false
}
