// Package kube is the one place in the provider that talks to Kubernetes.
//
// It owns:
//   - turning the provider's resolved connection settings ([Config]) into a
//     client-go rest.Config (kubeconfig files, explicit attributes, exec
//     credential plugins, GKE credentials), with TLS verification on unless
//     the user explicitly turned it off;
//   - one [Client] per provider instance: a dynamic client, a lazily built
//     typed clientset and a lazily discovered, process-cached RESTMapper;
//   - the HTTP layer every request goes through: retries on 429/5xx and
//     connection failures honouring Retry-After, request counting for
//     benchmarks, and TRACE logging that never includes headers or bodies;
//   - server-side apply, get, list and delete helpers;
//   - watch-based waiting for one or many objects, and for deletion;
//   - turning API errors into Terraform diagnostics a user can act on.
//
// Resource packages should never build their own clients or loops around
// the API: a mechanism written twice is a defect.
package kube
