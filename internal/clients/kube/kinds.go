package kube

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Mapping says how to address objects of one kind.
type Mapping struct {
	GVR        schema.GroupVersionResource
	Namespaced bool
}

// wellKnown maps the built-in kinds that installers and manifests use to
// their resources. Their names and scopes are fixed by Kubernetes, so
// answering from this table saves a discovery round (a dozen requests) on
// every refresh of a resource that tracks a bundle of objects.
var wellKnown = map[schema.GroupVersionKind]Mapping{
	{Version: "v1", Kind: "Namespace"}:                                                               {schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false},
	{Version: "v1", Kind: "ServiceAccount"}:                                                          {schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, true},
	{Version: "v1", Kind: "Service"}:                                                                 {schema.GroupVersionResource{Version: "v1", Resource: "services"}, true},
	{Version: "v1", Kind: "ConfigMap"}:                                                               {schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, true},
	{Version: "v1", Kind: "Secret"}:                                                                  {schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, true},
	{Version: "v1", Kind: "Pod"}:                                                                     {schema.GroupVersionResource{Version: "v1", Resource: "pods"}, true},
	{Version: "v1", Kind: "PersistentVolumeClaim"}:                                                   {schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, true},
	{Version: "v1", Kind: "ResourceQuota"}:                                                           {schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}, true},
	{Version: "v1", Kind: "LimitRange"}:                                                              {schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}, true},
	{Group: "apps", Version: "v1", Kind: "Deployment"}:                                               {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}:                                              {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, true},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:                                                {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, true},
	{Group: "batch", Version: "v1", Kind: "Job"}:                                                     {schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, true},
	{Group: "batch", Version: "v1", Kind: "CronJob"}:                                                 {schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, true},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}:                                {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, true},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}:                         {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, true},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}:                         {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, false},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}:                  {schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, false},
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}:                 {schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, false},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}:   {schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}, false},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}:     {schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}, false},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}:        {schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}, false},
	{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicyBinding"}: {schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}, false},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}:                               {schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}, true},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}:                                     {schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, true},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}:                                    {schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, true},
	{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}:                               {schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}, false},
	{Group: "node.k8s.io", Version: "v1", Kind: "RuntimeClass"}:                                      {schema.GroupVersionResource{Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"}, false},
	{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}:                                     {schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, true},
	{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}:                             {schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}, false},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}:                           {schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, true},
	{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}:                                   {schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}, false},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "FlowSchema"}:                       {schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}, false},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "PriorityLevelConfiguration"}:       {schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations"}, false},
	{Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest"}:                 {schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}, false},
	{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}:                                {schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}, true},
}

// WellKnownMapping answers from the built-in table only, without a
// client: for planning, where the cluster must not be contacted.
func WellKnownMapping(gvk schema.GroupVersionKind) (Mapping, bool) {
	m, ok := wellKnown[gvk]
	return m, ok
}

// MappingFor says how to address objects of gvk: from the built-in table
// for Kubernetes' own kinds, otherwise through the Client's RESTMapper
// (discovery, done at most once per Client and refreshed once when a kind
// is missing, e.g. a CRD created moments ago).
func (c *Client) MappingFor(ctx context.Context, gvk schema.GroupVersionKind) (Mapping, error) {
	if m, ok := wellKnown[gvk]; ok {
		return m, nil
	}
	if c.mapper == nil {
		return Mapping{}, fmt.Errorf("no REST mapping for %s: this client has no RESTMapper", gvk)
	}
	rm, err := c.mapper.Mapping(ctx, gvk)
	if err != nil {
		return Mapping{}, err
	}
	return Mapping{GVR: rm.Resource, Namespaced: rm.Scope.Name() == meta.RESTScopeNameNamespace}, nil
}
