package sandboxapi

// OmitEmptyMetadata removes from spec, the unstructured spec of a Sandbox,
// SandboxTemplate or SandboxClaim encoded from upstream's types, the
// metadata objects those types write even when they hold nothing:
// podTemplate.metadata (PodTemplate.ObjectMeta, `json:"metadata"`),
// volumeClaimTemplates[].metadata (the embedded EmbeddedObjectMetadata,
// `json:"metadata"`) and a claim's additionalPodMetadata
// (`json:"additionalPodMetadata,omitempty"`, which does not omit a struct),
// at v1.0.3 as at v0.5.x. The provider must not send them: server-side
// apply turns an object it empties into null, which the CRDs refuse, once
// the labels or annotations it held are removed
// (kubernetes/kubernetes#135841), and an empty object says nothing anyway.
// The project's own copies of the types used omitzero on these fields;
// upstream's cannot be changed, so the encoded form is trimmed instead.
// Objects that are not empty are kept.
func OmitEmptyMetadata(spec map[string]any) {
	dropEmpty(spec, "additionalPodMetadata")
	if pt, ok := spec["podTemplate"].(map[string]any); ok {
		dropEmpty(pt, "metadata")
	}
	if vcts, ok := spec["volumeClaimTemplates"].([]any); ok {
		for _, v := range vcts {
			if t, ok := v.(map[string]any); ok {
				dropEmpty(t, "metadata")
			}
		}
	}
}

// dropEmpty deletes m[key] when it is an empty object.
func dropEmpty(m map[string]any, key string) {
	if v, ok := m[key].(map[string]any); ok && len(v) == 0 {
		delete(m, key)
	}
}
