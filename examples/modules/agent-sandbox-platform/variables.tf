variable "team" {
  description = "Team name: a lowercase DNS label of at most 30 characters. Every object's name starts with it, so teams sharing a namespace or a cluster never collide."
  type        = string

  validation {
    condition     = can(regex("^[a-z]([-a-z0-9]{0,28}[a-z0-9])?$", var.team))
    error_message = "team must be 1-30 lowercase letters, digits and '-', start with a letter and not end with '-'."
  }
}

variable "namespace" {
  description = "Existing namespace of the team's sandboxes (create it with your namespace tooling)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.namespace))
    error_message = "namespace must be a DNS label: at most 63 lowercase letters, digits and '-'."
  }
}

variable "image" {
  description = "Container image of the sandboxes, ideally pinned by digest (registry/repo@sha256:...)."
  type        = string

  validation {
    condition     = length(var.image) > 0 && !can(regex("\\s", var.image))
    error_message = "image must be a non-empty image reference without whitespace."
  }
}

variable "command" {
  description = "Entrypoint of the sandbox container; null keeps the image's."
  type        = list(string)
  default     = null
}

variable "args" {
  description = "Arguments of the sandbox container; null keeps the image's."
  type        = list(string)
  default     = null
}

variable "env" {
  description = "Plain environment variables of the sandbox container (visible to the untrusted code: never put credentials here)."
  type        = map(string)
  default     = {}
}

variable "port" {
  description = "Port the sandbox serves on; the isolation policy admits the sandbox router to it."
  type        = number
  default     = 8888

  validation {
    condition     = var.port == floor(var.port) && var.port >= 1 && var.port <= 65535
    error_message = "port must be an integer from 1 to 65535."
  }
}

variable "resources" {
  description = "CPU and memory limit of each sandbox (requests equal limits, so a sandbox always gets what it may use)."
  type = object({
    cpu    = string
    memory = string
  })
  default = {
    cpu    = "1"
    memory = "1Gi"
  }

  validation {
    condition = (
      can(regex("^([0-9]+(\\.[0-9]+)?|[0-9]+m)$", var.resources.cpu)) &&
      can(regex("^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$", var.resources.memory))
    )
    error_message = "resources.cpu must be a CPU quantity such as \"500m\" or \"2\", resources.memory a memory quantity such as \"512Mi\" or \"2Gi\"."
  }
}

variable "pool_size" {
  description = "Number of pre-started sandboxes kept ready for the team's agents."
  type        = number
  default     = 2

  validation {
    condition     = var.pool_size == floor(var.pool_size) && var.pool_size >= 0 && var.pool_size <= 100
    error_message = "pool_size must be an integer from 0 to 100."
  }
}

variable "update_strategy" {
  description = "What happens to unclaimed sandboxes when the template changes: \"Recreate\" replaces them at once, \"OnReplenish\" only as they are claimed."
  type        = string
  default     = "Recreate"

  validation {
    condition     = contains(["Recreate", "OnReplenish"], var.update_strategy)
    error_message = "update_strategy must be \"Recreate\" or \"OnReplenish\"."
  }
}

variable "egress_allow_list" {
  description = "Destinations the sandboxes may reach, one IP range each, optionally limited to TCP ports. Everything else is denied; the metadata server always stays blocked."
  type = list(object({
    cidr  = string
    ports = optional(list(number), [])
  }))
  default = []

  validation {
    condition     = alltrue([for e in var.egress_allow_list : try(e.cidr == cidrsubnet(e.cidr, 0, 0), false)])
    error_message = "Each egress_allow_list cidr must be an IP range in canonical form, e.g. \"10.20.0.0/16\" (not \"10.20.1.0/16\")."
  }

  validation {
    condition     = alltrue(flatten([for e in var.egress_allow_list : [for p in e.ports : p == floor(p) && p >= 1 && p <= 65535]]))
    error_message = "Each egress_allow_list port must be an integer from 1 to 65535."
  }
}

variable "allow_dns" {
  description = "Let the sandboxes resolve names through the cluster DNS (needed to reach allow-listed hosts by name)."
  type        = bool
  default     = false
}

variable "node_pool" {
  description = <<-EOT
    A GKE gVisor node pool of the team's own; null schedules the sandboxes on the cluster's shared gVisor nodes.
    With dedicated = true (the default) the pool's nodes carry the label and taint agentsandbox.dev/team=<team>
    and the team's sandboxes are pinned to them, so no other team's code shares their kernel or memory.
  EOT
  type = object({
    project      = optional(string)
    location     = string
    cluster      = string
    machine_type = optional(string, "e2-standard-4")
    min_nodes    = optional(number, 1)
    max_nodes    = optional(number, 3)
    spot         = optional(bool, false)
    dedicated    = optional(bool, true)
  })
  default = null

  validation {
    condition = var.node_pool == null ? true : (
      var.node_pool.min_nodes >= 0 && var.node_pool.max_nodes >= 1 && var.node_pool.min_nodes <= var.node_pool.max_nodes
    )
    error_message = "node_pool needs 0 <= min_nodes <= max_nodes and max_nodes >= 1."
  }
}

variable "labels" {
  description = "Extra labels for the sandboxes' pods (e.g. cost centre). Keys under agents.x-k8s.io/ are the controller's and refused."
  type        = map(string)
  default     = {}
}
