package gkeemu

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// AccessFromKubeconfig fills spec's Endpoint and CACertificatePEM from a
// context of a kubeconfig file (its current context when kubeContext is
// empty), so that the emulated cluster's Kubernetes credentials reach that
// cluster, typically the local control plane. The endpoint is bare
// host:port, as GKE reports it, unless the server's scheme is not https.
// A CA given as a file path (relative to the kubeconfig) is read.
func AccessFromKubeconfig(spec *ClusterSpec, kubeconfig, kubeContext string) error {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if kubeContext == "" {
		kubeContext = cfg.CurrentContext
	}
	kctx := cfg.Contexts[kubeContext]
	if kctx == nil {
		return fmt.Errorf("kubeconfig %s has no context %q", kubeconfig, kubeContext)
	}
	cl := cfg.Clusters[kctx.Cluster]
	if cl == nil {
		return fmt.Errorf("kubeconfig %s: context %q names cluster %q, which it does not define", kubeconfig, kubeContext, kctx.Cluster)
	}
	if len(cl.CertificateAuthorityData) == 0 && cl.CertificateAuthority != "" {
		// A relative path is relative to the kubeconfig, as kubectl reads it.
		caPath := cl.CertificateAuthority
		if !filepath.IsAbs(caPath) {
			caPath = filepath.Join(filepath.Dir(kubeconfig), caPath)
		}
		ca, err := os.ReadFile(caPath)
		if err != nil {
			return fmt.Errorf("kubeconfig %s: reading the cluster CA: %w", kubeconfig, err)
		}
		spec.CACertificatePEM = ca
	} else {
		spec.CACertificatePEM = cl.CertificateAuthorityData
	}
	spec.Endpoint = strings.TrimSuffix(strings.TrimPrefix(cl.Server, "https://"), "/")
	return nil
}
