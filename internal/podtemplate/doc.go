// Package podtemplate owns the one typed, hardened pod-template schema that
// agentsandbox_sandbox_template and agentsandbox_sandbox (and their data
// sources) share: the `pod_template` attribute, its Go model, the conversion
// to and from the API type (agents v1beta1 PodTemplate: pod labels and
// annotations plus a core/v1 PodSpec), the plan-time checks, and the warnings
// that make every loosened security default visible.
//
// # How a resource uses it
//
//	// Schema: embed the attribute.
//	Attributes: map[string]schema.Attribute{
//		"pod_template": podtemplate.Attribute(),
//		...
//	}
//
//	// Model: the attribute is an object.
//	type sandboxModel struct {
//		PodTemplate types.Object `tfsdk:"pod_template"`
//		...
//	}
//
//	// ValidateConfig: plan-time errors and the loosened-default warnings.
//	resp.Diagnostics.Append(podtemplate.Validate(ctx, path.Root("pod_template"), m.PodTemplate,
//		podtemplate.Options{ClaimTemplateNames: names})...)
//
//	// Create/Update: the API object.
//	pt, diags := podtemplate.Expand(ctx, plan.PodTemplate)
//	sb.Spec.PodTemplate = pt
//
//	// Read (and the state written after Create/Update): from the live object,
//	// keeping the spelling of the prior state.
//	m.PodTemplate, diags = podtemplate.Flatten(ctx, live.Spec.PodTemplate, prior.PodTemplate)
//
//	// Data sources: the same shape, every attribute computed.
//	"pod_template": podtemplate.DataSourceAttribute(),
//	m.PodTemplate, diags = podtemplate.Flatten(ctx, live.Spec.PodTemplate, podtemplate.Null())
//
// # Hardened defaults
//
// The schema gives the secure value as a Default, so `terraform plan` shows it
// even when the configuration says nothing: runtime_class_name "gvisor",
// automount_service_account_token false, a pod security context with
// run_as_non_root true and the RuntimeDefault seccomp profile, and on every
// container a security context with allow_privilege_escalation false and
// capabilities dropping ALL. CPU and memory limits are required on every
// container. Loosening any default takes an explicit attribute, and
// [Validate] then returns a warning on that attribute naming the risk.
//
// # pod_spec_overrides
//
// PodSpec fields the typed schema does not model can be given as a JSON or
// YAML string. It is merged under the typed fields, and the two never
// overlap: an override may not set a field that has an attribute (the plan
// fails and names the attribute to use instead), so "typed wins" never has
// to silently discard anything. Containers, init containers and volumes in
// the override are matched by name: an override entry for a typed container
// adds fields the schema does not model (lifecycle hooks, envFrom,
// restartPolicy for sidecars, ...); a container that is not declared in the
// typed schema is refused (every container must carry limits and the
// hardened security context); volumes that the typed schema cannot express
// (projected, csi, ...) are added under new names. Security-relevant fields
// set this way (host namespaces, hostPath volumes, unconfined AppArmor,
// unmasked /proc) produce the same kind of warning as loosened defaults.
//
// On refresh pod_spec_overrides also reports every field of the live spec
// that the typed schema cannot express and the configured override does not
// declare, whether or not an override is configured: hostNetwork patched in
// out of band reads back as `{"hostNetwork":true}`, so the plan shows it,
// and the apply (exclusive below spec, see object.Kind.ApplyExclusive)
// removes it. Without such fields the prior value is kept as it is.
//
// # Round trip
//
// [Flatten] is written so that an object the provider wrote reads back
// exactly as configured ("drift is real drift"): quantities are compared by
// value and keep the configured spelling ("1000m" stays "1000m" when the
// server says "1"); an absent and an empty list or map are the same, and the
// prior state decides which of the two is reported; values the CRD schema
// defaults (a port's protocol TCP, a gRPC probe's empty service) have that
// default in the schema too, or are treated as equal to unset. Every other
// difference between the live object and the prior state is reported, so a
// real out-of-band change shows up in the plan. Flatten reports what it is
// given: a resource that wants to ignore fields other field managers added
// can narrow the live object first (see kube.OwnedFields).
package podtemplate
