package cluster

import (
	"bufio"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

func realNodeState(t *testing.T) (Layout, State) {
	t.Helper()
	l := Layout{Dir: t.TempDir()}
	o := DefaultOptions()
	rn := DefaultRealNodeOptions()
	rn.GVisor, rn.Images, rn.Containerd, rn.Runc = "/opt/gvisor", "/opt/images", "/usr/bin/containerd", "/usr/bin/runc"
	o.RealNode = &rn
	st := State{Ports: Ports{APIServer: 6443}, Options: o, NodeID: nodeID(l)}
	return l, st
}

func TestRealNodeOptionsValidate(t *testing.T) {
	ok := DefaultRealNodeOptions()
	ok.GVisor, ok.Images = "/g", "/i"
	if err := ok.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, mut := range map[string]func(*RealNodeOptions){
		"no gvisor": func(o *RealNodeOptions) { o.GVisor = "" },
		"no images": func(o *RealNodeOptions) { o.Images = "" },
		"bad cidr":  func(o *RealNodeOptions) { o.PodCIDR = "198.18.0.0" },
		"ipv6 cidr": func(o *RealNodeOptions) { o.PodCIDR = "fd00::/64" },
		"tiny cidr": func(o *RealNodeOptions) { o.PodCIDR = "198.18.0.0/30" },
		"bad dns":   func(o *RealNodeOptions) { o.ClusterDNS = "dns" },
	} {
		o := ok
		mut(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The node's range must not overlap the fake nodes' or the services'.
	opts := DefaultOptions()
	ok.PodCIDR = "10.64.3.0/24"
	opts.RealNode = &ok
	if err := opts.Validate(); err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("overlapping pod CIDR: %v", err)
	}
}

func TestRealNodeFiles(t *testing.T) {
	l, st := realNodeState(t)
	p, err := GeneratePKI(net.ParseIP("10.96.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(l); err != nil {
		t.Fatal(err)
	}
	if err := writeConfigFiles(l, st, p); err != nil {
		t.Fatal(err)
	}
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	contains := func(what, text string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q:\n%s", what, w, text)
			}
		}
	}
	containerd := read(l.ContainerdConfig())
	contains("containerd config", containerd,
		`runtime_type = "io.containerd.runsc.v1"`, `ConfigPath = "`+l.RunscConfig()+`"`,
		"restrict_oom_score_adj = true", "oom_score = 0", "netns_mounts_under_state_dir = true",
		`sandbox_image = "`+RealNodePauseImage+`"`, `stream_server_address = "127.0.0.1"`)
	// Every path containerd writes to is below the cluster directory.
	for _, key := range []string{"root = ", "state = ", "address = ", "path = ", "conf_dir = "} {
		for _, line := range strings.Split(containerd, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), key); ok && v != `""` && !strings.HasPrefix(v, `"`+l.Dir) {
				t.Errorf("containerd %s%s is outside %s", key, v, l.Dir)
			}
		}
	}
	contains("runsc config", read(l.RunscConfig()), `binary_name = "/opt/gvisor/runsc"`, `root = "`+l.RuntimeRoot("runsc")+`"`)
	cni := read(filepath.Join(l.CNIConfDir(), "10-localcluster.conflist"))
	contains("CNI config", cni, `"ipMasq": false`, `"subnet": "198.18.0.0/24"`, `"gateway": "198.18.0.1"`, `"dataDir": "`+l.CNIStateDir()+`"`)
	kubelet := read(l.KubeletConfig())
	contains("kubelet config", kubelet, "failCgroupV1: false", `cgroupRoot: "/localcluster-`+st.NodeID+`"`,
		`address: "198.18.0.1"`, "readOnlyPort: 0", "anonymous:\n    enabled: false", "mode: Webhook",
		`clusterDNS: ["169.254.20.10"]`, `podLogsDir: "`+l.PodLogsDir()+`"`, "imageGCHighThresholdPercent: 100")
	contains("egress selector", read(l.PKI("egress-selector.yaml")), l.NodeEgressSocket())
	for name, want := range kernelTunables {
		got := strings.TrimSpace(read(filepath.Join(l.KernelTunablesDir(), strings.ReplaceAll(name, "/", "."))))
		if got != want {
			t.Errorf("tunable %s = %q, want %q", name, got, want)
		}
	}
	for _, f := range []string{"kubelet.kubeconfig", "netpol.kubeconfig", "kubelet-serving.crt", "apiserver-kubelet-client.crt"} {
		if _, err := os.Stat(l.PKI(f)); err != nil {
			t.Error(err)
		}
	}
}

func TestRealNodeComponents(t *testing.T) {
	l, st := realNodeState(t)
	comps := Components(l, st)
	if want := componentNames(st.Options); len(comps) != len(want) || len(want) != len(ComponentNames)-1 {
		t.Fatalf("%d components, want %d (all but the enforcer)", len(comps), len(want))
	}
	// With an enforcer, kube-router runs inside the node's namespace, from
	// the link under the cluster directory, as the network policy
	// controller alone, with nothing listening.
	withNP := st
	rn := *st.Options.RealNode
	rn.NetPol = "/opt/kube-router"
	withNP.Options.RealNode = &rn
	all := Components(l, withNP)
	if len(all) != len(ComponentNames) {
		t.Fatalf("%d components with the enforcer, want %d", len(all), len(ComponentNames))
	}
	for _, c := range all {
		if c.Name == NetworkPolicies {
			got := strings.Join(c.argv("/bin/localcluster"), " ")
			if want := "nsenter --net=" + l.NodeNetns() + " -- " + l.NetPolBinary() + " "; !strings.HasPrefix(got, want) {
				t.Errorf("enforcer argv %q, want prefix %q", got, want)
			}
			for _, flag := range []string{"--run-firewall=true", "--run-router=false", "--run-service-proxy=false", "--run-loadbalancer=false",
				"--enable-cni=false", "--health-port=0", "--metrics-port=0", "--hostname-override=" + RealNodeName,
				"--kubeconfig=" + l.PKI("netpol.kubeconfig"), "--service-cluster-ip-range=" + st.Options.ServiceCIDR} {
				if !slices.Contains(c.Args, flag) {
					t.Errorf("enforcer lacks %s: %v", flag, c.Args)
				}
			}
		}
	}
	byName := map[string]Component{}
	for _, c := range comps {
		byName[c.Name] = c
		// Every process of the cluster names the directory: that is how
		// down and status recognise them.
		if !strings.Contains(strings.Join(c.argv("/bin/localcluster"), " "), l.Dir) {
			t.Errorf("%s: command line does not name %s: %v", c.Name, l.Dir, c.argv("/bin/localcluster"))
		}
	}
	kubelet := byName[Kubelet].argv("/bin/localcluster")
	want := []string{"nsenter", "--net=" + l.NodeNetns(), "--", "unshare", "--mount", "--propagation", "unchanged", "--", "/bin/localcluster", "kubelet"}
	if strings.Join(kubelet[:len(want)], " ") != strings.Join(want, " ") {
		t.Errorf("kubelet argv %v", kubelet)
	}
	if got := byName[Containerd].argv("/bin/localcluster"); got[3] != "/usr/bin/containerd" {
		t.Errorf("containerd argv %v", got)
	}
	api := strings.Join(byName[APIServer].Args, " ")
	if !strings.Contains(api, "--kubelet-client-certificate=") || !strings.Contains(api, "--kubelet-certificate-authority=") {
		t.Errorf("apiserver args lack the kubelet client: %s", api)
	}
	// Without the real node nothing of it appears.
	st.Options.RealNode = nil
	if n := len(Components(l, st)); n != 5 {
		t.Errorf("%d components without the real node", n)
	}
	if strings.Contains(strings.Join(Components(l, st)[1].Args, " "), "kubelet-client") {
		t.Error("apiserver gets kubelet client flags without the real node")
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{`/a/b`: "/a/b", `/a\040b`: "/a b", `/x\011y\134z`: "/x\ty\\z"} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("%q: got %q want %q", in, got, want)
		}
	}
}

// serveConnect lets the apiserver reach the allowed address only.
func TestServeConnect(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	go func() {
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "kubelet")
			c.Close()
		}
	}()
	connect := func(host string) (int, string) {
		a, b := net.Pipe()
		go serveConnect(b, target.Addr().String(), log.New(io.Discard, "", 0))
		_ = a.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(a, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
		br := bufio.NewReader(a)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body []byte
		if resp.StatusCode == http.StatusOK {
			body, _ = io.ReadAll(br)
		}
		a.Close()
		return resp.StatusCode, string(body)
	}
	if code, body := connect(target.Addr().String()); code != 200 || body != "kubelet" {
		t.Errorf("allowed target: %d %q", code, body)
	}
	if code, _ := connect("127.0.1.1:10250"); code != http.StatusForbidden {
		t.Errorf("other target: %d, want 403", code)
	}
}

func TestNetPolFiles(t *testing.T) {
	l, st := realNodeState(t)
	st.Options.RealNode.NetPol = "/opt/netpol/kube-router"
	p, err := GeneratePKI(net.ParseIP("10.96.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(l); err != nil {
		t.Fatal(err)
	}
	if err := writeConfigFiles(l, st, p); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(l.NetPolBinary()); err != nil || target != st.Options.RealNode.NetPol {
		t.Errorf("binary link: %q %v", target, err)
	}
	if !strings.HasPrefix(l.NetPolBinary(), l.NodeDir()+"/") {
		t.Errorf("binary link %s is not under %s: down would not recognise the process", l.NetPolBinary(), l.NodeDir())
	}
	// Its own identity (a client certificate), nothing in the static tokens.
	kc, err := clientcmd.LoadFromFile(l.PKI("netpol.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range kc.AuthInfos {
		block, _ := pem.Decode(ai.ClientCertificateData)
		if block == nil {
			t.Fatal("netpol.kubeconfig has no client certificate")
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if cert.Subject.CommonName != NetworkPoliciesUser || len(cert.Subject.Organization) != 0 {
			t.Errorf("enforcer identity %v, want CN=%s and no group", cert.Subject, NetworkPoliciesUser)
		}
	}
	if tokens, _ := os.ReadFile(l.PKI("tokens.csv")); strings.Count(strings.TrimSpace(string(tokens)), "\n") != 0 {
		t.Errorf("tokens.csv has more than the admin token:\n%s", tokens)
	}
}
