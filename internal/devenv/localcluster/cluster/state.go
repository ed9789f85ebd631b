package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// KubernetesVersion is the version the binary is built from; build.sh stamps
// the same value into the server's version ldflags.
const KubernetesVersion = "v1.37.2"

// Options are the user-facing knobs of a cluster.
type Options struct {
	// SystemNodes and GVisorNodes are the sizes of the two fake node pools.
	SystemNodes int `json:"systemNodes"`
	GVisorNodes int `json:"gvisorNodes"`
	// Capacity of every fake node. Generous defaults let tests schedule
	// hundreds of pods without thinking about resources.
	NodeCPU    string `json:"nodeCPU"`
	NodeMemory string `json:"nodeMemory"`
	NodePods   int    `json:"nodePods"`
	// ServiceCIDR is the service cluster IP range.
	ServiceCIDR string `json:"serviceCIDR"`
	// PodCIDR is split into one /24 per node (spec.podCIDR), from which kwok
	// hands out pod IPs. The addresses exist only in the API: nothing routes.
	PodCIDR string `json:"podCIDR"`
	// StopGrace is how long each component gets between SIGTERM and SIGKILL.
	StopGrace time.Duration `json:"stopGrace"`
	// RealNode adds a node that really runs pods (see realnode.go); nil:
	// fake nodes only.
	RealNode *RealNodeOptions `json:"realNode,omitempty"`
}

// DefaultOptions returns the defaults used by the CLI.
func DefaultOptions() Options {
	return Options{
		SystemNodes: 2,
		GVisorNodes: 2,
		NodeCPU:     "32",
		NodeMemory:  "128Gi",
		NodePods:    110,
		ServiceCIDR: "10.96.0.0/16",
		PodCIDR:     "10.64.0.0/14",
		StopGrace:   10 * time.Second,
	}
}

// Validate rejects options that would only fail later, inside a component.
func (o Options) Validate() error {
	if o.SystemNodes < 0 || o.GVisorNodes < 0 {
		return errors.New("node counts must not be negative")
	}
	if o.SystemNodes+o.GVisorNodes > 250 {
		return errors.New("at most 250 nodes in total (one /24 pod range each)")
	}
	for what, q := range map[string]string{"node CPU": o.NodeCPU, "node memory": o.NodeMemory} {
		if v, err := resource.ParseQuantity(q); err != nil || v.Sign() <= 0 {
			return fmt.Errorf("%s %q: want a positive Kubernetes quantity such as 32 or 128Gi", what, q)
		}
	}
	if o.NodePods <= 0 {
		return errors.New("node pods must be positive")
	}
	svc, err := netip.ParsePrefix(o.ServiceCIDR)
	if err != nil || !svc.Addr().Is4() {
		return fmt.Errorf("service CIDR %q: want an IPv4 prefix", o.ServiceCIDR)
	}
	if svc.Bits() < 12 || svc.Bits() > 24 {
		return fmt.Errorf("service CIDR %q: prefix length must be between /12 and /24", o.ServiceCIDR)
	}
	pod, err := netip.ParsePrefix(o.PodCIDR)
	if err != nil || !pod.Addr().Is4() {
		return fmt.Errorf("pod CIDR %q: want an IPv4 prefix", o.PodCIDR)
	}
	if n := o.SystemNodes + o.GVisorNodes; n > 1<<(24-pod.Bits()) {
		return fmt.Errorf("pod CIDR %q has room for %d /24 node ranges, need %d", o.PodCIDR, 1<<(24-pod.Bits()), n)
	}
	if o.StopGrace <= 0 {
		return errors.New("stop grace must be positive")
	}
	if o.RealNode != nil {
		if err := o.RealNode.Validate(); err != nil {
			return err
		}
		node := netip.MustParsePrefix(o.RealNode.PodCIDR)
		if node.Overlaps(pod) || node.Overlaps(svc) {
			return fmt.Errorf("real node pod CIDR %s overlaps the fake nodes' %s or the services' %s", node, pod, svc)
		}
	}
	return nil
}

// Ports are the loopback ports of one cluster, chosen at `up`.
type Ports struct {
	APIServer   int `json:"apiserver"`
	EtcdClient  int `json:"etcdClient"`
	EtcdPeer    int `json:"etcdPeer"`
	EtcdMetrics int `json:"etcdMetrics"`
}

// State is what `up` records in D/state.json for the supervisor, `status`
// and `down`.
type State struct {
	Version string  `json:"version"`
	Binary  string  `json:"binary"` // the localcluster binary that runs every component
	Ports   Ports   `json:"ports"`
	Options Options `json:"options"`
	// NodeID names the real node's host-wide objects (its cgroup parent);
	// derived from the directory.
	NodeID string `json:"nodeID,omitempty"`
}

// APIServerURL is the address clients use.
func (s State) APIServerURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", s.Ports.APIServer)
}

func (s State) write(l Layout) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(l.StateFile(), append(data, '\n'), 0o644)
}

// ReadState loads D/state.json.
func ReadState(l Layout) (State, error) {
	var s State
	data, err := os.ReadFile(l.StateFile())
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s: %w", l.StateFile(), err)
	}
	return s, nil
}

// firstServiceIP is the address of the in-cluster kubernetes Service, which
// the apiserver serving certificate must name.
func firstServiceIP(cidr string) (netip.Addr, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return netip.Addr{}, err
	}
	return p.Masked().Addr().Next(), nil
}

// nodePodCIDR returns the i-th /24 of the pod CIDR.
func nodePodCIDR(podCIDR string, i int) (string, error) {
	p, err := netip.ParsePrefix(podCIDR)
	if err != nil {
		return "", err
	}
	b := p.Masked().Addr().As4()
	base := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n := base + uint32(i)<<8
	if p.Bits() > 24 || i >= 1<<(24-p.Bits()) {
		return "", fmt.Errorf("pod CIDR %s has no /24 number %d", podCIDR, i)
	}
	a := netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), 0})
	return netip.PrefixFrom(a, 24).String(), nil
}
