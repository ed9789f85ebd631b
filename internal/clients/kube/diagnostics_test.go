package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// serverError makes the API server stand-in answer code with body and
// returns the error the client produces for an apply of ns/agent-1.
func serverError(t *testing.T, code int, contentType, body string) error {
	t.Helper()
	fastRetries(t)
	c := newTestClient(t, &recorder{respond: func(w http.ResponseWriter, _ []byte) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}})
	_, err := c.Apply(context.Background(), sandboxGVR, sandbox("team-a", "agent-1"), ApplyOptions{})
	if err == nil {
		t.Fatal("want an error")
	}
	return err
}

var agentRef = ObjectRef{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "agent-1"}

func assertDiag(t *testing.T, d diag.Diagnostic, summary string, inDetail ...string) {
	t.Helper()
	if d.Summary() != summary {
		t.Errorf("summary = %q, want %q", d.Summary(), summary)
	}
	for _, s := range inDetail {
		if !strings.Contains(d.Detail(), s) {
			t.Errorf("detail does not contain %q:\n%s", s, d.Detail())
		}
	}
	if d.Severity() != diag.SeverityError {
		t.Errorf("severity %v", d.Severity())
	}
}

func TestDiagnostics_invalidOnePerCause(t *testing.T) {
	err := serverError(t, 422, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,
		"message":"Sandbox.agents.x-k8s.io \"agent-1\" is invalid: [spec.replicas: Invalid value: -1: must be >= 0, spec.operatingMode: Unsupported value: \"Paused\"]",
		"details":{"name":"agent-1","group":"agents.x-k8s.io","kind":"Sandbox","causes":[
			{"reason":"FieldValueInvalid","message":"Invalid value: -1: must be >= 0","field":"spec.replicas"},
			{"reason":"FieldValueNotSupported","message":"Unsupported value: \"Paused\": supported values: \"Running\", \"Suspended\"","field":"spec.operatingMode"}]}}`)
	diags := Diagnostics(err, "apply", agentRef)
	if len(diags) != 2 {
		t.Fatalf("want one diagnostic per cause, got %d: %v", len(diags), diags)
	}
	assertDiag(t, diags[0], "Invalid Sandbox field spec.replicas", "must be >= 0", `apply (server-side) Sandbox "team-a/agent-1"`, "agents.x-k8s.io/v1beta1")
	assertDiag(t, diags[1], "Invalid Sandbox field spec.operatingMode", `"Running", "Suspended"`)
	if causes := StatusCauses(err); len(causes) != 2 || causes[1].Field != "spec.operatingMode" {
		t.Errorf("StatusCauses = %v", causes)
	}
}

func TestDiagnostics_forbiddenNamesTheRBACRule(t *testing.T) {
	err := serverError(t, 403, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
		"message":"sandboxes.agents.x-k8s.io \"agent-1\" is forbidden: User \"ci\" cannot patch resource \"sandboxes\" in API group \"agents.x-k8s.io\" in the namespace \"team-a\"",
		"details":{"name":"agent-1","group":"agents.x-k8s.io","kind":"sandboxes"}}`)
	diags := Diagnostics(err, "apply", agentRef)
	if len(diags) != 1 {
		t.Fatalf("got %v", diags)
	}
	assertDiag(t, diags[0], "Permission denied by Kubernetes RBAC",
		`answered 403 Forbidden`, `User "ci" cannot patch`, // what the server said
		`"patch", "create"`, `resources: ["sandboxes"]`, `apiGroups: ["agents.x-k8s.io"]`, `in namespace "team-a"`,
		"kubectl auth can-i patch sandboxes.agents.x-k8s.io -n team-a")
}

func TestDiagnostics_fieldManagerConflict(t *testing.T) {
	err := serverError(t, 409, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,
		"message":"Apply failed with 2 conflicts: conflict with \"kubectl-edit\" using agents.x-k8s.io/v1beta1: .spec.replicas\nconflict with \"hpa\": .spec.shutdownTime",
		"details":{"causes":[
			{"reason":"FieldManagerConflict","message":"conflict with \"kubectl-edit\" using agents.x-k8s.io/v1beta1","field":".spec.replicas"},
			{"reason":"FieldManagerConflict","message":"conflict with \"hpa\"","field":".spec.shutdownTime"}]}}`)
	if !IsConflict(err) {
		t.Error("IsConflict = false")
	}
	diags := Diagnostics(err, "apply", agentRef)
	if len(diags) != 1 {
		t.Fatalf("got %v", diags)
	}
	assertDiag(t, diags[0], "Field manager conflict",
		`.spec.replicas is owned by field manager "kubectl-edit"`, `.spec.shutdownTime is owned by field manager "hpa"`,
		"conflicts forced", "remove these fields")
}

func TestDiagnostics_crdNotInstalled(t *testing.T) {
	// The API server's mux answers an unknown group in plain text.
	err := serverError(t, 404, "text/plain; charset=utf-8", "404 page not found")
	if !IsResourceNotServed(err) || !IsNotFound(err) {
		t.Errorf("IsResourceNotServed = %v, IsNotFound = %v; want both", IsResourceNotServed(err), IsNotFound(err))
	}
	assertDiag(t, Diagnostics(err, "apply", agentRef)[0], "Kubernetes resource type not installed",
		"agentsandbox_controller", "agents.x-k8s.io/v1beta1 sandboxes")

	noMatch := &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "agents.x-k8s.io", Kind: "Sandbox"}, SearchedVersions: []string{"v1beta1"}}
	assertDiag(t, Diagnostics(fmt.Errorf("mapping: %w", noMatch), "apply", agentRef)[0], "Kubernetes resource type not installed", "agentsandbox_controller")
	if !IsNotFound(noMatch) || !IsResourceNotServed(noMatch) {
		t.Error("a no-match error is not reported as not found / not served")
	}

	other := ObjectRef{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Name: "w"}
	if d := Diagnostics(err, "get", other)[0]; strings.Contains(d.Detail(), "agentsandbox_controller") {
		t.Errorf("an unrelated group got the agent-sandbox hint: %s", d.Detail())
	}
}

func TestDiagnostics_objectAndNamespaceNotFound(t *testing.T) {
	err := serverError(t, 404, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,
		"message":"sandboxes.agents.x-k8s.io \"agent-1\" not found","details":{"name":"agent-1","group":"agents.x-k8s.io","kind":"sandboxes"}}`)
	if IsResourceNotServed(err) || !IsNotFound(err) {
		t.Error("a missing object was taken for a missing type")
	}
	assertDiag(t, Diagnostics(err, "get", agentRef)[0], "Kubernetes object not found", "deleted outside Terraform")

	err = serverError(t, 404, "application/json", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,
		"message":"namespaces \"team-a\" not found","details":{"name":"team-a","kind":"namespaces"}}`)
	assertDiag(t, Diagnostics(err, "apply", agentRef)[0], "Namespace not found", `Namespace "team-a" does not exist`)
}

func TestDiagnostics_otherStatuses(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		action  string
		summary string
		detail  []string
	}{
		{"unauthorized", apierrors.NewUnauthorized("Unauthorized"), "get", "Kubernetes credentials rejected", []string{"401", "exec"}},
		{"already exists", apierrors.NewAlreadyExists(sandboxGVR.GroupResource(), "agent-1"), "create", "Kubernetes object already exists", []string{"terraform import"}},
		{"optimistic conflict", apierrors.NewConflict(sandboxGVR.GroupResource(), "agent-1", errors.New("the object has been modified")), "update", "Kubernetes object changed concurrently", []string{"apply again"}},
		{"webhook", apierrors.NewForbidden(sandboxGVR.GroupResource(), "agent-1", errors.New(`admission webhook "policy.example" denied the request: no privileged`)), "apply", "Request denied by admission control", []string{"no privileged"}},
		{"overloaded", apierrors.NewTooManyRequests("slow down", 1), "list", "Kubernetes API server overloaded", []string{"qps"}},
		{"conversion webhook", apierrors.NewInternalError(errors.New(`conversion webhook for agents.x-k8s.io/v1alpha1, Kind=Sandbox failed: connection refused`)), "get", "Kubernetes conversion webhook failed", []string{"controller is running"}},
		{"server error", apierrors.NewServiceUnavailable("etcd down"), "get", "Kubernetes API server error", []string{"etcd down"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnostics(tt.err, tt.action, agentRef)
			if len(d) != 1 {
				t.Fatalf("got %v", d)
			}
			assertDiag(t, d[0], tt.summary, tt.detail...)
		})
	}
}

func TestDiagnostics_connectionAndConfiguration(t *testing.T) {
	fastRetries(t)
	c, err := NewClient(context.Background(), Config{Host: "http://127.0.0.1:1", Token: "t", AllowCredentialsOverHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), sandboxGVR, "team-a", "agent-1")
	assertDiag(t, Diagnostics(err, "get", agentRef)[0], "Cannot reach the Kubernetes API server", "connection refused", "`host`")

	assertDiag(t, Diagnostics(fmt.Errorf("x: %w", context.DeadlineExceeded), "get", agentRef)[0], "Kubernetes API request timed out", "timeouts")
	_, err = Config{}.RESTConfig(context.Background())
	assertDiag(t, Diagnostics(err, "get", agentRef)[0], "Kubernetes connection not configured", "KUBE_CONFIG_PATH")
	assertDiag(t, Diagnostics(errors.New(`getting credentials: exec: executable gke-gcloud-auth-plugin not found`), "get", agentRef)[0],
		"Kubernetes credential plugin failed", "PATH")
	if Diagnostics(nil, "get", agentRef) != nil {
		t.Error("nil error produced diagnostics")
	}
}

func TestDiagnostics_waitTimeout(t *testing.T) {
	err := &WaitError{Goal: "ready", Elapsed: 90 * time.Second, Err: context.DeadlineExceeded, Pending: []PendingObject{
		{Ref: agentRef, Reason: "Ready=False (PodPending): 0/3 nodes are available"},
		{Ref: ObjectRef{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "team-a", Name: "agent-2"}, Reason: "does not exist yet"},
	}}
	d := Diagnostics(fmt.Errorf("create: %w", err), "wait", agentRef)
	assertDiag(t, d[0], "Timed out waiting for Kubernetes objects",
		`Sandbox "team-a/agent-1": Ready=False (PodPending): 0/3 nodes are available`,
		`Sandbox "team-a/agent-2": does not exist yet`, "1m30s", "timeouts")

	failed := &WaitError{Goal: "ready", Failed: true, Err: errors.New("Finished=True (Failed): exit code 1"), Pending: []PendingObject{{Ref: agentRef}}}
	assertDiag(t, Diagnostics(failed, "wait", agentRef)[0], "Sandbox failed", "exit code 1")
}

func TestObjectRefString(t *testing.T) {
	for ref, want := range map[ObjectRef]string{
		agentRef: `Sandbox "team-a/agent-1"`,
		{GVR: crdGVR, Name: "sandboxes.agents.x-k8s.io"}:   `customresourcedefinitions.apiextensions.k8s.io "sandboxes.agents.x-k8s.io"`,
		{GVR: sandboxGVR, Kind: "Sandbox", Namespace: "x"}: `Sandbox in namespace "x"`,
	} {
		if got := ref.String(); got != want {
			t.Errorf("String() = %s, want %s", got, want)
		}
	}
}
