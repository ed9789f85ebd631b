package kube

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Client is the provider's connection to one cluster, built once per
// provider instance and shared by every resource. Building it contacts
// nothing: the first request does, and discovery only happens if something
// asks the RESTMapper (resources address known GVRs directly and never do).
type Client struct {
	rest *rest.Config
	// dynamic serves every ordinary request.
	dynamic dynamic.Interface
	// watchDynamic serves watches. It shares dynamic's transport (and so its
	// connections, retries and counters) but not the per-request Timeout,
	// which would cut every watch after Timeout; waits are bounded by their
	// context instead.
	watchDynamic dynamic.Interface
	// raw sends requests whose response body the dynamic client discards
	// (DeleteObject); nil on a Client made by NewClientFromDynamic.
	raw    rest.Interface
	mapper *RESTMapper
	// schemas serves SchemaCheck (nil on a Client made by
	// NewClientFromDynamic).
	schemas *schemas

	// deletions shares one watch among the deletions in flight.
	deletions deletionHub

	clientsetOnce sync.Once
	clientset     kubernetes.Interface
	clientsetErr  error
	httpClient    *http.Client
}

// NewClient resolves cfg into a rest.Config (see Config.RESTConfig) and
// builds the clients over one shared HTTP transport and one shared
// client-side rate limiter.
func NewClient(ctx context.Context, cfg Config) (*Client, error) {
	rc, err := cfg.RESTConfig(ctx)
	if err != nil {
		return nil, err
	}
	return NewClientForRESTConfig(rc)
}

// NewClientForRESTConfig builds a Client from a ready rest.Config, as is. It
// does not add WrapTransport: RESTConfig already did, and a caller with its
// own rest.Config decides.
func NewClientForRESTConfig(rc *rest.Config) (*Client, error) {
	rc = rest.CopyConfig(rc)
	if rc.RateLimiter == nil && rc.QPS > 0 {
		// One limiter for the dynamic client, the clientset and discovery, so
		// the configured QPS is what the cluster sees from this provider.
		burst := rc.Burst
		if burst <= 0 {
			burst = DefaultBurst
		}
		rc.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(rc.QPS, burst)
	}
	rt, err := rest.TransportFor(rc)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes HTTP transport: %w", err)
	}
	hc := &http.Client{Transport: rt, Timeout: rc.Timeout}
	dyn, err := dynamic.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes dynamic client: %w", err)
	}
	watchRC := rest.CopyConfig(rc)
	watchRC.Timeout = 0
	watchDyn, err := dynamic.NewForConfigAndClient(watchRC, &http.Client{Transport: rt})
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(rc, hc)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes discovery client: %w", err)
	}
	rawRC := rest.CopyConfig(rc)
	rawRC.APIPath = "/"
	// Status responses (errors) are decoded as meta/v1 Status.
	rawRC.GroupVersion = &schema.GroupVersion{Version: "v1"}
	rawRC.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	raw, err := rest.RESTClientForConfigAndClient(rawRC, hc)
	if err != nil {
		return nil, fmt.Errorf("building the Kubernetes REST client: %w", err)
	}
	return &Client{
		rest:         rc,
		dynamic:      dyn,
		watchDynamic: watchDyn,
		raw:          raw,
		mapper:       NewRESTMapper(memory.NewMemCacheClient(dc)),
		schemas:      &schemas{disc: dc},
		httpClient:   hc,
	}, nil
}

// NewClientFromDynamic wraps an existing dynamic client, typically
// k8s.io/client-go/dynamic/fake in unit tests of resource packages. mapper
// may be nil when the code under test never maps kinds. Clientset and
// RESTConfig are not available on such a Client.
func NewClientFromDynamic(dyn dynamic.Interface, mapper meta.RESTMapper) *Client {
	c := &Client{dynamic: dyn, watchDynamic: dyn}
	if mapper != nil {
		c.mapper = &RESTMapper{static: mapper}
	}
	return c
}

// RESTConfig returns a copy of the configuration the clients were built from
// (nil for a Client made by NewClientFromDynamic).
func (c *Client) RESTConfig() *rest.Config {
	if c.rest == nil {
		return nil
	}
	return rest.CopyConfig(c.rest)
}

// Dynamic returns the shared dynamic client.
func (c *Client) Dynamic() dynamic.Interface { return c.dynamic }

// Clientset returns a typed clientset sharing the Client's transport and
// rate limiter, built on first use.
func (c *Client) Clientset() (kubernetes.Interface, error) {
	c.clientsetOnce.Do(func() {
		if c.rest == nil {
			c.clientsetErr = fmt.Errorf("this Kubernetes client was built without a rest.Config; no typed clientset is available")
			return
		}
		c.clientset, c.clientsetErr = kubernetes.NewForConfigAndClient(c.rest, c.httpClient)
	})
	return c.clientset, c.clientsetErr
}

// RESTMapper returns the Client's lazily discovered RESTMapper (nil for a
// Client made by NewClientFromDynamic without one).
func (c *Client) RESTMapper() *RESTMapper { return c.mapper }
