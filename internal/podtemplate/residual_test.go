package podtemplate

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
)

// TestOutOfBandUnmodelledFieldsAreReported: a PodSpec field the typed
// schema does not model, added out of band, shows up in pod_spec_overrides
// (the configured override's fields plus the addition), so the plan is not
// empty and the exclusive apply removes it.
func TestOutOfBandUnmodelledFieldsAreReported(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	withVolume := with(minimalPod(), "volumes", []any{map[string]any{"name": "scratch", "empty_dir": map[string]any{}}})
	for _, tc := range []struct {
		name   string
		pod    map[string]any
		change func(*corev1.PodSpec)
		want   string
	}{
		{"hostNetwork, no override configured", minimalPod(),
			func(s *corev1.PodSpec) { s.HostNetwork = true },
			`{"hostNetwork":true}`},
		{"host PID and process namespace sharing", minimalPod(),
			func(s *corev1.PodSpec) { on := true; s.HostPID = true; s.ShareProcessNamespace = &on },
			`{"hostPID":true,"shareProcessNamespace":true}`},
		{"hostPath volume", minimalPod(),
			func(s *corev1.PodSpec) {
				s.Volumes = append(s.Volumes, corev1.Volume{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
			},
			`{"volumes":[{"hostPath":{"path":"/"},"name":"root"}]}`},
		{"hostPath beside a typed volume's source", withVolume,
			func(s *corev1.PodSpec) { s.Volumes[0].HostPath = &corev1.HostPathVolumeSource{Path: "/"} },
			`{"volumes":[{"hostPath":{"path":"/"},"name":"scratch"}]}`},
		{"unmodelled container security context field", minimalPod(),
			func(s *corev1.PodSpec) {
				s.Containers[0].SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
			},
			`{"containers":[{"name":"main","securityContext":{"appArmorProfile":{"type":"Unconfined"}}}]}`},
		{"unmodelled pod security context field", minimalPod(),
			func(s *corev1.PodSpec) {
				s.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "0"}}
			},
			`{"securityContext":{"sysctls":[{"name":"kernel.shm_rmid_forced","value":"0"}]}}`},
		{"hostNetwork beside a configured override", fullPod(),
			func(s *corev1.PodSpec) { s.HostNetwork = true },
			`{"containers":[{"lifecycle":{"preStop":{"exec":{"command":["/drain"]}}},"name":"main"}],"enableServiceLinks":false,` +
				`"hostNetwork":true,"hostname":"agent","initContainers":[{"name":"proxy","restartPolicy":"Always"}],` +
				`"volumes":[{"name":"token","projected":{"sources":[{"serviceAccountToken":{"audience":"vault","path":"token"}}]}}]}`},
		{"container field the override does not declare, in a container it does", fullPod(),
			func(s *corev1.PodSpec) { s.Containers[0].Stdin = true },
			`{"containers":[{"lifecycle":{"preStop":{"exec":{"command":["/drain"]}}},"name":"main","stdin":true}],"enableServiceLinks":false,` +
				`"hostname":"agent","initContainers":[{"name":"proxy","restartPolicy":"Always"}],` +
				`"volumes":[{"name":"token","projected":{"sources":[{"serviceAccountToken":{"audience":"vault","path":"token"}}]}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			planned := h.plan(tc.pod, fullPodExtra)
			pt, diags := Expand(ctx, planned)
			if diags.HasError() {
				t.Fatal(diags)
			}
			live := serverRoundTrip(t, pt)
			changed := *live.DeepCopy()
			tc.change(&changed.Spec)
			got := mustFlatten(t, serverRoundTrip(t, changed), planned)
			if d := diffPaths(valueDiff("pod_template", planned, got)); fmt.Sprint(d) != "[pod_template.pod_spec_overrides]" {
				t.Errorf("drift at %v, want only at pod_spec_overrides", d)
			}
			if s := mustDecode[Model](t, got).PodSpecOverrides.ValueString(); s != tc.want {
				t.Errorf("pod_spec_overrides = %s\nwant %s", s, tc.want)
			}
			// The state written after the apply that removed it (the plan
			// is the prior) is the configuration again.
			if d := valueDiff("pod_template", planned, mustFlatten(t, live, planned)); len(d) > 0 {
				t.Errorf("after the repair:\n%s", join(d))
			}
		})
	}
}

// TestDeclaredUnmodelledFieldsKeepThePrior: unmodelled fields the configured
// override declares are not drift, whatever the spelling of the override
// and whatever the CRD defaults below them.
func TestDeclaredUnmodelledFieldsKeepThePrior(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	for name, override := range map[string]string{
		"host namespaces":   "# the agent needs the node's network\nhostNetwork: true\nhostPID: true\n",
		"hostPath volume":   `{"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}`,
		"container field":   `{"containers": [{"name": "main", "securityContext": {"appArmorProfile": {"type": "Unconfined"}}, "stdin": true}]}`,
		"pod sc field":      `{"securityContext": {"sysctls": [{"name": "kernel.shm_rmid_forced", "value": "0"}]}}`,
		"explicit false":    `{"hostNetwork": false, "shareProcessNamespace": false}`,
		"empty document":    "",
		"defaulted sources": `{"volumes": [{"name": "a", "azureDisk": {"diskName": "d", "diskURI": "u"}}, {"name": "r", "rbd": {"monitors": ["m"], "image": "i"}}, {"name": "i", "iscsi": {"targetPortal": "p", "iqn": "q", "lun": 0}}, {"name": "s", "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			planned := h.plan(set("pod_spec_overrides", override))
			pt, diags := Expand(ctx, planned)
			if diags.HasError() {
				t.Fatal(diags)
			}
			got := mustFlatten(t, serverRoundTrip(t, pt), planned)
			if d := valueDiff("pod_template", planned, got); len(d) > 0 {
				t.Errorf("read back differs from the plan:\n%s", join(d))
			}
		})
	}
}

// TestNormalObjectsKeepANullOverride: a configuration without an override
// reads back with a null one after the server has stored, defaulted and
// normalised it; nothing the server adds counts as an unmodelled field.
func TestNormalObjectsKeepANullOverride(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	cases := roundTripCases()
	cases["full without override"] = fullPodWithoutOverrides()
	for name, pod := range cases {
		planned := h.plan(pod, fullPodExtra)
		if !mustDecode[Model](t, planned).PodSpecOverrides.IsNull() {
			continue
		}
		t.Run(name, func(t *testing.T) {
			pt, diags := Expand(ctx, planned)
			if diags.HasError() {
				t.Fatal(diags)
			}
			live := serverRoundTrip(t, pt)
			for _, again := range []agentsv1beta1.PodTemplate{live, serverRoundTrip(t, live)} {
				if got := mustDecode[Model](t, mustFlatten(t, again, planned)).PodSpecOverrides; !got.IsNull() {
					t.Errorf("pod_spec_overrides = %v, want null", got)
				}
			}
		})
	}
}

// TestCRDDefaultsAreKnown: every default the CRDs put into a pod spec is
// either below a typed attribute (the typed read handles it), dropped by
// the typed read (a zero value with omitempty), or listed in crdDefaults;
// otherwise a defaulted field below a source the override declares would be
// reported as an out-of-band addition on every refresh.
func TestCRDDefaultsAreKnown(t *testing.T) {
	seen := map[string]bool{}
	for _, version := range bundles.Versions() {
		all, err := releaseCRDs(version)
		if err != nil {
			t.Fatal(err)
		}
		for _, crd := range all {
			s := v1beta1Schema(crd)
			for _, step := range []string{"spec", "podTemplate", "spec"} {
				if s == nil {
					break
				}
				p, ok := s.Properties[step]
				if !ok {
					s = nil
					break
				}
				s = &p
			}
			if s == nil {
				continue
			}
			walkDefaults(*s, "", func(path string, def any) {
				seen[path] = true
				switch {
				case typedPath(path):
				case vanishes(t, path, def):
				default:
					if want, ok := crdDefaults[path]; !ok || !reflect.DeepEqual(want, def) {
						t.Errorf("%s (%s of %s): the CRD defaults it to %#v; add it to crdDefaults", path, crd.Name, version, def)
					}
				}
			})
		}
	}
	for path := range crdDefaults {
		if !seen[path] {
			t.Errorf("crdDefaults lists %s, which no CRD defaults", path)
		}
	}
}

func walkDefaults(s apiextensionsv1.JSONSchemaProps, path string, f func(string, any)) {
	if s.Default != nil {
		var v any
		if err := json.Unmarshal(s.Default.Raw, &v); err == nil {
			f(path, v)
		}
	}
	for k, p := range s.Properties {
		next := k
		if path != "" {
			next = path + "." + k
		}
		walkDefaults(p, next, f)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkDefaults(*s.Items.Schema, path+"[]", f)
	}
}

// typedPath reports whether a pod spec path is below a field the typed
// schema owns (or the override may not set), so residual never holds it.
func typedPath(path string) bool {
	steps := strings.Split(path, ".")
	owned := podOwned
	if list := strings.TrimSuffix(steps[0], "[]"); list != steps[0] {
		if _, keyed := keyedLists[list]; keyed {
			owned = containerOwned
			if list == "volumes" {
				owned = volumeOwned
			}
			steps = steps[1:]
		}
	}
	for _, step := range steps {
		o, ok := owned[strings.TrimSuffix(step, "[]")]
		if !ok {
			return false
		}
		if o.children == nil {
			return true
		}
		owned = o.children
	}
	return false
}

// vanishes reports whether the typed read drops the default: a zero value
// of a non-pointer field with omitempty.
func vanishes(t *testing.T, path string, def any) bool {
	typ := reflect.TypeOf(corev1.PodSpec{})
	var field reflect.StructField
	for _, step := range strings.Split(path, ".") {
		f, ok := jsonField(typ, strings.TrimSuffix(step, "[]"))
		if !ok {
			t.Errorf("%s: no such field in corev1.PodSpec", path)
			return false
		}
		field, typ = f, f.Type
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
	}
	if field.Type.Kind() == reflect.Pointer || !strings.Contains(field.Tag.Get("json"), ",omitempty") {
		return false
	}
	switch field.Type.Kind() {
	case reflect.String:
		return def == ""
	case reflect.Bool:
		return def == false
	default:
		return false
	}
}

func jsonField(typ reflect.Type, name string) (reflect.StructField, bool) {
	if typ.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name {
			return f, true
		}
		if tag == "" && f.Anonymous {
			if inner, ok := jsonField(f.Type, name); ok {
				return inner, true
			}
		}
	}
	return reflect.StructField{}, false
}
