# A template is imported by <namespace>/<name> (or <name> in namespace "default").
# Its network policy rules are imported into network_policy when they can be
# written in its terms, and the import fails, saying why, when they cannot.
terraform import agentsandbox_sandbox_template.python_analytics agent-sandboxes/python-analytics-template
