package kube

import (
	"context"
	"time"

	"golang.org/x/oauth2"
)

// Config is the Kubernetes connection as the provider resolved it: every
// field has already had the provider attribute > environment variable
// precedence applied by the provider package. RESTConfig layers the
// explicit fields over the kubeconfig file (explicit > kubeconfig).
//
// Zero values mean "not set".
type Config struct {
	// ConfigPaths are kubeconfig files, merged in order as kubectl does.
	ConfigPaths []string
	// ConfigContext selects a context of the kubeconfig; empty means its current-context.
	ConfigContext string

	Host                 string
	Token                string // sensitive
	ClusterCACertificate string // PEM
	ClientCertificate    string // PEM
	ClientKey            string // PEM, sensitive
	// Insecure turns off TLS verification. It must only be true when the user said so explicitly.
	Insecure      bool
	TLSServerName string
	ProxyURL      string
	Exec          *ExecConfig

	// GKECluster is a GKE cluster resource name (projects/P/locations/L/clusters/C).
	// When set, Host, ClusterCACertificate and the bearer token come from
	// GKECredentials instead of a kubeconfig.
	GKECluster     string
	GKECredentials func(ctx context.Context, cluster string) (*ClusterCredentials, error)

	QPS   float32
	Burst int

	// UserAgent identifies the provider and its version in every request.
	UserAgent string
	// Timeout bounds a single HTTP request (not a whole operation); 0 = client-go default.
	Timeout time.Duration
}

// ExecConfig runs a credential plugin (client.authentication.k8s.io), as kubectl does.
type ExecConfig struct {
	APIVersion string
	Command    string
	Args       []string
	Env        map[string]string
}

// ClusterCredentials is what a cloud API says about how to reach a cluster.
type ClusterCredentials struct {
	Host                 string
	ClusterCACertificate string // PEM
	TokenSource          oauth2.TokenSource
}
