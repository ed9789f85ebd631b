package sandboxapi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSandboxdOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    corev1.Container
		want *Sandboxd
	}{
		{"upstream's image, defaults", corev1.Container{Name: "sandboxd", Image: "us-central1-docker.pkg.dev/k8s-staging-images/agent-sandbox/sandboxd:latest-main"},
			&Sandboxd{"sandboxd", 8080, 9090, "0.0.0.0"}},
		{"image by digest", corev1.Container{Name: "d", Image: "mirror.example.com:5000/sandboxd@sha256:" + "ab"},
			&Sandboxd{"d", 8080, 9090, "0.0.0.0"}},
		{"image with flags", corev1.Container{Name: "d", Image: "localhost/localcluster/sandboxd:v1.0.3", Args: []string{"--rest-port=8888", "-grpc-port", "9999"}},
			&Sandboxd{"d", 8888, 9999, "0.0.0.0"}},
		{"injected binary, loopback", corev1.Container{Name: "app", Image: "node:22-slim", Command: []string{"/sandboxd-bin/sandboxd", "--listen-host=127.0.0.1"}},
			&Sandboxd{"app", 8080, 9090, "127.0.0.1"}},
		{"the image running something else", corev1.Container{Name: "install", Image: "x/agent-sandbox/sandboxd:v1", Command: []string{"/bin/sh", "-c", "cp /usr/local/bin/sandboxd /b/"}}, nil},
		{"a name that only contains sandboxd", corev1.Container{Name: "a", Image: "x/sandboxd-tools:v1"}, nil},
		{"the python runtime", corev1.Container{Name: "runtime", Image: "localhost/localcluster/python-runtime:v1.0.3"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := SandboxdOf(tc.c)
			if ok != (tc.want != nil) {
				t.Fatalf("SandboxdOf = %+v, %v; want %v", got, ok, tc.want)
			}
			if ok && got != *tc.want {
				t.Errorf("SandboxdOf = %+v, want %+v", got, *tc.want)
			}
		})
	}
	if !(Sandboxd{ListenHost: "127.0.0.1"}).Loopback() || (Sandboxd{ListenHost: "0.0.0.0"}).Loopback() || !(Sandboxd{ListenHost: "::1"}).Loopback() {
		t.Error("Loopback")
	}
}
