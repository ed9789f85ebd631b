package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const testCA = `-----BEGIN CERTIFICATE-----
MIIBbzCCARWgAwIBAgIBATAKBggqhkjOPQQDAjAVMRMwEQYDVQQDEwpsb2NhbC10
ZXN0MB4XDTI2MDEwMTAwMDAwMFoXDTM2MDEwMTAwMDAwMFowFTETMBEGA1UEAxMK
bG9jYWwtdGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABHk+2gq0j3m7+QBY
-----END CERTIFICATE-----
`

// The seeded cluster takes its endpoint and CA from a kubeconfig, so that
// GKE-derived credentials reach the local control plane.
func TestServesSeededClusterFromKubeconfig(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:16443
    certificate-authority-data: `+base64.StdEncoding.EncodeToString([]byte(testCA))+`
contexts:
- name: local
  context: {cluster: local, user: me}
current-context: local
users:
- name: me
  user: {token: x}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	urlFile := filepath.Join(dir, "url")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var stdout, stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"-kubeconfig", kubeconfig, "-url-file", urlFile, "-log-requests=false"}, &stdout, &stderr, ready)
	}()
	var url string
	select {
	case url = <-ready:
	case err := <-done:
		t.Fatalf("exited early: %v (%s)", err, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	if b, _ := os.ReadFile(urlFile); strings.TrimSpace(string(b)) != url {
		t.Errorf("url file %q, want %q", b, url)
	}
	req, _ := http.NewRequest("GET", url+"v1/projects/emu-project/locations/us-central1/clusters/emu-cluster", nil)
	req.Header.Set("Authorization", "Bearer anything")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var cl struct {
		Endpoint   string `json:"endpoint"`
		MasterAuth struct {
			ClusterCaCertificate string `json:"clusterCaCertificate"`
		} `json:"masterAuth"`
	}
	err = json.NewDecoder(resp.Body).Decode(&cl)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if cl.Endpoint != "127.0.0.1:16443" {
		t.Errorf("endpoint = %q", cl.Endpoint)
	}
	if ca, _ := base64.StdEncoding.DecodeString(cl.MasterAuth.ClusterCaCertificate); string(ca) != testCA {
		t.Errorf("CA = %q", ca)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	if !strings.Contains(out, "EMULATOR") || !strings.Contains(out, "not Google Kubernetes Engine") {
		t.Errorf("start-up does not say it is an emulator: %q", out)
	}
}

func TestRefusesNonLoopbackListen(t *testing.T) {
	err := run(context.Background(), []string{"-listen", "0.0.0.0:0"}, &bytes.Buffer{}, &bytes.Buffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("err = %v", err)
	}
}

// lockedBuffer is a bytes.Buffer the server's goroutines may write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// By default the command holds the emulator to GKE's published API: a
// request with a field the container/v1 discovery document does not have
// is refused with 400 as GKE refuses it, and logged naming the field even
// with -log-requests=false; the stop line counts the departures.
func TestHoldsRequestsToThePublishedAPI(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
		logged bool
	}{
		{args: nil, status: http.StatusBadRequest, logged: true},
		{args: []string{"-api-check=false"}, status: http.StatusOK, logged: false},
	} {
		t.Run(strings.Join(append([]string{"flags"}, tc.args...), " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			ready := make(chan string, 1)
			done := make(chan error, 1)
			var stdout, stderr lockedBuffer
			go func() {
				done <- run(ctx, append([]string{"-log-requests=false", "-operation-pending=1ms", "-operation-running=1ms"}, tc.args...), &stdout, &stderr, ready)
			}()
			var url string
			select {
			case url = <-ready:
			case err := <-done:
				t.Fatalf("exited early: %v (%s)", err, stderr.String())
			case <-time.After(30 * time.Second):
				t.Fatal("not ready")
			}
			body := `{"nodePool":{"name":"agents","initialNodeCount":1,"confg":{"machineType":"e2-standard-4"}}}`
			req, _ := http.NewRequest("POST", url+"v1/projects/emu-project/locations/us-central1/clusters/emu-cluster/nodePools", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer anything")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("node pool with the field typo confg: %d, want %d", resp.StatusCode, tc.status)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			logged := strings.Contains(stderr.String(), "NOT IN GKE'S PUBLISHED API") && strings.Contains(stderr.String(), "nodePool.confg")
			if logged != tc.logged {
				t.Errorf("departure logged: %v, want %v; stderr:\n%s", logged, tc.logged, stderr.String())
			}
			if counted := strings.Contains(stdout.String(), "1 request(s) or answer(s) departed"); counted != tc.logged {
				t.Errorf("stop line counts the departure: %v, want %v; stdout:\n%s", counted, tc.logged, stdout.String())
			}
		})
	}
}
