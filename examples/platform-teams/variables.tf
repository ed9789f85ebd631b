variable "project" {
  description = "Google Cloud project of the GKE cluster."
  type        = string
}

variable "location" {
  description = "Region or zone of the GKE cluster."
  type        = string
}

variable "cluster" {
  description = "Name of an existing GKE Standard cluster with a shared gVisor node pool."
  type        = string
}

variable "agent_sandbox_version" {
  type    = string
  default = "v1.0.3"
}

variable "release_base_url" {
  description = "Mirror of the agent-sandbox release assets. Null downloads from GitHub."
  type        = string
  default     = null
}

variable "gke_endpoint" {
  description = "Base URL of the GKE container API. Null uses Google's."
  type        = string
  default     = null
}

variable "gke_access_token" {
  description = "OAuth2 access token. Null uses Application Default Credentials."
  type        = string
  default     = null
  sensitive   = true
}

variable "gke_allow_credentials_over_http" {
  description = "Send the access token to an http:// gke_endpoint, unencrypted. Only for `make demo`'s local GKE emulator; never for a real endpoint."
  type        = bool
  default     = false
}

variable "data_science_namespace" {
  description = "Existing namespace of the data-science team."
  type        = string
  default     = "default"
}

variable "support_bots_namespace" {
  description = "Existing namespace of the support-bots team."
  type        = string
  default     = "default"
}
