package controller

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
)

// TestManifestFile: manifest_file installs a local file like an inline
// manifest, but what the configuration (and so the plan) holds is the
// path; the digest and the objects come from the content, and a change of
// content with the same path is a change.
func TestManifestFile(t *testing.T) {
	data, err := bundles.Read("v0.5.6", "sandbox-with-extensions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "sandbox-with-extensions.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	m := controllerModelFor(map[string]string{"version": "v0.5.6", "manifest_file": file})
	b, diags := prepare(context.Background(), m)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if want := manifestSHA256([]manifestFile{{Data: data}}); b.SHA256 != want {
		t.Errorf("digest %s, want the file's %s", b.SHA256, want)
	}
	if len(b.Objects) < 10 || b.Source != "the file "+file {
		t.Errorf("%d objects from %q", len(b.Objects), b.Source)
	}

	// Same path, same content: nothing to apply. New content: a change.
	state := controllerModelFor(map[string]string{"version": "v0.5.6", "manifest_file": file})
	state.AppliedManifestSHA256 = types.StringValue(b.SHA256)
	if !inputsEqual(m, state) {
		t.Error("unchanged file: inputs differ")
	}
	if err := os.WriteFile(file, append(data, []byte("\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: agent-sandbox-system\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	if inputsEqual(m, state) {
		t.Error("file content changed under the same path: inputs still equal")
	}

	// A missing file is named, at the attribute.
	m = controllerModelFor(map[string]string{"version": "v0.5.6", "manifest_file": filepath.Join(t.TempDir(), "missing.yaml")})
	_, diags = prepare(context.Background(), m)
	if !diags.HasError() || !strings.Contains(diags.Errors()[0].Summary(), "Cannot read the agent-sandbox manifest file") ||
		!strings.Contains(diags.Errors()[0].Detail(), "missing.yaml") {
		t.Errorf("missing file: %v", diags)
	}
}

// TestKoPlaceholderRefusedBeforeApply: a manifest still holding ko://
// images (raw kubectl kustomize output) is refused while preparing, so
// nothing reaches the cluster.
func TestKoPlaceholderRefusedBeforeApply(t *testing.T) {
	data, err := bundles.Read("v0.5.6", "sandbox-with-extensions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	raw := strings.ReplaceAll(string(data), "registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6",
		"ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller")
	if raw == string(data) {
		t.Fatal("the bundle does not name the controller image as expected")
	}
	m := controllerModelFor(map[string]string{"version": "v0.5.6", "manifest": raw, "image_registry": "mirror.example.com/k8s"})
	_, diags := prepare(context.Background(), m)
	if !diags.HasError() || diags.Errors()[0].Summary() != "Manifest with unresolved ko:// images" ||
		!strings.Contains(diags.Errors()[0].Detail(), "agent-sandbox-controller:v0.5.6") {
		t.Errorf("diags = %v", diags)
	}
}

// TestPrepareRefusesWhatItCannotChange: image_registry and the controller
// settings change the manifest's objects; a manifest they cannot change
// is refused while preparing, at the attribute that asked for the change.
func TestPrepareRefusesWhatItCannotChange(t *testing.T) {
	ctx := context.Background()
	// A Deployment whose pod spec is not an object: no image to rewrite.
	m := controllerModelFor(map[string]string{"version": "v0.5.6", "image_registry": "mirror.example.com/k8s", "manifest": `
apiVersion: apps/v1
kind: Deployment
metadata: {name: agent-sandbox-controller, namespace: agent-sandbox-system}
spec: {template: {spec: "not an object"}}
`})
	_, diags := prepare(ctx, m)
	if !diags.HasError() || diags.Errors()[0].Summary() != "Cannot rewrite images" || diags.Errors()[0].Detail() == "" {
		t.Errorf("image_registry over a broken Deployment: %v", diags)
	}

	// Controller settings with no controller Deployment to set them on.
	m = controllerModelFor(map[string]string{"version": "v0.5.6", "manifest": `
apiVersion: v1
kind: ConfigMap
metadata: {name: x, namespace: agent-sandbox-system}
`})
	attrs := map[string]attr.Value{}
	for k, typ := range controllerObjectType.AttrTypes {
		v, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(typ.TerraformType(ctx), nil))
		if err != nil {
			t.Fatal(err)
		}
		attrs[k] = v
	}
	attrs["replicas"] = types.Int64Value(2)
	obj, d := types.ObjectValue(controllerObjectType.AttrTypes, attrs)
	if d.HasError() {
		t.Fatal(d)
	}
	m.Controller = obj
	_, diags = prepare(ctx, m)
	if !diags.HasError() || diags.Errors()[0].Summary() != "Cannot apply the controller settings" ||
		!strings.Contains(diags.Errors()[0].Detail(), "no Deployment named") {
		t.Errorf("controller settings without a Deployment: %v", diags)
	}
}

// TestApplyRefusesAManifestChangedSincePlan: the manifest's digest at
// apply must be the one the plan showed; another is refused before any
// request (the resource here has no cluster to send one to).
func TestApplyRefusesAManifestChangedSincePlan(t *testing.T) {
	m := controllerModelFor(map[string]string{"version": "v0.5.6", "manifest": "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"})
	m.AppliedManifestSHA256 = types.StringValue(strings.Repeat("0", 64))
	_, diags := (&controllerResource{}).apply(context.Background(), m, nil, "")
	if !diags.HasError() || diags.Errors()[0].Summary() != "Manifest changed since the plan" ||
		!strings.Contains(diags.Errors()[0].Detail(), strings.Repeat("0", 64)) {
		t.Errorf("diags = %v", diags)
	}
}
