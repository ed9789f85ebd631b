package sandboxapi

import (
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Upstream's in-sandbox runtime daemon, sandboxd (packages/sandboxd of
// sigs.k8s.io/agent-sandbox, v1.0.3), as its flags define it
// (packages/sandboxd/cmd/sandboxd/main.go). It has no authentication
// option: anyone who reaches its ports runs commands and reads and writes
// files in the sandbox, so NetworkPolicy is its only guard (main.go:21-25:
// "Containment comes from pod isolation and NetworkPolicy").
const (
	// SandboxdRESTPort is the REST filesystem API and its /v1/health probe
	// (--rest-port, main.go:93; the Go SDK's SandboxdRESTPort default,
	// clients/go/sandbox/options.go:35).
	SandboxdRESTPort = 8080
	// SandboxdGRPCPort is the gRPC ProcessService, which runs commands
	// (--grpc-port, main.go:91; options.go:36).
	SandboxdGRPCPort = 9090
	// SandboxdListenHost is the address both listeners bind
	// (--listen-host, main.go:69 and 89): every interface of the pod.
	SandboxdListenHost = "0.0.0.0"
	// SandboxdHealthPath is its readiness endpoint (pkg/server/filesystem.go:100).
	SandboxdHealthPath = "/v1/health"
)

// Sandboxd is one container that runs sandboxd, with its effective flags.
type Sandboxd struct {
	Container  string
	RESTPort   int32
	GRPCPort   int32
	ListenHost string
}

// Loopback says whether sandboxd listens on loopback only
// (--listen-host=127.0.0.1 or localhost, or ::1): then nothing outside the
// pod reaches it.
func (s Sandboxd) Loopback() bool {
	switch s.ListenHost {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return strings.HasPrefix(s.ListenHost, "127.")
}

// Ports are its two ports, REST first.
func (s Sandboxd) Ports() []int32 { return []int32{s.RESTPort, s.GRPCPort} }

// SandboxdOf says whether the container runs sandboxd. The SDKs do not
// identify it (the caller chooses RuntimeSandboxd and the ports:
// clients/go/sandbox/options.go:56-60, 126-132), so the container is
// recognised by what it runs: its command's program is named sandboxd
// (upstream's "inject the binary" topology,
// examples/sandboxd-sandbox/deploy/b-inject-binary.yaml:47-48), or it sets
// no command and its image's repository is named sandboxd (upstream's
// image, .../agent-sandbox/sandboxd, whose entrypoint is the daemon:
// packages/sandboxd/Dockerfile; examples/sandboxd-sandbox/sandbox-template.yaml:42).
// The ports and the listen address are read from the flags of its command
// and arguments, upstream's defaults otherwise.
func SandboxdOf(c corev1.Container) (Sandboxd, bool) {
	var argv []string
	switch {
	case len(c.Command) > 0 && path.Base(c.Command[0]) == "sandboxd":
		argv = append(append([]string{}, c.Command[1:]...), c.Args...)
	case len(c.Command) == 0 && imageRepositoryName(c.Image) == "sandboxd":
		argv = c.Args
	default:
		return Sandboxd{}, false
	}
	s := Sandboxd{Container: c.Name, RESTPort: SandboxdRESTPort, GRPCPort: SandboxdGRPCPort, ListenHost: SandboxdListenHost}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && i+1 < len(argv) && (name == "rest-port" || name == "grpc-port" || name == "listen-host") {
			i++
			value = argv[i]
		}
		switch name {
		case "rest-port":
			if n, err := strconv.ParseInt(value, 10, 32); err == nil {
				s.RESTPort = int32(n)
			}
		case "grpc-port":
			if n, err := strconv.ParseInt(value, 10, 32); err == nil {
				s.GRPCPort = int32(n)
			}
		case "listen-host":
			s.ListenHost = value
		}
	}
	return s, true
}

// imageRepositoryName is the last path element of an image reference's
// repository, without tag or digest: "sandboxd" for
// "us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main".
func imageRepositoryName(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	name := image[strings.LastIndex(image, "/")+1:]
	if i := strings.Index(name, ":"); i >= 0 {
		name = name[:i]
	}
	return name
}
