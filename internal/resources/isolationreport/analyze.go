package isolationreport

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	agentsv1beta1 "sigs.k8s.io/agent-sandbox/api/v1beta1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/netpolicy"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/podtemplate"
)

// inventory is everything the report is computed from, read with one list
// per kind (read.go). analyze is a pure function of it.
type inventory struct {
	namespace string
	// namespaces: the labels of every namespace, by name. When the
	// namespaces could not be listed, only the report's own (with the name
	// label the API server sets) and namespacesListed false.
	namespaces       map[string]map[string]string
	namespacesListed bool
	sandboxes        []agentsv1beta1.Sandbox
	pods             map[string]*corev1.Pod
	policies         []networkingv1.NetworkPolicy
	// runtimeClasses: name -> handler; nil when they could not be listed.
	runtimeClasses  map[string]string
	serviceAccounts map[string]*corev1.ServiceAccount
	// apiService is the kubernetes Service's address; apiEndpoints the
	// API server's own addresses behind it (its EndpointSlice).
	apiService   netip.AddrPort
	apiEndpoints []netip.AddrPort
	// permissions: service account -> the dangerous actions (see
	// dangerousActions) a SubjectAccessReview allowed.
	permissions map[string][]string
	// declared: RuntimeClasses the configuration declares isolating
	// (isolating_runtime_classes).
	declared map[string]bool
	// router is the sandbox router of router_namespace (router.go).
	router routerInventory
	// extra destinations and sources of the configuration.
	destinations []probe
	sources      []probe
}

// probe is an extra destination (egress) or source (ingress) to evaluate
// for every sandbox: an address, or a pod (namespace and labels).
type probe struct {
	Name      string
	Address   netip.Addr
	Namespace string
	Labels    map[string]string
	Port      int32
	Protocol  corev1.Protocol
}

// Addresses that matter, documented on the schema.
var (
	metadataIPv4    = netip.MustParseAddr("169.254.169.254")
	metadataIPv6AWS = netip.MustParseAddr("fd00:ec2::254")
	metadataIPv6GCE = netip.MustParseAddr("fd20:ce::254")
	// internet stand-ins: a public address of each family (Google Public DNS).
	internetIPv4 = netip.MustParseAddr("8.8.8.8")
	internetIPv6 = netip.MustParseAddr("2001:4860:4860::8888")
	// NodeLocal DNSCache's listen address (also in netrules).
	nodeLocalDNS = netip.MustParseAddr("169.254.20.10")
	// kube-dns pods, as the cluster DNS add-ons label them.
	dnsNamespace = "kube-system"
	dnsLabels    = map[string]string{"k8s-app": "kube-dns"}
	// the default sandbox router (upstream's managed default policy's peer).
	routerNamespace = "agent-sandbox-system"
	routerLabels    = map[string]string{sandboxapi.RouterLabelKey: sandboxapi.RouterLabelValue}
)

const (
	verdictAllowed = "allowed"
	verdictDenied  = "denied"
	verdictUnknown = "unknown"

	namespaceNameLabel = "kubernetes.io/metadata.name"
)

// gvisorHandlers are the RuntimeClass handlers that run gVisor: runsc
// (containerd's shim name, used by the open-source install) and gvisor
// (GKE Sandbox's RuntimeClass).
var gvisorHandlers = []string{"runsc", "gvisor"}

// runtime.isolation: what isolates a pod from the host kernel, as far as the
// report can tell.
const (
	isolationGVisor   = "gvisor"   // a gVisor handler
	isolationDeclared = "declared" // a RuntimeClass of isolating_runtime_classes
)

// analyze computes the report.
func analyze(inv inventory, selector labels.Selector) reportModel {
	out := reportModel{Sandboxes: []sandboxModel{}, Violations: []violationModel{}}
	for i := range inv.sandboxes {
		sb := &inv.sandboxes[i]
		podLabels := sb.Spec.PodTemplate.ObjectMeta.Labels
		if selector != nil && !selector.Matches(labels.Set(podLabels)) {
			continue
		}
		s := analyzeSandbox(inv, sb)
		out.Sandboxes = append(out.Sandboxes, s)
		for _, v := range s.Violations {
			out.Violations = append(out.Violations, violationModel{
				Sandbox: s.Namespace + "/" + s.Name, Title: v.Title, Message: v.Message, Attribute: v.Attribute,
			})
		}
	}
	sort.Slice(out.Sandboxes, func(i, j int) bool { return out.Sandboxes[i].Name < out.Sandboxes[j].Name })
	var routerViolations []violationModel
	out.Router, routerViolations = analyzeRouter(inv)
	out.Violations = append(out.Violations, routerViolations...)
	sum := summaryModel{Sandboxes: int64(len(out.Sandboxes)), Violations: int64(len(out.Violations))}
	for _, s := range out.Sandboxes {
		if s.Pod != "" {
			sum.Pods++
		}
		if len(s.Violations) == 0 {
			sum.Clean++
		}
		switch s.Runtime.Isolation {
		case isolationGVisor:
			sum.GVisor++
		case isolationDeclared:
			sum.Declared++
		}
		if s.Identity.TokenMounted {
			sum.TokenMounted++
		}
		if s.Network.IngressIsolated {
			sum.IngressIsolated++
		}
		if s.Network.EgressIsolated {
			sum.EgressIsolated++
		}
	}
	out.Summary = sum
	return out
}

// origin says where a sandbox comes from: a warm pool, a claim, or
// created directly; owner is the pool's or the claim's name.
func origin(sb *agentsv1beta1.Sandbox) (string, string) {
	for _, o := range sb.OwnerReferences {
		if o.Controller == nil || !*o.Controller {
			continue
		}
		switch o.Kind {
		case "SandboxWarmPool":
			return "warm_pool", o.Name
		case "SandboxClaim":
			return "claim", o.Name
		}
	}
	return "sandbox", ""
}

// podOf finds the sandbox's pod: the one named in its pod-name annotation
// (an adopted pool pod), or named like the sandbox, controlled by it.
func podOf(inv inventory, sb *agentsv1beta1.Sandbox) *corev1.Pod {
	name := sb.Name
	if n := sb.Annotations[agentsv1beta1.SandboxPodNameAnnotation]; n != "" {
		name = n
	}
	p := inv.pods[name]
	if p == nil {
		return nil
	}
	for _, o := range p.OwnerReferences {
		if o.UID == sb.UID {
			return p
		}
	}
	return nil
}

// violations collects a sandbox's findings.
type violations []sandboxViolationModel

func (v *violations) add(attribute, title, format string, args ...any) {
	*v = append(*v, sandboxViolationModel{Title: title, Message: fmt.Sprintf(format, args...), Attribute: attribute})
}

func analyzeSandbox(inv inventory, sb *agentsv1beta1.Sandbox) sandboxModel {
	kind, owner := origin(sb)
	s := sandboxModel{
		Name: sb.Name, Namespace: sb.Namespace, Origin: kind, Owner: owner,
		Template: sb.Annotations[agentsv1beta1.SandboxTemplateRefAnnotation],
	}
	// What runs: the pod when it exists, otherwise the sandbox's own pod
	// template (what the pod will be).
	spec := sb.Spec.PodTemplate.Spec
	podLabels := map[string]string{}
	for k, v := range sb.Spec.PodTemplate.ObjectMeta.Labels {
		podLabels[k] = v
	}
	var podIP netip.Addr
	pod := podOf(inv, sb)
	if pod != nil {
		s.Pod = pod.Name
		spec = pod.Spec
		podLabels = pod.Labels
		podIP, _ = netip.ParseAddr(pod.Status.PodIP)
	}
	var vs violations
	s.Runtime = runtimeOf(inv, spec, &vs)
	s.Identity = identity(inv, spec, &vs)
	s.Process = process(spec, &vs)
	self := netpolicy.Pod{
		Namespace: sb.Namespace, NamespaceLabels: inv.namespaces[sb.Namespace], Labels: podLabels, IP: podIP,
		Ports: containerPorts(spec),
	}
	s.Network = network(inv, sb, s.Pod, self, spec, &vs)
	s.Sandboxd = sandboxd(inv, sb.Namespace, self, spec, &vs)
	s.Violations = vs
	if s.Violations == nil {
		s.Violations = []sandboxViolationModel{}
	}
	return s
}

func runtimeOf(inv inventory, spec corev1.PodSpec, vs *violations) runtimeModel {
	rc := ""
	if spec.RuntimeClassName != nil {
		rc = *spec.RuntimeClassName
	}
	m := runtimeModel{RuntimeClassName: rc, Node: spec.NodeName}
	const attr = "pod_template.runtime_class_name"
	switch {
	case rc == "":
		vs.add(attr, "Sandbox runs without gVisor",
			"The pod has no RuntimeClass, so it runs with the node's default container runtime: untrusted code shares the host kernel, and one kernel exploit escapes the sandbox.")
		return m
	case inv.runtimeClasses == nil:
		m.Handler = ""
	default:
		h, ok := inv.runtimeClasses[rc]
		if !ok {
			vs.add(attr, "RuntimeClass does not exist",
				"The pod's RuntimeClass %q does not exist in the cluster, so the pod cannot run (or ran before it was deleted); nothing says it runs in gVisor.", rc)
			return m
		}
		m.Handler = h
	}
	m.GVisor = slices.Contains(gvisorHandlers, m.Handler)
	switch {
	case m.GVisor:
		m.Isolation = isolationGVisor
	case inv.declared[rc]:
		// The configuration vouches for it (the data source warns that
		// this is not verified): the RuntimeClass of GKE's MicroVM pools,
		// for one, is not documented, so no handler can be recognised.
		m.Isolation = isolationDeclared
	default:
		if inv.runtimeClasses == nil {
			vs.add(attr, "Sandbox runs without gVisor",
				"The pod's RuntimeClass is %q, but the RuntimeClasses could not be read, so its handler (runsc for gVisor) is unknown.", rc)
		} else {
			vs.add(attr, "Sandbox runs without gVisor",
				"The pod's RuntimeClass %q has the handler %q, not gVisor's (%s): untrusted code shares the host kernel unless that runtime isolates it.",
				rc, m.Handler, strings.Join(gvisorHandlers, " or "))
		}
	}
	return m
}

func identity(inv inventory, spec corev1.PodSpec, vs *violations) identityModel {
	sa := spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	m := identityModel{ServiceAccount: sa, Permissions: []string{}}
	// From the pod: the service account admission plugin adds a projected
	// token volume when the token is automounted; a pod not admitted yet
	// (or the template) decides by the automount settings.
	m.TokenMounted = mountsToken(spec)
	if !m.TokenMounted && !hasTokenVolumeInfo(spec) {
		automount := true
		if a := inv.serviceAccounts[sa]; a != nil && a.AutomountServiceAccountToken != nil {
			automount = *a.AutomountServiceAccountToken
		}
		if spec.AutomountServiceAccountToken != nil {
			automount = *spec.AutomountServiceAccountToken
		}
		m.TokenMounted = automount
	}
	if p := inv.permissions[sa]; p != nil {
		m.Permissions = p
	}
	if m.TokenMounted {
		vs.add("pod_template.automount_service_account_token", "Service account token mounted into the sandbox",
			"A token of the service account %q is mounted into the pod: code in the sandbox can call the Kubernetes API as that account, with every permission granted to it.", sa)
		if len(m.Permissions) > 0 {
			vs.add("pod_template.service_account_name", "Sandbox's service account is powerful",
				"The service account %q, whose token the sandbox holds, may %s (SubjectAccessReview): code in the sandbox can do the same.",
				sa, strings.Join(m.Permissions, ", "))
		}
	}
	return m
}

// mountsToken reports whether a container mounts a projected volume with a
// service account token (what the admission plugin adds, or a hand-made one).
func mountsToken(spec corev1.PodSpec) bool {
	token := map[string]bool{}
	for _, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				token[v.Name] = true
			}
		}
	}
	for _, c := range allContainers(spec) {
		for _, m := range c.VolumeMounts {
			if token[m.Name] {
				return true
			}
		}
	}
	return false
}

// hasTokenVolumeInfo: the pod was admitted with automounting on, so the
// absence of a token volume is not yet a fact. The admission plugin names
// its volume kube-api-access-*; without it, a pod with automount unset was
// admitted by a server that added nothing (or is the template).
func hasTokenVolumeInfo(spec corev1.PodSpec) bool {
	for _, v := range spec.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") {
			return true
		}
	}
	return false
}

func allContainers(spec corev1.PodSpec) []corev1.Container {
	return append(slices.Clone(spec.InitContainers), spec.Containers...)
}

// containerAttr is the pod_template attribute of a container.
func containerAttr(spec corev1.PodSpec, name string) string {
	for i, c := range spec.InitContainers {
		if c.Name == name {
			return fmt.Sprintf("pod_template.init_containers[%d]", i)
		}
	}
	for i, c := range spec.Containers {
		if c.Name == name {
			return fmt.Sprintf("pod_template.containers[%d]", i)
		}
	}
	return "pod_template"
}

func process(spec corev1.PodSpec, vs *violations) processModel {
	m := processModel{
		RunAsNonRoot: true, AllCapabilitiesDropped: true, CapabilitiesAdded: []string{}, HostPathVolumes: []string{},
		ContainersWithoutLimits: []string{}, Seccomp: "",
		HostNetwork: spec.HostNetwork, HostPID: spec.HostPID, HostIPC: spec.HostIPC,
	}
	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	podSeccomp := ""
	if psc.SeccompProfile != nil {
		podSeccomp = string(psc.SeccompProfile.Type)
	}
	seccomps := map[string]bool{}
	for _, c := range allContainers(spec) {
		attr := containerAttr(spec, c.Name)
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		// Non-root: the container's setting, else the pod's; UID 0 set
		// explicitly is root whatever runAsNonRoot says.
		nonRoot := psc.RunAsNonRoot
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		uid := psc.RunAsUser
		uidAttr := "pod_template.security_context.run_as_user"
		if sc.RunAsUser != nil {
			uid, uidAttr = sc.RunAsUser, attr+".security_context.run_as_user"
		}
		switch {
		case uid != nil && *uid == 0:
			m.RunAsNonRoot = false
			vs.add(uidAttr, "Sandbox runs as root", "Container %q runs as UID 0, root: the most privileged position from which to attack the runtime and the node.", c.Name)
		case nonRoot == nil || !*nonRoot:
			m.RunAsNonRoot = false
			// Titled as the hardening warning of the level that allows it.
			a, title := "pod_template.security_context.run_as_non_root", "Sandbox may run as root"
			if sc.RunAsNonRoot != nil {
				a, title = attr+".security_context.run_as_non_root", "Sandbox container may run as root"
			}
			vs.add(a, title, "Container %q is not required to run as non-root: it may run as root (UID 0), the most privileged position from which to attack the runtime and the node.", c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			m.Privileged = true
			vs.add(attr+".security_context.privileged", "Privileged sandbox container",
				"Container %q is privileged: it has every Linux capability and the host's devices.", c.Name)
		}
		// allowPrivilegeEscalation unset means allowed (no_new_privs not set).
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			m.PrivilegeEscalation = true
			vs.add(attr+".security_context.allow_privilege_escalation", "Privilege escalation allowed",
				"Container %q may gain privileges through setuid binaries and file capabilities (allowPrivilegeEscalation is not false).", c.Name)
		}
		var added, dropped []string
		if sc.Capabilities != nil {
			for _, a := range sc.Capabilities.Add {
				added = append(added, string(a))
			}
			for _, d := range sc.Capabilities.Drop {
				dropped = append(dropped, string(d))
			}
		}
		if len(added) > 0 {
			for _, a := range added {
				if !slices.Contains(m.CapabilitiesAdded, a) {
					m.CapabilitiesAdded = append(m.CapabilitiesAdded, a)
				}
			}
			vs.add(attr+".security_context.capabilities.add", "Capabilities added",
				"Container %q gets the capabilities %s back: each one widens what code in the sandbox may do.", c.Name, strings.Join(added, ", "))
		}
		if !slices.Contains(dropped, podtemplate.DropAllCapabilities) {
			m.AllCapabilitiesDropped = false
			vs.add(attr+".security_context.capabilities.drop", "Not all capabilities dropped",
				"Container %q does not drop ALL capabilities, so it keeps the runtime's default ones (such as NET_RAW, CHOWN, SETUID and SETGID).", c.Name)
		}
		seccomp, seccompAttr := podSeccomp, "pod_template.security_context.seccomp_profile.type"
		if sc.SeccompProfile != nil {
			seccomp, seccompAttr = string(sc.SeccompProfile.Type), attr+".security_context.seccomp_profile.type"
		}
		if seccomp == "" || seccomp == string(corev1.SeccompProfileTypeUnconfined) {
			vs.add(seccompAttr, "Sandbox runs without a syscall filter",
				"Container %q has no seccomp profile (or Unconfined): every kernel syscall is reachable from untrusted code.", c.Name)
			seccomp = string(corev1.SeccompProfileTypeUnconfined)
		}
		seccomps[seccomp] = true
		if sc.AppArmorProfile != nil && sc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
			vs.add("pod_template.pod_spec_overrides", "Sandbox runs without AppArmor", "Container %q has an Unconfined AppArmor profile.", c.Name)
		}
		if sc.ProcMount != nil && *sc.ProcMount == corev1.UnmaskedProcMount {
			vs.add("pod_template.pod_spec_overrides", "Unmasked /proc",
				"Container %q has procMount Unmasked: kernel information and controls under /proc are exposed to untrusted code.", c.Name)
		}
		if !isInit(spec, c.Name) || isSidecar(c) {
			lim := c.Resources.Limits
			_, cpu := lim[corev1.ResourceCPU]
			_, mem := lim[corev1.ResourceMemory]
			if !cpu || !mem {
				m.ContainersWithoutLimits = append(m.ContainersWithoutLimits, c.Name)
				vs.add(attr+".resources.limits", "Missing resource limits",
					"Container %q has no CPU or memory limit: code in the sandbox can starve the node it shares with other sandboxes.", c.Name)
			}
		}
	}
	m.Seccomp = strings.Join(sortedKeys(seccomps), ",")
	if psc.AppArmorProfile != nil && psc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
		vs.add("pod_template.pod_spec_overrides", "Sandbox runs without AppArmor", "The pod has an Unconfined AppArmor profile.")
	}
	hostNS := []struct {
		on   bool
		name string
		risk string
	}{
		{spec.HostNetwork, "hostNetwork", "the pod shares the node's network namespace: it bypasses NetworkPolicies and reaches services listening on the node"},
		{spec.HostPID, "hostPID", "the pod sees, and can signal or trace, every process on the node"},
		{spec.HostIPC, "hostIPC", "the pod shares the node's IPC namespace and shared memory"},
	}
	for _, h := range hostNS {
		if h.on {
			vs.add("pod_template.pod_spec_overrides", "Sandbox shares a host namespace", "The pod sets %s: %s.", h.name, h.risk)
		}
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			m.HostPathVolumes = append(m.HostPathVolumes, v.HostPath.Path)
			vs.add("pod_template.pod_spec_overrides", "Host directory mounted into the sandbox",
				"The pod has the hostPath volume %q (%s): untrusted code can read (and unless read-only, write) the node's files.", v.Name, v.HostPath.Path)
		}
	}
	return m
}

func isInit(spec corev1.PodSpec, name string) bool {
	return slices.ContainsFunc(spec.InitContainers, func(c corev1.Container) bool { return c.Name == name })
}

// isSidecar: an init container that keeps running (restartPolicy Always).
func isSidecar(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func containerPorts(spec corev1.PodSpec) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, c := range spec.Containers {
		out = append(out, c.Ports...)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
