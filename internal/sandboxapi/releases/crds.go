package releases

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	agentsv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/agents/v1beta1"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/crds"
	extv1beta1 "github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/extensions/v1beta1"
)

// Webhook is where the API server sends ConversionReviews for a profile that
// serves v1alpha1: either the release's own address, the Service
// agent-sandbox-system/agent-sandbox-webhook-service on port 443, path
// /convert (k8s/crds/agents.x-k8s.io_sandboxes.yaml:8030-8040 at v0.5.6, the
// same in the three other CRDs; the Service is k8s/controller.yaml:129-141),
// or a URL, for a cluster whose API server cannot reach a Service's address
// (a cluster the test harness did not start). Upstream's controller patches
// the caBundle in at start-up; here it is set from the start.
type Webhook struct {
	// Service is the release's Service address (UpstreamWebhookService);
	// nil means URL.
	Service *WebhookService
	// URL is the https URL of the /convert endpoint, used without Service.
	URL string
	// CABundle is the PEM of the CA that signed the server's certificate.
	CABundle []byte
}

// WebhookService names the Service the conversion webhook is reached at.
type WebhookService struct {
	Namespace, Name, Path string
	Port                  int32
}

// UpstreamWebhookService is where every v0.5.x release points its CRDs'
// conversion webhook (see Webhook).
var UpstreamWebhookService = WebhookService{
	Namespace: "agent-sandbox-system", Name: "agent-sandbox-webhook-service", Path: "/convert", Port: 443,
}

// DNSName is the name the API server expects in the webhook's serving
// certificate: <service>.<namespace>.svc.
func (s WebhookService) DNSName() string { return s.Name + "." + s.Namespace + ".svc" }

// clientConfig is the CRD's spec.conversion.webhook.clientConfig for wh.
func (wh *Webhook) clientConfig() *apiextensionsv1.WebhookClientConfig {
	cc := &apiextensionsv1.WebhookClientConfig{CABundle: wh.CABundle}
	if wh.Service != nil {
		s := *wh.Service
		path, port := s.Path, s.Port
		cc.Service = &apiextensionsv1.ServiceReference{Namespace: s.Namespace, Name: s.Name, Path: &path, Port: &port}
		return cc
	}
	url := wh.URL
	cc.URL = &url
	return cc
}

// CRDs returns the four CRDs as the profile's release serves them, built
// from the project's generated CRDs (package crds): the v1beta1 schema minus
// what the release did not have yet, and for v0.5.x the v1alpha1 version
// (served, not stored) with Webhook conversion to wh. wh is required exactly
// when the profile serves v1alpha1.
func (p Profile) CRDs(wh *Webhook) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if p.ServesV1alpha1 != (wh != nil) {
		return nil, fmt.Errorf("profile %s: a conversion webhook is needed exactly when v1alpha1 is served", p.Name)
	}
	beta, err := crds.V1beta1()
	if err != nil {
		return nil, err
	}
	var alpha []*apiextensionsv1.CustomResourceDefinition
	if p.ServesV1alpha1 {
		if alpha, err = crds.V1alpha1(); err != nil {
			return nil, err
		}
	}
	for i, crd := range beta {
		if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("generated CRD %s: want exactly one version with a schema", crd.Name)
		}
		root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		if err := p.prunePodTemplate(crd); err != nil {
			return nil, err
		}
		switch crd.Name {
		case agentsv1beta1.SandboxCRDName:
			if !p.SandboxVCTImmutableRule {
				if err := dropSpecValidations(root); err != nil {
					return nil, fmt.Errorf("%s: %w", crd.Name, err)
				}
			}
		case extv1beta1.SandboxWarmPoolCRDName:
			if !p.WarmPoolObservedGeneration {
				if err := dropStatusField(root, "observedGeneration"); err != nil {
					return nil, fmt.Errorf("%s: %w", crd.Name, err)
				}
			}
		}
		if p.ServesV1alpha1 {
			a := alpha[i]
			if a.Name != crd.Name || len(a.Spec.Versions) != 1 {
				return nil, fmt.Errorf("generated v1alpha1 CRD %s does not match %s", a.Name, crd.Name)
			}
			v := a.Spec.Versions[0]
			v.Storage = false
			crd.Spec.Versions = append(crd.Spec.Versions, v)
			crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1", "v1beta1"},
					ClientConfig:             wh.clientConfig(),
				},
			}
		}
	}
	return beta, nil
}

// dropSpecValidations removes the CEL rules on spec (the Sandbox's only one
// is the volumeClaimTemplates immutability rule).
func dropSpecValidations(root *apiextensionsv1.JSONSchemaProps) error {
	spec, ok := root.Properties["spec"]
	if !ok {
		return fmt.Errorf("no spec in the schema")
	}
	if len(spec.XValidations) == 0 {
		return fmt.Errorf("spec has no CEL rule to drop (the generated schema changed?)")
	}
	spec.XValidations = nil
	root.Properties["spec"] = spec
	return nil
}

// dropStatusField removes status.<name> from the schema.
func dropStatusField(root *apiextensionsv1.JSONSchemaProps, name string) error {
	status, ok := root.Properties["status"]
	if !ok {
		return fmt.Errorf("no status in the schema")
	}
	if _, ok := status.Properties[name]; !ok {
		return fmt.Errorf("no status.%s in the schema", name)
	}
	delete(status.Properties, name)
	root.Properties["status"] = status
	return nil
}

// prunePodTemplate makes spec.podTemplate.spec of the Sandbox and
// SandboxTemplate CRDs (every version) serve the PodSpec of the profile's
// KubernetesAPI; other CRDs have no pod template.
func (p Profile) prunePodTemplate(crd *apiextensionsv1.CustomResourceDefinition) error {
	if p.KubernetesAPI == "" || crd.Name != agentsv1beta1.SandboxCRDName && crd.Name != extv1beta1.SandboxTemplateCRDName {
		return nil
	}
	f, err := loadPodSpecFields(p.KubernetesAPI)
	if err != nil {
		return err
	}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
		pt, ok := spec.Properties["podTemplate"]
		if !ok {
			return fmt.Errorf("%s %s: no spec.podTemplate in the schema", crd.Name, v.Name)
		}
		ps, ok := pt.Properties["spec"]
		if !ok {
			return fmt.Errorf("%s %s: no spec.podTemplate.spec in the schema", crd.Name, v.Name)
		}
		f.prunePodSpec(&ps)
		pt.Properties["spec"] = ps
		spec.Properties["podTemplate"] = pt
		v.Schema.OpenAPIV3Schema.Properties["spec"] = spec
	}
	return nil
}
