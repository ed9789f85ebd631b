package cluster

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ContextName is the name of the cluster, user and context in every
// kubeconfig localcluster writes.
const ContextName = "localcluster"

// WriteKubeconfig writes a self-contained kubeconfig (certificates embedded,
// not referenced by path) so it keeps working when copied elsewhere, e.g. into
// a Terraform test's temporary directory. The file is written 0600 because it
// holds a private key.
func WriteKubeconfig(path, server string, caPEM []byte, client *KeyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: caPEM,
	}
	cfg.AuthInfos[ContextName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: client.CertPEM,
		ClientKeyData:         client.KeyPEM,
	}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{
		Cluster:  ContextName,
		AuthInfo: ContextName,
	}
	cfg.CurrentContext = ContextName
	return clientcmd.WriteToFile(*cfg, path)
}
