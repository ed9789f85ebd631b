# Install the open-source agent-sandbox controller (v1.0.3) with its CRDs
# and extensions, from the project's GitHub releases, pinned by checksum.
resource "agentsandbox_controller" "this" {
  version         = "v1.0.3"
  manifest_sha256 = var.agent_sandbox_manifest_sha256

  # Claims may label their pods in these domains (and their subdomains);
  # the list replaces the default sandbox.users.io, so keep it if claims use it.
  allowed_label_domains = ["sandbox.users.io", "agents.example.com"]

  controller = {
    # Many warm pools: reconcile four at a time (upstream's default is one).
    sandbox_warm_pool_concurrent_workers = 4
    replicas                             = 2
    resources = {
      requests = { cpu = "200m", memory = "256Mi" }
      limits   = { memory = "1Gi" }
    }
  }

  timeouts {
    create = "15m"
    update = "15m"
  }
}

variable "agent_sandbox_manifest_sha256" {
  description = "SHA-256 of sandbox-with-extensions.yaml of the pinned release (see applied_manifest_sha256)."
  type        = string
}

# Alternatively (one controller per cluster), for an air-gapped cluster:
# release assets and images come from internal mirrors.
resource "agentsandbox_controller" "mirrored" {
  version          = "v1.0.3"
  release_base_url = "https://artifacts.internal.example/agent-sandbox/releases"
  image_registry   = "registry.internal.example/k8s"

  controller = {
    node_selector = { "cloud.google.com/gke-nodepool" = "system" }
    tolerations   = [{ key = "dedicated", operator = "Equal", value = "system", effect = "NoSchedule" }]

    # The mirror needs credentials: a Secret of type kubernetes.io/dockerconfigjson
    # in agent-sandbox-system.
    image_pull_secrets = ["mirror-creds"]

    # The release sets no security context; these pass the restricted Pod
    # Security Standard (upstream's image runs as UID 65532).
    pod_security_context = { run_as_non_root = true, seccomp_profile = "RuntimeDefault" }
    container_security_context = {
      allow_privilege_escalation = false
      capabilities_drop          = ["ALL"]
    }
  }
}
