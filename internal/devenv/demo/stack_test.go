package demo

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
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
