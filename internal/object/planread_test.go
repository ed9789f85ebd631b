package object

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
)

// TestPlanRead: each (client, key) is read once per process; an answer of
// the API server (even an error) leaves the cluster usable for other keys;
// no answer at all marks it unreachable for every later plan-time read,
// whatever its key, without calling read again.
func TestPlanRead(t *testing.T) {
	ctx := context.Background()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}`))
	}))
	defer srv.Close()
	up := conn.New(conn.Settings{Kube: kube.Config{Host: srv.URL}})

	var reads atomic.Int64
	get := func(name string) func(context.Context, *kube.Client) (string, error) {
		return func(ctx context.Context, c *kube.Client) (string, error) {
			reads.Add(1)
			if _, err := c.Get(ctx, RuntimeClassGVR, "", name); err != nil {
				return "", err
			}
			return "found", nil
		}
	}
	constant := func(context.Context, *kube.Client) (string, error) { reads.Add(1); return "value", nil }

	type key struct{ n string }
	for range 2 {
		if v, why := PlanRead(ctx, up, key{"constant"}, constant); v != "value" || why != "" {
			t.Errorf("constant: got %q, %q; want \"value\" and no reason", v, why)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("two reads of one key called read %d times, want 1", n)
	}
	for range 2 {
		if v, why := PlanRead(ctx, up, key{"absent"}, get("absent")); v != "" || !strings.Contains(why, "not found") {
			t.Errorf("absent: got %q, %q; want no value and the server's answer as the reason", v, why)
		}
	}
	if n, s := reads.Load(), served.Load(); n != 2 || s != 1 {
		t.Errorf("after the 404 twice: %d reads and %d requests, want 2 and 1 (cached)", n, s)
	}
	// The server answered: other keys are still read.
	if _, why := PlanRead(ctx, up, key{"other"}, get("other")); !strings.Contains(why, "not found") || served.Load() != 2 {
		t.Errorf("a key after a 404: reason %q, %d requests; want the server's answer and 2 requests", why, served.Load())
	}

	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	down := conn.New(conn.Settings{Kube: kube.Config{Host: "http://" + addr}})
	before := reads.Load()
	if _, why := PlanRead(ctx, down, key{"first"}, get("first")); why == "" {
		t.Error("unreachable cluster: want a reason")
	}
	v, why := PlanRead(ctx, down, key{"second"}, constant)
	if v != "" || !strings.Contains(why, "did not answer an earlier plan-time read") {
		t.Errorf("second key on the unreachable cluster: got %q, %q; want no value and the earlier failure as the reason", v, why)
	}
	if n := reads.Load() - before; n != 1 {
		t.Errorf("unreachable cluster: read called %d times for two keys, want 1", n)
	}
	// The other client is not affected.
	if v, why := PlanRead(ctx, up, key{"constant"}, constant); v != "value" || why != "" {
		t.Errorf("reachable client after another's failure: got %q, %q", v, why)
	}

	if _, why := PlanRead(ctx, nil, key{"constant"}, constant); why != "provider not configured" {
		t.Errorf("no provider data: reason %q", why)
	}
}
