package gkeapi

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"google.golang.org/api/container/v1"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// GetCluster reads a cluster by its full resource name.
func (c *Client) GetCluster(ctx context.Context, name string) (*container.Cluster, error) {
	cn, err := ParseClusterName(name)
	if err != nil {
		return nil, err
	}
	return c.Service.Projects.Locations.Clusters.Get(cn.String()).Context(ctx).Do()
}

// ClusterCredentials reads the cluster and returns how to reach its
// Kubernetes API with this client's Google identity. Its signature matches
// kube.Config.GKECredentials.
//
// Which endpoint: cluster.Endpoint, the one `gcloud container clusters
// get-credentials` uses by default. For a private cluster whose public
// endpoint is disabled GKE already puts the private IP there. Only when it
// is empty do we fall back to PrivateClusterConfig.PrivateEndpoint and then
// to the DNS-based endpoint. Choosing the private endpoint while a public
// one exists would break every run from outside the VPC, so it is not done
// implicitly. An Endpoint that already has a scheme is kept as is (the GKE
// emulator answers https://127.0.0.1:port).
//
// The DNS-based endpoint is served with a publicly trusted certificate, so
// no cluster CA is returned for it; for IP endpoints the cluster CA is
// required.
func (c *Client) ClusterCredentials(ctx context.Context, clusterName string) (*kube.ClusterCredentials, error) {
	cluster, err := c.GetCluster(ctx, clusterName)
	if err != nil {
		return nil, fmt.Errorf("reading GKE cluster %s for its Kubernetes credentials: %w", clusterName, err)
	}
	endpoint, kind := clusterEndpoint(cluster)
	if endpoint == "" {
		return nil, fmt.Errorf("GKE cluster %s has no endpoint yet (status %s); it may still be provisioning",
			clusterName, cluster.Status)
	}
	creds := &kube.ClusterCredentials{Host: hostURL(endpoint), TokenSource: c.TokenSource}
	if kind != "dns" {
		var caB64 string
		if cluster.MasterAuth != nil {
			caB64 = cluster.MasterAuth.ClusterCaCertificate
		}
		if strings.TrimSpace(caB64) == "" {
			return nil, fmt.Errorf("GKE cluster %s has no cluster CA certificate (masterAuth.clusterCaCertificate is empty)", clusterName)
		}
		ca, err := decodeClusterCA(caB64)
		if err != nil {
			return nil, fmt.Errorf("GKE cluster %s: masterAuth.clusterCaCertificate: %w", clusterName, err)
		}
		creds.ClusterCACertificate = ca
	}
	tflog.Debug(ctx, "GKE cluster credentials resolved", map[string]any{
		"cluster": clusterName, "host": creds.Host, "endpoint_kind": kind,
	})
	return creds, nil
}

// clusterEndpoint picks the endpoint as documented on ClusterCredentials and
// says which kind it is ("endpoint", "private", "dns").
func clusterEndpoint(cl *container.Cluster) (string, string) {
	if ep := strings.TrimSpace(cl.Endpoint); ep != "" {
		return ep, "endpoint"
	}
	if pc := cl.PrivateClusterConfig; pc != nil && pc.PrivateEndpoint != "" {
		return pc.PrivateEndpoint, "private"
	}
	if cp := cl.ControlPlaneEndpointsConfig; cp != nil && cp.DnsEndpointConfig != nil && cp.DnsEndpointConfig.Endpoint != "" {
		return cp.DnsEndpointConfig.Endpoint, "dns"
	}
	return "", ""
}

// hostURL turns an endpoint into a URL: https:// for a bare host or IP
// (bracketing IPv6 literals), unchanged when it already has a scheme.
func hostURL(endpoint string) string {
	if strings.Contains(endpoint, "://") {
		return endpoint
	}
	if ip := net.ParseIP(endpoint); ip != nil && ip.To4() == nil {
		return "https://[" + endpoint + "]"
	}
	return "https://" + endpoint
}

// decodeClusterCA turns masterAuth.clusterCaCertificate (base64 of a PEM
// bundle) into PEM. It also accepts base64 of DER and plain PEM, so that an
// emulator or a future API change does not silently yield an unusable CA,
// and checks that the result holds at least one parseable certificate.
func decodeClusterCA(s string) (string, error) {
	s = strings.TrimSpace(s)
	var data []byte
	if strings.HasPrefix(s, "-----BEGIN") {
		data = []byte(s)
	} else {
		compact := strings.Join(strings.Fields(s), "")
		var err error
		if data, err = base64.StdEncoding.DecodeString(compact); err != nil {
			if data, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(compact, "=")); err != nil {
				return "", errors.New("not valid base64")
			}
		}
	}
	if !bytes.Contains(data, []byte("-----BEGIN")) {
		// DER: wrap it.
		if _, err := x509.ParseCertificate(data); err != nil {
			return "", fmt.Errorf("neither PEM nor a DER certificate: %w", err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: data})), nil
	}
	rest, found := data, 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return "", fmt.Errorf("PEM certificate does not parse: %w", err)
		}
		found++
	}
	if found == 0 {
		return "", errors.New("PEM data holds no CERTIFICATE block")
	}
	return string(data), nil
}

// AgentSandboxAddonEnabled reports whether GKE's managed Agent Sandbox add-on
// (AddonsConfig.AgentSandboxConfig) is enabled on the cluster. A nil cluster
// or a missing config means disabled.
func AgentSandboxAddonEnabled(cluster *container.Cluster) bool {
	return cluster != nil && cluster.AddonsConfig != nil &&
		cluster.AddonsConfig.AgentSandboxConfig != nil && cluster.AddonsConfig.AgentSandboxConfig.Enabled
}

// PodSnapshotsEnabled reports whether GKE Pod snapshots
// (AddonsConfig.PodSnapshotConfig) are enabled on the cluster. A nil
// cluster or a missing config means disabled.
func PodSnapshotsEnabled(cluster *container.Cluster) bool {
	return cluster != nil && cluster.AddonsConfig != nil &&
		cluster.AddonsConfig.PodSnapshotConfig != nil && cluster.AddonsConfig.PodSnapshotConfig.Enabled
}
