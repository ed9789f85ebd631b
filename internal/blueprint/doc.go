// Package blueprint is the sandbox blueprint shared by
// agentsandbox_sandbox_template and agentsandbox_sandbox: the pod template
// (package podtemplate, which holds the hardened pod schema on its own),
// the volume claim templates and the service switch. Expand and Flatten
// convert the three attribute values to and from the API's
// SandboxBlueprint; the claim templates' schema, validation and replace
// check live here too.
//
// podtemplate stays a package of its own beside this one: it is most of
// the code, has its own tests and is used for validation and warnings
// apart from the blueprint.
package blueprint
