# The python-analytics-template of the GKE Agent Sandbox walkthrough. The
# hardening the walkthrough spells out by hand comes from the defaults, and the
# plan shows every one of them: runtime_class_name = "gvisor",
# automount_service_account_token = false, run_as_non_root = true, the
# RuntimeDefault seccomp profile, and on the container
# allow_privilege_escalation = false with every capability dropped. Loosening
# any of them is an explicit attribute and a plan-time warning.
resource "agentsandbox_sandbox_template" "python_analytics" {
  name      = "python-analytics-template"
  namespace = "agent-sandboxes"

  pod_template = {
    labels = {
      "app.kubernetes.io/component" = "execution-sandbox"
      "sandbox-tier"                = "untrusted-python"
    }
    security_context = { run_as_user = 10001 }

    containers = [{
      name  = "python-runtime"
      image = "registry.k8s.io/agent-sandbox/python-runtime-sandbox:v0.1.0"
      ports = [{ container_port = 8888 }]
      # Limits are required on every container.
      resources = {
        requests = { cpu = "500m", memory = "1Gi", "ephemeral-storage" = "2Gi" }
        limits   = { cpu = "1000m", memory = "1Gi", "ephemeral-storage" = "2Gi" }
      }
    }]
  }

  # network_policy_management defaults to "Managed": the controller keeps a
  # NetworkPolicy named python-analytics-template-network-policy for these
  # sandboxes. These rules replace its default (which allows the public
  # internet): ingress only from the sandbox router on 8888 (the default of
  # `ingress`), and egress to nothing but HTTPS on the internet, with the
  # metadata server carved out.
  network_policy = {
    allow_egress = [{ cidr = "0.0.0.0/0", except = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"], ports = [{ port = 443 }] }]
  }
}

# The stricter alternative: no controller-managed policy, and an
# agentsandbox_network_policy that Terraform owns (egress denied entirely, as the
# walkthrough's isolate-untrusted-sandboxes). Each sandbox also gets a
# persistent workspace and a stable DNS name, and claims may set environment
# variables the template does not define.
resource "agentsandbox_sandbox_template" "notebook" {
  name      = "notebook"
  namespace = "agent-sandboxes"

  pod_template = {
    containers = [{
      name          = "jupyter"
      image         = "quay.io/jupyter/base-notebook:2026-10-27"
      ports         = [{ container_port = 8888 }]
      volume_mounts = [{ name = "workspace", mount_path = "/home/jovyan/work" }]
      resources     = { limits = { cpu = "2", memory = "4Gi" } }
    }]
  }

  volume_claim_templates = [{
    name      = "workspace"
    resources = { requests = { storage = "10Gi" } }
  }]
  service                   = true
  network_policy_management = "Unmanaged"
  env_vars_injection_policy = "Allowed"
}

resource "agentsandbox_network_policy" "notebook" {
  name      = "notebook-sandboxes"
  namespace = "agent-sandboxes"
  template  = agentsandbox_sandbox_template.notebook.name
}
