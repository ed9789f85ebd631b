package emutest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"google.golang.org/api/container/v1"
	"google.golang.org/api/option"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/gkeemu/emutest"
)

func TestMain(m *testing.M) {
	cleanup := emutest.Isolate()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// recordingTB is a test that records its failures instead of failing.
type recordingTB struct {
	testing.TB
	errors   []string
	cleanups []func()
}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Logf(string, ...any)       {}
func (r *recordingTB) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }
func (r *recordingTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (r *recordingTB) Fatal(a ...any)            { panic(fmt.Sprint(a...)) }
func (r *recordingTB) finish() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// misspell rewrites request bodies on their way out, as a provider with a
// typo in a field name would send them.
type misspell struct{ from, to string }

func (m misspell) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer test")
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		body = bytes.ReplaceAll(body, []byte(m.from), []byte(m.to))
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	return http.DefaultTransport.RoundTrip(r)
}

func createPool(t *testing.T, env *emutest.Env, rt http.RoundTripper) error {
	t.Helper()
	svc, err := container.NewService(context.Background(), option.WithEndpoint(env.URL), option.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Projects.Locations.Clusters.NodePools.Create(env.ClusterName, &container.CreateNodePoolRequest{NodePool: &container.NodePool{
		Name: "sandbox", InitialNodeCount: 1,
		Config: &container.NodeConfig{ImageType: "COS_CONTAINERD", SandboxConfig: &container.SandboxConfig{Type: "GVISOR"}},
	}}).Do()
	return err
}

// The mutation the guard exists for, on the provider's side: a request
// with a field name the published API does not have fails the test that
// sent it, naming the field, and GKE's refusal is what the client sees.
// The same request spelt right passes.
func TestGuardFailsATestWhoseRequestHasAFieldTypo(t *testing.T) {
	ok := &recordingTB{TB: t}
	env := emutest.Start(ok, gkeemu.Options{}, gkeemu.ClusterSpec{})
	if err := createPool(t, env, misspell{}); err != nil {
		t.Fatal(err)
	}
	ok.finish()
	if len(ok.errors) > 0 {
		t.Fatalf("a valid request failed the test: %v", ok.errors)
	}

	for from, field := range map[string]string{
		`"sandboxConfig"`:    "nodePool.config.sandboxConfg",
		`"initialNodeCount"`: "nodePool.initialNodeCnt",
		`"nodePool"`:         "nodePools",
	} {
		bad := &recordingTB{TB: t}
		env := emutest.Start(bad, gkeemu.Options{}, gkeemu.ClusterSpec{})
		to := `"` + field[strings.LastIndex(field, ".")+1:] + `"`
		err := createPool(t, env, misspell{from: from, to: to})
		bad.finish()
		if err == nil || !strings.Contains(err.Error(), "Cannot find field") {
			t.Errorf("%s misspelt: GKE's refusal not seen by the client: %v", from, err)
		}
		if len(bad.errors) != 1 || !strings.Contains(bad.errors[0], "at "+field+": unknown field") {
			t.Errorf("%s misspelt: the test's failures are %q, want one naming %s", from, bad.errors, field)
		}
		if _, exists := env.NodePool(env.ClusterName + "/nodePools/sandbox"); exists {
			t.Errorf("%s misspelt: the pool was created anyway", from)
		}
	}
}

// A test that sends an invalid request on purpose says so, and is not
// failed by it.
func TestExpectInvalidRequests(t *testing.T) {
	rec := &recordingTB{TB: t}
	env := emutest.Start(rec, gkeemu.Options{}, gkeemu.ClusterSpec{})
	env.ExpectInvalidRequests()
	if err := createPool(t, env, misspell{from: `"GVISOR"`, to: `"KATA"`}); err == nil || !strings.Contains(err.Error(), "Invalid value at 'node_pool.config.sandbox_config.type'") {
		t.Errorf("want GKE's refusal of the enum value, got %v", err)
	}
	rec.finish()
	if len(rec.errors) > 0 {
		t.Errorf("failed the test: %v", rec.errors)
	}
}
