# A sandbox is imported by <namespace>/<name> (or <name> in namespace "default").
terraform import agentsandbox_sandbox.session agent-sandboxes/agent-session-42
