package podtemplate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// pod_spec_overrides works in the JSON form of a PodSpec (Kubernetes' field
// names), as a tree of map[string]any. This file holds the one description
// of which JSON fields the typed schema owns, and everything derived from
// it: the conflict check, the merge, the projection of a live object onto an
// override (drift of override fields) and the residual of a live object
// (what an import cannot express in typed attributes).

// owner describes a JSON field the typed schema covers: either wholly, by the
// attribute named in attr, or partly, by the sub-fields in children; or a
// field the override may not set at all (refused, with the reason).
type owner struct {
	attr     string
	children map[string]owner
	refused  string
}

func whole(attr string) owner { return owner{attr: attr} }

func refused(reason string) owner { return owner{refused: reason} }

func partly(children map[string]owner) owner { return owner{children: children} }

// keyedLists are the PodSpec lists the override may extend entry by entry,
// matched by "name". Container entries must name a typed container; volume
// entries must not name a typed volume.
var keyedLists = map[string]string{
	"containers":     "containers",
	"initContainers": "init_containers",
	"volumes":        "volumes",
}

// podOwned is every PodSpec field the typed schema owns, besides the keyed
// lists. ephemeralContainers is listed so that it is refused: it cannot be
// set on creation, and would escape the limits and the hardened defaults.
// serviceAccount is the deprecated alias of serviceAccountName.
var podOwned = map[string]owner{
	"runtimeClassName":              whole("runtime_class_name"),
	"automountServiceAccountToken":  whole("automount_service_account_token"),
	"serviceAccountName":            whole("service_account_name"),
	"serviceAccount":                whole("service_account_name"),
	"nodeSelector":                  whole("node_selector"),
	"tolerations":                   whole("tolerations"),
	"dnsPolicy":                     whole("dns_policy"),
	"dnsConfig":                     whole("dns_config"),
	"imagePullSecrets":              whole("image_pull_secrets"),
	"priorityClassName":             whole("priority_class_name"),
	"terminationGracePeriodSeconds": whole("termination_grace_period_seconds"),
	"ephemeralContainers":           refused("ephemeral containers cannot be set when a pod is created, and would escape the required limits and the hardened security context"),
	"affinity": partly(map[string]owner{
		"nodeAffinity": partly(map[string]owner{
			"requiredDuringSchedulingIgnoredDuringExecution": whole("affinity.node_affinity.required"),
		}),
		"podAntiAffinity": partly(map[string]owner{
			"preferredDuringSchedulingIgnoredDuringExecution": whole("affinity.pod_anti_affinity.preferred"),
		}),
	}),
	"securityContext": partly(map[string]owner{
		"runAsNonRoot":       whole("security_context.run_as_non_root"),
		"runAsUser":          whole("security_context.run_as_user"),
		"runAsGroup":         whole("security_context.run_as_group"),
		"fsGroup":            whole("security_context.fs_group"),
		"supplementalGroups": whole("security_context.supplemental_groups"),
		"seccompProfile":     whole("security_context.seccomp_profile"),
	}),
}

// containerOwned is every Container field the typed schema owns; "name" is
// the key the override uses to address a typed container.
var containerOwned = map[string]owner{
	"image":           whole("image"),
	"imagePullPolicy": whole("image_pull_policy"),
	"command":         whole("command"),
	"args":            whole("args"),
	"workingDir":      whole("working_dir"),
	"env":             whole("env"),
	"ports":           whole("ports"),
	"volumeMounts":    whole("volume_mounts"),
	"readinessProbe":  whole("readiness_probe"),
	"livenessProbe":   whole("liveness_probe"),
	"startupProbe":    whole("startup_probe"),
	"resources": partly(map[string]owner{
		"limits":   whole("resources.limits"),
		"requests": whole("resources.requests"),
	}),
	"securityContext": partly(map[string]owner{
		"allowPrivilegeEscalation": whole("security_context.allow_privilege_escalation"),
		"capabilities":             whole("security_context.capabilities"),
		"privileged":               whole("security_context.privileged"),
		"readOnlyRootFilesystem":   whole("security_context.read_only_root_filesystem"),
		"runAsNonRoot":             whole("security_context.run_as_non_root"),
		"runAsUser":                whole("security_context.run_as_user"),
		"runAsGroup":               whole("security_context.run_as_group"),
		"seccompProfile":           whole("security_context.seccomp_profile"),
	}),
}

// parseOverrides reads a JSON or YAML PodSpec fragment strictly (unknown
// field names are errors, so a typo is not silently dropped) and returns it
// normalised: the PodSpec's own JSON encoding, with null and empty values
// removed. An empty document is an empty map. Checks and comparisons use
// this form, so only settings that mean something count.
func parseOverrides(s string) (map[string]any, error) {
	_, spec, err := decodeOverrides(s)
	if err != nil {
		return nil, err
	}
	return toMap(spec)
}

// decodeOverrides returns the override as written (its JSON tree, which the
// merge uses: an empty object such as emptyDir: {} means something there)
// and as a PodSpec.
func decodeOverrides(s string) (map[string]any, corev1.PodSpec, error) {
	var spec corev1.PodSpec
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, spec, nil
	}
	raw, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		return nil, spec, fmt.Errorf("not valid JSON or YAML: %w", err)
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return map[string]any{}, spec, nil
	}
	var top any
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, spec, fmt.Errorf("not valid JSON or YAML: %w", err)
	}
	m, ok := top.(map[string]any)
	if !ok {
		return nil, spec, fmt.Errorf("must be an object of PodSpec fields, not %s", jsonKind(top))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return nil, spec, fmt.Errorf("not a valid PodSpec fragment: %w", err)
	}
	return m, spec, nil
}

// toMap is the JSON tree of a PodSpec with null and empty values removed, so
// two specs that mean the same compare equal. (It also drops meaningful
// empty objects such as emptyDir: {}; use rawMap where those matter.)
func toMap(spec corev1.PodSpec) (map[string]any, error) {
	m, err := rawMap(spec)
	if err != nil {
		return nil, err
	}
	if p, ok := prune(m).(map[string]any); ok {
		return p, nil
	}
	return map[string]any{}, nil
}

// rawMap is the JSON tree of a PodSpec as encoding/json writes it.
func rawMap(spec corev1.PodSpec) (map[string]any, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// prune removes nulls, empty maps and empty lists, recursively; it returns
// nil when nothing is left.
func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			if p := prune(x); p != nil {
				out[k] = p
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(t) == 0 {
			return nil
		}
		out := make([]any, 0, len(t))
		for _, x := range t {
			p := prune(x)
			if p == nil {
				// Keep positions: an element that prunes away is still there.
				p = map[string]any{}
			}
			out = append(out, p)
		}
		return out
	default:
		return v
	}
}

// checkOverrides returns one message per field of the override that the
// typed schema owns, and per container the typed schema does not declare.
// typed is the typed PodSpec (its container and volume names decide what
// the override may address).
func checkOverrides(ov map[string]any, typed corev1.PodSpec) []string {
	var problems []string
	names := func(cs []corev1.Container) map[string]bool {
		out := map[string]bool{}
		for _, c := range cs {
			out[c.Name] = true
		}
		return out
	}
	typedNames := map[string]map[string]bool{
		"containers":     names(typed.Containers),
		"initContainers": names(typed.InitContainers),
		"volumes":        {},
	}
	for _, v := range typed.Volumes {
		typedNames["volumes"][v.Name] = true
	}
	for _, key := range sortedKeys(ov) {
		val := ov[key]
		if attr, ok := keyedLists[key]; ok {
			list, _ := val.([]any)
			for i, e := range list {
				entry, _ := e.(map[string]any)
				name, _ := entry["name"].(string)
				at := fmt.Sprintf("%s[%d]", key, i)
				if name != "" {
					at = fmt.Sprintf("%s[name=%q]", key, name)
				}
				switch {
				case name == "":
					problems = append(problems, fmt.Sprintf("%s has no name", at))
				case key == "volumes" && typedNames[key][name]:
					problems = append(problems, fmt.Sprintf("%s: volume %q is declared in `volumes`; an override may only add volumes with names of their own", at, name))
				case key != "volumes" && !typedNames[key][name]:
					problems = append(problems, fmt.Sprintf("%s: container %q is not declared in `%s`; declare it there (with its limits) and put only the fields the schema does not cover here", at, name, attr))
				case key != "volumes":
					problems = append(problems, ownedConflicts(entry, containerOwned, at, attr+"[*].")...)
				}
			}
			continue
		}
		problems = append(problems, ownedConflicts(map[string]any{key: val}, podOwned, "", "")...)
	}
	return problems
}

// ownedConflicts lists the fields of m that owned claims wholly.
func ownedConflicts(m map[string]any, owned map[string]owner, at, attrPrefix string) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		o, ok := owned[k]
		if !ok {
			continue
		}
		p := k
		if at != "" {
			p = at + "." + k
		}
		if o.refused != "" {
			out = append(out, fmt.Sprintf("%s is not allowed: %s", p, o.refused))
			continue
		}
		if o.children == nil {
			out = append(out, fmt.Sprintf("%s is set by the attribute `%s%s`; set it there instead", p, attrPrefix, o.attr))
			continue
		}
		if sub, ok := m[k].(map[string]any); ok {
			out = append(out, ownedConflicts(sub, o.children, p, attrPrefix)...)
		}
	}
	return out
}

// mergeOverrides puts the override s under the typed spec: the result has
// every typed field, plus the override's fields the schema does not own.
// Containers are merged by name; volumes of the override are appended.
func mergeOverrides(typed corev1.PodSpec, s string) (corev1.PodSpec, error) {
	raw, spec, err := decodeOverrides(s)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	ov, err := toMap(spec)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	if problems := checkOverrides(ov, typed); len(problems) > 0 {
		return corev1.PodSpec{}, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	// Both sides unpruned: an empty object (emptyDir: {}) is a setting.
	top, err := rawMap(typed)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	merged := mergeMaps(raw, top)
	b, err := json.Marshal(merged)
	if err != nil {
		return corev1.PodSpec{}, err
	}
	var out corev1.PodSpec
	if err := json.Unmarshal(b, &out); err != nil {
		return corev1.PodSpec{}, err
	}
	return out, nil
}

// mergeMaps returns base overlaid by top: top's scalars and lists win, maps
// merge recursively, and the keyed lists of a PodSpec merge entry by name.
func mergeMaps(base, top map[string]any) map[string]any {
	return overlay(base, top, func(k string, bv, tv any) any {
		if _, keyed := keyedLists[k]; keyed {
			return mergeByName(bv, tv)
		}
		bm, bok := bv.(map[string]any)
		tm, tok := tv.(map[string]any)
		if bok && tok {
			return mergeMaps(bm, tm)
		}
		return tv
	})
}

// overlay returns a new map of base's entries and top's: a key only one of
// them has keeps its value, a key both have gets merge's.
func overlay(base, top map[string]any, merge func(k string, bv, tv any) any) map[string]any {
	out := make(map[string]any, len(base)+len(top))
	maps.Copy(out, base)
	for k, tv := range top {
		if bv, ok := out[k]; ok {
			out[k] = merge(k, bv, tv)
		} else {
			out[k] = tv
		}
	}
	return out
}

// mergeByName merges two lists of named objects: top's entries in top's
// order, each merged over base's entry of the same name, then base's other
// entries.
func mergeByName(base, top any) any {
	bl, _ := base.([]any)
	tl, _ := top.([]any)
	byName := map[string]map[string]any{}
	for _, e := range bl {
		if m, ok := e.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				byName[n] = m
			}
		}
	}
	var out []any
	used := map[string]bool{}
	for _, e := range tl {
		m, _ := e.(map[string]any)
		n, _ := m["name"].(string)
		if b, ok := byName[n]; ok {
			out = append(out, mergeMaps(b, m))
			used[n] = true
			continue
		}
		out = append(out, e)
	}
	for _, e := range bl {
		m, _ := e.(map[string]any)
		if n, _ := m["name"].(string); !used[n] {
			out = append(out, e)
		}
	}
	return out
}

// flattenOverrides decides the state value of pod_spec_overrides.
//
// With no prior at all (import), the override is the residual: the live
// fields the typed schema cannot express.
//
// With a prior (refresh, and the state written after an apply), the live
// spec is projected onto the override's fields, and its residual is searched
// for fields the override does not declare. When the projection equals the
// override and there are no such fields, the prior is kept as it is (its
// spelling, or null). Otherwise the projection plus the undeclared fields is
// reported, so the plan shows the drift: a field the typed schema does not
// model that someone added out of band (hostNetwork, a hostPath volume, a
// container's appArmorProfile) is not invisible, and the exclusive apply
// that follows removes it.
func flattenOverrides(live corev1.PodSpec, prior types.String, priorKnown bool) (types.String, error) {
	liveMap, err := toMap(live)
	if err != nil {
		return types.StringNull(), err
	}
	// Which volumes are typed is decided on the typed spec: an empty
	// source (emptyDir: {}) vanishes from the pruned JSON tree.
	typedVolumes := map[string]bool{}
	for _, v := range live.Volumes {
		if v.EmptyDir != nil || v.ConfigMap != nil || v.Secret != nil || v.PersistentVolumeClaim != nil {
			typedVolumes[v.Name] = true
		}
	}
	if !priorKnown {
		res := residual(liveMap, typedVolumes, false)
		if len(res) == 0 {
			return types.StringNull(), nil
		}
		s, err := canonicalJSON(res)
		if err != nil {
			return types.StringNull(), err
		}
		return types.StringValue(s), nil
	}
	ov := map[string]any{}
	declared := !prior.IsNull() && !prior.IsUnknown()
	if declared {
		if ov, err = parseOverrides(prior.ValueString()); err != nil {
			// The prior was accepted by validation, so this should not
			// happen; keep it rather than fail a refresh (the next plan
			// validates it).
			return prior, nil //nolint:nilerr // an unreadable prior is kept, not an error of the read
		}
	}
	proj, _ := prune(project(liveMap, ov)).(map[string]any)
	if proj == nil {
		proj = map[string]any{}
	}
	extra := undeclared(residual(liveMap, typedVolumes, true), ov, "")
	if len(extra) == 0 {
		if !declared {
			return types.StringNull(), nil
		}
		if reflect.DeepEqual(proj, ov) {
			return prior, nil
		}
	}
	s, err := canonicalJSON(mergeNamed(proj, extra))
	if err != nil {
		return types.StringNull(), err
	}
	return types.StringValue(s), nil
}

// crdDefaults are the values the CRD schema defaults below fields that only
// pod_spec_overrides can set and that survive the typed read (a defaulted
// "" with omitempty does not): a volume source the override declares reads
// back with them although the override left them out, so they are not
// undeclared additions. Paths are JSON field names, "[]" for a list entry.
// TestCRDDefaultsAreKnown keeps this in step with the CRDs.
var crdDefaults = map[string]any{
	"volumes[].azureDisk.fsType":     "ext4",
	"volumes[].azureDisk.readOnly":   false,
	"volumes[].iscsi.iscsiInterface": "default",
	"volumes[].rbd.keyring":          "/etc/ceph/keyring",
	"volumes[].rbd.pool":             "rbd",
	"volumes[].rbd.user":             "admin",
	"volumes[].scaleIO.fsType":       "xfs",
	"volumes[].scaleIO.storageMode":  "ThinProvisioned",
}

// undeclared returns the fields of the residual res that the override ov
// does not declare: keys ov lacks, recursively through objects, and entries
// of named lists (containers, volumes, sysctls, ...) whose name ov lacks; an
// entry ov names is searched in turn, and keeps its name when anything is
// left. A field ov declares is not searched further when it is a scalar or
// an unnamed list: the projection compares its value. A value the CRD
// defaults (crdDefaults) counts as declared. at is res's path.
func undeclared(res, ov map[string]any, at string) map[string]any {
	out := map[string]any{}
	for k, rv := range res {
		p := k
		if at != "" {
			p = at + "." + k
		}
		ovv, ok := ov[k]
		if !ok {
			if def, isDefault := crdDefaults[p]; !isDefault || !reflect.DeepEqual(def, rv) {
				out[k] = rv
			}
			continue
		}
		switch r := rv.(type) {
		case map[string]any:
			if o, ok := ovv.(map[string]any); ok {
				if sub := undeclared(r, o, p); len(sub) > 0 {
					out[k] = sub
				}
			}
		case []any:
			o, _ := ovv.([]any)
			if !named(r) || !named(o) {
				continue
			}
			byName := map[string]map[string]any{}
			for _, e := range o {
				byName[nameOf(e)], _ = e.(map[string]any)
			}
			var entries []any
			for _, e := range r {
				oe, ok := byName[nameOf(e)]
				if !ok {
					entries = append(entries, e)
					continue
				}
				em, _ := e.(map[string]any)
				if sub := undeclared(em, oe, p+"[]"); len(sub) > 0 {
					sub["name"] = nameOf(e)
					entries = append(entries, sub)
				}
			}
			if len(entries) > 0 {
				out[k] = entries
			}
		}
	}
	return out
}

// mergeNamed returns a with b's fields added (their fields do not
// overlap): objects merge recursively, lists of named objects by name
// (a's entries first, in a's order), anything else is b's.
func mergeNamed(a, b map[string]any) map[string]any {
	return overlay(a, b, func(_ string, av, bv any) any {
		am, aok := av.(map[string]any)
		bm, bok := bv.(map[string]any)
		if aok && bok {
			return mergeNamed(am, bm)
		}
		al, _ := av.([]any)
		bl, _ := bv.([]any)
		if !named(al) || !named(bl) {
			return bv
		}
		byName := map[string]map[string]any{}
		for _, e := range bl {
			byName[nameOf(e)], _ = e.(map[string]any)
		}
		var l []any
		for _, e := range al {
			n := nameOf(e)
			if be, ok := byName[n]; ok {
				em, _ := e.(map[string]any)
				e = mergeNamed(em, be)
				delete(byName, n)
			}
			l = append(l, e)
		}
		for _, e := range bl {
			if _, left := byName[nameOf(e)]; left {
				l = append(l, e)
			}
		}
		return l
	})
}

// project keeps of live only what shape has: the same keys, recursively;
// lists of named objects are matched by name, other lists of equal length
// element by element.
func project(live, shape any) any {
	switch s := shape.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return live
		}
		out := map[string]any{}
		for k, sv := range s {
			if lv, ok := l[k]; ok {
				out[k] = project(lv, sv)
			}
		}
		return out
	case []any:
		l, ok := live.([]any)
		if !ok {
			return live
		}
		if named(s) && named(l) {
			byName := map[string]any{}
			for _, e := range l {
				byName[nameOf(e)] = e
			}
			var out []any
			for _, e := range s {
				if lv, ok := byName[nameOf(e)]; ok {
					out = append(out, project(lv, e))
				}
			}
			return out
		}
		if len(l) != len(s) {
			return live
		}
		out := make([]any, len(l))
		for i := range l {
			out[i] = project(l[i], s[i])
		}
		return out
	default:
		return live
	}
}

// nameOf is the "name" of a list entry, "" when it has none.
func nameOf(e any) string {
	m, _ := e.(map[string]any)
	n, _ := m["name"].(string)
	return n
}

// named reports whether every element is an object with a string name.
func named(l []any) bool {
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["name"].(string); !ok {
			return false
		}
	}
	return len(l) > 0
}

// residual removes from a live spec every field the typed schema expresses.
// A container keeps its name when anything else is left; a typed volume
// (named in typedVolumes) goes entirely: the typed schema holds it. With
// typedExtras a typed volume's fields besides its typed source are kept
// too (under its name), which only a refresh wants: an import could not
// express them, as an override may not name a typed volume.
func residual(live map[string]any, typedVolumes map[string]bool, typedExtras bool) map[string]any {
	out := map[string]any{}
	for k, v := range live {
		if _, keyed := keyedLists[k]; keyed {
			var entries []any
			for _, e := range asList(v) {
				m, ok := e.(map[string]any)
				if !ok {
					continue
				}
				owned := containerOwned
				if k == "volumes" {
					n, _ := m["name"].(string)
					if !typedVolumes[n] {
						entries = append(entries, m)
						continue
					}
					if !typedExtras {
						continue
					}
					owned = volumeOwned
				}
				rest, _ := prune(without(m, owned)).(map[string]any)
				delete(rest, "name")
				if len(rest) > 0 {
					rest["name"] = m["name"]
					entries = append(entries, rest)
				}
			}
			if len(entries) > 0 {
				out[k] = entries
			}
			continue
		}
		if p, ok := prune(without(map[string]any{k: v}, podOwned)).(map[string]any); ok {
			for pk, pv := range p {
				out[pk] = pv
			}
		}
	}
	return out
}

// volumeOwned is every Volume field the typed schema owns.
var volumeOwned = map[string]owner{
	"emptyDir":              whole("empty_dir"),
	"configMap":             whole("config_map"),
	"secret":                whole("secret"),
	"persistentVolumeClaim": whole("persistent_volume_claim"),
}

// without returns m minus the fields owned claims.
func without(m map[string]any, owned map[string]owner) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		o, ok := owned[k]
		switch {
		case !ok:
			out[k] = v
		case o.children != nil:
			if sub, ok := v.(map[string]any); ok {
				out[k] = without(sub, o.children)
			}
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// canonicalJSON is the compact JSON of v with sorted keys (encoding/json
// sorts map keys), so the same content always reads back the same string.
func canonicalJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return "a scalar"
	}
}
