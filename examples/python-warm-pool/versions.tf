terraform {
  required_version = ">= 1.5"

  required_providers {
    agentsandbox = {
      source  = "agentsandbox/agentsandbox"
      version = "~> 0.1"
    }
  }
}
