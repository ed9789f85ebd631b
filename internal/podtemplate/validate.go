package podtemplate

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Options tell Validate about the resource around the pod template.
type Options struct {
	// ClaimTemplateNames are the names of the blueprint's volume claim
	// templates: a volume mount may name one without a volume entry (the
	// controller adds the volume).
	ClaimTemplateNames []string
	// SkipVolumeMountCheck turns off the check that every volume mount names
	// a volume: for when the claim template names are unknown at plan time,
	// or when claims may add claim templates (a template whose
	// volume_claim_templates_policy allows it).
	SkipVolumeMountCheck bool
}

// Validate checks a `pod_template` value (configuration or plan) for what
// the attribute validators cannot see alone: rules across attributes that
// the API server or the kubelet would enforce later (CPU and memory limits,
// requests within limits, unique names, one volume source, one probe
// handler, privileged with privilege escalation, root with run_as_non_root,
// pod_spec_overrides not touching typed fields, ...). Every error and every
// warning carries the attribute path under p.
//
// It also returns a warning, with the risk spelled out, for every hardened
// default the value loosens explicitly. Call it from the resource's
// ValidateConfig: values still unknown there are skipped, and defaults not
// yet applied count as the hardened values they will be.
func Validate(ctx context.Context, p path.Path, obj types.Object, opts Options) diag.Diagnostics {
	var diags diag.Diagnostics
	m, ok := decode[Model](ctx, obj, &diags)
	if !ok {
		return diags
	}
	v := &checker{ctx: ctx, diags: &diags, opts: opts, root: p}
	v.pod(m)
	return diags
}

type checker struct {
	ctx   context.Context
	diags *diag.Diagnostics
	opts  Options
	root  path.Path

	// podNonRoot is the pod's effective run_as_non_root; nil when unknown.
	podNonRoot *bool
	// overrides is the parsed pod_spec_overrides, when valid;
	// overridesUnknown is true when it is not known yet (it may then add
	// volumes and make init containers sidecars).
	overrides        map[string]any
	overridesUnknown bool
}

func (v *checker) errorf(p path.Path, summary, format string, args ...any) {
	v.diags.AddAttributeError(p, summary, fmt.Sprintf(format, args...))
}

func (v *checker) warn(p path.Path, summary, detail string) {
	v.diags.AddAttributeWarning(p, summary, detail)
}

func (v *checker) pod(m Model) {
	p := v.root
	v.podSecurity(m.SecurityContext, p.AtName("security_context"))
	v.runtimeAndToken(m, p)

	// Overrides first: container checks (sidecar probes) look at them.
	v.overridesUnknown = m.PodSpecOverrides.IsUnknown()
	if known(m.PodSpecOverrides) && m.PodSpecOverrides.ValueString() != "" {
		ov, err := parseOverrides(m.PodSpecOverrides.ValueString())
		if err != nil {
			v.errorf(p.AtName("pod_spec_overrides"), "Invalid pod_spec_overrides", "%v.", err)
		} else {
			v.overrides = ov
		}
	}

	volumeNames, volumesKnown := v.volumes(m.Volumes, p.AtName("volumes"))
	for _, n := range v.opts.ClaimTemplateNames {
		volumeNames[n] = true
	}
	for _, e := range asList(v.overrides["volumes"]) {
		if n, ok := e.(map[string]any)["name"].(string); ok {
			volumeNames[n] = true
		}
	}
	if !volumesKnown || v.opts.SkipVolumeMountCheck || v.overridesUnknown {
		volumeNames = nil
	}

	containerNames := map[string]bool{}
	namesKnown := v.containers(m.Containers, p.AtName("containers"), false, volumeNames, containerNames)
	namesKnown = v.containers(m.InitContainers, p.AtName("init_containers"), true, volumeNames, containerNames) && namesKnown

	if v.overrides != nil && namesKnown && volumesKnown {
		typed := v.typedNames(m)
		at := p.AtName("pod_spec_overrides")
		for _, problem := range checkOverrides(v.overrides, typed) {
			v.errorf(at, "pod_spec_overrides sets a typed field", "%s.", problem)
		}
		v.overrideWarnings(at)
	}

	v.dns(m, p)
	CheckTolerations(v.ctx, m.Tolerations, p.AtName("tolerations"), "operator", v.diags)
}

// runtimeAndToken warns about the pod-level defaults.
func (v *checker) runtimeAndToken(m Model, p path.Path) {
	if known(m.RuntimeClassName) {
		switch rc := m.RuntimeClassName.ValueString(); rc {
		case DefaultRuntimeClassName:
		case "":
			v.warn(p.AtName("runtime_class_name"), "Sandbox runs without gVisor",
				"runtime_class_name is \"\", so the pod runs with the node's default container runtime: untrusted "+
					"code shares the host kernel, and one kernel exploit escapes the sandbox. Remove the attribute to "+
					"run it in gVisor (\""+DefaultRuntimeClassName+"\").")
		default:
			v.warn(p.AtName("runtime_class_name"), "Sandbox runs without gVisor",
				fmt.Sprintf("runtime_class_name is %q instead of %q. The provider cannot tell whether that "+
					"RuntimeClass isolates the host kernel; if it is a plain container runtime, untrusted code shares "+
					"the host kernel. This holds for GKE MicroVM node pools too: GKE does not document the "+
					"RuntimeClass their pods use, so none is recognised. If you have verified that %q runs each pod "+
					"in its own VM or kernel, name it in agentsandbox_isolation_report's isolating_runtime_classes; "+
					"this warning stays, as the provider still cannot check it.", rc, DefaultRuntimeClassName, rc))
		}
	}
	if known(m.AutomountServiceAccountToken) && m.AutomountServiceAccountToken.ValueBool() {
		account := "default"
		if known(m.ServiceAccountName) && m.ServiceAccountName.ValueString() != "" {
			account = m.ServiceAccountName.ValueString()
		}
		v.warn(p.AtName("automount_service_account_token"), "Service account token mounted into the sandbox",
			fmt.Sprintf("automount_service_account_token is true: code in the sandbox can call the Kubernetes API as "+
				"the pod's service account (%q), with every permission granted to it. Remove the attribute unless "+
				"the workload really needs the API.", account))
	}
}

func (v *checker) podSecurity(o types.Object, p path.Path) {
	defaultTrue := true
	if o.IsUnknown() {
		return
	}
	if o.IsNull() {
		v.podNonRoot = &defaultTrue // the schema default
		return
	}
	m, ok := decode[PodSecurityContextModel](v.ctx, o, v.diags)
	if !ok {
		return
	}
	switch {
	case m.RunAsNonRoot.IsNull():
		v.podNonRoot = &defaultTrue
	case known(m.RunAsNonRoot):
		b := m.RunAsNonRoot.ValueBool()
		v.podNonRoot = &b
		if !b {
			v.warn(p.AtName("run_as_non_root"), "Sandbox may run as root",
				"run_as_non_root is false: containers may run as root (UID 0), the most privileged position from "+
					"which to attack the runtime and the node. Remove the attribute (and give the image a non-root "+
					"USER or set run_as_user) to keep the hardened default.")
		}
	}
	v.runAsUser(m.RunAsUser, v.podNonRoot, p.AtName("run_as_user"))
	v.seccomp(m.SeccompProfile, p.AtName("seccomp_profile"))
}

// runAsUser refuses UID 0 while run_as_non_root holds (the kubelet would
// refuse to start the container) and warns about it otherwise.
func (v *checker) runAsUser(uid types.Int64, nonRoot *bool, p path.Path) {
	if !known(uid) || uid.ValueInt64() != 0 {
		return
	}
	if nonRoot != nil && *nonRoot {
		v.errorf(p, "Root user with run_as_non_root",
			"run_as_user = 0 is root, but run_as_non_root is true (the hardened default), so the kubelet would "+
				"refuse to start the container. Use a non-root UID, or set run_as_non_root = false as well (which "+
				"produces a warning).")
		return
	}
	v.warn(p, "Sandbox runs as root",
		"run_as_user = 0 runs the container as root, the most privileged position from which to attack the "+
			"runtime and the node.")
}

func (v *checker) seccomp(o types.Object, p path.Path) {
	m, ok := decode[SeccompProfileModel](v.ctx, o, v.diags)
	if !ok {
		return
	}
	typ := m.Type.ValueString()
	if m.Type.IsNull() {
		typ = DefaultSeccompProfile
	}
	if !known(m.Type) && !m.Type.IsNull() {
		return
	}
	switch {
	case typ == "Localhost" && m.LocalhostProfile.IsNull():
		v.errorf(p.AtName("localhost_profile"), "Missing seccomp profile path",
			"type = \"Localhost\" needs localhost_profile, the profile's path relative to the kubelet's seccomp directory.")
	case typ != "Localhost" && known(m.LocalhostProfile):
		v.errorf(p.AtName("localhost_profile"), "Seccomp profile path without Localhost",
			"localhost_profile is only allowed with type = \"Localhost\" (type is %q).", typ)
	case typ == "Unconfined":
		v.warn(p.AtName("type"), "Sandbox runs without a syscall filter",
			"seccomp profile Unconfined removes the syscall filter: every kernel syscall is reachable from "+
				"untrusted code. Remove the attribute to keep RuntimeDefault.")
	}
}

// volumes checks names and sources and returns the set of names (and
// whether every name was known).
func (v *checker) volumes(l types.List, p path.Path) (map[string]bool, bool) {
	names := map[string]bool{}
	if l.IsUnknown() {
		return names, false
	}
	allKnown := true
	for i, e := range l.Elements() {
		o, _ := e.(types.Object)
		m, ok := decode[VolumeModel](v.ctx, o, v.diags)
		if !ok {
			allKnown = false
			continue
		}
		vp := p.AtListIndex(i)
		if !known(m.Name) {
			allKnown = false
		} else {
			if names[m.Name.ValueString()] {
				v.errorf(vp.AtName("name"), "Duplicate volume name", "Volume %q is declared more than once.", m.Name.ValueString())
			}
			names[m.Name.ValueString()] = true
		}
		sources := []types.Object{m.EmptyDir, m.ConfigMap, m.Secret, m.PersistentVolumeClaim}
		set, unknown := 0, false
		for _, s := range sources {
			if s.IsUnknown() {
				unknown = true
			} else if !s.IsNull() {
				set++
			}
		}
		if !unknown && set != 1 {
			v.errorf(vp, "Volume needs exactly one source",
				"Volume %q sets %d of empty_dir, config_map, secret and persistent_volume_claim; set exactly one.",
				m.Name.ValueString(), set)
		}
	}
	return names, allKnown
}

// containers checks each container of one list; names collects the names of
// all containers (both lists must be unique together). It returns whether
// every name was known.
func (v *checker) containers(l types.List, p path.Path, init bool, volumeNames, names map[string]bool) bool {
	if l.IsUnknown() {
		return false
	}
	allKnown := true
	for i, e := range l.Elements() {
		o, _ := e.(types.Object)
		m, ok := decode[ContainerModel](v.ctx, o, v.diags)
		if !ok {
			allKnown = false
			continue
		}
		cp := p.AtListIndex(i)
		name := m.Name.ValueString()
		if !known(m.Name) {
			allKnown = false
		} else {
			if names[name] {
				v.errorf(cp.AtName("name"), "Duplicate container name",
					"Container %q is declared more than once (names are unique across containers and init_containers).", name)
			}
			names[name] = true
		}
		v.resources(m.Resources, cp.AtName("resources"))
		v.env(m.Env, cp.AtName("env"))
		v.ports(m.Ports, cp.AtName("ports"))
		v.mounts(m.VolumeMounts, cp.AtName("volume_mounts"), volumeNames)
		sidecar := init && (v.overridesUnknown || v.isSidecar(name))
		for _, pr := range []struct {
			name string
			o    types.Object
		}{{"readiness_probe", m.ReadinessProbe}, {"liveness_probe", m.LivenessProbe}, {"startup_probe", m.StartupProbe}} {
			if init && !sidecar && !pr.o.IsNull() {
				v.errorf(cp.AtName(pr.name), "Probe on an init container",
					"Init containers run to completion and cannot have probes, unless they are sidecars: set "+
						"restartPolicy: Always for container %q in pod_spec_overrides.", name)
				continue
			}
			v.probe(pr.o, cp.AtName(pr.name), pr.name != "readiness_probe")
		}
		v.containerSecurity(m.SecurityContext, cp.AtName("security_context"))
	}
	return allKnown
}

// isSidecar reports whether the override makes init container name a
// restartable sidecar.
func (v *checker) isSidecar(name string) bool {
	for _, e := range asList(v.overrides["initContainers"]) {
		m, _ := e.(map[string]any)
		if m["name"] == name && m["restartPolicy"] == string(corev1.ContainerRestartPolicyAlways) {
			return true
		}
	}
	return false
}

// resources requires CPU and memory limits and requests within them.
func (v *checker) resources(o types.Object, p path.Path) {
	m, ok := decode[ResourcesModel](v.ctx, o, v.diags)
	// A null limits is reported by the framework (a required attribute).
	if !ok || m.Limits.IsUnknown() || m.Limits.IsNull() {
		return
	}
	limits := quantities(m.Limits)
	var missing []string
	for _, r := range []string{"cpu", "memory"} {
		if _, ok := m.Limits.Elements()[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		v.errorf(p.AtName("limits"), "Missing resource limits",
			"limits must set %s: an untrusted workload without limits can take its node's CPU and memory from "+
				"every other pod. For example limits = { cpu = \"1\", memory = \"1Gi\" }.", strings.Join(missing, " and "))
	}
	// The kubelet reads a zero limit as no limit at all, so "0" would pass
	// the check above and still leave the workload unbounded.
	for _, r := range []string{"cpu", "memory"} {
		// Negative values are refused by the attribute's own validator.
		if q, ok := limits[r]; ok && q.Sign() == 0 {
			v.errorf(p.AtName("limits").AtMapKey(r), "Resource limit must be positive",
				"The %s limit %q is zero, and the kubelet treats a zero %s limit as no limit: the untrusted "+
					"workload could take all of its node's %s. Set a positive limit, for example %s.",
				r, q.String(), r, r, map[string]string{"cpu": `cpu = "1"`, "memory": `memory = "1Gi"`}[r])
		}
	}
	CheckRequestsWithinLimits(m, p, v.diags)
}

// CheckRequestsWithinLimits refuses, on requests[name] under p, a request
// above the limit of the same resource, as the API server does for every
// pod and pod template (ValidateResourceRequirements, pkg/apis/core/
// validation): pod_template's containers and the controller's and sandbox
// router's Deployments. Unknown and invalid quantities are not judged (the
// attribute validators report invalid ones).
func CheckRequestsWithinLimits(m ResourcesModel, p path.Path, diags *diag.Diagnostics) {
	limits := quantities(m.Limits)
	for name, rq := range quantities(m.Requests) {
		if lq, ok := limits[name]; ok && rq.Cmp(lq) > 0 {
			diags.AddAttributeError(p.AtName("requests").AtMapKey(name), "Request above limit",
				fmt.Sprintf("The %s request %s is more than its limit %s; the API server refuses such a pod. "+
					"Lower the request or raise the limit.", name, rq.String(), lq.String()))
		}
	}
}

// quantities parses the known, valid quantities of a map (invalid ones are
// reported by the attribute validator).
func quantities(mp types.Map) map[string]resource.Quantity {
	out := map[string]resource.Quantity{}
	if mp.IsNull() || mp.IsUnknown() {
		return out
	}
	for k, e := range mp.Elements() {
		s, ok := e.(types.String)
		if !ok || !known(s) {
			continue
		}
		if q, err := resource.ParseQuantity(s.ValueString()); err == nil {
			out[k] = q
		}
	}
	return out
}

func (v *checker) env(l types.List, p path.Path) {
	seen := map[string]bool{}
	each(v.ctx, l, v.diags, func(i int, m EnvModel) {
		ep := p.AtListIndex(i)
		if known(m.Name) {
			if seen[m.Name.ValueString()] {
				v.errorf(ep.AtName("name"), "Duplicate environment variable",
					"%q is set more than once in this container.", m.Name.ValueString())
			}
			seen[m.Name.ValueString()] = true
		}
		if !m.Value.IsNull() && !m.ValueFrom.IsNull() {
			v.errorf(ep.AtName("value_from"), "Both value and value_from",
				"Environment variable %q sets both value and value_from; set one.", m.Name.ValueString())
		}
		src, ok := decode[EnvSourceModel](v.ctx, m.ValueFrom, v.diags)
		if !ok {
			return
		}
		set, unknown := 0, false
		for _, s := range []types.Object{src.SecretKeyRef, src.ConfigMapKeyRef, src.FieldRef} {
			if s.IsUnknown() {
				unknown = true
			} else if !s.IsNull() {
				set++
			}
		}
		if !unknown && set != 1 {
			v.errorf(ep.AtName("value_from"), "value_from needs exactly one source",
				"Environment variable %q sets %d of secret_key_ref, config_map_key_ref and field_ref; set exactly one.",
				m.Name.ValueString(), set)
		}
	})
}

func (v *checker) ports(l types.List, p path.Path) {
	numbers := map[string]bool{}
	names := map[string]bool{}
	each(v.ctx, l, v.diags, func(i int, m PortModel) {
		pp := p.AtListIndex(i)
		if known(m.ContainerPort) && !m.Protocol.IsUnknown() {
			proto := m.Protocol.ValueString()
			if proto == "" {
				proto = "TCP"
			}
			key := strconv.FormatInt(m.ContainerPort.ValueInt64(), 10) + "/" + proto
			if numbers[key] {
				v.errorf(pp.AtName("container_port"), "Duplicate port", "Port %s is declared more than once in this container.", key)
			}
			numbers[key] = true
		}
		if known(m.Name) {
			if names[m.Name.ValueString()] {
				v.errorf(pp.AtName("name"), "Duplicate port name", "Port name %q is used more than once in this container.", m.Name.ValueString())
			}
			names[m.Name.ValueString()] = true
		}
	})
}

func (v *checker) mounts(l types.List, p path.Path, volumeNames map[string]bool) {
	paths := map[string]bool{}
	each(v.ctx, l, v.diags, func(i int, m VolumeMountModel) {
		mp := p.AtListIndex(i)
		if volumeNames != nil && known(m.Name) && !volumeNames[m.Name.ValueString()] {
			v.errorf(mp.AtName("name"), "Unknown volume",
				"Volume mount %q names no volume: declare it in volumes (or as a volume claim template, or as an "+
					"extra volume in pod_spec_overrides).", m.Name.ValueString())
		}
		if known(m.MountPath) {
			if paths[m.MountPath.ValueString()] {
				v.errorf(mp.AtName("mount_path"), "Duplicate mount path", "%q is mounted more than once in this container.", m.MountPath.ValueString())
			}
			paths[m.MountPath.ValueString()] = true
		}
	})
}

func (v *checker) probe(o types.Object, p path.Path, successMustBeOne bool) {
	m, ok := decode[ProbeModel](v.ctx, o, v.diags)
	if !ok {
		return
	}
	set, unknown := 0, false
	for _, h := range []types.Object{m.Exec, m.HTTPGet, m.TCPSocket, m.GRPC} {
		if h.IsUnknown() {
			unknown = true
		} else if !h.IsNull() {
			set++
		}
	}
	if !unknown && set != 1 {
		v.errorf(p, "Probe needs exactly one handler", "The probe sets %d of exec, http_get, tcp_socket and grpc; set exactly one.", set)
	}
	if successMustBeOne && known(m.SuccessThreshold) && m.SuccessThreshold.ValueInt64() != 1 {
		v.errorf(p.AtName("success_threshold"), "Invalid success threshold",
			"Liveness and startup probes must have success_threshold = 1 (or leave it unset).")
	}
}

func (v *checker) containerSecurity(o types.Object, p path.Path) {
	if o.IsNull() {
		// The schema default: hardened, nothing to check.
		return
	}
	m, ok := decode[ContainerSecurityContextModel](v.ctx, o, v.diags)
	if !ok {
		return
	}
	// allow_privilege_escalation defaults to false when unset.
	ape := known(m.AllowPrivilegeEscalation) && m.AllowPrivilegeEscalation.ValueBool()
	if known(m.Privileged) && m.Privileged.ValueBool() {
		if !ape && !m.AllowPrivilegeEscalation.IsUnknown() {
			v.errorf(p.AtName("privileged"), "Privileged without privilege escalation",
				"privileged = true needs allow_privilege_escalation = true as well (its default is false); the API "+
					"server refuses the combination.")
		}
		v.warn(p.AtName("privileged"), "Privileged sandbox container",
			"privileged = true gives the container every Linux capability and the host's devices. With a runtime "+
				"other than gVisor this is root on the node; even under gVisor it widens the attack surface greatly.")
	}
	if ape {
		v.warn(p.AtName("allow_privilege_escalation"), "Privilege escalation allowed",
			"allow_privilege_escalation = true lets processes gain privileges through setuid binaries and file "+
				"capabilities. Remove the attribute to keep the hardened default (false).")
	}
	if c, ok := decode[CapabilitiesModel](v.ctx, m.Capabilities, v.diags); ok {
		if known(c.Add) && len(c.Add.Elements()) > 0 {
			v.warn(p.AtName("capabilities").AtName("add"), "Capabilities added",
				fmt.Sprintf("The container gets the capabilities %s back: each one widens what code in the "+
					"sandbox may do (NET_RAW allows spoofed packets, SYS_ADMIN is close to root).", listString(c.Add)))
		}
		if known(c.Drop) && !slices.Contains(stringsOf(c.Drop), DropAllCapabilities) {
			v.warn(p.AtName("capabilities").AtName("drop"), "Not all capabilities dropped",
				"capabilities.drop does not contain \"ALL\", so the container keeps the runtime's default "+
					"capabilities (such as NET_RAW, CHOWN, SETUID and SETGID). Remove the attribute to drop ALL.")
		}
	}
	nonRoot := v.podNonRoot
	if known(m.RunAsNonRoot) {
		b := m.RunAsNonRoot.ValueBool()
		nonRoot = &b
		if !b {
			v.warn(p.AtName("run_as_non_root"), "Sandbox container may run as root",
				"run_as_non_root = false lets this container run as root (UID 0), the most privileged position "+
					"from which to attack the runtime and the node.")
		}
	} else if m.RunAsNonRoot.IsUnknown() {
		nonRoot = nil
	}
	v.runAsUser(m.RunAsUser, nonRoot, p.AtName("run_as_user"))
	v.seccomp(m.SeccompProfile, p.AtName("seccomp_profile"))
}

// overrideWarnings warns about security-relevant fields set through the
// escape hatch, which the typed schema deliberately does not offer.
func (v *checker) overrideWarnings(p path.Path) {
	ov := v.overrides
	hostNS := map[string]string{
		"hostNetwork": "the pod shares the node's network namespace: it bypasses NetworkPolicies and reaches services listening on the node",
		"hostPID":     "the pod sees, and can signal or trace, every process on the node",
		"hostIPC":     "the pod shares the node's IPC namespace and shared memory",
	}
	for _, k := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if ov[k] == true {
			v.warn(p, "Sandbox shares a host namespace", fmt.Sprintf("pod_spec_overrides sets %s: %s.", k, hostNS[k]))
		}
	}
	for _, e := range asList(ov["volumes"]) {
		m, _ := e.(map[string]any)
		if _, ok := m["hostPath"]; ok {
			v.warn(p, "Host directory mounted into the sandbox",
				fmt.Sprintf("pod_spec_overrides adds the hostPath volume %q: untrusted code can read (and unless read-only, write) the node's files.", m["name"]))
		}
	}
	if sc, ok := ov["securityContext"].(map[string]any); ok && unconfinedAppArmor(sc) {
		v.warn(p, "Sandbox runs without AppArmor", "pod_spec_overrides sets an Unconfined AppArmor profile for the pod.")
	}
	for _, key := range []string{"containers", "initContainers"} {
		for _, e := range asList(ov[key]) {
			m, _ := e.(map[string]any)
			sc, _ := m["securityContext"].(map[string]any)
			if sc == nil {
				continue
			}
			if unconfinedAppArmor(sc) {
				v.warn(p, "Sandbox runs without AppArmor",
					fmt.Sprintf("pod_spec_overrides sets an Unconfined AppArmor profile for container %q.", m["name"]))
			}
			if sc["procMount"] == string(corev1.UnmaskedProcMount) {
				v.warn(p, "Unmasked /proc",
					fmt.Sprintf("pod_spec_overrides sets procMount Unmasked for container %q: kernel information and "+
						"controls under /proc are exposed to untrusted code.", m["name"]))
			}
		}
	}
}

func unconfinedAppArmor(sc map[string]any) bool {
	a, _ := sc["appArmorProfile"].(map[string]any)
	return a["type"] == string(corev1.AppArmorProfileTypeUnconfined)
}

// typedNames is a PodSpec holding just the names of the typed containers and
// volumes, which is all checkOverrides needs.
func (v *checker) typedNames(m Model) corev1.PodSpec {
	var spec corev1.PodSpec
	each(v.ctx, m.Containers, v.diags, func(_ int, c ContainerModel) {
		spec.Containers = append(spec.Containers, corev1.Container{Name: c.Name.ValueString()})
	})
	each(v.ctx, m.InitContainers, v.diags, func(_ int, c ContainerModel) {
		spec.InitContainers = append(spec.InitContainers, corev1.Container{Name: c.Name.ValueString()})
	})
	each(v.ctx, m.Volumes, v.diags, func(_ int, vol VolumeModel) {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: vol.Name.ValueString()})
	})
	return spec
}

func (v *checker) dns(m Model, p path.Path) {
	if !known(m.DNSPolicy) || m.DNSPolicy.ValueString() != string(corev1.DNSNone) || m.DNSConfig.IsUnknown() {
		return
	}
	c, ok := decode[DNSConfigModel](v.ctx, m.DNSConfig, v.diags)
	if ok && (c.Nameservers.IsUnknown() || len(c.Nameservers.Elements()) > 0) {
		return
	}
	v.errorf(p.AtName("dns_config"), "Missing name servers",
		"dns_policy = \"None\" takes the whole resolver configuration from dns_config, which must list at least one nameserver.")
}

// CheckTolerations refuses, at their attribute paths under p, the
// tolerations of l (of TolerationModel) that the API server would refuse
// (ValidateTolerations, pkg/apis/core/validation): a value with operator
// Exists, no key without operator Exists, toleration_seconds with an effect
// other than NoExecute. Values still unknown are not judged. keylessAt is
// the attribute a toleration without key is reported on: `operator`, where
// the API server reports it, or `key`.
func CheckTolerations(ctx context.Context, l types.List, p path.Path, keylessAt string, diags *diag.Diagnostics) {
	each(ctx, l, diags, func(i int, m TolerationModel) {
		tp := p.AtListIndex(i)
		exists := known(m.Operator) && m.Operator.ValueString() == string(corev1.TolerationOpExists)
		if exists && known(m.Value) && m.Value.ValueString() != "" {
			diags.AddAttributeError(tp.AtName("value"), "Value with operator Exists",
				fmt.Sprintf("With operator Exists a toleration matches any value; remove `value` (%q) or use operator Equal.", m.Value.ValueString()))
		}
		if !m.Key.IsUnknown() && m.Key.ValueString() == "" && !m.Operator.IsUnknown() && !exists {
			diags.AddAttributeError(tp.AtName(keylessAt), "Toleration without key",
				"A toleration without a key must use operator Exists (it then tolerates every taint). Set `key`, "+
					"or `operator = \"Exists\"` to tolerate every taint.")
		}
		if known(m.TolerationSeconds) && !m.Effect.IsUnknown() && m.Effect.ValueString() != string(corev1.TaintEffectNoExecute) {
			effect := "unset"
			if e := m.Effect.ValueString(); e != "" {
				effect = e
			}
			diags.AddAttributeError(tp.AtName("toleration_seconds"), "toleration_seconds without NoExecute",
				fmt.Sprintf("toleration_seconds only applies to effect NoExecute (effect is %s): set `effect = \"NoExecute\"`, "+
					"or remove toleration_seconds.", effect))
		}
	})
}

// known is true for a value that is neither null nor unknown.
func known(v interface {
	IsNull() bool
	IsUnknown() bool
}) bool {
	return !v.IsNull() && !v.IsUnknown()
}

// stringsOf is the known string elements of a list.
func stringsOf(l types.List) []string {
	var out []string
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	for _, e := range l.Elements() {
		if s, ok := e.(types.String); ok && known(s) {
			out = append(out, s.ValueString())
		}
	}
	return out
}

func listString(l types.List) string {
	return "[" + strings.Join(stringsOf(l), ", ") + "]"
}
