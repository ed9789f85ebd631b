# A cluster created in the same configuration: values unknown at plan time
# are fine because the provider builds its clients only when first used.
provider "agentsandbox" {
  kubernetes {
    host                   = var.cluster_endpoint
    cluster_ca_certificate = var.cluster_ca_certificate
    exec {
      api_version = "client.authentication.k8s.io/v1"
      command     = "gke-gcloud-auth-plugin"
    }
  }
}

variable "cluster_endpoint" {
  type = string
}

variable "cluster_ca_certificate" {
  type = string
}
