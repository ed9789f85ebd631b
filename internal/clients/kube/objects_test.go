package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	sandboxGVR = schema.GroupVersionResource{Group: "agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxes"}
	crdGVR     = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// recorder answers every request with respond and remembers the request.
type recorder struct {
	mu      sync.Mutex
	method  string
	path    string
	query   url.Values
	ctype   string
	body    []byte
	respond func(w http.ResponseWriter, body []byte)
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.method, r.path, r.query, r.ctype, r.body = req.Method, req.URL.Path, req.URL.Query(), req.Header.Get("Content-Type"), body
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	r.respond(w, body)
}

func newTestClient(t *testing.T, h http.Handler) *Client {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c, err := NewClient(context.Background(), Config{Host: ts.URL, Token: "t", AllowCredentialsOverHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sandbox(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "agents.x-k8s.io/v1beta1",
		"kind":       "Sandbox",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"replicas": int64(1)},
	}}
	return u
}

func TestApply_serverSideApply(t *testing.T) {
	rec := &recorder{respond: func(w http.ResponseWriter, body []byte) { _, _ = w.Write(body) }}
	c := newTestClient(t, rec)

	obj := sandbox("team-a", "agent-1")
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "old"}})
	got, err := c.Apply(context.Background(), sandboxGVR, obj, ApplyOptions{FieldManager: "tf", Force: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if rec.method != http.MethodPatch || rec.path != "/apis/agents.x-k8s.io/v1beta1/namespaces/team-a/sandboxes/agent-1" {
		t.Errorf("sent %s %s", rec.method, rec.path)
	}
	if rec.ctype != "application/apply-patch+yaml" {
		t.Errorf("Content-Type = %q, want application/apply-patch+yaml", rec.ctype)
	}
	if rec.query.Get("fieldManager") != "tf" || rec.query.Get("force") != "true" || rec.query.Get("dryRun") != "All" {
		t.Errorf("query = %v, want fieldManager=tf, force=true, dryRun=All", rec.query)
	}
	var sent map[string]any
	if err := json.Unmarshal(rec.body, &sent); err != nil {
		t.Fatalf("body is not JSON (a YAML subset): %v", err)
	}
	if _, has := sent["metadata"].(map[string]any)["managedFields"]; has {
		t.Error("managedFields were sent; the server rejects them in an apply")
	}
	if len(obj.GetManagedFields()) != 1 {
		t.Error("Apply modified the caller's object")
	}
	if got.GetName() != "agent-1" {
		t.Errorf("returned %v", got)
	}

	// Cluster-scoped, default field manager, no force.
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "sandboxes.agents.x-k8s.io"},
	}}
	if _, err := c.Apply(context.Background(), crdGVR, crd, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if rec.path != "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sandboxes.agents.x-k8s.io" {
		t.Errorf("cluster-scoped path %s", rec.path)
	}
	if rec.query.Get("fieldManager") != DefaultFieldManager || rec.query.Get("force") == "true" || rec.query.Has("dryRun") {
		t.Errorf("query = %v, want fieldManager=%s without force or dryRun", rec.query, DefaultFieldManager)
	}

	if _, err := c.Apply(context.Background(), sandboxGVR, &unstructured.Unstructured{Object: map[string]any{}}, ApplyOptions{}); err == nil {
		t.Error("an object without apiVersion/kind/name was sent")
	}
}

func TestGetAndList(t *testing.T) {
	rec := &recorder{respond: func(w http.ResponseWriter, _ []byte) {
		fmt.Fprint(w, `{"apiVersion":"agents.x-k8s.io/v1beta1","kind":"SandboxList","metadata":{},"items":[]}`)
	}}
	c := newTestClient(t, rec)
	if _, err := c.List(context.Background(), sandboxGVR, "ns", "app=x"); err != nil {
		t.Fatal(err)
	}
	if rec.path != "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes" || rec.query.Get("labelSelector") != "app=x" {
		t.Errorf("list sent %s?%v", rec.path, rec.query)
	}
}

func TestDelete(t *testing.T) {
	code := http.StatusOK
	rec := &recorder{respond: func(w http.ResponseWriter, _ []byte) {
		w.WriteHeader(code)
		if code == http.StatusNotFound {
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,
				"message":"sandboxes.agents.x-k8s.io \"s\" not found","details":{"name":"s","group":"agents.x-k8s.io","kind":"sandboxes"}}`)
			return
		}
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
	}}
	c := newTestClient(t, rec)

	existed, err := c.Delete(context.Background(), sandboxGVR, "ns", "s", DeleteOptions{Propagation: metav1.DeletePropagationForeground})
	if err != nil || !existed {
		t.Fatalf("Delete = %v, %v; want true, nil", existed, err)
	}
	var opts metav1.DeleteOptions
	if err := json.Unmarshal(rec.body, &opts); err != nil || opts.PropagationPolicy == nil || *opts.PropagationPolicy != metav1.DeletePropagationForeground {
		t.Errorf("delete options sent: %s", rec.body)
	}

	code = http.StatusNotFound
	existed, err = c.Delete(context.Background(), sandboxGVR, "ns", "s", DeleteOptions{})
	if err != nil || existed {
		t.Fatalf("Delete of a missing object = %v, %v; want false, nil", existed, err)
	}

	code = http.StatusForbidden
	if _, err := c.Delete(context.Background(), sandboxGVR, "ns", "s", DeleteOptions{}); err == nil {
		t.Error("a 403 was swallowed")
	}
}

func TestOwnedFields(t *testing.T) {
	obj := sandbox("ns", "s")
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:podTemplate":{"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`)},
		{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status",
			FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:phase":{}}}`)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:shutdownTime":{}}}`)},
	})
	got, err := OwnedFields(obj, "agentsandbox")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".metadata.labels.app",
		`.spec.podTemplate.spec.containers[name="main"].image`,
		`.spec.podTemplate.spec.containers[name="main"].name`,
		".spec.replicas",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OwnedFields = %q\nwant %q", got, want)
	}
	if got, _ := OwnedFields(obj, "nobody"); len(got) != 0 {
		t.Errorf("unknown manager owns %v", got)
	}
}
