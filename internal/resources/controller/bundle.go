package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// bundle is a manifest ready to apply: fetched, checked, parsed, changed as
// the configuration asks, and sorted in apply order.
type bundle struct {
	Objects []object
	SHA256  string
	// Namespace is where the controller runs (see controllerNamespace).
	Namespace string
	Source    string
}

// prepare turns the configuration into a bundle without contacting the
// cluster: download, checksum, parse, image rewrite, controller settings,
// order. ModifyPlan calls it to show the objects in the plan; Create and
// Update call it again to get the objects themselves.
func prepare(ctx context.Context, m *controllerModel) (*bundle, diag.Diagnostics) {
	var diags diag.Diagnostics
	src := m.source()
	files, err := fetch(ctx, src, userAgent)
	if err != nil {
		title := "Cannot download the agent-sandbox manifest"
		if src.File != "" {
			title = "Cannot read the agent-sandbox manifest file"
		}
		diags.AddAttributeError(src.attrPath(), title, fetchHint(err, src, m))
		return nil, diags
	}
	sum := manifestSHA256(files)
	if want := m.ManifestSHA256; !want.IsNull() && !strings.EqualFold(want.ValueString(), sum) {
		diags.AddAttributeError(path.Root("manifest_sha256"), "Manifest checksum mismatch",
			fmt.Sprintf("The manifest from %s has SHA-256 %s, but manifest_sha256 is %s. Nothing was applied.\n\n"+
				"Either the manifest is not the one you pinned (a different version, a changed mirror, or a tampered "+
				"download), or manifest_sha256 is out of date. Check the source; if it is right, set manifest_sha256 "+
				"to the digest above.", src.describe(), sum, want.ValueString()))
		return nil, diags
	}

	parsed := make([][]object, 0, len(files))
	for _, f := range files {
		objs, err := parseManifest(f)
		if err != nil {
			hint := "Nothing was applied. Check that the source serves the release's YAML (not an HTML error page or " +
				"a login redirect) and that the file is complete."
			if len(src.URLs) == 0 {
				hint = "Nothing was applied. Fix the manifest at the place named above."
			}
			diags.AddAttributeError(src.attrPath(), "Invalid agent-sandbox manifest", err.Error()+"\n\n"+hint)
			return nil, diags
		}
		parsed = append(parsed, objs)
	}
	objs := mergeFiles(parsed)

	if found := findKoPlaceholders(objs); len(found) > 0 {
		diags.AddAttributeError(src.attrPath(), "Manifest with unresolved ko:// images", koPlaceholderError(found, m.Version.ValueString()))
		return nil, diags
	}
	if reg := m.ImageRegistry.ValueString(); reg != "" {
		if _, err := rewriteImages(objs, reg); err != nil {
			diags.AddAttributeError(path.Root("image_registry"), "Cannot rewrite images", err.Error())
			return nil, diags
		}
	}
	s, set, d := m.settings(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return nil, diags
	}
	if set {
		if err := applyControllerSettings(objs, s); err != nil {
			diags.AddAttributeError(path.Root("controller"), "Cannot apply the controller settings", err.Error())
			return nil, diags
		}
	}
	ms, d := m.metrics(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return nil, diags
	}
	if objs, err = addMetricsObjects(ctx, objs, ms); err != nil {
		diags.AddAttributeError(path.Root("metrics"), "Cannot add the metrics objects", err.Error())
		return nil, diags
	}
	domains, d := m.allowedLabelDomains(ctx)
	diags.Append(d...)
	if diags.HasError() {
		return nil, diags
	}
	if domains != nil {
		var err error
		if objs, err = addSandboxConfig(objs, domains); err != nil {
			diags.AddAttributeError(path.Root("allowed_label_domains"), "Cannot configure the allowed label domains", err.Error())
			return nil, diags
		}
	}
	sortForApply(objs)
	return &bundle{Objects: objs, SHA256: sum, Namespace: controllerNamespace(objs), Source: src.describe()}, diags
}

// controllerNamespace is the namespace of the controller Deployment, else
// of the first Deployment, else the first Namespace the manifest creates.
func controllerNamespace(objs []object) string {
	first := ""
	for _, o := range objs {
		if o.GetKind() != "Deployment" || o.GroupVersionKind().Group != "apps" {
			continue
		}
		if o.GetName() == ControllerDeploymentName {
			return o.GetNamespace()
		}
		if first == "" {
			first = o.GetNamespace()
		}
	}
	if first != "" {
		return first
	}
	for _, o := range objs {
		if o.GroupVersionKind() == namespaceGVK {
			return o.GetName()
		}
	}
	return ""
}

// fetchHint explains a download failure and what to do about it.
func fetchHint(err error, src sourceSpec, m *controllerModel) string {
	var fe *fetchError
	msg := err.Error()
	if !errors.As(err, &fe) {
		return msg
	}
	switch {
	case fe.Status == http.StatusNotFound && src.Attr == "version":
		return fmt.Sprintf("%s.\n\nThe release %s has no such asset at this address. Check that the version exists "+
			"(https://github.com/kubernetes-sigs/agent-sandbox/releases) and, with release_base_url, that the mirror "+
			"keeps the layout <base>/<version>/<asset>. Releases up to v0.5.1 publish manifest.yaml and extensions.yaml; "+
			"later ones sandbox-with-extensions.yaml and sandbox.yaml.", msg, m.Version.ValueString())
	case fe.Status == http.StatusUnauthorized || fe.Status == http.StatusForbidden:
		return msg + ".\n\nThe server refused the download. Mirrors that need credentials are not supported; download " +
			"the manifest another way and pass it with manifest = file(...)."
	case fe.Status != 0:
		return msg + "."
	default:
		return msg + ".\n\nThe address could not be reached from where Terraform runs. Check the URL, DNS, proxies " +
			"(HTTPS_PROXY) and firewalls; for air-gapped clusters, mirror the release assets and set release_base_url, " +
			"or pass the manifest with manifest = file(...)."
	}
}
