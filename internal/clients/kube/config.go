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
	// ConfigPaths are kubeconfig files, merged in order as kubectl does: for
	// every named cluster, user and context the first file that defines it
	// wins, and so does the first current-context. Missing files are skipped
	// as long as at least one exists. Empty means no kubeconfig at all:
	// ~/.kube/config is never read implicitly.
	ConfigPaths []string
	// ConfigContext selects a context of the kubeconfig; empty means its current-context.
	ConfigContext string

	Host                 string
	Token                string // sensitive
	ClusterCACertificate string // PEM (base64-encoded PEM, as in a kubeconfig, is accepted too)
	ClientCertificate    string // PEM (or base64-encoded PEM)
	ClientKey            string // PEM (or base64-encoded PEM), sensitive
	// Insecure turns off TLS verification. It must only be true when the user said so explicitly.
	// When true, any CA certificate (explicit or from the kubeconfig) is ignored, with a warning.
	Insecure bool
	// AllowCredentialsOverHTTP lets credentials (a bearer token, an exec
	// plugin's output, a GKE token, basic auth) travel to an http:// server,
	// in clear text. It must only be true when the user said so explicitly;
	// it is not implied by Insecure, which only turns off certificate
	// verification and still encrypts. Without it, a server address with the
	// http scheme and any credential is refused before anything is sent.
	AllowCredentialsOverHTTP bool
	TLSServerName            string
	ProxyURL                 string
	Exec                     *ExecConfig

	// GKECluster is a GKE cluster resource name (projects/P/locations/L/clusters/C).
	// When set, Host, ClusterCACertificate and the bearer token come from
	// GKECredentials instead of a kubeconfig (ConfigPaths are then ignored);
	// explicit fields above still win over what GKE reports.
	GKECluster     string
	GKECredentials func(ctx context.Context, cluster string) (*ClusterCredentials, error)

	// QPS and Burst bound the client-side request rate shared by every
	// resource of one provider instance. Zero means DefaultQPS/DefaultBurst;
	// a negative QPS disables client-side rate limiting.
	QPS   float32
	Burst int

	// UserAgent identifies the provider and its version in every request.
	UserAgent string
	// Timeout bounds a single HTTP request (not a whole operation); 0 = client-go default.
	// Watches used for waiting are not bounded by it: they are bounded by the
	// caller's context instead.
	Timeout time.Duration
}

// ExecConfig runs a credential plugin (client.authentication.k8s.io), as kubectl does.
type ExecConfig struct {
	// APIVersion is client.authentication.k8s.io/v1 or .../v1beta1; empty means v1beta1,
	// which every plugin in common use understands.
	APIVersion string
	Command    string
	Args       []string
	// Env is set for the command on top of the provider's own environment.
	Env map[string]string
}

// ClusterCredentials is what a cloud API says about how to reach a cluster.
type ClusterCredentials struct {
	// Host is the API server address; a bare IP or host name means https.
	Host                 string
	ClusterCACertificate string // PEM (or base64-encoded PEM, as the container API returns it)
	TokenSource          oauth2.TokenSource
}
