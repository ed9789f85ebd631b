package demo

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
)

// The release server has upstream's layout, <base>/<tag>/<asset>, and
// serves the offline bundles byte for byte (checksums pinned against it hold).
func TestReleaseHandler(t *testing.T) {
	srv := httptest.NewServer(ReleaseHandler())
	defer srv.Close()
	for _, v := range bundles.Versions() {
		assets, err := bundles.Assets(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range assets {
			want, _ := bundles.Read(v, a)
			resp, err := http.Get(srv.URL + "/" + v + "/" + a)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || string(got) != string(want) {
				t.Errorf("%s/%s: status %d, %d bytes, want %d bytes", v, a, resp.StatusCode, len(got), len(want))
			}
		}
	}
	resp, err := http.Get(srv.URL + "/v9.9.9/sandbox-with-extensions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown release: status %d, want 404", resp.StatusCode)
	}
}

func TestWriteVarFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.tfvars.json")
	vars := map[string]string{"project": "p", "gke_access_token": `t"o\ken`, "unused": "u"}
	if err := WriteVarFile(p, vars, "project", "gke_access_token"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["gke_access_token"] != `t"o\ken` || got["project"] != "p" {
		t.Errorf("wrote %s", data)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 (it holds a token)", fi.Mode().Perm())
	}
	if err := WriteVarFile(p, vars, "missing"); err == nil {
		t.Error("a variable without a value was accepted")
	}
}

// The demo stack's emulator is held to GKE's published API like every
// test's: a request body with a field the container/v1 discovery document
// does not have is refused as GKE refuses it and kept, naming the field,
// for APIViolations (which the examples' tests fail on); a request the
// document allows leaves nothing.
func TestEmulatorIsHeldToThePublishedAPI(t *testing.T) {
	var log strings.Builder
	s := &Stack{log: &log, AccessToken: "token"}
	emu, err := s.newEmulator()
	if err != nil {
		t.Fatal(err)
	}
	name, err := emu.AddCluster(gkeemu.ClusterSpec{Project: Project, Location: Location, Name: Cluster})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu)
	t.Cleanup(srv.Close)
	do := func(method, path, body string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+"/v1/"+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer token")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	if code := do(http.MethodGet, name, ""); code != http.StatusOK {
		t.Fatalf("GET %s: %d, want 200", name, code)
	}
	if vs := s.APIViolations(); len(vs) != 0 {
		t.Fatalf("a request the document allows left violations: %v", vs)
	}

	code := do(http.MethodPost, name+"/nodePools", `{"nodePool":{"name":"agents","initialNodeCount":1,"confg":{"machineType":"e2-standard-4"}}}`)
	if code != http.StatusBadRequest {
		t.Errorf("node pool with the field typo confg: %d, want 400 as GKE's front end answers", code)
	}
	vs := s.APIViolations()
	if len(vs) != 1 || vs[0].Field != "nodePool.confg" || !vs[0].Unknown {
		t.Fatalf("violations %v, want exactly the unknown field nodePool.confg", vs)
	}
	if !strings.Contains(log.String(), "NOT IN GKE'S PUBLISHED API") || !strings.Contains(log.String(), "nodePool.confg") {
		t.Errorf("the stack's log does not name the departure:\n%s", log.String())
	}
}
