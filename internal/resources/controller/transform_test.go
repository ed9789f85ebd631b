package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
)

func TestRewriteImage(t *testing.T) {
	const reg = "mirror.example.com/k8s"
	cases := map[string]string{
		"registry.k8s.io/agent-sandbox/agent-sandbox-controller:v1.0.3": "mirror.example.com/k8s/agent-sandbox/agent-sandbox-controller:v1.0.3",
		"registry.k8s.io/pause@sha256:0123":                             "mirror.example.com/k8s/pause@sha256:0123",
		"localhost/img:1":                                               "mirror.example.com/k8s/img:1",
		"localhost:5000/team/img":                                       "mirror.example.com/k8s/team/img",
		"ghcr.io/org/img:tag":                                           "mirror.example.com/k8s/org/img:tag",
		"busybox:1.36":                                                  "mirror.example.com/k8s/library/busybox:1.36",
		"bitnami/kubectl:1.30":                                          "mirror.example.com/k8s/bitnami/kubectl:1.30",
	}
	for in, want := range cases {
		if got := rewriteImage(in, reg); got != want {
			t.Errorf("rewriteImage(%q) = %q, want %q", in, got, want)
		}
	}
	if got := rewriteImage("busybox", "mirror.example.com:5000/"); got != "mirror.example.com:5000/library/busybox" {
		t.Errorf("trailing slash of the registry: %q", got)
	}
}

func TestImageRegistryRE(t *testing.T) {
	for _, ok := range []string{"mirror.example.com", "mirror.example.com:5000", "10.0.0.1:5000/k8s", "localhost", "reg.io/a/b-c/d_e"} {
		if !imageRegistryRE.MatchString(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"https://mirror.example.com", "mirror.example.com/", "mirror.example.com/Upper", "reg.io:port", "reg.io/a:tag", "", "-reg.io"} {
		if imageRegistryRE.MatchString(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func workload(kind, apiVersion string, podPath []string, containers map[string][]string) object {
	spec := map[string]any{}
	for list, images := range containers {
		var cs []any
		for i, img := range images {
			cs = append(cs, map[string]any{"name": fmt.Sprintf("%s-%d", list, i), "image": img})
		}
		spec[list] = cs
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": strings.ToLower(kind), "namespace": "ns"}}}
	_ = unstructured.SetNestedMap(u.Object, spec, podPath...)
	return object{Unstructured: u, Source: "test", Doc: 1, Line: 1}
}

// TestRewriteImages_EveryContainerOfEveryWorkload: init, regular and
// ephemeral containers, in every workload kind, and nothing else.
func TestRewriteImages_EveryContainerOfEveryWorkload(t *testing.T) {
	objs := []object{
		workload("Deployment", "apps/v1", []string{"spec", "template", "spec"}, map[string][]string{
			"initContainers": {"busybox"}, "containers": {"registry.k8s.io/a:1", "registry.k8s.io/b:2"},
		}),
		workload("CronJob", "batch/v1", []string{"spec", "jobTemplate", "spec", "template", "spec"}, map[string][]string{"containers": {"ghcr.io/x/y:1"}}),
		workload("Pod", "v1", []string{"spec"}, map[string][]string{"ephemeralContainers": {"quay.io/debug:1"}}),
		workload("DaemonSet", "apps/v1", []string{"spec", "template", "spec"}, map[string][]string{"containers": {"a.io/ds:1"}}),
		workload("Widget", "example.com/v1", []string{"spec", "template", "spec"}, map[string][]string{"containers": {"untouched.io/w:1"}}),
	}
	n, err := rewriteImages(objs, "m.io")
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("rewrote %d images, want 6", n)
	}
	var got []string
	for _, o := range objs {
		for _, p := range [][]string{{"spec", "template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}, {"spec"}} {
			for _, list := range containerLists {
				cs, _, _ := unstructured.NestedSlice(o.Object, append(slices.Clone(p), list)...)
				for _, c := range cs {
					got = append(got, c.(map[string]any)["image"].(string))
				}
			}
		}
	}
	want := []string{"m.io/library/busybox", "m.io/a:1", "m.io/b:2", "m.io/x/y:1", "m.io/debug:1", "m.io/ds:1", "untouched.io/w:1"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("image %s not found in %v", w, got)
		}
	}
}

func bundleObjects(t *testing.T, version, asset string) []object {
	t.Helper()
	data, err := bundles.Read(version, asset)
	if err != nil {
		t.Fatal(err)
	}
	return mustParse(t, version+"/"+asset, string(data))
}

func controllerContainer(t *testing.T, objs []object) (map[string]any, map[string]any, *unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == ControllerDeploymentName {
			podSpec, _, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
			return podSpec["containers"].([]any)[0].(map[string]any), podSpec, o.Unstructured
		}
	}
	t.Fatal("no controller Deployment")
	return nil, nil, nil
}

func TestApplyControllerSettings(t *testing.T) {
	objs := bundleObjects(t, "v1.0.3", assetAll)
	three := int64(3)
	err := applyControllerSettings(objs, controllerSettings{
		Args:         []string{"--leader-elect=false", "--kube-api-qps=50", "--extensions"},
		Replicas:     &three,
		Requests:     map[string]string{"cpu": "10m"},
		HasResources: true,
		NodeSelector: map[string]string{"pool": "system"}, HasSelector: true,
		Tolerations:    []map[string]any{{"key": "k", "operator": "Exists"}},
		HasTolerations: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	c, podSpec, dep := controllerContainer(t, objs)
	if got := fmt.Sprint(c["args"]); got != "[--leader-elect=false --extensions --kube-api-qps=50]" {
		t.Errorf("args = %s", got)
	}
	if got := fmt.Sprint(c["resources"]); got != "map[requests:map[cpu:10m]]" {
		t.Errorf("resources = %s (limits not given must not stay)", got)
	}
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 3 {
		t.Errorf("replicas = %d", r)
	}
	if got := fmt.Sprint(podSpec["nodeSelector"], podSpec["tolerations"]); got != "map[pool:system] [map[key:k operator:Exists]]" {
		t.Errorf("scheduling = %s", got)
	}
	if c["image"] != "registry.k8s.io/agent-sandbox/agent-sandbox-controller:v1.0.3" {
		t.Errorf("image changed: %v", c["image"])
	}

	// Unset settings keep the release's values. Upstream's Deployment sets
	// no resources; give it some to see that they stay.
	objs = bundleObjects(t, "v1.0.3", assetAll)
	_, _, dep = controllerContainer(t, objs)
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["resources"] = map[string]any{"limits": map[string]any{"memory": "512Mi"}}
	if err := unstructured.SetNestedSlice(dep.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if err := applyControllerSettings(objs, controllerSettings{}); err != nil {
		t.Fatal(err)
	}
	c, podSpec, _ = controllerContainer(t, objs)
	if fmt.Sprint(c["args"]) != "[--leader-elect=true --extensions]" || podSpec["nodeSelector"] != nil ||
		fmt.Sprint(c["resources"]) != "map[limits:map[memory:512Mi]]" {
		t.Errorf("empty settings changed the Deployment: %v %v", c, podSpec["nodeSelector"])
	}

	if err := applyControllerSettings(objs[:3], controllerSettings{}); err == nil || !strings.Contains(err.Error(), `no Deployment named "agent-sandbox-controller"`) {
		t.Errorf("manifest without the controller Deployment: %v", err)
	}
}

func TestMergeArgs(t *testing.T) {
	cases := []struct{ base, extra, want []string }{
		{[]string{"--a=1", "--b"}, []string{"--c=3"}, []string{"--a=1", "--b", "--c=3"}},
		{[]string{"--a=1", "--b"}, []string{"--a=2", "--b=false"}, []string{"--a=2", "--b=false"}},
		{[]string{"-v=1"}, []string{"--v=4"}, []string{"--v=4"}},
		{nil, []string{"--x", "pos"}, []string{"--x", "pos"}},
	}
	for _, c := range cases {
		if got := mergeArgs(c.base, c.extra); !slices.Equal(got, c.want) {
			t.Errorf("mergeArgs(%v, %v) = %v, want %v", c.base, c.extra, got, c.want)
		}
	}
	if got := flagName("--leader-elect=true"); got != "leader-elect" {
		t.Errorf("flagName = %q", got)
	}
}

func TestControllerNamespace(t *testing.T) {
	if ns := controllerNamespace(bundleObjects(t, "v1.0.3", assetAll)); ns != "agent-sandbox-system" {
		t.Errorf("v1.0.3: %q", ns)
	}
	only := mustParse(t, "m", "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n")
	if ns := controllerNamespace(only); ns != "team" {
		t.Errorf("namespace only: %q", ns)
	}
}

// TestKoPlaceholdersAreRefused: raw `kubectl kustomize k8s` output names
// the controller image ko://... (k8s/controller.yaml:113 at v0.5.6). It is
// found, named with its place, and the message says how to get a real
// image; a published release's image is not reported.
func TestKoPlaceholdersAreRefused(t *testing.T) {
	const doc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: agent-sandbox-controller
  namespace: agent-sandbox-system
spec:
  template:
    spec:
      initContainers:
      - name: init
        image: registry.k8s.io/pause:3.10
      containers:
      - name: agent-sandbox-controller
        image: ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller
`
	objs, err := parseManifest(manifestFile{Source: "kustomize.yaml", Data: []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	found := findKoPlaceholders(objs)
	if len(found) != 1 || found[0].container != "agent-sandbox-controller" || !strings.HasPrefix(found[0].image, "ko://") {
		t.Fatalf("found %+v, want the one ko:// container", found)
	}
	msg := koPlaceholderError(found, "v0.5.6")
	for _, want := range []string{
		`Deployment.apps "agent-sandbox-system/agent-sandbox-controller"`,
		"kubectl kustomize", "Nothing was applied",
		"registry.k8s.io/agent-sandbox/agent-sandbox-controller:v0.5.6",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	for _, v := range bundles.Versions() {
		assets, err := bundles.Assets(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range assets {
			data, err := bundles.Read(v, a)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := parseManifest(manifestFile{Source: v + "/" + a, Data: data})
			if err != nil {
				t.Fatal(err)
			}
			if found := findKoPlaceholders(objs); len(found) != 0 {
				t.Errorf("%s/%s: placeholders reported in a published release: %+v", v, a, found)
			}
		}
	}
}

// The chart's pod options land where helm/templates/deployment.yaml at
// v1.0.3 renders them (imagePullPolicy :35, imagePullSecrets :28-31,
// podLabels :17, podAnnotations :18-21, podSecurityContext :24-27,
// containerSecurityContext :62-65, affinity :74-77); a pod label never
// replaces the release's selector label.
func TestApplyControllerSettings_ChartPodOptions(t *testing.T) {
	objs := bundleObjects(t, "v1.0.3", assetAll)
	err := applyControllerSettings(objs, controllerSettings{Pod: podSettings{
		ImagePullPolicy:          "Always",
		ImagePullSecrets:         []any{map[string]any{"name": "mirror-creds"}},
		PodLabels:                map[string]any{"team": "platform", "app": "not-the-selector"},
		PodAnnotations:           map[string]any{"sidecar.istio.io/inject": "false"},
		PodSecurityContext:       map[string]any{"runAsNonRoot": true},
		ContainerSecurityContext: map[string]any{"allowPrivilegeEscalation": false},
		Affinity:                 map[string]any{"nodeAffinity": map[string]any{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, podSpec, dep := controllerContainer(t, objs)
	labels, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "labels")
	annotations, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "annotations")
	for what, got := range map[string]string{
		"imagePullPolicy":  fmt.Sprint(c["imagePullPolicy"]),
		"securityContext":  fmt.Sprint(c["securityContext"]),
		"imagePullSecrets": fmt.Sprint(podSpec["imagePullSecrets"]),
		"pod securityCtx":  fmt.Sprint(podSpec["securityContext"]),
		"affinity":         fmt.Sprint(podSpec["affinity"]),
		"labels":           fmt.Sprint(labels),
		"annotations":      fmt.Sprint(annotations),
	} {
		want := map[string]string{
			"imagePullPolicy": "Always", "securityContext": "map[allowPrivilegeEscalation:false]",
			"imagePullSecrets": "[map[name:mirror-creds]]", "pod securityCtx": "map[runAsNonRoot:true]",
			"affinity": "map[nodeAffinity:map[]]", "labels": "map[app:agent-sandbox-controller team:platform]",
			"annotations": "map[sidecar.istio.io/inject:false]",
		}[what]
		if got != want {
			t.Errorf("%s = %s, want %s", what, got, want)
		}
	}
}

func TestCheckAffinity(t *testing.T) {
	for s, want := range map[string]string{
		`{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"pool","operator":"In","values":["system"]}]}]}}}`: "",
		`{"nodeAffinty":{}}`: `unknown field "nodeAffinty"`,
		`{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":"x"}}`: "cannot unmarshal string",
		`{}`:               "an empty affinity",
		`nodeAffinity: {}`: "not a Kubernetes Affinity",
	} {
		err := checkAffinity(s)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("checkAffinity(%s) = %v, want %q", s, err, want)
		}
	}
}

// The chart's typed controller values on the release's Deployment: the
// release's --leader-elect=true is replaced in place, the others follow
// in the chart's order, then args.
func TestApplyControllerSettings_ChartFlags(t *testing.T) {
	objs := bundleObjects(t, "v1.0.3", assetAll)
	err := applyControllerSettings(objs, controllerSettings{
		Args: []string{"--zap-log-level=debug"},
		Flags: renderFlags(map[string]any{
			"sandbox_warm_pool_readiness_grace_period": "10m", "leader_elect": false, "kube_api_qps": 2.5, "kube_api_burst": int64(40),
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ := controllerContainer(t, objs)
	want := "[--leader-elect=false --extensions --kube-api-qps=2.5 --kube-api-burst=40 --sandbox-warm-pool-readiness-grace-period=10m --zap-log-level=debug]"
	if got := fmt.Sprint(c["args"]); got != want {
		t.Errorf("args = %s\nwant   %s", got, want)
	}
}

// metrics_cert_secret: the Secret as a volume of the controller pod,
// mounted read-only where --metrics-cert-dir points, next to the release's
// own mount.
func TestApplyControllerSettings_MetricsCert(t *testing.T) {
	objs := bundleObjects(t, "v1.0.3", assetAll)
	err := applyControllerSettings(objs, controllerSettings{
		Flags: []setFlag{
			{chartFlag: metricsTLSFlags[0], Arg: "--metrics-secure-serving=true"},
			{chartFlag: metricsTLSFlags[1], Arg: "--metrics-cert-dir=" + metricsCertDir},
		},
		MetricsCertSecret: "metrics-tls",
	})
	if err != nil {
		t.Fatal(err)
	}
	c, podSpec, _ := controllerContainer(t, objs)
	if got := fmt.Sprint(c["args"]); got != "[--leader-elect=true --extensions --metrics-secure-serving=true --metrics-cert-dir=/etc/metrics-certs]" {
		t.Errorf("args = %s", got)
	}
	if got := fmt.Sprint(c["volumeMounts"]); !strings.HasSuffix(got, "map[mountPath:/etc/metrics-certs name:metrics-certs readOnly:true]]") || !strings.Contains(got, "config-volume") {
		t.Errorf("volumeMounts = %s", got)
	}
	if got := fmt.Sprint(podSpec["volumes"]); !strings.HasSuffix(got, "map[name:metrics-certs secret:map[secretName:metrics-tls]]]") {
		t.Errorf("volumes = %s", got)
	}
}
