package controller

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ControllerDeploymentName is the name upstream gives the controller
// Deployment in every release; the `controller` settings apply to it.
const ControllerDeploymentName = "agent-sandbox-controller"

// podSpecPaths says where each workload kind keeps its pod spec.
var podSpecPaths = map[string][]string{
	"Deployment.apps":  {"spec", "template", "spec"},
	"StatefulSet.apps": {"spec", "template", "spec"},
	"DaemonSet.apps":   {"spec", "template", "spec"},
	"ReplicaSet.apps":  {"spec", "template", "spec"},
	"Job.batch":        {"spec", "template", "spec"},
	"CronJob.batch":    {"spec", "jobTemplate", "spec", "template", "spec"},
	"Pod":              {"spec"},
}

var containerLists = []string{"initContainers", "containers", "ephemeralContainers"}

// rewriteImages points every container image of every workload at
// registry (see rewriteImage). It returns how many images it changed.
func rewriteImages(objs []object, registry string) (int, error) {
	n := 0
	for _, o := range objs {
		path, ok := podSpecPaths[o.GroupVersionKind().GroupKind().String()]
		if !ok {
			continue
		}
		spec, found, err := unstructured.NestedMap(o.Object, path...)
		if err != nil {
			return n, fmt.Errorf("%s: %s: pod spec: %w", o.where(), keyOf(o.Unstructured), err)
		}
		if !found {
			continue
		}
		for _, list := range containerLists {
			containers, _, _ := unstructured.NestedSlice(spec, list)
			for i, c := range containers {
				m, ok := c.(map[string]any)
				if !ok {
					continue
				}
				image, _ := m["image"].(string)
				if image == "" {
					continue
				}
				m["image"] = rewriteImage(image, registry)
				containers[i] = m
				n++
			}
			if containers != nil {
				if err := unstructured.SetNestedSlice(spec, containers, list); err != nil {
					return n, err
				}
			}
		}
		if err := unstructured.SetNestedMap(o.Object, spec, path...); err != nil {
			return n, err
		}
	}
	return n, nil
}

// koPrefix marks an image placeholder of ko, upstream's image builder: its
// k8s/ manifests name the controller image
// ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller
// (k8s/controller.yaml:113 at v0.5.6), and only its release tool
// (dev/tools/release:170 at v0.5.6) replaces it with the published image.
const koPrefix = "ko://"

// koPlaceholder is an image left as a ko placeholder, and where.
type koPlaceholder struct {
	where, object, container, image string
}

// findKoPlaceholders lists every container image of every workload that is
// still a ko:// placeholder: a manifest that never went through upstream's
// release tooling (raw `kubectl kustomize k8s` output). Applied as is, the
// image cannot be pulled (and rewritten by image_registry it becomes a
// reference no registry serves), so the Deployment never becomes ready.
func findKoPlaceholders(objs []object) []koPlaceholder {
	var out []koPlaceholder
	for _, o := range objs {
		path, ok := podSpecPaths[o.GroupVersionKind().GroupKind().String()]
		if !ok {
			continue
		}
		spec, found, err := unstructured.NestedMap(o.Object, path...)
		if err != nil || !found {
			continue
		}
		for _, list := range containerLists {
			containers, _, _ := unstructured.NestedSlice(spec, list)
			for _, c := range containers {
				m, _ := c.(map[string]any)
				image, _ := m["image"].(string)
				if strings.HasPrefix(image, koPrefix) {
					name, _ := m["name"].(string)
					out = append(out, koPlaceholder{where: o.where(), object: keyOf(o.Unstructured).String(), container: name, image: image})
				}
			}
		}
	}
	return out
}

// koPlaceholderError says what was found and what to do instead.
func koPlaceholderError(found []koPlaceholder, version string) string {
	var b strings.Builder
	b.WriteString("The manifest still holds ko:// image placeholders, which no registry serves:\n\n")
	for _, f := range found {
		fmt.Fprintf(&b, "  - %s: %s, container %q: %s\n", f.where, f.object, f.container, f.image)
	}
	tag := version
	if tag == "" {
		tag = "<release tag>"
	}
	fmt.Fprintf(&b, "\nThis is raw `kubectl kustomize k8s` output of the agent-sandbox repository: only upstream's release "+
		"tooling replaces the placeholder with the published image. Nothing was applied. Either install a published "+
		"release (`version = \"%[1]s\"`, or `url`/`manifest` with the release asset sandbox-with-extensions.yaml), or "+
		"replace the placeholder yourself before handing the YAML over, e.g.\n\n"+
		"  sed 's#ko://sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller#registry.k8s.io/agent-sandbox/agent-sandbox-controller:%[1]s#'\n\n"+
		"(with `image_registry` set, the rewritten image is then pulled from your mirror).", tag)
	return b.String()
}

// rewriteImage replaces the registry of an image reference, keeping its
// repository path and its tag or digest:
//
//	registry.k8s.io/agent-sandbox/agent-sandbox-controller:v1.0.3
//	  with mirror.example.com/k8s → mirror.example.com/k8s/agent-sandbox/agent-sandbox-controller:v1.0.3
//
// The first path component is the registry when it looks like a host (has
// a dot or a port, or is localhost), as Docker and containerd decide. An
// image without one lives on Docker Hub, whose one-component names are
// under library/: busybox:1.36 → mirror.example.com/k8s/library/busybox:1.36,
// the path pull-through mirrors of Docker Hub use.
func rewriteImage(image, registry string) string {
	registry = strings.TrimRight(registry, "/")
	first, rest, hasSlash := strings.Cut(image, "/")
	if hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return registry + "/" + rest
	}
	if !hasSlash {
		return registry + "/library/" + image
	}
	return registry + "/" + image
}

// imageRegistryRE accepts host[:port][/path...] as image references spell
// registries: a lower-case host name or IP, an optional port, and optional
// lower-case repository path components. No scheme, no tag.
var imageRegistryRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-]+[a-z0-9]+)*)*$`)

// controllerSettings are the `controller` attribute's values, expanded.
type controllerSettings struct {
	Args           []string
	Replicas       *int64
	Requests       map[string]string
	Limits         map[string]string
	HasResources   bool
	NodeSelector   map[string]string
	HasSelector    bool
	Tolerations    []map[string]any
	HasTolerations bool
	// Pod are the chart's pod options (podsettings.go).
	Pod podSettings
	// Flags are the chart's typed controller values that are set, in the
	// chart's order, then the metrics TLS flags (flags.go).
	Flags []setFlag
	// MetricsCertSecret is mounted at metricsCertDir when set.
	MetricsCertSecret string
}

// applyControllerSettings changes the controller Deployment (named
// ControllerDeploymentName) as the `controller` attribute says: extra args
// (an arg naming a flag the bundle already sets replaces it), replicas,
// the container's resources, node selector and tolerations. The container
// is the one named like the Deployment, else the first.
func applyControllerSettings(objs []object, s controllerSettings) error {
	var dep *object
	for i := range objs {
		if objs[i].GetKind() == "Deployment" && objs[i].GroupVersionKind().Group == "apps" && objs[i].GetName() == ControllerDeploymentName {
			dep = &objs[i]
			break
		}
	}
	if dep == nil {
		return fmt.Errorf("the manifest has no Deployment named %q, which the `controller` settings change", ControllerDeploymentName)
	}
	if s.Replicas != nil {
		if err := unstructured.SetNestedField(dep.Object, *s.Replicas, "spec", "replicas"); err != nil {
			return err
		}
	}
	podSpec, _, err := unstructured.NestedMap(dep.Object, "spec", "template", "spec")
	if err != nil || podSpec == nil {
		return fmt.Errorf("%s: Deployment %q has no pod template spec", dep.where(), dep.GetName())
	}
	containers, _, _ := unstructured.NestedSlice(podSpec, "containers")
	idx := -1
	for i, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == ControllerDeploymentName {
			idx = i
			break
		}
	}
	if idx < 0 && len(containers) > 0 {
		idx = 0
	}
	if idx < 0 {
		return fmt.Errorf("%s: Deployment %q has no containers", dep.where(), dep.GetName())
	}
	c, _ := containers[idx].(map[string]any)
	if len(s.Args) > 0 || len(s.Flags) > 0 {
		existing, _, _ := unstructured.NestedStringSlice(c, "args")
		typed := make([]string, 0, len(s.Flags))
		for _, f := range s.Flags {
			typed = append(typed, f.Arg)
		}
		// A flag is set by a typed value or by args, never both
		// (ValidateConfig), so the order of the two merges is moot.
		c["args"] = toAnySlice(mergeArgs(mergeArgs(existing, typed), s.Args))
	}
	if s.HasResources {
		res := map[string]any{}
		if len(s.Requests) > 0 {
			res["requests"] = toAnyMap(s.Requests)
		}
		if len(s.Limits) > 0 {
			res["limits"] = toAnyMap(s.Limits)
		}
		c["resources"] = res
	}
	if s.MetricsCertSecret != "" {
		mounts, _, _ := unstructured.NestedSlice(c, "volumeMounts")
		c["volumeMounts"] = append(mounts, map[string]any{"name": metricsCertVolume, "mountPath": metricsCertDir, "readOnly": true})
		volumes, _, _ := unstructured.NestedSlice(podSpec, "volumes")
		podSpec["volumes"] = append(volumes, map[string]any{"name": metricsCertVolume, "secret": map[string]any{"secretName": s.MetricsCertSecret}})
	}
	if s.Pod.ImagePullPolicy != "" {
		c["imagePullPolicy"] = s.Pod.ImagePullPolicy
	}
	if s.Pod.ContainerSecurityContext != nil {
		c["securityContext"] = s.Pod.ContainerSecurityContext
	}
	containers[idx] = c
	podSpec["containers"] = containers
	if s.Pod.ImagePullSecrets != nil {
		podSpec["imagePullSecrets"] = s.Pod.ImagePullSecrets
	}
	if s.Pod.PodSecurityContext != nil {
		podSpec["securityContext"] = s.Pod.PodSecurityContext
	}
	if s.Pod.Affinity != nil {
		podSpec["affinity"] = s.Pod.Affinity
	}
	for field, extra := range map[string]map[string]any{"labels": s.Pod.PodLabels, "annotations": s.Pod.PodAnnotations} {
		if extra == nil {
			continue
		}
		meta, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "metadata", field)
		if meta == nil {
			meta = map[string]any{}
		}
		for k, v := range extra {
			if _, set := meta[k]; !set {
				// The release's own pod labels (the selector's) win,
				// as in the chart (helm/templates/deployment.yaml:17).
				meta[k] = v
			}
		}
		if err := unstructured.SetNestedMap(dep.Object, meta, "spec", "template", "metadata", field); err != nil {
			return err
		}
	}
	if s.HasSelector {
		podSpec["nodeSelector"] = toAnyMap(s.NodeSelector)
	}
	if s.HasTolerations {
		list := make([]any, 0, len(s.Tolerations))
		for _, t := range s.Tolerations {
			list = append(list, t)
		}
		podSpec["tolerations"] = list
	}
	return unstructured.SetNestedMap(dep.Object, podSpec, "spec", "template", "spec")
}

// mergeArgs appends extra to base, except that an extra arg naming a flag
// base already sets (--flag or --flag=value) replaces that arg in place, so
// `--leader-elect=false` overrides the bundle's `--leader-elect=true`
// instead of adding a second, conflicting flag.
func mergeArgs(base, extra []string) []string {
	out := append([]string(nil), base...)
	for _, e := range extra {
		name := flagName(e)
		replaced := false
		if name != "" {
			for i, b := range out {
				if flagName(b) == name {
					out[i] = e
					replaced = true
					break
				}
			}
		}
		if !replaced {
			out = append(out, e)
		}
	}
	return out
}

// flagName returns "leader-elect" for "--leader-elect=true", "-leader-elect"
// or "--leader-elect", and "" for a positional argument.
func flagName(arg string) string {
	if !strings.HasPrefix(arg, "-") {
		return ""
	}
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	return name
}

func toAnySlice(in []string) []any {
	out := make([]any, len(in))
	for i, s := range in {
		out[i] = s
	}
	return out
}

func toAnyMap(in map[string]string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
