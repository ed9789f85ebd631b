# Reach an existing cluster through a kubeconfig file.
provider "agentsandbox" {
  kubernetes {
    config_path    = "~/.kube/config"
    config_context = "prod-agents"
  }
}
