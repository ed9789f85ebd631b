# A long-lived, stateful sandbox for one agent session: hardened like a template
# (gVisor, non-root, no service account token, capabilities dropped), with a
# persistent workspace and a stable DNS name. The apply waits until it is Ready.
resource "agentsandbox_sandbox" "session" {
  name      = "agent-session-42"
  namespace = "agent-sandboxes"

  pod_template = {
    labels = { "app.kubernetes.io/component" = "execution-sandbox" }
    containers = [{
      name          = "python-runtime"
      image         = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      ports         = [{ container_port = 8888 }]
      volume_mounts = [{ name = "workspace", mount_path = "/workspace" }]
      resources = {
        requests = { cpu = "500m", memory = "1Gi" }
        limits   = { cpu = "1000m", memory = "1Gi" }
      }
    }]
  }

  # Kept while the sandbox is suspended; immutable (changing it replaces the
  # sandbox and its volume).
  volume_claim_templates = [{
    name      = "workspace"
    resources = { requests = { storage = "5Gi" } }
  }]

  service = true

  # Suspend it between sessions: the pod goes, the workspace stays. Set back to
  # "Running" to resume (a new pod; files on the volume are kept, memory is not).
  operating_mode = "Running"

  # Expire it, and delete the object then.
  shutdown_time   = "2030-01-01T00:00:00Z"
  shutdown_policy = "Delete"

  timeouts {
    create = "15m"
  }
}

output "sandbox_address" {
  value = agentsandbox_sandbox.session.service_fqdn
}
