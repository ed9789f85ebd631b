package gkeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"golang.org/x/oauth2"
)

// API method IDs, as GKE's documentation and IAM tables name them. Pass one
// to ErrorDiagnostic so the diagnostic can say what was sent and which
// permission it needs.
const (
	MethodClustersGet           = "projects.locations.clusters.get"
	MethodClustersUpdate        = "projects.locations.clusters.update"
	MethodClustersSetAddons     = "projects.locations.clusters.setAddons"
	MethodNodePoolsCreate       = "projects.locations.clusters.nodePools.create"
	MethodNodePoolsGet          = "projects.locations.clusters.nodePools.get"
	MethodNodePoolsList         = "projects.locations.clusters.nodePools.list"
	MethodNodePoolsUpdate       = "projects.locations.clusters.nodePools.update"
	MethodNodePoolsDelete       = "projects.locations.clusters.nodePools.delete"
	MethodNodePoolsSetSize      = "projects.locations.clusters.nodePools.setSize"
	MethodNodePoolsSetAutoscale = "projects.locations.clusters.nodePools.setAutoscaling"
	MethodNodePoolsSetManage    = "projects.locations.clusters.nodePools.setManagement"
	MethodOperationsGet         = "projects.locations.operations.get"
)

// permissionFor is GKE's documented IAM requirement per method, with the
// smallest predefined role that grants it.
var permissionFor = map[string]struct{ permission, role string }{
	MethodClustersGet:           {"container.clusters.get and container.clusters.getCredentials", "roles/container.clusterViewer"},
	MethodClustersUpdate:        {"container.clusters.update", "roles/container.clusterAdmin"},
	MethodClustersSetAddons:     {"container.clusters.update", "roles/container.clusterAdmin"},
	MethodNodePoolsCreate:       {"container.clusters.update", "roles/container.clusterAdmin"},
	MethodNodePoolsGet:          {"container.clusters.get", "roles/container.clusterViewer"},
	MethodNodePoolsList:         {"container.clusters.get", "roles/container.clusterViewer"},
	MethodNodePoolsUpdate:       {"container.clusters.update", "roles/container.clusterAdmin"},
	MethodNodePoolsDelete:       {"container.clusters.update", "roles/container.clusterAdmin"},
	MethodNodePoolsSetSize:      {"container.clusters.update", "roles/container.clusterAdmin"},
	MethodNodePoolsSetAutoscale: {"container.clusters.update", "roles/container.clusterAdmin"},
	MethodNodePoolsSetManage:    {"container.clusters.update", "roles/container.clusterAdmin"},
	MethodOperationsGet:         {"container.operations.get", "roles/container.viewer"},
}

// ErrorDiagnostic turns an error from this package, or from a call made
// through Client.Service, into a Terraform error diagnostic. method is the
// API method that was called (one of the Method constants, or any text) and
// resource the name it was called on. The summary is short; the detail says
// what was sent, what GKE answered and what to do about it.
func ErrorDiagnostic(err error, method, resource string) diag.Diagnostic {
	summary, detail := describeError(err, method, resource)
	return diag.NewErrorDiagnostic(summary, detail)
}

func describeError(err error, method, resource string) (string, string) {
	var b strings.Builder
	sent := strings.TrimSpace(method + " " + resource)
	if sent != "" {
		fmt.Fprintf(&b, "Request: %s\n", sent)
	}

	var (
		failed  *OperationFailedError
		waited  *OperationTimeoutError
		busy    *ClusterBusyError
		tokErr  *oauth2.RetrieveError
		summary string
		todo    string
	)
	switch {
	case errors.As(err, &failed):
		fmt.Fprintf(&b, "GKE answered: %s\n", failed.Error())
		return "GKE operation failed", b.String() + "\nWhat to do: fix the cause above and apply again. A failed create can " +
			"leave an object in ERROR state in GKE; the next apply replaces it, or delete it in the console."
	case errors.As(err, &waited):
		fmt.Fprintf(&b, "Result: %s\n", waited.Error())
		return "Timed out waiting for GKE operation", b.String() + "\nWhat to do: the operation keeps running in GKE. " +
			"Raise this resource's timeouts (a timeouts block), or follow it with `gcloud container operations describe`, " +
			"then apply again: the provider picks up the object in whatever state it reached."
	case errors.As(err, &busy):
		writeAPIStatus(&b, busy.Err)
		fmt.Fprintf(&b, "The provider retried for %s (%d attempts) until this resource's timeout.\n",
			busy.Waited.Round(time.Second), busy.Attempts)
		return "GKE cluster busy with another operation", b.String() + "\nWhat to do: GKE runs one operation per cluster at a " +
			"time (including its own auto-upgrades and repairs). Raise this resource's timeouts so the provider waits " +
			"longer, or wait for the running operation to finish and apply again."
	case errors.As(err, &tokErr):
		fmt.Fprintf(&b, "Google's token endpoint answered: %s\n", tokErr.Error())
		return "Google authentication failed", b.String() + "\nWhat to do: check the provider's credentials or " +
			"access_token (or Application Default Credentials): the key may be revoked, disabled or expired."
	}

	st, ok := statusOf(err)
	if !ok {
		if errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintf(&b, "Error: %v\n", err)
			return "GKE request timed out", b.String() + "\nWhat to do: raise this resource's timeouts, or the provider's " +
				"request timeout if single requests are slow."
		}
		fmt.Fprintf(&b, "Error: %v\n", err)
		if isBrokenConnection(err) {
			return "Connection to the GKE API failed", b.String() + "\nWhat to do: the provider retried the request " +
				"(the attempts are counted above) and the connection kept breaking. Check the network path to the " +
				"container API (proxy, firewall, VPN), then run terraform apply again: it is safe. Nothing is made " +
				"twice: a change GKE received before a connection broke is found by the next apply (a node pool " +
				"created is recorded in the state, or named with its import command if it could not be read), and " +
				"updates and deletes converge when sent again."
		}
		return "GKE request failed", b.String()
	}
	writeAPIStatus(&b, err)

	switch {
	case IsClusterBusy(err):
		summary = "GKE cluster busy with another operation"
		todo = "GKE runs one operation per cluster at a time (including its own auto-upgrades and repairs). " +
			"Wait for the running operation to finish and apply again."
	case st.HTTPCode == http.StatusUnauthorized:
		summary = "GKE authentication failed"
		todo = "The token was rejected: check the provider's credentials or access_token (an access token expires after about an hour)."
	case st.HTTPCode == http.StatusForbidden:
		summary, todo = permissionAdvice(st, method)
	case st.HTTPCode == http.StatusNotFound:
		summary = "GKE resource not found"
		todo = "Check the project, location (region vs zone: a regional cluster is not found under one of its zones) " +
			"and name" + inResource(resource) + ", and that the identity can see that project."
	case IsAlreadyExists(err):
		summary = "GKE resource already exists"
		todo = "An object with this name already exists" + inResource(resource) + ". Import it (terraform import) or choose another name."
	case st.HTTPCode == http.StatusTooManyRequests:
		summary = "GKE rate limit or quota exceeded"
		todo = "The provider already retried with backoff. Lower Terraform's -parallelism, or raise the Kubernetes Engine API quota."
	case st.HTTPCode >= 500:
		summary = "GKE server error"
		todo = "This is on GKE's side; reads were retried. Apply again later; if it persists, check the Google Cloud status page."
	case st.HTTPCode == http.StatusBadRequest && st.Status == "FAILED_PRECONDITION":
		summary = "GKE refused the request in the cluster's current state"
		todo = "Read GKE's message above: the cluster or node pool is not in a state that allows this change."
	case st.HTTPCode == http.StatusBadRequest:
		summary = "GKE rejected the request as invalid"
		if fields := fieldViolations(st); len(fields) > 0 {
			todo = "Fix the field(s) named above: " + strings.Join(fields, ", ") + "."
		} else {
			todo = "GKE's message above names the invalid value; fix it in the configuration."
		}
	default:
		summary = fmt.Sprintf("GKE request failed (HTTP %d)", st.HTTPCode)
	}
	if todo != "" {
		fmt.Fprintf(&b, "\nWhat to do: %s", todo)
	}
	return summary, b.String()
}

// writeAPIStatus writes what GKE answered: code, status, message, details
// and how many attempts it took.
func writeAPIStatus(b *strings.Builder, err error) {
	st, ok := statusOf(err)
	if !ok {
		fmt.Fprintf(b, "Error: %v\n", err)
		return
	}
	fmt.Fprintf(b, "GKE answered: HTTP %d", st.HTTPCode)
	if st.Status != "" {
		fmt.Fprintf(b, " %s", st.Status)
	}
	if st.Message != "" {
		fmt.Fprintf(b, ": %s", st.Message)
	}
	b.WriteString("\n")
	for _, d := range st.Details {
		if line := formatDetail(d); line != "" {
			fmt.Fprintf(b, "  - %s\n", line)
		}
	}
	if st.Attempts > 1 {
		fmt.Fprintf(b, "(after %d attempts)\n", st.Attempts)
	}
}

// formatDetail renders one google.rpc detail compactly.
func formatDetail(d map[string]any) string {
	typ, _ := d["@type"].(string)
	typ = typ[strings.LastIndex(typ, "/")+1:]
	switch typ {
	case "google.rpc.ErrorInfo":
		s := fmt.Sprintf("ErrorInfo reason=%v domain=%v", d["reason"], d["domain"])
		if md, ok := d["metadata"].(map[string]any); ok && len(md) > 0 {
			keys := make([]string, 0, len(md))
			for k := range md {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				s += fmt.Sprintf(" %s=%v", k, md[k])
			}
		}
		return s
	case "google.rpc.BadRequest":
		var parts []string
		if fvs, ok := d["fieldViolations"].([]any); ok {
			for _, fv := range fvs {
				if m, ok := fv.(map[string]any); ok {
					parts = append(parts, fmt.Sprintf("field %v: %v", m["field"], m["description"]))
				}
			}
		}
		return strings.Join(parts, "; ")
	case "google.rpc.Help":
		var parts []string
		if links, ok := d["links"].([]any); ok {
			for _, l := range links {
				if m, ok := l.(map[string]any); ok {
					parts = append(parts, fmt.Sprintf("%v: %v", m["description"], m["url"]))
				}
			}
		}
		return "Help: " + strings.Join(parts, "; ")
	case "google.rpc.LocalizedMessage":
		return "" // repeats the message
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return ""
	}
	return truncate(string(raw), 500)
}

// fieldViolations lists BadRequest field names.
func fieldViolations(st *apiStatus) []string {
	var fields []string
	for _, d := range st.Details {
		if fvs, ok := d["fieldViolations"].([]any); ok {
			for _, fv := range fvs {
				if m, ok := fv.(map[string]any); ok {
					if f, _ := m["field"].(string); f != "" {
						fields = append(fields, f)
					}
				}
			}
		}
	}
	return fields
}

var permissionInMessage = regexp.MustCompile(`["'“]((?:container|iam|compute|resourcemanager|serviceusage)\.[a-zA-Z]+\.[a-zA-Z]+)["'”]`)

// permissionAdvice explains a 403: a disabled API, or which permission is
// missing (from GKE's answer if it names one, else from GKE's IAM table)
// and which role grants it.
func permissionAdvice(st *apiStatus, method string) (string, string) {
	for _, d := range st.Details {
		if r, _ := d["reason"].(string); r == "SERVICE_DISABLED" {
			return "Kubernetes Engine API not enabled", "Enable container.googleapis.com in the project " +
				"(gcloud services enable container.googleapis.com), wait a minute, and apply again."
		}
	}
	for _, r := range st.Reasons {
		if r == "accessNotConfigured" {
			return "Kubernetes Engine API not enabled", "Enable container.googleapis.com in the project " +
				"(gcloud services enable container.googleapis.com), wait a minute, and apply again."
		}
	}
	var perms []string
	for _, d := range st.Details {
		if md, ok := d["metadata"].(map[string]any); ok {
			if p, _ := md["permission"].(string); p != "" {
				perms = append(perms, p)
			}
		}
	}
	for _, m := range permissionInMessage.FindAllStringSubmatch(st.Message, -1) {
		if !slices.Contains(perms, m[1]) {
			perms = append(perms, m[1])
		}
	}
	want := permissionFor[method]
	var todo string
	switch {
	case slices.Contains(perms, "iam.serviceAccounts.actAs"):
		todo = "The identity must be allowed to act as the node service account: grant it " +
			"roles/iam.serviceAccountUser on that service account."
	case len(perms) > 0:
		role := want.role
		if role == "" {
			role = "a role that contains it"
		}
		todo = fmt.Sprintf("Grant the identity the permission %s (for example through %s) on the project or cluster.",
			strings.Join(perms, ", "), role)
	case want.permission != "":
		todo = fmt.Sprintf("%s needs %s; grant the identity %s (or a custom role with that permission) on the project.",
			method, want.permission, want.role)
	default:
		todo = "Grant the identity a Kubernetes Engine role on the project (roles/container.clusterAdmin to manage node " +
			"pools and add-ons, roles/container.clusterViewer to read)."
	}
	return "GKE permission denied", todo
}

func inResource(resource string) string {
	if resource == "" {
		return ""
	}
	return " (" + resource + ")"
}
