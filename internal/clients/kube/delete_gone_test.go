package kube

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DeleteObject tells a deletion the server completed within the request
// (nothing to wait for) from one that is pending, from the response alone.
func TestDeleteObject_GoneOrPending(t *testing.T) {
	var status int
	var body string
	rec := &recorder{respond: func(w http.ResponseWriter, _ []byte) {
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}}
	c := newTestClient(t, rec)
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		status      int
		body        string
		opts        DeleteOptions
		wantExisted bool
		wantGone    bool
	}{
		{"status success", 200, `{"kind":"Status","apiVersion":"v1","status":"Success"}`, DeleteOptions{}, true, true},
		{"object returned as removed", 200, `{"kind":"Sandbox","apiVersion":"agents.x-k8s.io/v1beta1","metadata":{"name":"s","namespace":"ns"}}`, DeleteOptions{}, true, true},
		{"finalizers keep it", 200, `{"kind":"Sandbox","apiVersion":"agents.x-k8s.io/v1beta1","metadata":{"name":"s","namespace":"ns","deletionTimestamp":"2026-12-01T10:00:00Z","finalizers":["foregroundDeletion"]}}`, DeleteOptions{}, true, false},
		{"accepted, pending", 202, `{"kind":"Sandbox","apiVersion":"agents.x-k8s.io/v1beta1","metadata":{"name":"s","namespace":"ns","deletionTimestamp":"2026-12-01T10:00:00Z"}}`, DeleteOptions{}, true, false},
		{"dry run deletes nothing", 200, `{"kind":"Status","apiVersion":"v1","status":"Success"}`, DeleteOptions{DryRun: true}, true, false},
		{"unreadable body", 200, `not json`, DeleteOptions{}, true, false},
		{"already gone", 404, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"details":{"name":"s","group":"agents.x-k8s.io","kind":"sandboxes"}}`, DeleteOptions{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body = tc.status, tc.body
			res, err := c.DeleteObject(ctx, sandboxGVR, "ns", "s", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Existed != tc.wantExisted || res.Gone != tc.wantGone {
				t.Errorf("DeleteObject = %+v; want Existed %v, Gone %v", res, tc.wantExisted, tc.wantGone)
			}
			if rec.method != http.MethodDelete || rec.path != "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes/s" {
				t.Errorf("sent %s %s", rec.method, rec.path)
			}
		})
	}
}

func TestDeleteObject_Paths(t *testing.T) {
	rec := &recorder{respond: func(w http.ResponseWriter, _ []byte) {
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
	}}
	c := newTestClient(t, rec)
	for _, tc := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
		want      string
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "ns", "/api/v1/namespaces/ns/configmaps/x"},
		{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", "/api/v1/namespaces/x"},
		{crdGVR, "", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x"},
	} {
		if _, err := c.DeleteObject(context.Background(), tc.gvr, tc.namespace, "x", DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if rec.path != tc.want {
			t.Errorf("%v: sent %s, want %s", tc.gvr, rec.path, tc.want)
		}
	}
}
