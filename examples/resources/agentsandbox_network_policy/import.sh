# A policy is imported by <namespace>/<name> (or <name> in namespace "default").
# Its selector is imported as `template` when a SandboxTemplate of that namespace
# has the name the selector's hash was made from, and as `pod_selector` otherwise.
terraform import agentsandbox_network_policy.isolate_untrusted_sandboxes agent-sandboxes/isolate-untrusted-sandboxes
