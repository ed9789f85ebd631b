package gkeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

func TestErrorDiagnostics(t *testing.T) {
	const cluster = "projects/p/locations/l/clusters/c"
	cases := []struct {
		name        string
		err         error
		method      string
		wantSummary string
		wantDetail  []string
	}{
		{
			name: "403 names the permission and role",
			err: apiError(t, 403, "PERMISSION_DENIED", `Required "container.clusters.update" permission(s) for "projects/p/locations/l/clusters/c".`,
				map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "IAM_PERMISSION_DENIED", "domain": "container.googleapis.com"}),
			method:      MethodNodePoolsCreate,
			wantSummary: "GKE permission denied",
			wantDetail: []string{"Request: projects.locations.clusters.nodePools.create " + cluster,
				"HTTP 403 PERMISSION_DENIED", "reason=IAM_PERMISSION_DENIED", "container.clusters.update", "roles/container.clusterAdmin"},
		},
		{
			name:        "403 without a named permission uses GKE's IAM table",
			err:         apiError(t, 403, "PERMISSION_DENIED", "The caller does not have permission"),
			method:      MethodClustersGet,
			wantSummary: "GKE permission denied",
			wantDetail:  []string{"container.clusters.getCredentials", "roles/container.clusterViewer"},
		},
		{
			name:        "403 actAs on the node service account",
			err:         apiError(t, 403, "PERMISSION_DENIED", `Permission "iam.serviceAccounts.actAs" denied on service account nodes@p.iam.gserviceaccount.com`),
			method:      MethodNodePoolsCreate,
			wantSummary: "GKE permission denied",
			wantDetail:  []string{"roles/iam.serviceAccountUser"},
		},
		{
			name: "403 API disabled",
			err: apiError(t, 403, "PERMISSION_DENIED", "Kubernetes Engine API has not been used in project p before or it is disabled.",
				map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "SERVICE_DISABLED", "domain": "googleapis.com"}),
			method:      MethodClustersGet,
			wantSummary: "Kubernetes Engine API not enabled",
			wantDetail:  []string{"gcloud services enable container.googleapis.com"},
		},
		{
			name:        "404",
			err:         apiError(t, 404, "NOT_FOUND", "Not found: projects/p/locations/l/clusters/c."),
			method:      MethodClustersGet,
			wantSummary: "GKE resource not found",
			wantDetail:  []string{"HTTP 404 NOT_FOUND: Not found", "Check the project, location", cluster},
		},
		{
			name: "400 invalid argument names the field",
			err: apiError(t, 400, "INVALID_ARGUMENT", "Invalid image type.",
				map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest",
					"fieldViolations": []any{map[string]any{"field": "node_pool.config.image_type", "description": "must be COS_CONTAINERD for gVisor"}}}),
			method:      MethodNodePoolsCreate,
			wantSummary: "GKE rejected the request as invalid",
			wantDetail:  []string{"field node_pool.config.image_type: must be COS_CONTAINERD", "Fix the field(s) named above: node_pool.config.image_type"},
		},
		{
			name:        "busy cluster not retried by the caller",
			err:         apiError(t, 400, "FAILED_PRECONDITION", "Cluster is running incompatible operation operation-1."),
			method:      MethodNodePoolsDelete,
			wantSummary: "GKE cluster busy with another operation",
			wantDetail:  []string{"FAILED_PRECONDITION", "incompatible operation"},
		},
		{
			name:        "other precondition",
			err:         apiError(t, 400, "FAILED_PRECONDITION", "Cannot delete the only node pool."),
			method:      MethodNodePoolsDelete,
			wantSummary: "GKE refused the request in the cluster's current state",
			wantDetail:  []string{"Cannot delete the only node pool."},
		},
		{
			name:        "409 already exists",
			err:         apiError(t, 409, "ALREADY_EXISTS", "Already exists: np."),
			method:      MethodNodePoolsCreate,
			wantSummary: "GKE resource already exists",
			wantDetail:  []string{"terraform import"},
		},
		{
			name:        "401",
			err:         apiError(t, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials."),
			method:      MethodClustersGet,
			wantSummary: "GKE authentication failed",
			wantDetail:  []string{"access_token"},
		},
		{
			name:        "token endpoint",
			err:         fmt.Errorf("wrapped: %w", &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "Invalid JWT Signature."}),
			method:      MethodClustersGet,
			wantSummary: "Google authentication failed",
			wantDetail:  []string{"invalid_grant"},
		},
		{
			name:        "context deadline",
			err:         fmt.Errorf("Get: %w", context.DeadlineExceeded),
			method:      MethodClustersGet,
			wantSummary: "GKE request timed out",
			wantDetail:  []string{"raise this resource's timeouts"},
		},
		{
			name:        "anything else",
			err:         errors.New("dial tcp: connection refused"),
			method:      MethodClustersGet,
			wantSummary: "GKE request failed",
			wantDetail:  []string{"connection refused"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := ErrorDiagnostic(tc.err, tc.method, cluster)
			if d.Summary() != tc.wantSummary {
				t.Errorf("summary = %q, want %q", d.Summary(), tc.wantSummary)
			}
			for _, w := range tc.wantDetail {
				if !strings.Contains(d.Detail(), w) {
					t.Errorf("detail lacks %q:\n%s", w, d.Detail())
				}
			}
		})
	}
}

func TestErrorClassifiers(t *testing.T) {
	if !IsNotFound(apiError(t, 404, "NOT_FOUND", "gone")) {
		t.Error("IsNotFound")
	}
	if !IsAlreadyExists(apiError(t, 409, "ALREADY_EXISTS", "exists")) {
		t.Error("IsAlreadyExists")
	}
	if IsAlreadyExists(apiError(t, 409, "ABORTED", "Operation already in progress on the cluster.")) {
		t.Error("a busy 409 is not ALREADY_EXISTS")
	}
	if IsClusterBusy(apiError(t, 400, "INVALID_ARGUMENT", "Please wait and try again")) {
		t.Error("INVALID_ARGUMENT is never busy")
	}
	// The older error format carries no status, only a reason.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := "Operation operation-1 is currently upgrading cluster c. Please wait and try again once it is done."
		writeJSON(w, 400, map[string]any{"error": map[string]any{"code": 400, "message": msg,
			"errors": []any{map[string]any{"reason": "failedPrecondition", "message": msg}}}})
	}))
	defer srv.Close()
	_, err := newTestClient(t, srv.URL).GetCluster(context.Background(), "projects/p/locations/l/clusters/c")
	if !IsClusterBusy(err) {
		t.Errorf("legacy failedPrecondition answer not seen as busy: %v", err)
	}
	if IsClusterBusy(errors.New("Please wait and try again")) {
		t.Error("a non-API error is never busy")
	}
}
