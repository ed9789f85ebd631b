# A claim is imported by <namespace>/<name> (or <name> in namespace "default"),
# whoever created it (for example the sandbox router).
terraform import agentsandbox_sandbox_claim.analyst agent-sandboxes/analyst-session
