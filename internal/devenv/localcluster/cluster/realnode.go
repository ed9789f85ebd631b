package cluster

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The real node (`up --real-node`): one Kubernetes node that really runs
// pods, next to the kwok fake nodes. It runs directly on this machine (as
// root), not in a container:
//
//   - its own network namespace (bind-mounted at node/netns) holds
//     everything network-related: a bridge with a private pod range, the
//     pods' veth ends, the NetworkPolicy enforcer's iptables chains and
//     ipsets.
//     The namespace has no interface that leads off the machine and no
//     default route, so nothing a pod sends can leave it except to
//     namespaces a test connects to it explicitly. The host's interfaces,
//     routes, sysctls, iptables rules, ipsets and nftables rule set are
//     never touched.
//   - containerd (Debian's, 1.6) with two runtime handlers: runc, and runsc
//     (gVisor, through gVisor's own containerd shim, both built from the
//     Go module proxy by build-gvisor.sh), the latter matching the gvisor
//     RuntimeClass.
//     Images come from local OCI archives (scripts/realnode-images.sh); no
//     registry is ever contacted.
//   - CNI bridge + host-local (Debian's containernetworking-plugins), no
//     masquerade.
//   - the kubelet (same binary, same Kubernetes version as the control
//     plane), registered with the gVisor pool's labels and taint, so that
//     RuntimeClass scheduling puts sandbox pods there.
//   - kube-router's network policy controller (unmodified, routing and
//     service proxy off) enforcing NetworkPolicy with iptables and ipsets.
//   - node-proxy: the only bridge between the node's namespace and the
//     host: the apiserver's loopback port inside the namespace (for the
//     kubelet and kube-router) and, for the apiserver, a CONNECT
//     proxy that reaches exactly the kubelet's port (logs, exec) and
//     nothing else.
//
// `down` removes all of it: processes, mounts, the namespaces (and with
// them the bridge, veths, iptables rules and ipsets) and the kubelet's
// cgroups.

// Names and addresses of the real node.
const (
	RealNodeName = "gvisor-real-0"
	// RealNodeLabel marks the real node (value "true").
	RealNodeLabel = "localcluster.agentsandbox.dev/real-node"
	// Default pod range: part of 198.18.0.0/15, reserved for benchmarking
	// (RFC 2544) and routed nowhere. The node's own address (the bridge's
	// gateway) is its first host address.
	DefaultRealNodePodCIDR = "198.18.0.0/24"
	// DefaultRealNodeClusterDNS is the pods' nameserver: the address GKE's
	// NodeLocal DNSCache uses. Nothing answers there unless a test serves
	// it (in a namespace it connects to the node).
	DefaultRealNodeClusterDNS = "169.254.20.10"
	// RealNodePauseImage is the sandbox image containerd uses; it must be
	// among the imported archives.
	RealNodePauseImage = "localhost/localcluster/pause:3.10"
	// realNodeBridge is the bridge inside the node's namespace.
	realNodeBridge = "lcbr0"
	kubeletPort    = 10250
)

// RealNodeOptions configure the real node; nil means no real node.
type RealNodeOptions struct {
	// Images is a directory of OCI image archives (*.tar) imported into
	// containerd before the kubelet starts; it must contain the pause image.
	Images string `json:"images"`
	// PodCIDR is the bridge's range; the node's address is its first host.
	PodCIDR string `json:"podCIDR"`
	// ClusterDNS is the nameserver written into pods' resolv.conf.
	ClusterDNS string `json:"clusterDNS"`
	// GVisor is the directory with runsc and containerd-shim-runsc-v1
	// (build-gvisor.sh prints it).
	GVisor string `json:"gvisor"`
	// NetPol is the kube-router binary (build-netpol.sh prints it),
	// unmodified, run as the node's NetworkPolicy enforcer; empty:
	// NetworkPolicies are stored, not enforced.
	NetPol string `json:"netpol,omitempty"`
	// Binaries of the node (absolute paths), found on PATH by default.
	Containerd string `json:"containerd"`
	Runc       string `json:"runc"`
	CNIBinDir  string `json:"cniBinDir"`
}

// DefaultRealNodeOptions returns the defaults, with binaries looked up on
// PATH (and Debian's plugin directory for CNI).
func DefaultRealNodeOptions() RealNodeOptions {
	look := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
		return ""
	}
	return RealNodeOptions{
		PodCIDR:    DefaultRealNodePodCIDR,
		ClusterDNS: DefaultRealNodeClusterDNS,
		Containerd: look("containerd"),
		Runc:       look("runc"),
		CNIBinDir:  "/usr/lib/cni",
	}
}

// NodeIP is the real node's address: the bridge's gateway.
func (o RealNodeOptions) NodeIP() (netip.Addr, error) {
	p, err := netip.ParsePrefix(o.PodCIDR)
	if err != nil {
		return netip.Addr{}, err
	}
	return p.Masked().Addr().Next(), nil
}

// Validate checks the options without touching the machine.
func (o RealNodeOptions) Validate() error {
	p, err := netip.ParsePrefix(o.PodCIDR)
	if err != nil || !p.Addr().Is4() || p.Bits() > 28 || p.Bits() < 16 {
		return fmt.Errorf("real node pod CIDR %q: want an IPv4 prefix between /16 and /28", o.PodCIDR)
	}
	if a, err := netip.ParseAddr(o.ClusterDNS); err != nil || !a.Is4() {
		return fmt.Errorf("real node cluster DNS %q: want an IPv4 address", o.ClusterDNS)
	}
	if o.GVisor == "" {
		return errors.New("--real-node-gvisor is required with --real-node: the directory with runsc and containerd-shim-runsc-v1 " +
			"(internal/devenv/localcluster/build-gvisor.sh builds them)")
	}
	if o.Images == "" {
		return errors.New("--real-node-images is required with --real-node: a directory of OCI archives including the pause image " +
			RealNodePauseImage + " (scripts/realnode-images.sh builds them)")
	}
	return nil
}

// nodeID is a short name derived from the cluster directory; it keeps the
// cgroups of clusters in different directories apart.
func nodeID(l Layout) string {
	sum := sha256.Sum256([]byte(l.Dir))
	return fmt.Sprintf("%x", sum[:5])
}

// Paths of the real node. Everything lives under D/node, except unix
// sockets, which live in D/run (short paths: sun_path has 108 bytes).
func (l Layout) NodeDir() string { return filepath.Join(l.Dir, "node") }
func (l Layout) nodePath(p ...string) string {
	return filepath.Join(append([]string{l.NodeDir()}, p...)...)
}

// NodeNetns is the bind mount that keeps the node's network namespace.
func (l Layout) NodeNetns() string           { return l.nodePath("netns") }
func (l Layout) ContainerdConfig() string    { return l.nodePath("containerd.toml") }
func (l Layout) ContainerdRoot() string      { return l.nodePath("containerd", "root") }
func (l Layout) ContainerdState() string     { return l.nodePath("containerd", "state") }
func (l Layout) ContainerdSocket() string    { return filepath.Join(l.RunDir(), "containerd.sock") }
func (l Layout) KubeletDir() string          { return l.nodePath("kubelet") }
func (l Layout) KubeletConfig() string       { return l.nodePath("kubelet.yaml") }
func (l Layout) CNIConfDir() string          { return l.nodePath("cni", "net.d") }
func (l Layout) CNIStateDir() string         { return l.nodePath("cni", "ipam") }
func (l Layout) PodLogsDir() string          { return l.nodePath("pod-logs") }
func (l Layout) RuntimeRoot(h string) string { return l.nodePath("runtime", h) }
func (l Layout) RunscConfig() string         { return l.nodePath("runsc.toml") }
func (l Layout) RunscLogDir() string         { return filepath.Join(l.LogDir(), "runsc") + "/" }
func (l Layout) KernelTunablesDir() string   { return l.nodePath("kernel-tunables") }
func (l Layout) APIServerSocket() string     { return filepath.Join(l.RunDir(), "apiserver.sock") }
func (l Layout) NodeEgressSocket() string    { return filepath.Join(l.RunDir(), "node-egress.sock") }
func (l Layout) NoClusterNetworkSocket() string {
	return filepath.Join(l.RunDir(), "no-cluster-network.sock")
}

// CgroupParent is the cgroup (in every v1 hierarchy, or in the v2 tree)
// under which the kubelet puts all pods of this node.
func (s State) CgroupParent() string { return "/localcluster-" + s.NodeID }

// RealNodePreflight checks that this machine can run the real node and
// says exactly what is missing otherwise. It does not change anything.
func RealNodePreflight(o RealNodeOptions) error {
	var problems []string
	if os.Geteuid() != 0 {
		problems = append(problems, "must run as root (the node creates network namespaces, mounts and cgroups)")
	}
	need := map[string]string{"containerd": o.Containerd, "runc": o.Runc}
	for _, name := range []string{"containerd", "runc"} {
		if need[name] == "" {
			problems = append(problems, fmt.Sprintf("%s not found (Debian: apt-get install %s)", name, name))
		}
	}
	for _, tool := range []string{"ip", "nsenter", "unshare", "ctr"} {
		if _, err := exec.LookPath(tool); err != nil {
			pkg := map[string]string{"ip": "iproute2", "nsenter": "util-linux", "unshare": "util-linux", "ctr": "containerd"}[tool]
			problems = append(problems, fmt.Sprintf("%s not found (Debian: apt-get install %s)", tool, pkg))
		}
	}
	if o.NetPol != "" {
		// kube-router runs these (from PATH) inside the node's namespace.
		for _, tool := range []string{"iptables", "iptables-save", "iptables-restore", "ipset"} {
			pkg := "iptables"
			if tool == "ipset" {
				pkg = "ipset"
			}
			if _, err := exec.LookPath(tool); err != nil {
				problems = append(problems, fmt.Sprintf("%s not found; the NetworkPolicy enforcer needs it (Debian: apt-get install %s)", tool, pkg))
			}
		}
		if _, err := os.Stat(o.NetPol); err != nil {
			problems = append(problems, fmt.Sprintf("NetworkPolicy enforcer %s: %v (internal/devenv/localcluster/build-netpol.sh builds it)", o.NetPol, err))
		}
	}
	for _, bin := range []string{"runsc", "containerd-shim-runsc-v1"} {
		if _, err := os.Stat(filepath.Join(o.GVisor, bin)); err != nil {
			problems = append(problems, fmt.Sprintf("%s not in %s (internal/devenv/localcluster/build-gvisor.sh builds it)", bin, o.GVisor))
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(o.CNIBinDir, plugin)); err != nil {
			problems = append(problems, fmt.Sprintf("CNI plugin %s not in %s (Debian: apt-get install containernetworking-plugins)", plugin, o.CNIBinDir))
		}
	}
	if o.Images != "" {
		if _, err := os.Stat(filepath.Join(o.Images, "pause.tar")); err != nil {
			problems = append(problems, fmt.Sprintf("no pause.tar in %s (scripts/realnode-images.sh builds the images)", o.Images))
		}
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		problems = append(problems, "no network namespaces (/proc/self/ns/net)")
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err != nil {
		if _, err2 := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err2 != nil {
			problems = append(problems, "no cgroup hierarchy with the memory controller under /sys/fs/cgroup")
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("this machine cannot run the real node:\n  - %s", strings.Join(problems, "\n  - "))
	}
	return nil
}

// kernelTunables are the host-wide sysctls the kubelet insists on (it sets
// them unless protectKernelDefaults, and then refuses to start when they
// differ). They are not namespaced, so changing them would change the
// host. The kubelet runs in its own mount namespace instead, in which
// files holding the values it expects are bind-mounted over these paths:
// it reads what it wants and the host keeps its settings.
var kernelTunables = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

// writeRealNodeFiles writes the configuration of the real node.
func writeRealNodeFiles(l Layout, s State, p *PKI) error {
	o := *s.Options.RealNode
	nodeIP, err := o.NodeIP()
	if err != nil {
		return err
	}
	for _, d := range []string{
		l.NodeDir(), l.ContainerdRoot(), l.ContainerdState(), l.KubeletDir(), l.CNIConfDir(), l.CNIStateDir(),
		l.PodLogsDir(), l.RuntimeRoot("runc"), l.RuntimeRoot("runsc"), l.RunscLogDir(), l.KernelTunablesDir(),
	} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}

	// Credentials: the kubelet's client certificate (Node authorizer and
	// NodeRestriction apply to it), its serving certificate for the node's
	// address, the NetworkPolicy enforcer's identity, and the apiserver's client
	// certificate for kubelet connections.
	issue := func(req certRequest) (*KeyPair, error) { return p.CA.issue(req) }
	kubeletClient, err := issue(certRequest{commonName: "system:node:" + RealNodeName, organization: []string{"system:nodes"}, client: true})
	if err != nil {
		return err
	}
	kubeletServing, err := issue(certRequest{commonName: RealNodeName, dnsNames: []string{RealNodeName}, ips: []net.IP{net.IP(nodeIP.AsSlice())}, server: true})
	if err != nil {
		return err
	}
	knp, err := issue(certRequest{commonName: NetworkPoliciesUser, client: true})
	if err != nil {
		return err
	}
	apiKubelet, err := issue(certRequest{commonName: "kube-apiserver-kubelet-client", organization: []string{mastersGroup}, client: true})
	if err != nil {
		return err
	}
	files := map[string][]byte{
		l.PKI("kubelet-serving.crt"):          kubeletServing.CertPEM,
		l.PKI("kubelet-serving.key"):          kubeletServing.KeyPEM,
		l.PKI("apiserver-kubelet-client.crt"): apiKubelet.CertPEM,
		l.PKI("apiserver-kubelet-client.key"): apiKubelet.KeyPEM,
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	// Inside the node's namespace the apiserver is reached at the same
	// loopback address and port, through node-proxy.
	server := s.APIServerURL()
	if err := WriteKubeconfig(l.PKI("kubelet.kubeconfig"), server, p.CA.CertPEM, kubeletClient); err != nil {
		return err
	}
	if err := WriteKubeconfig(l.PKI("netpol.kubeconfig"), server, p.CA.CertPEM, knp); err != nil {
		return err
	}
	if o.NetPol != "" {
		// argv[0] under the cluster directory: `down` recognises the process.
		bin := l.NetPolBinary()
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			return err
		}
		_ = os.Remove(bin)
		if err := os.Symlink(o.NetPol, bin); err != nil {
			return err
		}
	}

	for name, value := range kernelTunables {
		f := filepath.Join(l.KernelTunablesDir(), strings.ReplaceAll(name, "/", "."))
		if err := os.WriteFile(f, []byte(value+"\n"), 0o444); err != nil {
			return err
		}
	}
	if err := os.WriteFile(l.RunscConfig(), []byte(runscConfig(l, o)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(l.ContainerdConfig(), []byte(containerdConfig(l, o)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(l.CNIConfDir(), "10-localcluster.conflist"), []byte(cniConfig(l, o, nodeIP)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(l.nodePath("resolv.conf"), []byte("nameserver "+o.ClusterDNS+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(l.KubeletConfig(), []byte(kubeletConfig(l, s, nodeIP)), 0o644)
}

// NetworkPoliciesUser is the NetworkPolicy enforcer's identity (RBAC in
// contents.go).
const NetworkPoliciesUser = "localcluster-netpol"

// runscConfig is the gVisor shim's configuration: which runsc, where its
// state lives, and runsc's own flags. Pods' network goes through gVisor's
// netstack (--network=sandbox, the default), as on GKE Sandbox.
func runscConfig(l Layout, o RealNodeOptions) string {
	return fmt.Sprintf(`# Generated by localcluster: the "runsc" runtime handler (gVisor).
binary_name = %q
root = %q

[runsc_config]
  debug-log = %q
  debug-command = "create,start,boot,gofer,delete"
`, filepath.Join(o.GVisor, "runsc"), l.RuntimeRoot("runsc"), l.RunscLogDir())
}

// containerdConfig is containerd 1.6's configuration: everything under the
// cluster directory, nothing listening on TCP except the CRI streaming
// server on the node namespace's loopback, no registry ever used (images
// are imported; the pause image is pinned).
func containerdConfig(l Layout, o RealNodeOptions) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
# No negative OOM scores anywhere: lowering oom_score_adj needs
# CAP_SYS_RESOURCE, which some hosts (these machines) withhold from root.
oom_score = 0
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing",
]

[grpc]
  address = %q

[ttrpc]
  address = %q

[debug]
  level = "info"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  # Container OOM scores no lower than containerd's own (see oom_score):
  # the kubelet asks -998 for sandboxes, which runsc cannot set here.
  restrict_oom_score_adj = true
  disable_tcp_service = true
  netns_mounts_under_state_dir = true
  max_container_log_line_size = 16384
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    discard_unpacked_layers = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = %q
        Root = %q
        SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
      runtime_type = "io.containerd.runsc.v1"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]
        TypeUrl = "io.containerd.runsc.v1.options"
        ConfigPath = %q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ""
`, l.ContainerdRoot(), l.ContainerdState(), l.ContainerdSocket(), l.ContainerdSocket()+".ttrpc",
		l.nodePath("containerd", "opt"), RealNodePauseImage,
		o.Runc, l.RuntimeRoot("runc"), l.RunscConfig(),
		o.CNIBinDir, l.CNIConfDir())
}

// cniConfig: a bridge whose gateway is the node's address, addresses from
// host-local, no masquerade. The pods' default route points at the
// bridge, inside the node's namespace, which has no way off the machine.
func cniConfig(l Layout, o RealNodeOptions, nodeIP netip.Addr) string {
	p := netip.MustParsePrefix(o.PodCIDR).Masked()
	first := nodeIP.Next()
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "localcluster",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "isDefaultGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [[{"subnet": %q, "gateway": %q, "rangeStart": %q}]]
      }
    }
  ]
}
`, realNodeBridge, l.CNIStateDir(), p.String(), nodeIP.String(), first.String())
}

// kubeletConfig keeps every path of the kubelet under the cluster
// directory and every port inside the node's namespace.
func kubeletConfig(l Layout, s State, nodeIP netip.Addr) string {
	o := *s.Options.RealNode
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 hosts: the kubelet refuses them unless told otherwise.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %q
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
containerRuntimeEndpoint: unix://%s
imageServiceEndpoint: unix://%s
address: %q
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: %q
tlsPrivateKeyFile: %q
rotateCertificates: false
serverTLSBootstrap: false
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %q
authorization:
  mode: Webhook
clusterDomain: cluster.local
clusterDNS: [%q]
resolvConf: %q
registerNode: true
registerWithTaints:
- key: %q
  value: %q
  effect: NoSchedule
podLogsDir: %q
volumePluginDir: %q
staticPodPath: ""
failSwapOn: false
maxPods: 110
# Imported images are the only ones there are: never garbage-collect them,
# and never evict pods over disk space on a shared development machine.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%%"
  nodefs.inodesFree: "1%%"
  imagefs.available: "1%%"
protectKernelDefaults: false
serializeImagePulls: false
shutdownGracePeriod: 0s
`, s.CgroupParent(), l.ContainerdSocket(), l.ContainerdSocket(), nodeIP.String(), kubeletPort,
		l.PKI("kubelet-serving.crt"), l.PKI("kubelet-serving.key"), l.PKI("ca.crt"),
		o.ClusterDNS, l.nodePath("resolv.conf"), SandboxRuntimeKey, SandboxRuntimeGVisor,
		l.PodLogsDir(), l.nodePath("volume-plugins"))
}

// errnoIs reports whether err wraps the errno.
func errnoIs(err error, errno syscall.Errno) bool {
	var e syscall.Errno
	return errors.As(err, &e) && e == errno
}

// KubeletMountsEnv tells the kubelet component to isolate its mounts (see
// IsolateKubeletMounts): "<kubelet dir>:<kernel tunables dir>".
const KubeletMountsEnv = "LOCALCLUSTER_KUBELET_MOUNTS"

// realNodeComponents are the real node's processes, in start order.
func realNodeComponents(l Layout, s State) []Component {
	o := *s.Options.RealNode
	nodeIP, _ := o.NodeIP()
	netns := l.NodeNetns()
	labels := strings.Join([]string{
		NodePoolLabel + "=" + GVisorPool,
		SandboxRuntimeKey + "=" + SandboxRuntimeGVisor,
		RealNodeLabel + "=true",
	}, ",")
	comps := []Component{
		{Name: NodeProxyName, Netns: netns, Args: []string{
			"--dir=" + l.Dir,
			fmt.Sprintf("--listen=127.0.0.1:%d", s.Ports.APIServer),
			"--apiserver-socket=" + l.APIServerSocket(),
			"--egress-socket=" + l.NodeEgressSocket(),
			fmt.Sprintf("--allow=%s:%d", nodeIP, kubeletPort),
		}},
		{Name: Containerd, Path: o.Containerd, Netns: netns, Args: []string{
			"--config=" + l.ContainerdConfig(),
		}, Env: []string{
			// containerd finds containerd-shim-runsc-v1 on its PATH.
			"PATH=" + o.GVisor + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		}},
		netPolComponent(l, s),
		{Name: Kubelet, Netns: netns, PrivateMounts: true, Args: []string{
			"--config=" + l.KubeletConfig(),
			"--kubeconfig=" + l.PKI("kubelet.kubeconfig"),
			"--root-dir=" + l.KubeletDir(),
			"--hostname-override=" + RealNodeName,
			"--node-ip=" + nodeIP.String(),
			"--node-labels=" + labels,
			"--v=1",
		}, Env: []string{KubeletMountsEnv + "=" + l.KubeletDir() + ":" + l.KernelTunablesDir()}},
	}
	if o.NetPol == "" {
		// No enforcer: drop its slot.
		out := comps[:0]
		for _, c := range comps {
			if c.Name != NetworkPolicies {
				out = append(out, c)
			}
		}
		comps = out
	}
	return comps
}

// IsolateKubeletMounts runs first thing in the kubelet process, which
// `unshare --mount --propagation unchanged` put into a mount namespace of
// its own. Every mount becomes a slave of the host's (so nothing mounted
// here reaches the host), except the kubelet directory, a shared mount
// whose volumes containerd (in the host's mount namespace) must see. Then
// the kernel tunables the kubelet checks are shadowed with files holding
// the values it expects, so it does not change the host's (see
// kernelTunables).
func IsolateKubeletMounts(spec string) error {
	kubeletDir, tunablesDir, ok := strings.Cut(spec, ":")
	if !ok {
		return fmt.Errorf("%s=%q: want <kubelet dir>:<tunables dir>", KubeletMountsEnv, spec)
	}
	all, err := MountsUnder("/")
	if err != nil {
		return err
	}
	for _, mp := range all {
		if mp == kubeletDir || strings.HasPrefix(mp, kubeletDir+"/") {
			continue
		}
		if err := unix.Mount("", mp, "", unix.MS_SLAVE, ""); err != nil && !errnoIs(err, unix.EINVAL) {
			return fmt.Errorf("making %s a slave mount: %w", mp, err)
		}
	}
	for name := range kernelTunables {
		src := filepath.Join(tunablesDir, strings.ReplaceAll(name, "/", "."))
		dst := filepath.Join("/proc/sys", name)
		if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("shadowing %s: %w", dst, err)
		}
	}
	return nil
}

// EnforcerChains are the chains kube-router's network policy controller
// hooks into INPUT, FORWARD and OUTPUT of the filter table; their presence
// in the node's iptables means it enforces.
var EnforcerChains = []string{"KUBE-ROUTER-INPUT", "KUBE-ROUTER-FORWARD", "KUBE-ROUTER-OUTPUT"}

// NetPolBinary is the link to the enforcer's binary, under the cluster
// directory so that `down` recognises its process.
func (l Layout) NetPolBinary() string { return l.nodePath("bin", "kube-router") }

// netPolComponent runs kube-router, unmodified, as the node's NetworkPolicy
// enforcer only: its network policy controller, with routing (BGP, CNI),
// the service proxy (IPVS) and the load-balancer allocator off. It runs
// inside the node's network namespace, so its iptables chains and ipsets
// (both per network namespace) exist only there and disappear with it; it
// reaches the apiserver at 127.0.0.1 through node-proxy with a client
// certificate of its own. Health and metrics ports are off: nothing of it
// listens. IPv4 only, like the node.
func netPolComponent(l Layout, s State) Component {
	return Component{Name: NetworkPolicies, Netns: l.NodeNetns(), Path: l.NetPolBinary(), Args: []string{
		"--kubeconfig=" + l.PKI("netpol.kubeconfig"),
		"--hostname-override=" + RealNodeName,
		"--run-firewall=true",
		"--run-router=false",
		"--run-service-proxy=false",
		"--run-loadbalancer=false",
		"--enable-cni=false",
		"--enable-ipv4=true",
		"--enable-ipv6=false",
		"--health-port=0",
		"--metrics-port=0",
		"--service-cluster-ip-range=" + s.Options.ServiceCIDR,
		"--v=1",
	}}
}
