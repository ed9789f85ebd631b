package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSplitUpdateEntry(t *testing.T) {
	apply := metav1.ManagedFieldsEntry{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply}
	update := metav1.ManagedFieldsEntry{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationUpdate}
	status := metav1.ManagedFieldsEntry{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}
	other := metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}
	for _, tc := range []struct {
		name     string
		in       []metav1.ManagedFieldsEntry
		wantKeep int
		wantDrop bool
	}{
		{"after POST and apply", []metav1.ManagedFieldsEntry{update, apply, other}, 2, true},
		{"apply only (nothing to do)", []metav1.ManagedFieldsEntry{apply, other}, 2, false},
		{"no apply entry yet: keep the update entry, it is the only record", []metav1.ManagedFieldsEntry{update, other}, 2, false},
		{"a status subresource entry stays", []metav1.ManagedFieldsEntry{apply, status}, 2, false},
		{"another manager's update entry stays", []metav1.ManagedFieldsEntry{apply, update, other, status}, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep, drop := splitUpdateEntry(tc.in, "agentsandbox")
			if drop != tc.wantDrop || len(keep) != tc.wantKeep {
				t.Fatalf("keep %d drop %v; want %d %v", len(keep), drop, tc.wantKeep, tc.wantDrop)
			}
			for _, e := range keep {
				if drop && e.Manager == "agentsandbox" && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
					t.Errorf("the provider's update entry was kept")
				}
			}
		})
	}
	e, err := toUnstructuredEntry(apply)
	if err != nil || e["manager"] != "agentsandbox" || e["operation"] != "Apply" {
		t.Errorf("encoded entry %v, %v", e, err)
	}
}

// createServer is an API server of one Sandbox name for createOnce: a POST
// stores the object (recording its field manager as an Update entry, as
// the API server does) unless one exists; lose(n) says whether the answer
// of POST n (1-based) is lost (503 after storing) and refuse(n) whether it
// is refused before storing (503).
type createServer struct {
	mu       sync.Mutex
	stored   map[string]any
	posts    int
	gets     int
	managers []string
	lose     func(n int) bool
	refuse   func(n int) bool
}

func (s *createServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	status := func(code int, reason string) {
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d,"message":"sandboxes \"s\" %s",`+
			`"details":{"name":"s","group":"agents.x-k8s.io","kind":"sandboxes"}}`, reason, code, reason)
	}
	switch r.Method {
	case http.MethodGet:
		s.gets++
		if s.stored == nil {
			status(http.StatusNotFound, "NotFound")
			return
		}
		_ = json.NewEncoder(w).Encode(s.stored)
	case http.MethodPost:
		s.posts++
		fm := r.URL.Query().Get("fieldManager")
		s.managers = append(s.managers, fm)
		if s.refuse != nil && s.refuse(s.posts) {
			status(http.StatusServiceUnavailable, "ServiceUnavailable")
			return
		}
		if s.stored != nil {
			status(http.StatusConflict, "AlreadyExists")
			return
		}
		var obj map[string]any
		_ = json.NewDecoder(r.Body).Decode(&obj)
		obj["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{
			"manager": fm, "operation": "Update", "apiVersion": "agents.x-k8s.io/v1beta1", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:spec": map[string]any{}},
		}}
		s.stored = obj
		if s.lose != nil && s.lose(s.posts) {
			status(http.StatusServiceUnavailable, "ServiceUnavailable")
			return
		}
		_ = json.NewEncoder(w).Encode(obj)
	default:
		status(http.StatusMethodNotAllowed, "MethodNotAllowed")
	}
}

func fastCreates(t *testing.T) {
	t.Helper()
	saved := createBackoff
	createBackoff = func(int) time.Duration { return time.Millisecond }
	t.Cleanup(func() { createBackoff = saved })
}

// TestCreateOnce: a create whose answer is lost is sent again, and the
// AlreadyExists that follows is recognised as this create's own object by
// its per-create field manager; another creator's object is still refused.
func TestCreateOnce(t *testing.T) {
	fastCreates(t)
	ctx := context.Background()
	first := func(n int) bool { return n == 1 }
	t.Run("the answer of the first POST is lost: the object is this create's", func(t *testing.T) {
		s := &createServer{lose: first}
		live, err := newTestClient(t, s).createOnce(ctx, sandboxGVR, sandbox("ns", "s"), "agentsandbox")
		if err != nil || live == nil {
			t.Fatalf("createOnce = %v, %v; want the object", live, err)
		}
		if s.posts != 2 || s.gets != 1 || s.managers[0] != s.managers[1] || !strings.HasPrefix(s.managers[0], "agentsandbox-create-") {
			t.Fatalf("posts %d gets %d managers %v; want 2 POSTs under one agentsandbox-create-<token> manager, 1 GET", s.posts, s.gets, s.managers)
		}
	})
	t.Run("refused before storing, then created", func(t *testing.T) {
		s := &createServer{refuse: func(n int) bool { return n <= 2 }}
		if _, err := newTestClient(t, s).createOnce(ctx, sandboxGVR, sandbox("ns", "s"), "agentsandbox"); err != nil || s.posts != 3 || s.gets != 0 {
			t.Fatalf("err %v, posts %d, gets %d; want success at the third POST, no GET", err, s.posts, s.gets)
		}
	})
	t.Run("another creator took the name between two attempts: AlreadyExists", func(t *testing.T) {
		s := &createServer{}
		s.refuse = func(n int) bool {
			if n == 1 {
				s.stored = map[string]any{"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox", "metadata": map[string]any{
					"name": "s", "namespace": "ns", "managedFields": []any{map[string]any{"manager": "agentsandbox-create-other", "operation": "Update"}}}}
				return true
			}
			return false
		}
		_, err := newTestClient(t, s).createOnce(ctx, sandboxGVR, sandbox("ns", "s"), "agentsandbox")
		if !IsAlreadyExists(err) || s.gets != 1 {
			t.Fatalf("err %v, gets %d; want AlreadyExists after one GET", err, s.gets)
		}
	})
	t.Run("an existing object is refused at once", func(t *testing.T) {
		s := &createServer{stored: map[string]any{"metadata": map[string]any{"name": "s"}}}
		_, err := newTestClient(t, s).createOnce(ctx, sandboxGVR, sandbox("ns", "s"), "agentsandbox")
		if !IsAlreadyExists(err) || s.posts != 1 || s.gets != 0 {
			t.Fatalf("err %v, posts %d, gets %d; want AlreadyExists from the one POST", err, s.posts, s.gets)
		}
	})
	t.Run("refused every time: the error says how often and that nothing was created", func(t *testing.T) {
		s := &createServer{refuse: func(int) bool { return true }}
		_, err := newTestClient(t, s).createOnce(ctx, sandboxGVR, sandbox("ns", "s"), "agentsandbox")
		if err == nil || s.posts != maxCreateAttempts || !strings.Contains(err.Error(), "sent 5 times; none of them created the object") {
			t.Fatalf("err %v after %d POSTs", err, s.posts)
		}
	})
	t.Run("every answer lost: the object this create made is found", func(t *testing.T) {
		s := &createServer{lose: func(int) bool { return true }}
		if live, err := newTestClient(t, s).createOnce(ctx, sandboxGVR, sandbox("ns", "s"), "agentsandbox"); err != nil || live == nil {
			t.Fatalf("createOnce = %v, %v", live, err)
		}
	})
}

func TestSplitUpdateEntry_createToken(t *testing.T) {
	apply := metav1.ManagedFieldsEntry{Manager: "agentsandbox", Operation: metav1.ManagedFieldsOperationApply}
	token := metav1.ManagedFieldsEntry{Manager: "agentsandbox-create-0a1b2c", Operation: metav1.ManagedFieldsOperationUpdate}
	other := metav1.ManagedFieldsEntry{Manager: "agentsandboxer", Operation: metav1.ManagedFieldsOperationUpdate}
	keep, drop := splitUpdateEntry([]metav1.ManagedFieldsEntry{apply, token, other}, "agentsandbox")
	if !drop || len(keep) != 2 || keep[1].Manager != "agentsandboxer" {
		t.Fatalf("keep %v drop %v; want the token's entry dropped, another manager's kept", keep, drop)
	}
	if !hasUpdateEntry([]metav1.ManagedFieldsEntry{apply, token}, "agentsandbox") || hasUpdateEntry([]metav1.ManagedFieldsEntry{apply, other}, "agentsandbox") {
		t.Fatal("hasUpdateEntry must see a create token's entry and only it")
	}
}

func TestConflictBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	if err := ConflictBackoff(ctx, 1); err != nil {
		t.Fatalf("first backoff: %v", err)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Errorf("the first backoff waited %s, want at least 50ms", waited)
	}
	cancel()
	start = time.Now()
	if err := ConflictBackoff(ctx, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("backoff with an ended context: %v, want context.Canceled", err)
	}
	if waited := time.Since(start); waited > 500*time.Millisecond {
		t.Errorf("backoff with an ended context waited %s", waited)
	}
}
