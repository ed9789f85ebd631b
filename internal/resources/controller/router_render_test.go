package controller

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/router"
)

func mustRenderRouter(t *testing.T, c routerConfig) []object {
	t.Helper()
	objs, err := renderRouter(c)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func findObject(objs []object, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o.Unstructured
		}
	}
	return nil
}

func routerContainer(t *testing.T, dep *unstructured.Unstructured) map[string]any {
	t.Helper()
	ctrs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	for _, x := range ctrs {
		if m := x.(map[string]any); m["name"] == routerContainerName {
			return m
		}
	}
	t.Fatal("no router container")
	return nil
}

func routerArgsOf(t *testing.T, dep *unstructured.Unstructured) []string {
	args, _, _ := unstructured.NestedStringSlice(routerContainer(t, dep), "args")
	return args
}

// TestRenderRouterDefaultsAreHardened: an empty resource block installs the
// release's objects with authorization on, the pods restricted and the
// NetworkPolicy closed, in every release with a router.
func TestRenderRouterDefaultsAreHardened(t *testing.T) {
	for _, v := range router.Versions() {
		t.Run(v, func(t *testing.T) {
			c := defaultRouterConfig()
			c.Version = v
			objs := mustRenderRouter(t, c)
			var kinds []string
			for _, o := range objs {
				kinds = append(kinds, o.GetKind()+"/"+o.GetName())
				if ns := o.GetNamespace(); strings.HasPrefix(o.GetKind(), "Cluster") && ns != "" {
					t.Errorf("%s: cluster-scoped with namespace %q", o.GetName(), ns)
				} else if !strings.HasPrefix(o.GetKind(), "Cluster") && ns != routerDefaultNamespace {
					t.Errorf("%s %s in namespace %q (the v0.5.6 and v1.0.1 files say default)", o.GetKind(), o.GetName(), ns)
				}
			}
			want := []string{
				"NetworkPolicy/sandbox-router", "ServiceAccount/sandbox-router", "ClusterRole/sandbox-router",
				"ClusterRoleBinding/sandbox-router", "ClusterRoleBinding/sandbox-router-auth-delegator",
				"Service/sandbox-router-svc", "Deployment/sandbox-router", "PodDisruptionBudget/sandbox-router",
			}
			if !slices.Equal(kinds, want) {
				t.Errorf("objects %v, want %v", kinds, want)
			}
			dep := findObject(objs, "Deployment", routerName)
			args := routerArgsOf(t, dep)
			for _, a := range []string{"--authz-mode=tokenreview", "--authz-tokenreview-require-token=true", "--cache-enabled=true",
				"--http-bind-address=:8080", "--cluster-domain=cluster.local", "--proxy-timeout=180s", "--upstream-max-retries=3"} {
				if !slices.Contains(args, a) {
					t.Errorf("args %v lack %s", args, a)
				}
			}
			spec, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "spec")
			if spec["automountServiceAccountToken"] != true {
				t.Error("TokenReview needs the token mounted")
			}
			if nr, _, _ := unstructured.NestedBool(spec, "securityContext", "runAsNonRoot"); !nr {
				t.Error("pod not runAsNonRoot")
			}
			sc := routerContainer(t, dep)["securityContext"].(map[string]any)
			if sc["readOnlyRootFilesystem"] != true || sc["allowPrivilegeEscalation"] != false || sc["runAsNonRoot"] != true {
				t.Errorf("container securityContext %v", sc)
			}
			if lim, _, _ := unstructured.NestedStringMap(routerContainer(t, dep), "resources", "limits"); lim["memory"] == "" || lim["cpu"] == "" {
				t.Errorf("no limits: %v", lim)
			}
			if l, _, _ := unstructured.NestedString(dep.Object, "spec", "template", "metadata", "labels", "app"); l != "sandbox-router" {
				t.Errorf("pod label app = %q: upstream's managed policies admit app=sandbox-router", l)
			}
			np := findObject(objs, "NetworkPolicy", routerName)
			ingress, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
			if len(ingress) != 1 || !slices.Equal(rulePorts(ingress[0].(map[string]any)), []int64{routerProbePort}) {
				t.Errorf("default ingress admits more than the probes: %v", ingress)
			}
			egress, _, _ := unstructured.NestedSlice(np.Object, "spec", "egress")
			if len(egress) != 3 {
				t.Errorf("egress = %v, want DNS, sandboxes, API server", egress)
			}
		})
	}
}

// TestRenderRouterLoosenedAndOptions covers each option's effect on the
// objects.
func TestRenderRouterLoosenedAndOptions(t *testing.T) {
	t.Run("allow-all without cache mounts no token and grants nothing", func(t *testing.T) {
		c := defaultRouterConfig()
		c.AuthzMode, c.CacheEnabled = authzAllowAll, false
		objs := mustRenderRouter(t, c)
		for _, o := range objs {
			if strings.Contains(o.GetKind(), "Role") {
				t.Errorf("unexpected %s %s", o.GetKind(), o.GetName())
			}
		}
		dep := findObject(objs, "Deployment", routerName)
		if v, _, _ := unstructured.NestedBool(dep.Object, "spec", "template", "spec", "automountServiceAccountToken"); v {
			t.Error("token mounted although nothing calls the API server")
		}
		np := findObject(objs, "NetworkPolicy", routerName)
		if egress, _, _ := unstructured.NestedSlice(np.Object, "spec", "egress"); len(egress) != 2 {
			t.Errorf("egress to the API server without a need: %v", egress)
		}
	})
	t.Run("other namespace and cache namespace", func(t *testing.T) {
		c := defaultRouterConfig()
		c.Namespace, c.CacheNamespace = "team-a-router", "team-a"
		objs := mustRenderRouter(t, c)
		role := findObject(objs, "Role", "sandbox-router-team-a-router")
		if role == nil || role.GetNamespace() != "team-a" {
			t.Fatalf("no Role in team-a: %v", objs)
		}
		rb := findObject(objs, "RoleBinding", "sandbox-router-team-a-router")
		if k, _, _ := unstructured.NestedString(rb.Object, "roleRef", "kind"); k != "Role" {
			t.Errorf("roleRef kind %q", k)
		}
		del := findObject(objs, "ClusterRoleBinding", "sandbox-router-auth-delegator-team-a-router")
		if del == nil {
			t.Fatal("no auth-delegator binding named after the namespace")
		}
		subjects, _, _ := unstructured.NestedSlice(del.Object, "subjects")
		if ns := subjects[0].(map[string]any)["namespace"]; ns != "team-a-router" {
			t.Errorf("subject namespace %v", ns)
		}
		if ref, _, _ := unstructured.NestedString(del.Object, "roleRef", "name"); ref != "system:auth-delegator" {
			t.Errorf("roleRef %q", ref)
		}
		if !slices.Contains(routerArgsOf(t, findObject(objs, "Deployment", routerName)), "--cache-namespace=team-a") {
			t.Error("no --cache-namespace")
		}
	})
	t.Run("TLS serves HTTPS only", func(t *testing.T) {
		c := defaultRouterConfig()
		c.TLSSecret = "router-tls"
		objs := mustRenderRouter(t, c)
		args := routerArgsOf(t, findObject(objs, "Deployment", routerName))
		for _, a := range []string{"--http-bind-address=", "--https-bind-address=:8443", "--tls-cert-file=/etc/sandbox-router/tls/tls.crt"} {
			if !slices.Contains(args, a) {
				t.Errorf("args %v lack %s", args, a)
			}
		}
		svc := findObject(objs, "Service", routerServiceName)
		ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		if len(ports) != 1 || ports[0].(map[string]any)["port"] != int64(8443) {
			t.Errorf("service ports %v", ports)
		}
		if c.url() != "https://sandbox-router-svc.agent-sandbox-system.svc.cluster.local:8443" {
			t.Errorf("url %s", c.url())
		}
	})
	t.Run("image registry rewrite", func(t *testing.T) {
		c := defaultRouterConfig()
		c.ImageRegistry = "mirror.example.com/k8s"
		img := routerContainer(t, findObject(mustRenderRouter(t, c), "Deployment", routerName))["image"]
		if img != "mirror.example.com/k8s/agent-sandbox/sandbox-router-go:latest" {
			t.Errorf("image %v", img)
		}
	})
	t.Run("DNS addresses replace kube-system", func(t *testing.T) {
		dnsRule := func(c routerConfig) map[string]any {
			np := findObject(mustRenderRouter(t, c), "NetworkPolicy", routerName)
			egress, _, _ := unstructured.NestedSlice(np.Object, "spec", "egress")
			for _, x := range egress {
				if r := x.(map[string]any); slices.Contains(rulePorts(r), routerDNSPort) {
					return r
				}
			}
			t.Fatalf("no DNS rule in %v", egress)
			return nil
		}
		c := defaultRouterConfig()
		if ns := peerNamespace(asSlice(dnsRule(c)["to"])[0].(map[string]any)); ns != "kube-system" {
			t.Errorf("default DNS peer namespace %q, want kube-system (the release's rule)", ns)
		}
		c.DNSCIDRs = []string{"169.254.20.10/32"}
		to := asSlice(dnsRule(c)["to"])
		if len(to) != 1 || !reflect.DeepEqual(to[0], map[string]any{"ipBlock": map[string]any{"cidr": "169.254.20.10/32"}}) {
			t.Errorf("DNS peers %v, want only the ipBlock 169.254.20.10/32", to)
		}
	})
	t.Run("no PDB, no policy, no spread", func(t *testing.T) {
		c := defaultRouterConfig()
		c.MinAvailable, c.NetworkPolicy, c.TopologySpread = 0, false, false
		objs := mustRenderRouter(t, c)
		if findObject(objs, "PodDisruptionBudget", routerName) != nil || findObject(objs, "NetworkPolicy", routerName) != nil {
			t.Error("PDB or policy rendered")
		}
		if _, ok, _ := unstructured.NestedSlice(findObject(objs, "Deployment", routerName).Object, "spec", "template", "spec", "topologySpreadConstraints"); ok {
			t.Error("spread kept")
		}
	})
}

// routerConfigs are configurations that exercise every attribute, for the
// round trips.
func routerConfigs() map[string]routerConfig {
	out := map[string]routerConfig{"defaults": defaultRouterConfig()}
	for _, v := range router.Versions() {
		c := defaultRouterConfig()
		c.Version = v
		out["defaults "+v] = c
	}
	c := defaultRouterConfig()
	c.Namespace, c.Replicas, c.Image, c.ImagePullPolicy = "routers", 3, "mirror.example.com/router@sha256:"+strings.Repeat("ab", 32), "Always"
	c.ImagePullSecrets = []string{"mirror-creds"}
	c.HasResources, c.Requests, c.Limits = true, map[string]string{"cpu": "100m"}, map[string]string{"memory": "512Mi"}
	c.ClusterDomain, c.ProxyTimeout, c.UpstreamMaxRetries = "corp.local", "2m", 0
	c.CacheNamespace = "team-a"
	c.Audiences = []string{"sandbox-router", "other"}
	c.TLSSecret, c.MinAvailable, c.TopologySpread = "router-tls", 2, false
	c.NodeSelector = map[string]string{"pool": "system"}
	c.Tolerations = []map[string]any{{"key": "dedicated", "operator": "Equal", "value": "system", "effect": "NoExecute", "tolerationSeconds": int64(30)}}
	c.Affinity = map[string]any{"nodeAffinity": map[string]any{}}
	c.Clients = []routerClient{{Namespace: "agents"}, {Namespace: "ci", PodLabels: map[string]string{"role": "runner"}}}
	c.MetricsNamespace, c.SandboxNamespaces, c.SandboxPorts = "monitoring", []string{"team-a", "team-b"}, []int64{8888, 9000}
	c.APIServerCIDRs = []string{"10.0.0.1/32"}
	c.DNSCIDRs = []string{"169.254.20.10/32", "10.96.0.10/32"}
	out["everything"] = c

	c = defaultRouterConfig()
	c.Version, c.AuthzMode = "v1.0.3", authzScopedToken
	c.ScopedSecret, c.ScopedKeys = &secretKey{"hmac", "secret"}, &secretKey{"keys", "keys.json"}
	out["scoped tokens"] = c

	c = defaultRouterConfig()
	c.AuthzMode, c.CacheEnabled, c.AllNamespaces = authzAllowAll, false, true
	out["allow-all from everywhere"] = c

	c = defaultRouterConfig()
	c.RequireToken, c.NetworkPolicy, c.MinAvailable = false, false, 0
	out["tokenless, no policy, no PDB"] = c
	return out
}

// TestFlattenRouterInvertsRender: what an import reads from the rendered
// objects is the configuration that rendered them.
func TestFlattenRouterInvertsRender(t *testing.T) {
	for name, c := range routerConfigs() {
		t.Run(name, func(t *testing.T) {
			objs := mustRenderRouter(t, c)
			dep := findObject(objs, "Deployment", routerName)
			got, err := flattenRouter(c.Version, c.Namespace, dep, findObject(objs, "NetworkPolicy", routerName),
				findObject(objs, "PodDisruptionBudget", routerName))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c) {
				t.Errorf("flatten(render(c)) =\n%+v\nwant\n%+v", got, c)
			}
		})
	}
}

// TestFlattenRouterReadsUpstreamDefaults: a router applied from the
// release's files as they are (kubectl apply -f deploy/) is read as what
// it is: allow-all, which the schema's defaults would change.
func TestFlattenRouterReadsUpstreamDefaults(t *testing.T) {
	data, _ := router.Read("v1.0.3", "deployment.yaml")
	objs, err := parseManifest(manifestFile{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	c, err := flattenRouter("v1.0.3", routerDefaultNamespace, objs[0].Unstructured, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.AuthzMode != authzAllowAll || c.NetworkPolicy || c.MinAvailable != 0 || c.Image != "" || c.HasResources || !c.CacheEnabled {
		t.Errorf("upstream's deployment read as %+v", c)
	}
}

// TestRouterModelRoundTrip: setConfig and config are inverses.
func TestRouterModelRoundTrip(t *testing.T) {
	ctx := context.Background()
	for name, c := range routerConfigs() {
		t.Run(name, func(t *testing.T) {
			var m routerModel
			if d := m.setConfig(ctx, c); d.HasError() {
				t.Fatal(d)
			}
			got, d := m.config(ctx)
			if d.HasError() {
				t.Fatal(d)
			}
			if !reflect.DeepEqual(got, c) {
				t.Errorf("config(setConfig(c)) =\n%+v\nwant\n%+v", got, c)
			}
		})
	}
}
