package cluster

import (
	"strings"
	"testing"
)

func TestNodePodCIDR(t *testing.T) {
	for _, tc := range []struct {
		cidr string
		i    int
		want string
	}{
		{"10.64.0.0/14", 0, "10.64.0.0/24"},
		{"10.64.0.0/14", 1, "10.64.1.0/24"},
		{"10.64.0.0/14", 256, "10.65.0.0/24"},
		{"10.64.0.0/14", 1023, "10.67.255.0/24"},
		{"10.64.5.7/16", 2, "10.64.2.0/24"}, // host bits are masked
	} {
		got, err := nodePodCIDR(tc.cidr, tc.i)
		if err != nil || got != tc.want {
			t.Errorf("nodePodCIDR(%s, %d) = %q, %v; want %q", tc.cidr, tc.i, got, err, tc.want)
		}
	}
	if _, err := nodePodCIDR("10.64.0.0/14", 1024); err == nil {
		t.Error("expected an error past the end of the range")
	}
	if _, err := nodePodCIDR("10.64.0.0/25", 0); err == nil {
		t.Error("expected an error for a range smaller than /24")
	}
}

func TestFirstServiceIP(t *testing.T) {
	ip, err := firstServiceIP("10.96.0.0/16")
	if err != nil || ip.String() != "10.96.0.1" {
		t.Errorf("firstServiceIP = %v, %v", ip, err)
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	for name, tc := range map[string]struct {
		mutate func(*Options)
		want   string
	}{
		"negative nodes": {func(o *Options) { o.GVisorNodes = -1 }, "negative"},
		"zero pods":      {func(o *Options) { o.NodePods = 0 }, "pods"},
		"bad service":    {func(o *Options) { o.ServiceCIDR = "nope" }, "service CIDR"},
		"ipv6 service":   {func(o *Options) { o.ServiceCIDR = "fd00::/108" }, "IPv4"},
		"small pod cidr": {func(o *Options) { o.PodCIDR = "10.64.0.0/23"; o.SystemNodes = 3 }, "room for 2"},
		"bad cpu":        {func(o *Options) { o.NodeCPU = "lots" }, "node CPU"},
		"zero memory":    {func(o *Options) { o.NodeMemory = "0" }, "node memory"},
		"no grace":       {func(o *Options) { o.StopGrace = 0 }, "grace"},
	} {
		o := DefaultOptions()
		tc.mutate(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", name, err, tc.want)
		}
	}
}

func TestStateRoundTrip(t *testing.T) {
	l := Layout{Dir: t.TempDir()}
	want := State{Version: KubernetesVersion, Binary: "/bin/x", Ports: Ports{1, 2, 3, 4}, Options: DefaultOptions()}
	if err := want.write(l); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(l)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got.APIServerURL() != "https://127.0.0.1:1" {
		t.Errorf("APIServerURL = %s", got.APIServerURL())
	}
}
