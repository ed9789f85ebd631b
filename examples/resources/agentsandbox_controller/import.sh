# An installation is imported by <namespace>/<version>. The first apply after
# the import applies the release (taking ownership of the objects, rewriting
# only those that differ) and records the inventory; until then destroy
# deletes nothing.
terraform import agentsandbox_controller.this agent-sandbox-system/v1.0.3
