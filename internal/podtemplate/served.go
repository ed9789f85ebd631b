package podtemplate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

// pod_spec_overrides is checked in two steps. ValidateConfig decodes it as
// the PodSpec of the Kubernetes API the provider is built with (strictly:
// unknown names are errors). But an agent-sandbox release serves the PodSpec
// of the Kubernetes API it was built with, often an older one (v0.5.6 was
// built with k8s.io/api v0.36.3, go.mod:30 at v0.5.6), and the API server
// refuses or drops a field its CRD schema does not have. So at plan time,
// when the cluster can be read, CheckServedOverrides also checks every field
// name of the override against the pod spec schema the cluster's CRD serves
// (spec.podTemplate.spec of the version the provider writes). When the
// cluster cannot be read (not reachable, not created yet, the CRD not
// installed yet, no permission to read CRDs), only the first step applies.

// servedKey names the read of a CRD's served pod spec schema in
// object.PlanRead's cache (one read per CRD per provider process).
type servedKey struct{ crd, version string }

type servedSchema struct {
	schema  map[string]any // nil: not available (why says why)
	version string
	why     string
}

// CheckServedOverrides checks the pod_spec_overrides of plan (a pod_template
// object) against the pod spec schema the cluster serves for crdName at
// version, unless the overrides are unknown, empty or unchanged from prior
// (null on create). It costs one GET of the CRD per provider process, and
// nothing when the overrides do not change.
func CheckServedOverrides(ctx context.Context, meta *conn.Meta, crdName, version string, p path.Path, plan, prior types.Object) diag.Diagnostics {
	var diags diag.Diagnostics
	pm, ok := decode[Model](ctx, plan, &diags)
	if !ok || !known(pm.PodSpecOverrides) || strings.TrimSpace(pm.PodSpecOverrides.ValueString()) == "" {
		return diags
	}
	if qm, ok := decode[Model](ctx, prior, &diags); ok && qm.PodSpecOverrides.Equal(pm.PodSpecOverrides) {
		return diags
	}
	raw, _, err := decodeOverrides(pm.PodSpecOverrides.ValueString())
	if err != nil {
		return diags // ValidateConfig reports it
	}
	s := served(ctx, meta, crdName, version)
	if s.schema == nil {
		tflog.Debug(ctx, "pod_spec_overrides not checked against the served CRD schema", map[string]any{"crd": crdName, "reason": s.why})
		return diags
	}
	missing := unservedFields(raw, s.schema, "spec")
	if len(missing) == 0 {
		return diags
	}
	diags.AddAttributeError(p.AtName("pod_spec_overrides"), "pod_spec_overrides sets fields the cluster does not serve",
		fmt.Sprintf("The cluster's %s CRD (version %s) has no %s in its pod template schema (spec.podTemplate.spec): "+
			"the installed agent-sandbox release was built with an older Kubernetes API than this provider (k8s.io/api "+
			"v0.37), and the API server would refuse or drop the field. Remove it from pod_spec_overrides, or install an "+
			"agent-sandbox release whose CRDs have it.", crdName, s.version, strings.Join(missing, ", ")))
	return diags
}

// served returns the pod spec schema of crdName at version as the cluster
// serves it, read once per provider process and client (object.PlanRead).
func served(ctx context.Context, meta *conn.Meta, crdName, version string) servedSchema {
	s, why := object.PlanRead(ctx, meta, servedKey{crd: crdName, version: version}, func(ctx context.Context, c *kube.Client) (servedSchema, error) {
		crd, err := c.Get(ctx, kube.CRDGVR, "", crdName)
		if err != nil {
			// Not installed yet (the controller may come in the same
			// apply), not readable (RBAC) or not reachable: nothing
			// more to check.
			return servedSchema{}, err
		}
		s := servedSchema{version: version}
		s.schema, s.why = podSpecSchema(crd, version)
		return s, nil
	})
	if why != "" {
		return servedSchema{version: version, why: why}
	}
	return s
}

// podSpecSchema finds spec.podTemplate.spec in the openAPIV3Schema of the
// served version of crd.
func podSpecSchema(crd *unstructured.Unstructured, version string) (map[string]any, string) {
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, ok := v.(map[string]any)
		if !ok || m["name"] != version {
			continue
		}
		if m["served"] != true {
			return nil, "version " + version + " is not served"
		}
		s, found, _ := unstructured.NestedMap(m, "schema", "openAPIV3Schema", "properties", "spec", "properties",
			"podTemplate", "properties", "spec")
		if !found {
			return nil, "no spec.podTemplate.spec in the schema of " + version
		}
		return s, ""
	}
	return nil, "version " + version + " not in the CRD"
}

// unservedFields lists the field paths of v that schema s does not have,
// sorted. Only names are checked (types, formats and rules are the API
// server's); a node that preserves unknown fields or is a map accepts any
// name.
func unservedFields(v any, s map[string]any, at string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if s["x-kubernetes-preserve-unknown-fields"] == true {
			return nil
		}
		props, hasProps := s["properties"].(map[string]any)
		if !hasProps {
			if ap, ok := s["additionalProperties"].(map[string]any); ok {
				for k, e := range x {
					out = append(out, unservedFields(e, ap, at+"."+k)...)
				}
			}
			break
		}
		for k, e := range x {
			ps, ok := props[k].(map[string]any)
			if !ok {
				out = append(out, at+"."+k)
				continue
			}
			out = append(out, unservedFields(e, ps, at+"."+k)...)
		}
	case []any:
		items, ok := s["items"].(map[string]any)
		if !ok {
			break
		}
		for i, e := range x {
			name := fmt.Sprint(i)
			if m, ok := e.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					name = n
				}
			}
			out = append(out, unservedFields(e, items, fmt.Sprintf("%s[%s]", at, name))...)
		}
	}
	sort.Strings(out)
	return out
}

// CheckRuntimeClass looks up, at plan, the RuntimeClass the pod template
// plan (at p) names, when it is known and differs from prior (null on
// create): one GET per distinct name per provider process, nothing when the
// cluster cannot be read (see object.Lookup). Without the RuntimeClass the
// API server accepts the sandbox, but no pod is ever created (the pod is
// refused at admission), and the apply reports success. A missing one is
// an error.
//
// The default "gvisor" is not looked up: GKE creates it with the cluster's
// first GKE Sandbox node pool, which an agentsandbox_gke_node_pool may add
// in the same apply, and a plan cannot tell that case from a cluster
// without gVisor (a warning there was noise on every first plan of the
// quickstart).
func CheckRuntimeClass(ctx context.Context, meta *conn.Meta, kind string, p path.Path, plan, prior types.Object) diag.Diagnostics {
	var diags diag.Diagnostics
	pm, ok := decode[Model](ctx, plan, &diags)
	if !ok || pm.RuntimeClassName.ValueString() == DefaultRuntimeClassName {
		return diags
	}
	var before types.String
	if qm, ok := decode[Model](ctx, prior, &diags); ok {
		before = qm.RuntimeClassName
	}
	name := pm.RuntimeClassName.ValueString()
	diags.Append(object.CheckReferences(ctx, meta, object.Reference{
		Attr: p.AtName("runtime_class_name"), Value: pm.RuntimeClassName, Prior: before, GVR: object.RuntimeClassGVR,
		Summary: "RuntimeClass not found",
		Detail: fmt.Sprintf("The cluster has no RuntimeClass %q. The API server would accept the %s, but the pod "+
			"admission refuses every pod naming a missing RuntimeClass, so no pod would ever start (and the apply "+
			"would not say so). Install the runtime and its RuntimeClass on the cluster, or correct runtime_class_name.", name, kind),
	})...)
	return diags
}
