// Command gkeemu serves the GKE container/v1 emulator (package
// internal/testing/gkeemu) on a local port, with one seeded cluster whose
// Kubernetes endpoint and CA can be those of a local control plane. It is
// an emulator, not GKE, and says so on start-up and in every answer.
//
//	go run ./internal/testing/gkeemu/cmd/gkeemu -kubeconfig .cache/localcluster/kubeconfig
//
// Point the provider at it with
//
//	provider "agentsandbox" {
//	  gke {
//	    endpoint     = "<the printed URL>"
//	    access_token = "anything"
//	    # The emulator speaks plain HTTP on loopback.
//	    allow_credentials_over_http = true
//	  }
//	}
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/apidoc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintf(os.Stderr, "gkeemu: %v\n", err)
		os.Exit(1)
	}
}

type config struct {
	listen         string
	allowRemote    bool
	project        string
	location       string
	cluster        string
	version        string
	autopilot      bool
	agentSandbox   bool
	noSeed         bool
	kubeconfig     string
	kubeContext    string
	endpoint       string
	caFile         string
	pending        time.Duration
	running        time.Duration
	accessToken    string
	urlFile        string
	logRequests    bool
	releaseChannel string
	apiCheck       bool
}

// run serves until ctx ends. ready, when not nil, receives the base URL once
// the server listens (tests use it).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready chan<- string) error {
	var c config
	fs := flag.NewFlagSet("gkeemu", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.listen, "listen", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	fs.BoolVar(&c.allowRemote, "allow-non-loopback", false, "allow listening on a non-loopback address (the emulator accepts any bearer token)")
	fs.StringVar(&c.project, "project", "emu-project", "project of the seeded cluster")
	fs.StringVar(&c.location, "location", "us-central1", "location (region or zone) of the seeded cluster")
	fs.StringVar(&c.cluster, "cluster", "emu-cluster", "name of the seeded cluster")
	fs.StringVar(&c.version, "cluster-version", gkeemu.DefaultClusterVersion, "control plane version of the seeded cluster")
	fs.BoolVar(&c.autopilot, "autopilot", false, "seed an Autopilot cluster (node pool mutations are refused)")
	fs.BoolVar(&c.agentSandbox, "agent-sandbox", false, "start with the Agent Sandbox add-on enabled")
	fs.StringVar(&c.releaseChannel, "release-channel", gkeemu.DefaultReleaseChannel, "release channel of the seeded cluster (UNSPECIFIED for none)")
	fs.BoolVar(&c.noSeed, "no-seed", false, "start without any cluster")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "take the seeded cluster's endpoint and CA from this kubeconfig (e.g. the local control plane's)")
	fs.StringVar(&c.kubeContext, "kube-context", "", "context of -kubeconfig to use (default: its current context)")
	fs.StringVar(&c.endpoint, "endpoint", "", "the seeded cluster's Kubernetes endpoint (overrides -kubeconfig)")
	fs.StringVar(&c.caFile, "ca-file", "", "PEM file with the seeded cluster's CA (overrides -kubeconfig)")
	fs.DurationVar(&c.pending, "operation-pending", 200*time.Millisecond, "how long operations stay PENDING")
	fs.DurationVar(&c.running, "operation-running", time.Second, "how long operations stay RUNNING")
	fs.StringVar(&c.accessToken, "access-token", "", "accept only this bearer token (default: any)")
	fs.StringVar(&c.urlFile, "url-file", "", "write the base URL to this file once listening")
	fs.BoolVar(&c.logRequests, "log-requests", true, "log every request and operation state change")
	fs.BoolVar(&c.apiCheck, "api-check", true, "hold requests and answers to GKE's published container/v1 API (the discovery document of google.golang.org/api): refuse requests it does not allow as GKE does, and log every departure")
	if err := fs.Parse(args); err != nil {
		return err
	}

	host, _, err := net.SplitHostPort(c.listen)
	if err != nil {
		return fmt.Errorf("-listen %q: %w", c.listen, err)
	}
	if ip := net.ParseIP(host); !c.allowRemote && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-listen %q is not a loopback address; the emulator accepts any token, pass -allow-non-loopback if you mean it", c.listen)
	}

	opts := gkeemu.Options{
		PendingDuration: negativeIfZero(c.pending),
		RunningDuration: negativeIfZero(c.running),
		AccessToken:     c.accessToken,
	}
	if c.logRequests {
		opts.Logf = func(format string, args ...any) {
			fmt.Fprintf(stderr, "%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
		}
	}
	var guard *gkeemu.Guard
	if c.apiCheck {
		guard, err = gkeemu.NewGuard(&opts, func(v apidoc.Violation) {
			fmt.Fprintf(stderr, "%s gkeemu: NOT IN GKE'S PUBLISHED API (container/v1 discovery document): %s\n", time.Now().Format("15:04:05.000"), v)
		})
		if err != nil {
			return fmt.Errorf("%w (pass -api-check=false to serve without the check)", err)
		}
	}
	emu := gkeemu.New(opts)

	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stdout, "gkeemu: an EMULATOR of the GKE container/v1 API (not Google Kubernetes Engine) serving %s\n", url)
	if guard != nil {
		fmt.Fprintf(stdout, "gkeemu: held to GKE's published API, container/v1 discovery document revision %s (-api-check)\n", guard.Revision)
	} else {
		fmt.Fprintln(stdout, "gkeemu: NOT held to GKE's published API (-api-check=false): requests GKE would refuse may be accepted")
	}

	if !c.noSeed {
		spec := gkeemu.ClusterSpec{
			Project: c.project, Location: c.location, Name: c.cluster, Version: c.version,
			Autopilot: c.autopilot, AgentSandbox: c.agentSandbox, ReleaseChannel: c.releaseChannel,
		}
		if err := clusterAccess(&spec, c); err != nil {
			ln.Close()
			return err
		}
		name, err := emu.AddCluster(spec)
		if err != nil {
			ln.Close()
			return err
		}
		endpoint := spec.Endpoint
		if endpoint == "" {
			endpoint = "127.0.0.1 (no control plane; pass -kubeconfig to use one)"
		}
		fmt.Fprintf(stdout, "gkeemu: seeded cluster %s, Kubernetes endpoint %s\n", name, endpoint)
	}
	if c.urlFile != "" {
		if err := os.WriteFile(c.urlFile, []byte(url+"\n"), 0o600); err != nil {
			ln.Close()
			return err
		}
	}

	srv := &http.Server{Handler: emu, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready <- url
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if guard != nil {
		if n := len(guard.Violations()); n > 0 {
			fmt.Fprintf(stdout, "gkeemu: stopped; %d request(s) or answer(s) departed from GKE's published API (logged above)\n", n)
			return nil
		}
	}
	fmt.Fprintln(stdout, "gkeemu: stopped")
	return nil
}

// negativeIfZero maps a zero flag to "no time in that state" (the
// library's zero means its default).
func negativeIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// clusterAccess fills the seeded cluster's endpoint and CA from the flags:
// -endpoint and -ca-file win over -kubeconfig.
func clusterAccess(spec *gkeemu.ClusterSpec, c config) error {
	if c.kubeconfig != "" {
		if err := gkeemu.AccessFromKubeconfig(spec, c.kubeconfig, c.kubeContext); err != nil {
			return fmt.Errorf("-kubeconfig: %w", err)
		}
	}
	if c.endpoint != "" {
		spec.Endpoint = c.endpoint
	}
	if c.caFile != "" {
		ca, err := os.ReadFile(c.caFile)
		if err != nil {
			return fmt.Errorf("-ca-file: %w", err)
		}
		spec.CACertificatePEM = ca
	}
	return nil
}
