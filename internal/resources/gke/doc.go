// Package gke is the GKE resource family: the agentsandbox_gke_node_pool
// resource (a hardened GKE Sandbox node pool), the agentsandbox_gke_addon
// resource (GKE's managed Agent Sandbox add-on) and the
// agentsandbox_gke_cluster data source. Schemas, models, expand/flatten,
// CRUD and their tests live here; every API call goes through the shared
// client of internal/clients/gkeapi (retries, busy-cluster waits, operation waits,
// diagnostics), and the tests run against the emulator of internal/testing/gkeemu.
//
// What GKE decides and the provider must not fight:
//
//   - GKE adds the label and the NoSchedule taint sandbox.gke.io/runtime=gvisor
//     to every gVisor node pool and refuses user taints with that key. The
//     provider hides both from labels and taints (so they never cause a
//     diff) and refuses the key at plan time.
//   - The container API does not report a node pool's current size (it lives
//     in the managed instance groups of the Compute Engine API). node_count is
//     therefore the size the provider last set: reading it back would need
//     compute.instanceGroupManagers.get, a permission outside the GKE roles.
//   - Version aliases ("1.35", "latest", "-") are resolved by GKE; the
//     configured alias is kept as long as the pool's version matches it.
package gke
