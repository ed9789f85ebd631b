package kube

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// A kind the server does not serve is not "already deleted": the object
// may exist at another version. Delete reports it; object.Kind.Delete
// decides.
func TestDelete_kindNotServedIsAnError(t *testing.T) {
	rec := &recorder{respond: func(w http.ResponseWriter, _ []byte) {
		// The mux's plain-text 404 for a resource it does not serve.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "404 page not found\n")
	}}
	c := newTestClient(t, rec)
	existed, err := c.Delete(context.Background(), sandboxGVR, "ns", "s", DeleteOptions{})
	if existed || err == nil || !IsResourceNotServed(err) {
		t.Fatalf("Delete on a server without the kind = %v, %v; want false and a not-served error", existed, err)
	}
}
