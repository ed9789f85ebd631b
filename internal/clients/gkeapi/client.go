// Package gkeapi is the one place in the provider that talks to the GKE
// container/v1 API. It resolves Google credentials, builds a
// container.Service whose HTTP client retries transient failures, retries
// "cluster busy" answers until the caller's deadline, waits for long-running
// operations, turns a cluster into Kubernetes connection details and turns
// API errors into Terraform diagnostics that say what to do.
//
// Layering of retries (so that no failure is retried twice):
//
//   - The HTTP transport (transport.go) retries what is transient on the wire:
//     429, 503, 5xx on reads, connection resets, honouring Retry-After and the
//     request context. Every call made through Client.Service gets this.
//   - Client.Do (retry.go) retries the one semantic condition GKE is known for:
//     "an operation is already running on this cluster". It must be wrapped
//     explicitly around mutations, because only the caller knows its deadline.
package gkeapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"golang.org/x/oauth2"
	"google.golang.org/api/container/v1"
	"google.golang.org/api/option"
)

// Client is a container/v1 service plus what was resolved to build it. It is
// safe for concurrent use; build it once per provider and share it.
type Client struct {
	// Service is the generated container/v1 client. Calls made through it
	// already get transient-error retries; wrap mutations in Do to also ride
	// out busy clusters.
	Service *container.Service
	// Project is Config.Project, or else the project of the credentials
	// (service-account JSON or ADC). It may be empty: resource names carry
	// their own project.
	Project string
	// TokenSource yields the bearer tokens used for GKE and, through
	// ClusterCredentials, for the cluster's Kubernetes API. Scopes are
	// cloud-platform and userinfo.email (GKE maps the email to RBAC users).
	TokenSource oauth2.TokenSource
	// CredentialSource says where the credentials came from ("access_token",
	// "credentials JSON", "credentials file", "application default
	// credentials"), for logs and diagnostics. Never the secret itself.
	CredentialSource string

	busy     Backoff
	poll     Backoff
	requests *atomic.Int64
}

// Backoff is a capped exponential delay: Initial, 2*Initial, ... up to Max.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
}

// delay returns the wait before retry number n (n starts at 1).
func (b Backoff) delay(n int) time.Duration {
	d := b.Initial
	if d <= 0 {
		d = time.Second
	}
	for i := 1; i < n && d < b.Max; i++ {
		d *= 2
	}
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	return d
}

// Defaults. Transient retries are short and bounded in count because a 503
// that lasts longer than ~15 s is an outage the user should hear about; busy
// retries are long because GKE operations take minutes; operation polling
// starts fast so that quick operations finish quickly, and slows down so
// that long ones do not burn quota.
var (
	DefaultRetryAttempts = 6
	DefaultRetryBackoff  = Backoff{Initial: 500 * time.Millisecond, Max: 8 * time.Second}
	DefaultBusyBackoff   = Backoff{Initial: 5 * time.Second, Max: 30 * time.Second}
	DefaultPollBackoff   = Backoff{Initial: time.Second, Max: 10 * time.Second}
	// DefaultBusyLimit bounds busy retries when the caller's context has no
	// deadline, so that a forgotten timeout cannot spin forever.
	DefaultBusyLimit = 30 * time.Minute
)

// Option tunes a Client beyond what the provider configuration says; tests
// use it to make retries and polling fast and to inject a transport.
type Option func(*options)

type options struct {
	retryAttempts int
	retryBackoff  Backoff
	maxRetryAfter time.Duration
	busy          Backoff
	poll          Backoff
	base          http.RoundTripper
}

// WithRetry sets how many times a transient failure is attempted in total
// and the backoff between attempts (a server's Retry-After wins over it).
func WithRetry(attempts int, b Backoff) Option {
	return func(o *options) { o.retryAttempts, o.retryBackoff = attempts, b }
}

// WithBusyBackoff sets the backoff used by Do while the cluster is busy.
func WithBusyBackoff(b Backoff) Option { return func(o *options) { o.busy = b } }

// WithPollBackoff sets the polling interval of WaitOperation.
func WithPollBackoff(b Backoff) Option { return func(o *options) { o.poll = b } }

// WithHTTPTransport replaces the base transport (http.DefaultTransport),
// below authentication and retries.
func WithHTTPTransport(rt http.RoundTripper) Option { return func(o *options) { o.base = rt } }

// NewService resolves credentials (AccessToken > Credentials > Application
// Default Credentials) and builds a Client. It does not call the network:
// a token is only fetched by the first request, so a provider can build the
// client at configure time even when the cluster does not exist yet.
func NewService(ctx context.Context, cfg Config, opts ...Option) (*Client, error) {
	o := options{
		retryAttempts: DefaultRetryAttempts,
		retryBackoff:  DefaultRetryBackoff,
		maxRetryAfter: time.Minute,
		busy:          DefaultBusyBackoff,
		poll:          DefaultPollBackoff,
		base:          http.DefaultTransport,
	}
	for _, opt := range opts {
		opt(&o)
	}

	creds, err := resolveCredentials(ctx, cfg)
	if err != nil {
		return nil, err
	}

	endpoint, err := normalizeEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if u, _ := url.Parse(endpoint); u != nil && u.Scheme == "http" && !cfg.AllowCredentialsOverHTTP {
		return nil, &PlainHTTPError{Endpoint: u.Redacted()}
	}

	requests := new(atomic.Int64)
	// Retries sit above authentication so that a retried request picks up a
	// refreshed token, and the per-attempt timeout sits inside the retry loop
	// (not on http.Client) so that it bounds one attempt rather than all of
	// them together.
	rt := &retryTransport{
		next:          &oauth2.Transport{Source: creds.ts, Base: plainHTTPGuard(o.base, cfg.AllowCredentialsOverHTTP)},
		attempts:      o.retryAttempts,
		backoff:       o.retryBackoff,
		maxRetryAfter: o.maxRetryAfter,
		timeout:       cfg.RequestTimeout,
		requests:      requests,
	}
	clientOpts := []option.ClientOption{option.WithHTTPClient(&http.Client{Transport: rt})}
	if endpoint != "" {
		clientOpts = append(clientOpts, option.WithEndpoint(endpoint))
	}
	svc, err := container.NewService(ctx, clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("creating GKE container/v1 client: %w", err)
	}
	if endpoint != "" {
		// Set it again explicitly: with an explicit HTTP client the library
		// passes the endpoint through today, but we must never fall back to
		// the public endpoint when the user asked for another one.
		svc.BasePath = endpoint
	}
	if cfg.UserAgent != "" {
		// The generated client prefixes its own product token.
		svc.UserAgent = cfg.UserAgent
	}

	project := cfg.Project
	if project == "" {
		project = creds.project
	}
	tflog.Debug(ctx, "GKE client configured", map[string]any{
		"credential_source": creds.source,
		"project":           project,
		"endpoint":          svc.BasePath,
	})
	return &Client{
		Service:          svc,
		Project:          project,
		TokenSource:      creds.ts,
		CredentialSource: creds.source,
		busy:             o.busy,
		poll:             o.poll,
		requests:         requests,
	}, nil
}

// RequestCount is the number of HTTP attempts made so far (retries included),
// for benchmarks and for tests that assert on the cost of an operation.
func (c *Client) RequestCount() int64 { return c.requests.Load() }

// normalizeEndpoint turns a user-supplied endpoint into the base URL the
// generated client expects ("scheme://host[:port][/prefix]/", without the
// API version, which the generated paths already carry). It accepts a bare
// host ("container.example.com" → https) and tolerates a trailing "v1/",
// as other providers' custom endpoints often include it.
func normalizeEndpoint(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("invalid GKE endpoint %q: expected a URL like https://container.googleapis.com/ or http://127.0.0.1:8080/", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("invalid GKE endpoint %q: it must not carry user info, a query or a fragment", u.Redacted())
	}
	p := strings.TrimSuffix(u.Path, "/")
	p = strings.TrimSuffix(p, "/v1")
	u.Path = p + "/"
	u.RawPath = ""
	return u.String(), nil
}
