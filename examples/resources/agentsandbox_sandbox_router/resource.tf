# The sandbox router of the installed release, hardened by default:
# every request needs a Kubernetes bearer token (TokenReview), the pods run
# restricted, and the NetworkPolicy admits only the clients named here.
resource "agentsandbox_sandbox_router" "this" {
  version = agentsandbox_controller.this.version # the router of the same release

  # upstream's manifests name a floating :latest image: pin a digest of the
  # image you build from the release's sandbox-router/ or mirror.
  image = "registry.internal.example/agent-sandbox/sandbox-router-go@sha256:0000000000000000000000000000000000000000000000000000000000000000"

  # Only tokens minted for the router (kubectl create token ... --audience sandbox-router).
  authz_audiences = ["sandbox-router"]

  # The agent runtime reaches the router over the pod network; developers
  # port-forward (the SDKs' default), which needs no rule.
  allowed_clients = [
    { namespace = "agents", pod_labels = { "app.kubernetes.io/name" = "agent-runtime" } },
  ]
  metrics_namespace  = "monitoring"
  sandbox_namespaces = ["team-a", "team-b"]
  # GKE: the control plane's endpoint, for TokenReview and the Pod-IP cache.
  api_server_cidrs = ["172.16.0.2/32"]

  resources = {
    requests = { cpu = "250m", memory = "256Mi" }
    limits   = { cpu = "2", memory = "1Gi" }
  }
}

# Clients in the cluster use the router's URL, e.g. the Go SDK's APIURL.
output "sandbox_router_url" {
  value = agentsandbox_sandbox_router.this.url
}
