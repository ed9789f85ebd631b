package kube

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API server's answer to a server-side apply of a ConfigMap whose data
// holds a number (measured on the local control plane, v1.37).
const typedPatch500 = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
	`"message":"failed to create typed patch object (/v1, Kind=ConfigMap) default/x: .data.count: expected string, got \u0026value.valueUnstructured{Value:1}",` +
	`"code":500}`

// TestContentRejected_notRetriedNorBlamedOnTheServer: the 500 server-side
// apply gives for an object that does not fit its schema is answered once
// (no retries: it cannot change), and the diagnostic says the object was
// rejected, naming the field, instead of pointing at the control plane.
func TestContentRejected_notRetriedNorBlamedOnTheServer(t *testing.T) {
	fastRetries(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, typedPatch500)
	}))
	defer srv.Close()
	c, err := NewClient(context.Background(), Config{Host: srv.URL, AllowCredentialsOverHTTP: true, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "default"},
		"data":     map[string]any{"count": int64(1)},
	}}
	before := WriteCount()
	_, err = c.Apply(context.Background(), gvr, obj, ApplyOptions{})
	if err == nil {
		t.Fatal("want the server's refusal")
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the request was sent %d times; a rejected object must not be retried", n)
	}
	if !IsContentRejected(err) {
		t.Errorf("IsContentRejected(%v) = false", err)
	}
	if got := WriteCount() - before; got != 1 {
		t.Errorf("WriteCount grew by %d for one apply; want 1", got)
	}
	diags := Diagnostics(err, "apply", RefFor(gvr, obj))
	d := diags[0]
	if !strings.Contains(d.Summary(), "rejected the content") || !strings.Contains(d.Detail(), ".data.count: expected string") ||
		strings.Contains(d.Detail(), "health of the control plane") {
		t.Errorf("diagnostic %q: %s", d.Summary(), d.Detail())
	}

	// A dry run is not a write.
	before = WriteCount()
	_, _ = c.Apply(context.Background(), gvr, obj, ApplyOptions{DryRun: true})
	if got := WriteCount() - before; got != 0 {
		t.Errorf("a dry run counted as %d writes", got)
	}
}
