package cluster

import (
	"fmt"
	"os"
	"strconv"
)

// Component is one child process of the supervisor: the localcluster binary
// invoked with a hidden subcommand.
type Component struct {
	Name string   // also the subcommand and the log file name
	Args []string // flags after the subcommand
	Env  []string // extra environment, appended to the supervisor's
	// Path, when set, is an external program run with Args instead of the
	// localcluster binary (the real node's containerd).
	Path string
	// Netns, when set, runs the process inside that network namespace (the
	// real node's), through nsenter, which keeps the pid.
	Netns string
	// PrivateMounts runs the process in a mount namespace of its own
	// (unshare -m, propagation unchanged), see IsolateKubeletMounts.
	PrivateMounts bool
}

// argv is the command line that starts the component.
func (c Component) argv(binary string) []string {
	argv := append([]string{binary, c.Name}, c.Args...)
	if c.Path != "" {
		argv = append([]string{c.Path}, c.Args...)
	}
	if c.PrivateMounts {
		argv = append([]string{"unshare", "--mount", "--propagation", "unchanged", "--"}, argv...)
	}
	if c.Netns != "" {
		argv = append([]string{"nsenter", "--net=" + c.Netns, "--"}, argv...)
	}
	return argv
}

// Names of the components, in start order.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
	Scheduler         = "kube-scheduler"
	Kwok              = "kwok"
)

// The real node's components (`up --real-node`), in start order.
const (
	NodeProxyName = "node-proxy"
	Containerd    = "containerd"
	Kubelet       = "kubelet"
	// NetworkPolicies is the real node's NetworkPolicy enforcer:
	// kube-router's network policy controller (see netPolComponent).
	NetworkPolicies = "kube-router"
)

// ComponentNames lists every component in start order, the real node's
// last (they run only with --real-node).
var ComponentNames = []string{Etcd, APIServer, ControllerManager, Scheduler, Kwok, NodeProxyName, Containerd, Kubelet, NetworkPolicies}

// componentNames lists the components a cluster with these options runs.
func componentNames(o Options) []string {
	switch {
	case o.RealNode == nil:
		return ComponentNames[:5]
	case o.RealNode.NetPol == "":
		var names []string
		for _, n := range ComponentNames {
			if n != NetworkPolicies {
				names = append(names, n)
			}
		}
		return names
	}
	return ComponentNames
}

// FakeNodeAnnotation marks the nodes kwok manages. Only annotated nodes are
// touched, so a real kubelet joined to the same cluster keeps its own nodes.
const (
	FakeNodeAnnotation      = "kwok.x-k8s.io/node"
	FakeNodeAnnotationValue = "fake"
)

// etcdComponent runs a single-member etcd with mutual TLS on its client port.
// The peer port is loopback-only and unused by a single member, but etcd
// insists on listening on one.
func etcdComponent(l Layout, s State) Component {
	peer := fmt.Sprintf("http://127.0.0.1:%d", s.Ports.EtcdPeer)
	client := fmt.Sprintf("https://127.0.0.1:%d", s.Ports.EtcdClient)
	return Component{Name: Etcd, Args: []string{
		"--name=localcluster",
		"--data-dir=" + l.EtcdDataDir(),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=localcluster=" + peer,
		"--initial-cluster-state=new",
		// Plain HTTP, loopback only: serves /health and /metrics for the
		// supervisor's readiness probe without client certificates.
		fmt.Sprintf("--listen-metrics-urls=http://127.0.0.1:%d", s.Ports.EtcdMetrics),
		"--cert-file=" + l.PKI("etcd-server.crt"),
		"--key-file=" + l.PKI("etcd-server.key"),
		"--trusted-ca-file=" + l.PKI("etcd-ca.crt"),
		"--client-cert-auth=true",
		// A throwaway test cluster: skipping fsync makes every write (and so
		// every test) several times faster on virtual disks; losing the data
		// on a machine crash is acceptable.
		"--unsafe-no-fsync=true",
		"--quota-backend-bytes=" + strconv.Itoa(4<<30),
		"--log-level=warn",
		"--logger=zap",
		"--log-outputs=stderr",
	}}
}

// apiServerComponent runs kube-apiserver on 127.0.0.1 only.
func apiServerComponent(l Layout, s State) Component {
	c := Component{Name: APIServer, Args: []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(s.Ports.APIServer),
		// The default reconciler refuses a loopback advertise address, and
		// there is exactly one apiserver whose address never changes.
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--etcd-servers=https://127.0.0.1:%d", s.Ports.EtcdClient),
		"--etcd-cafile=" + l.PKI("etcd-ca.crt"),
		"--etcd-certfile=" + l.PKI("apiserver-etcd-client.crt"),
		"--etcd-keyfile=" + l.PKI("apiserver-etcd-client.key"),
		"--tls-cert-file=" + l.PKI("apiserver.crt"),
		"--tls-private-key-file=" + l.PKI("apiserver.key"),
		"--client-ca-file=" + l.PKI("ca.crt"),
		"--token-auth-file=" + l.PKI("tokens.csv"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.PKI("sa.pub"),
		"--service-account-signing-key-file=" + l.PKI("sa.key"),
		"--service-cluster-ip-range=" + s.Options.ServiceCIDR,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		// Fake nodes have loopback InternalIPs and no kubelet; never resolve
		// node names through DNS.
		"--kubelet-preferred-address-types=InternalIP",
		// Everything the apiserver would send into the "cluster network"
		// (kubelet logs/exec, pods/services proxy, webhooks and aggregated
		// APIs reached through a Service) goes to a unix socket nobody
		// listens on. Such requests fail at once on this machine instead of
		// sending packets to fake pod or service addresses.
		"--egress-selector-config-file=" + l.PKI("egress-selector.yaml"),
		"--profiling=false",
		"--v=1",
	}}
	if s.Options.RealNode != nil {
		// The real kubelet (reached through node-proxy, see the egress
		// selector) is authenticated both ways with the cluster CA.
		c.Args = append(c.Args,
			"--kubelet-client-certificate="+l.PKI("apiserver-kubelet-client.crt"),
			"--kubelet-client-key="+l.PKI("apiserver-kubelet-client.key"),
			"--kubelet-certificate-authority="+l.PKI("ca.crt"),
		)
	}
	return c
}

// controllerManagerComponent runs every default controller, without leader
// election (one instance) and without a serving port (health is observed
// through its effects, e.g. the default ServiceAccount appearing).
func controllerManagerComponent(l Layout, s State) Component {
	kc := l.PKI("controller-manager.kubeconfig")
	return Component{Name: ControllerManager, Args: []string{
		"--kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--leader-elect=false",
		"--controllers=*",
		// One shared credential for all controllers instead of one service
		// account each: start-up is about twice as fast.
		"--use-service-account-credentials=false",
		"--service-account-private-key-file=" + l.PKI("sa.key"),
		"--root-ca-file=" + l.PKI("ca.crt"),
		"--cluster-signing-cert-file=" + l.PKI("ca.crt"),
		"--cluster-signing-key-file=" + l.PKI("ca.key"),
		"--cluster-name=localcluster",
		"--service-cluster-ip-range=" + s.Options.ServiceCIDR,
		// Nodes are created with spec.podCIDR already set.
		"--allocate-node-cidrs=false",
		// The default 20 QPS makes a 200-replica Deployment take ~10 s of
		// pure client-side throttling; tests create hundreds of pods.
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
		"--v=1",
	}}
}

func schedulerComponent(l Layout, _ State) Component {
	return Component{Name: Scheduler, Args: []string{
		"--kubeconfig=" + l.PKI("scheduler.kubeconfig"),
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--leader-elect=false",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--profiling=false",
		"--v=1",
	}}
}

// kwokComponent manages the annotated fake nodes and the pods bound to them.
func kwokComponent(l Layout, s State) Component {
	return Component{
		Name: Kwok,
		Args: []string{
			"--kubeconfig=" + l.PKI("kwok.kubeconfig"),
			"--config=" + l.KwokStages(),
			"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation + "=" + FakeNodeAnnotationValue,
			// Fallback only: every fake node has its own spec.podCIDR.
			"--cidr=" + s.Options.PodCIDR,
			// kwok keeps node Leases renewed, which is what the node
			// lifecycle controller watches to decide a node is alive.
			"--node-lease-duration-seconds=40",
			// No --server-address and no --node-port: kwok's kubelet-like
			// HTTP server (logs, exec) stays off, so it binds no port.
		},
		// kwok reads ~/.kwok/kwok.yaml when it exists; a private HOME keeps
		// the user's kwok settings out of this cluster.
		Env: []string{"HOME=" + l.KwokDir()},
	}
}

// Components returns every component of the cluster, in start order.
func Components(l Layout, s State) []Component {
	comps := []Component{
		etcdComponent(l, s),
		apiServerComponent(l, s),
		controllerManagerComponent(l, s),
		schedulerComponent(l, s),
		kwokComponent(l, s),
	}
	if s.Options.RealNode != nil {
		comps = append(comps, realNodeComponents(l, s)...)
	}
	return comps
}

// egressSelectorConfig is written to pki/egress-selector.yaml; see the
// --egress-selector-config-file flag above. With the real node, the socket
// is node-proxy's, which lets through connections to the real kubelet only.
func egressSelectorConfig(l Layout, s State) string {
	sock := l.NoClusterNetworkSocket()
	if s.Options.RealNode != nil {
		sock = l.NodeEgressSocket()
	}
	return fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %s
`, sock)
}

// writeConfigFiles writes the component kubeconfigs, the kwok stages and the
// egress selector configuration.
func writeConfigFiles(l Layout, s State, p *PKI) error {
	server := s.APIServerURL()
	for file, kp := range map[string]*KeyPair{
		"controller-manager.kubeconfig": p.ControllerManager,
		"scheduler.kubeconfig":          p.Scheduler,
		"kwok.kubeconfig":               p.Kwok,
	} {
		if err := WriteKubeconfig(l.PKI(file), server, p.CA.CertPEM, kp); err != nil {
			return err
		}
	}
	if err := os.WriteFile(l.PKI("egress-selector.yaml"), []byte(egressSelectorConfig(l, s)), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(l.KwokDir(), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(l.KwokStages(), kwokStages, 0o644); err != nil {
		return err
	}
	if s.Options.RealNode != nil {
		return writeRealNodeFiles(l, s, p)
	}
	return nil
}
