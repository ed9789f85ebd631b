package controller

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/router"
)

// Names upstream gives the router's objects in every release
// (sandbox-router/deploy/*.yaml).
const (
	routerName          = "sandbox-router"     // Deployment, ServiceAccount, ClusterRole(Binding), PDB, NetworkPolicy
	routerServiceName   = "sandbox-router-svc" // service.yaml:6
	routerContainerName = "sandbox-router"     // deployment.yaml:53
	routerAuthDelegator = "sandbox-router-auth-delegator"
	routerHTTPPort      = 8080 // --http-bind-address=:8080
	routerHTTPSPort     = 8443 // the port upstream's comments name for --https-bind-address
	routerMetricsPort   = 9090
	routerProbePort     = 8081
	routerDNSPort       = 53
	// routerPodLabel is the pod label upstream's template controller admits
	// sandbox ingress from (sandboxtemplate_controller.go:202); v1.0.3's
	// deployment.yaml sets it, v0.5.6's and v1.0.1's do not.
	routerPodLabel = "app"

	routerTLSDir        = "/etc/sandbox-router/tls"
	routerScopedDir     = "/etc/sandbox-router/scoped-token"
	routerScopedKeysDir = "/etc/sandbox-router/scoped-token-keys"
	routerTLSVolume     = "tls"
	routerScopedVolume  = "scoped-token-secret"
	routerKeysVolume    = "scoped-token-keys"
)

// firstRouterWithV2Tokens is the first release whose router verifies v2
// scoped tokens (--authz-scoped-token-verification-keys-file:
// sandbox-router/config/flags.go of v1.0.3; absent from v1.0.1's).
const firstRouterWithV2Tokens = "v1.0.3"

// secretKey names one key of a Secret.
type secretKey struct{ Name, Key string }

// routerClient admits the pods of a namespace (with labels, when set).
type routerClient struct {
	Namespace string
	PodLabels map[string]string
}

// routerConfig is agentsandbox_sandbox_router's configuration as Go values:
// what render turns into objects and flattenRouter reads back.
type routerConfig struct {
	Version, Namespace       string
	Replicas                 int64
	Image, ImageRegistry     string
	ImagePullPolicy          string
	ImagePullSecrets         []string
	HasResources             bool
	Requests, Limits         map[string]string
	ClusterDomain            string
	ProxyTimeout             string
	UpstreamMaxRetries       int64
	CacheEnabled             bool
	CacheNamespace           string
	AuthzMode                string
	RequireToken             bool
	Audiences                []string
	ScopedSecret, ScopedKeys *secretKey
	TLSSecret                string
	MinAvailable             int64
	TopologySpread           bool
	NodeSelector             map[string]string
	Tolerations              []map[string]any
	Affinity                 map[string]any
	NetworkPolicy            bool
	Clients                  []routerClient
	AllNamespaces            bool
	MetricsNamespace         string
	SandboxNamespaces        []string
	SandboxPorts             []int64
	APIServerCIDRs           []string
	DNSCIDRs                 []string
}

// defaultRouterConfig is the configuration of an empty resource block.
func defaultRouterConfig() routerConfig {
	return routerConfig{
		Version: router.DefaultVersion, Namespace: routerDefaultNamespace, Replicas: routerDefaultReplicas,
		ClusterDomain: routerDefaultClusterDomain, ProxyTimeout: routerDefaultProxyTimeout, UpstreamMaxRetries: routerDefaultRetries,
		CacheEnabled: true, AuthzMode: authzTokenReview, RequireToken: true, MinAvailable: routerDefaultMinAvailable,
		TopologySpread: true, NetworkPolicy: true,
	}
}

// needsAPIServer says whether the router calls the API server: TokenReview
// and the Pod-IP cache do.
func (c routerConfig) needsAPIServer() bool { return c.AuthzMode == authzTokenReview || c.CacheEnabled }

// proxyPort is the port clients reach the router on.
func (c routerConfig) proxyPort() int64 {
	if c.TLSSecret != "" {
		return routerHTTPSPort
	}
	return routerHTTPPort
}

// url is the router's in-cluster address.
func (c routerConfig) url() string {
	scheme := "http"
	if c.TLSSecret != "" {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s.%s.svc.%s:%d", scheme, routerServiceName, c.Namespace, c.ClusterDomain, c.proxyPort())
}

// clusterName names a cluster-scoped object of the router: upstream's name
// in the default namespace (so that an install made with kubectl from the
// release's files is adopted), else suffixed with the namespace so that
// routers of several namespaces coexist.
func (c routerConfig) clusterName(name string) string {
	if c.Namespace == routerDefaultNamespace {
		return name
	}
	return name + "-" + c.Namespace
}

// routerArgs are the flags the configuration sets, merged over the
// release's (mergeArgs: a flag the release sets is replaced in place).
func (c routerConfig) routerArgs() []string {
	args := []string{
		"--cluster-domain=" + c.ClusterDomain,
		"--proxy-timeout=" + c.ProxyTimeout,
		"--upstream-max-retries=" + strconv.FormatInt(c.UpstreamMaxRetries, 10),
		"--cache-enabled=" + strconv.FormatBool(c.CacheEnabled),
	}
	if c.CacheEnabled && c.CacheNamespace != "" {
		args = append(args, "--cache-namespace="+c.CacheNamespace)
	}
	args = append(args, "--authz-mode="+c.AuthzMode)
	switch c.AuthzMode {
	case authzTokenReview:
		args = append(args, "--authz-tokenreview-require-token="+strconv.FormatBool(c.RequireToken))
		if len(c.Audiences) > 0 {
			args = append(args, "--authz-tokenreview-audiences="+strings.Join(c.Audiences, ","))
		}
	case authzScopedToken:
		if c.ScopedSecret != nil {
			args = append(args, "--authz-scoped-token-secret-file="+routerScopedDir+"/"+c.ScopedSecret.Key)
		}
		if c.ScopedKeys != nil {
			args = append(args, "--authz-scoped-token-verification-keys-file="+routerScopedKeysDir+"/"+c.ScopedKeys.Key)
		}
	}
	if c.TLSSecret != "" {
		args = append(args, "--http-bind-address=", fmt.Sprintf("--https-bind-address=:%d", routerHTTPSPort),
			"--tls-cert-file="+routerTLSDir+"/tls.crt", "--tls-key-file="+routerTLSDir+"/tls.key")
	}
	return args
}

// renderRouter turns the configuration into the objects to apply, from the
// release's deploy files, sorted for apply. It never contacts the cluster.
func renderRouter(c routerConfig) ([]object, error) {
	var objs []object
	for _, f := range router.Files {
		switch {
		case f == "rbac.yaml" && !c.CacheEnabled,
			f == "rbac-tokenreview.yaml" && c.AuthzMode != authzTokenReview,
			f == "pdb.yaml" && c.MinAvailable == 0,
			f == "networkpolicy.yaml" && !c.NetworkPolicy:
			continue
		}
		data, err := router.Read(c.Version, f)
		if err != nil {
			return nil, err
		}
		parsed, err := parseManifest(manifestFile{Source: router.Source(c.Version, f), Data: data})
		if err != nil {
			return nil, err
		}
		for _, o := range parsed {
			if err := c.adapt(f, o); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", o.where(), keyOf(o.Unstructured), err)
			}
			objs = append(objs, o)
		}
	}
	sortForApply(objs)
	return objs, nil
}

// adapt changes one object of the release's file f as the configuration
// asks.
func (c routerConfig) adapt(f string, o object) error {
	u := o.Unstructured
	switch u.GetKind() {
	case "ClusterRole", "ClusterRoleBinding":
		u.SetNamespace("")
		u.SetName(c.clusterName(u.GetName()))
		if f == "rbac.yaml" && c.CacheNamespace != "" {
			// Read access to one namespace's pods only (rbac.yaml's own
			// advice for routers pinned to one namespace).
			u.SetKind(strings.TrimPrefix(u.GetKind(), "Cluster"))
			u.SetNamespace(c.CacheNamespace)
		}
		if u.GetKind() == "ClusterRoleBinding" || u.GetKind() == "RoleBinding" {
			return c.adaptBinding(u)
		}
		return nil
	}
	u.SetNamespace(c.Namespace)
	switch u.GetKind() {
	case "Deployment":
		return c.adaptDeployment(u)
	case "Service":
		if c.TLSSecret != "" {
			return unstructured.SetNestedSlice(u.Object, []any{map[string]any{
				"name": "proxy-tls", "port": int64(routerHTTPSPort), "targetPort": "proxy-tls", "protocol": "TCP",
			}}, "spec", "ports")
		}
	case "PodDisruptionBudget":
		return unstructured.SetNestedField(u.Object, c.MinAvailable, "spec", "minAvailable")
	case "NetworkPolicy":
		return c.adaptNetworkPolicy(u)
	}
	return nil
}

func (c routerConfig) adaptBinding(u *unstructured.Unstructured) error {
	subjects, _, err := unstructured.NestedSlice(u.Object, "subjects")
	if err != nil {
		return err
	}
	for i, s := range subjects {
		if m, ok := s.(map[string]any); ok && m["kind"] == "ServiceAccount" {
			m["namespace"] = c.Namespace
			subjects[i] = m
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, subjects, "subjects"); err != nil {
		return err
	}
	ref, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
	if ref == routerName {
		// The release's own role (not system:auth-delegator).
		if err := unstructured.SetNestedField(u.Object, c.clusterName(routerName), "roleRef", "name"); err != nil {
			return err
		}
		if u.GetKind() == "RoleBinding" {
			return unstructured.SetNestedField(u.Object, "Role", "roleRef", "kind")
		}
	}
	return nil
}

func (c routerConfig) adaptDeployment(u *unstructured.Unstructured) error {
	if err := unstructured.SetNestedField(u.Object, c.Replicas, "spec", "replicas"); err != nil {
		return err
	}
	labels := u.GetLabels()
	labels[routerPodLabel] = routerName
	u.SetLabels(labels)
	podLabels, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "metadata", "labels")
	podLabels[routerPodLabel] = routerName
	if err := unstructured.SetNestedStringMap(u.Object, podLabels, "spec", "template", "metadata", "labels"); err != nil {
		return err
	}
	spec, _, err := unstructured.NestedMap(u.Object, "spec", "template", "spec")
	if err != nil {
		return err
	}
	containers, _, _ := unstructured.NestedSlice(spec, "containers")
	idx := slices.IndexFunc(containers, func(x any) bool {
		m, _ := x.(map[string]any)
		return m["name"] == routerContainerName
	})
	if idx < 0 {
		return fmt.Errorf("no container %q", routerContainerName)
	}
	ctr, _ := containers[idx].(map[string]any)

	switch {
	case c.Image != "":
		ctr["image"] = c.Image
	case c.ImageRegistry != "":
		image, _ := ctr["image"].(string)
		ctr["image"] = rewriteImage(image, c.ImageRegistry)
	}
	if c.ImagePullPolicy != "" {
		ctr["imagePullPolicy"] = c.ImagePullPolicy
	}
	args, _, _ := unstructured.NestedStringSlice(ctr, "args")
	ctr["args"] = toAnySlice(mergeArgs(args, c.routerArgs()))
	if c.HasResources {
		res := map[string]any{}
		if c.Requests != nil {
			res["requests"] = toAnyMap(c.Requests)
		}
		if c.Limits != nil {
			res["limits"] = toAnyMap(c.Limits)
		}
		ctr["resources"] = res
	}
	// Hardened whatever the release says (every release with a router
	// says the same: deployment.yaml's securityContext).
	ctr["securityContext"] = map[string]any{
		"allowPrivilegeEscalation": false,
		"readOnlyRootFilesystem":   true,
		"runAsNonRoot":             true,
		"privileged":               false,
		"capabilities":             map[string]any{"drop": []any{"ALL"}},
		"seccompProfile":           map[string]any{"type": "RuntimeDefault"},
	}
	var volumes, mounts []any
	mount := func(volume, secret, dir string) {
		volumes = append(volumes, map[string]any{"name": volume, "secret": map[string]any{"secretName": secret}})
		mounts = append(mounts, map[string]any{"name": volume, "mountPath": dir, "readOnly": true})
	}
	if c.TLSSecret != "" {
		mount(routerTLSVolume, c.TLSSecret, routerTLSDir)
		ports, _, _ := unstructured.NestedSlice(ctr, "ports")
		ports = slices.DeleteFunc(ports, func(x any) bool {
			m, _ := x.(map[string]any)
			return m["name"] == "proxy"
		})
		ctr["ports"] = append([]any{map[string]any{"name": "proxy-tls", "containerPort": int64(routerHTTPSPort), "protocol": "TCP"}}, ports...)
	}
	if c.AuthzMode == authzScopedToken && c.ScopedSecret != nil {
		mount(routerScopedVolume, c.ScopedSecret.Name, routerScopedDir)
	}
	if c.AuthzMode == authzScopedToken && c.ScopedKeys != nil {
		mount(routerKeysVolume, c.ScopedKeys.Name, routerScopedKeysDir)
	}
	if mounts != nil {
		ctr["volumeMounts"] = mounts
		spec["volumes"] = volumes
	}
	containers[idx] = ctr
	spec["containers"] = containers

	// The token is mounted only for what calls the API server.
	spec["automountServiceAccountToken"] = c.needsAPIServer()
	spec["securityContext"] = map[string]any{
		"runAsNonRoot":   true,
		"seccompProfile": map[string]any{"type": "RuntimeDefault"},
	}
	if !c.TopologySpread {
		delete(spec, "topologySpreadConstraints")
	}
	if len(c.ImagePullSecrets) > 0 {
		var list []any
		for _, n := range c.ImagePullSecrets {
			list = append(list, map[string]any{"name": n})
		}
		spec["imagePullSecrets"] = list
	}
	if len(c.NodeSelector) > 0 {
		spec["nodeSelector"] = toAnyMap(c.NodeSelector)
	}
	if len(c.Tolerations) > 0 {
		list := make([]any, 0, len(c.Tolerations))
		for _, t := range c.Tolerations {
			list = append(list, t)
		}
		spec["tolerations"] = list
	}
	if c.Affinity != nil {
		spec["affinity"] = c.Affinity
	}
	return unstructured.SetNestedMap(u.Object, spec, "spec", "template", "spec")
}

// namespacePeer selects the pods of one namespace by its name label.
func namespacePeer(ns string) map[string]any {
	return map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}}
}

func tcpPorts(ports ...int64) []any {
	out := make([]any, 0, len(ports))
	for _, p := range ports {
		out = append(out, map[string]any{"protocol": "TCP", "port": p})
	}
	return out
}

// adaptNetworkPolicy keeps the release's policy (name, labels, pod
// selector, both policy types) and renders its rules from the
// configuration.
func (c routerConfig) adaptNetworkPolicy(u *unstructured.Unstructured) error {
	var ingress []any
	var clients []any
	if c.AllNamespaces {
		clients = []any{map[string]any{"namespaceSelector": map[string]any{}}}
	}
	for _, cl := range c.Clients {
		peer := namespacePeer(cl.Namespace)
		if len(cl.PodLabels) > 0 {
			peer["podSelector"] = map[string]any{"matchLabels": toAnyMap(cl.PodLabels)}
		}
		clients = append(clients, peer)
	}
	if len(clients) > 0 {
		ingress = append(ingress, map[string]any{"from": clients, "ports": tcpPorts(c.proxyPort())})
	}
	if c.MetricsNamespace != "" {
		ingress = append(ingress, map[string]any{"from": []any{namespacePeer(c.MetricsNamespace)}, "ports": tcpPorts(routerMetricsPort)})
	}
	// The kubelet probes the pod IP directly (networkpolicy.yaml:40-43).
	ingress = append(ingress, map[string]any{"ports": tcpPorts(routerProbePort)})

	// DNS: the release's rule (kube-system's pods), or dns_cidrs.
	dns := []any{namespacePeer("kube-system")}
	if len(c.DNSCIDRs) > 0 {
		dns = nil
		for _, cidr := range c.DNSCIDRs {
			dns = append(dns, map[string]any{"ipBlock": map[string]any{"cidr": cidr}})
		}
	}
	egress := []any{map[string]any{
		"to":    dns,
		"ports": []any{map[string]any{"protocol": "UDP", "port": int64(routerDNSPort)}, map[string]any{"protocol": "TCP", "port": int64(routerDNSPort)}},
	}}
	sandboxPods := map[string]any{"matchExpressions": []any{map[string]any{"key": sandboxapi.LabelSandboxNameHash, "operator": "Exists"}}}
	var to []any
	if len(c.SandboxNamespaces) == 0 {
		to = []any{map[string]any{"namespaceSelector": map[string]any{}, "podSelector": sandboxPods}}
	}
	for _, ns := range c.SandboxNamespaces {
		peer := namespacePeer(ns)
		peer["podSelector"] = sandboxPods
		to = append(to, peer)
	}
	ports := c.SandboxPorts
	if len(ports) == 0 {
		ports = []int64{routerDefaultSandboxPort}
	}
	egress = append(egress, map[string]any{"to": to, "ports": tcpPorts(ports...)})
	if c.needsAPIServer() {
		var api []any
		for _, cidr := range c.APIServerCIDRs {
			api = append(api, map[string]any{"ipBlock": map[string]any{"cidr": cidr}})
		}
		if api == nil {
			api = []any{namespacePeer("default")} // the release's rule (networkpolicy.yaml:79-87)
		}
		egress = append(egress, map[string]any{"to": api, "ports": tcpPorts(443, 6443)})
	}
	if err := unstructured.SetNestedSlice(u.Object, ingress, "spec", "ingress"); err != nil {
		return err
	}
	return unstructured.SetNestedSlice(u.Object, egress, "spec", "egress")
}

// releaseRouterImage is the image the release's deployment.yaml names.
func releaseRouterImage(version string) string {
	c := defaultRouterConfig()
	c.Version = version
	objs, err := renderRouter(c)
	if err != nil {
		return ""
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			ctrs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, x := range ctrs {
				if m, _ := x.(map[string]any); m["name"] == routerContainerName {
					s, _ := m["image"].(string)
					return s
				}
			}
		}
	}
	return ""
}

// releaseRouterResources are the release's requests and limits.
func releaseRouterResources(version string) (requests, limits map[string]string) {
	data, err := router.Read(version, "deployment.yaml")
	if err != nil {
		return nil, nil
	}
	objs, err := parseManifest(manifestFile{Data: data})
	if err != nil || len(objs) == 0 {
		return nil, nil
	}
	ctrs, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "template", "spec", "containers")
	for _, x := range ctrs {
		if m, _ := x.(map[string]any); m["name"] == routerContainerName {
			requests, _, _ = unstructured.NestedStringMap(m, "resources", "requests")
			limits, _, _ = unstructured.NestedStringMap(m, "resources", "limits")
		}
	}
	return requests, limits
}

// flattenRouter reads the configuration back from the live Deployment and
// (nil when absent) NetworkPolicy and PodDisruptionBudget of a router: what
// an import records. Values equal to the release's are left unset, as a
// configuration that does not mention them would have them.
func flattenRouter(version, namespace string, dep, np, pdb *unstructured.Unstructured) (routerConfig, error) {
	c := defaultRouterConfig()
	c.Version, c.Namespace = version, namespace
	if r, ok, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); ok {
		c.Replicas = r
	}
	spec, _, err := unstructured.NestedMap(dep.Object, "spec", "template", "spec")
	if err != nil {
		return c, err
	}
	containers, _, _ := unstructured.NestedSlice(spec, "containers")
	var ctr map[string]any
	for _, x := range containers {
		if m, _ := x.(map[string]any); m["name"] == routerContainerName {
			ctr = m
		}
	}
	if ctr == nil {
		return c, fmt.Errorf("the Deployment has no container %q", routerContainerName)
	}
	if img, _ := ctr["image"].(string); img != releaseRouterImage(version) {
		c.Image = img
	}
	if p, _ := ctr["imagePullPolicy"].(string); p != "IfNotPresent" {
		c.ImagePullPolicy = p
	}
	requests, _, _ := unstructured.NestedStringMap(ctr, "resources", "requests")
	limits, _, _ := unstructured.NestedStringMap(ctr, "resources", "limits")
	relReq, relLim := releaseRouterResources(version)
	if !maps.Equal(requests, relReq) || !maps.Equal(limits, relLim) {
		c.HasResources, c.Requests, c.Limits = true, requests, limits
	}

	flags := map[string]string{}
	args, _, _ := unstructured.NestedStringSlice(ctr, "args")
	for _, a := range args {
		if name := flagName(a); name != "" {
			_, v, _ := strings.Cut(a, "=")
			flags[name] = v
		}
	}
	if v, ok := flags["cluster-domain"]; ok {
		c.ClusterDomain = v
	}
	if v, ok := flags["proxy-timeout"]; ok {
		c.ProxyTimeout = v
	}
	if v, ok := flags["upstream-max-retries"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			c.UpstreamMaxRetries = n
		}
	}
	c.CacheEnabled = flags["cache-enabled"] == "true"
	c.CacheNamespace = flags["cache-namespace"]
	// Upstream's defaults when a flag is absent: allow-all, tokenless
	// requests allowed (sandbox-router/config/config.go).
	c.AuthzMode = authzAllowAll
	if v := flags["authz-mode"]; v != "" {
		c.AuthzMode = v
	}
	c.RequireToken = c.AuthzMode != authzTokenReview || flags["authz-tokenreview-require-token"] == "true"
	if v := flags["authz-tokenreview-audiences"]; v != "" {
		c.Audiences = strings.Split(v, ",")
	}
	volumes, _, _ := unstructured.NestedSlice(spec, "volumes")
	secretOf := func(volume string) string {
		for _, x := range volumes {
			if m, _ := x.(map[string]any); m["name"] == volume {
				s, _, _ := unstructured.NestedString(m, "secret", "secretName")
				return s
			}
		}
		return ""
	}
	if f := flags["authz-scoped-token-secret-file"]; f != "" {
		c.ScopedSecret = &secretKey{Name: secretOf(routerScopedVolume), Key: strings.TrimPrefix(f, routerScopedDir+"/")}
	}
	if f := flags["authz-scoped-token-verification-keys-file"]; f != "" {
		c.ScopedKeys = &secretKey{Name: secretOf(routerKeysVolume), Key: strings.TrimPrefix(f, routerScopedKeysDir+"/")}
	}
	if flags["https-bind-address"] != "" {
		c.TLSSecret = secretOf(routerTLSVolume)
	}
	_, c.TopologySpread = spec["topologySpreadConstraints"]
	for _, x := range asSlice(spec["imagePullSecrets"]) {
		if m, _ := x.(map[string]any); m != nil {
			n, _ := m["name"].(string)
			c.ImagePullSecrets = append(c.ImagePullSecrets, n)
		}
	}
	c.NodeSelector, _, _ = unstructured.NestedStringMap(spec, "nodeSelector")
	if len(c.NodeSelector) == 0 {
		c.NodeSelector = nil
	}
	for _, x := range asSlice(spec["tolerations"]) {
		if m, _ := x.(map[string]any); m != nil {
			c.Tolerations = append(c.Tolerations, m)
		}
	}
	if a, ok := spec["affinity"].(map[string]any); ok && len(a) > 0 {
		c.Affinity = a
	}

	c.MinAvailable = 0
	if pdb != nil {
		if v, ok, _ := unstructured.NestedInt64(pdb.Object, "spec", "minAvailable"); ok {
			c.MinAvailable = v
		}
	}
	c.NetworkPolicy = np != nil
	if np != nil {
		flattenRouterPolicy(&c, np)
	}
	return c, nil
}

// flattenRouterPolicy reads the rules adaptNetworkPolicy renders.
func flattenRouterPolicy(c *routerConfig, np *unstructured.Unstructured) {
	ingress, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	for _, x := range ingress {
		rule, _ := x.(map[string]any)
		ports := rulePorts(rule)
		switch {
		case slices.Contains(ports, c.proxyPort()):
			for _, p := range asSlice(rule["from"]) {
				peer, _ := p.(map[string]any)
				ns := peerNamespace(peer)
				if ns == "" {
					c.AllNamespaces = true
					continue
				}
				labels, _, _ := unstructured.NestedStringMap(peer, "podSelector", "matchLabels")
				if len(labels) == 0 {
					labels = nil
				}
				c.Clients = append(c.Clients, routerClient{Namespace: ns, PodLabels: labels})
			}
		case slices.Contains(ports, routerMetricsPort):
			for _, p := range asSlice(rule["from"]) {
				peer, _ := p.(map[string]any)
				c.MetricsNamespace = peerNamespace(peer)
			}
		}
	}
	egress, _, _ := unstructured.NestedSlice(np.Object, "spec", "egress")
	for _, x := range egress {
		rule, _ := x.(map[string]any)
		to := asSlice(rule["to"])
		isSandbox := len(to) > 0
		for _, p := range to {
			peer, _ := p.(map[string]any)
			if _, ok := peer["podSelector"]; !ok {
				isSandbox = false
			}
		}
		switch {
		case slices.Contains(rulePorts(rule), routerDNSPort):
			for _, p := range to {
				peer, _ := p.(map[string]any)
				if cidr, _, _ := unstructured.NestedString(peer, "ipBlock", "cidr"); cidr != "" {
					c.DNSCIDRs = append(c.DNSCIDRs, cidr)
				}
			}
		case isSandbox:
			for _, p := range to {
				peer, _ := p.(map[string]any)
				if ns := peerNamespace(peer); ns != "" {
					c.SandboxNamespaces = append(c.SandboxNamespaces, ns)
				}
			}
			if ports := rulePorts(rule); !slices.Equal(ports, []int64{routerDefaultSandboxPort}) {
				c.SandboxPorts = ports
			}
		default:
			for _, p := range to {
				peer, _ := p.(map[string]any)
				if cidr, _, _ := unstructured.NestedString(peer, "ipBlock", "cidr"); cidr != "" {
					c.APIServerCIDRs = append(c.APIServerCIDRs, cidr)
				}
			}
		}
	}
	slices.Sort(c.SandboxNamespaces)
}

// peerNamespace is the namespace name a peer selects, "" for every
// namespace.
func peerNamespace(peer map[string]any) string {
	ns, _, _ := unstructured.NestedString(peer, "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name")
	return ns
}

func rulePorts(rule map[string]any) []int64 {
	var out []int64
	for _, x := range asSlice(rule["ports"]) {
		m, _ := x.(map[string]any)
		switch p := m["port"].(type) {
		case int64:
			out = append(out, p)
		case float64:
			out = append(out, int64(p))
		case json.Number:
			n, _ := p.Int64()
			out = append(out, n)
		}
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
