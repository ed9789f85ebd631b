package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IsNotFound reports whether err says the object does not exist, including
// because its kind is not served at all (its CRD is gone): for Read (remove
// from state) and Delete (already done) both mean the same.
func IsNotFound(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// IsResourceNotServed reports whether err says the API server does not
// serve the resource type at all (typically: the CRDs are not installed),
// as opposed to one object being absent.
func IsResourceNotServed(err error) bool {
	if meta.IsNoMatchError(err) {
		return true
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code != http.StatusNotFound {
		return false
	}
	s := st.Status()
	// A missing object comes back as a JSON Status naming it; a missing
	// type is the mux's plain-text 404, which client-go wraps with an
	// UnexpectedServerResponse cause and a generic message.
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == metav1.CauseTypeUnexpectedServerResponse {
				return true
			}
		}
	}
	return strings.HasPrefix(s.Message, "the server could not find the requested resource")
}

// IsConflict reports whether err is a 409 Conflict: a field manager
// conflict of server-side apply or a stale resourceVersion.
func IsConflict(err error) bool { return apierrors.IsConflict(err) }

// StatusCauses returns the causes the API server gave for rejecting a
// request (one per invalid field of a 422), for callers that map Kubernetes
// field paths to their own attribute paths.
func StatusCauses(err error) []metav1.StatusCause {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return nil
	}
	return st.Status().Details.Causes
}

// RerunIsSafe ends the diagnostics of failures that may pass (overload,
// server errors, a lost connection): what was written stays consistent.
const RerunIsSafe = "Running `terraform apply` again is safe once the cause has passed: every change is a server-side " +
	"apply, which converges however often it is sent, and every creation is atomic, so nothing is created twice; " +
	"objects already written are kept in the state or found again."

// Diagnostics turns an error from a Kubernetes request into diagnostics a
// user can act on. action is what was attempted, as a Kubernetes verb:
// "get", "list", "watch", "create", "update", "patch", "delete", "apply"
// (server-side apply) or "wait". ref names the object (or, with an empty
// Name, the collection) it was attempted on.
//
// The summary is short; the detail says what was sent, what the server
// answered, and what to do about it. A 422 becomes one diagnostic per
// invalid field.
func Diagnostics(err error, action string, ref ObjectRef) diag.Diagnostics {
	if err == nil {
		return nil
	}
	sent := sentLine(action, ref)
	var diags diag.Diagnostics
	add := func(summary string, parts ...string) {
		diags.AddError(summary, strings.Join(append([]string{sent}, parts...), "\n\n"))
	}

	var waitErr *WaitError
	if errors.As(err, &waitErr) {
		diags.AddError(waitErr.summary(), waitErr.detail())
		return diags
	}
	if errors.Is(err, ErrNotConfigured) {
		diags.AddError("Kubernetes connection not configured", err.Error())
		return diags
	}
	if meta.IsNoMatchError(err) {
		add("Kubernetes resource type not installed",
			"The cluster does not serve this kind: "+err.Error()+".",
			notServedHint(ref))
		return diags
	}

	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return apiStatusDiagnostics(st.Status(), err, action, ref, sent)
	}
	transportDiagnostics(err, add)
	return diags
}

func apiStatusDiagnostics(s metav1.Status, err error, action string, ref ObjectRef, sent string) diag.Diagnostics {
	var diags diag.Diagnostics
	answer := answerLine(s)
	add := func(summary string, parts ...string) {
		diags.AddError(summary, strings.Join(append([]string{sent, answer}, parts...), "\n\n"))
	}
	lower := strings.ToLower(s.Message)

	switch {
	case s.Code == http.StatusUnauthorized:
		add("Kubernetes credentials rejected",
			"The API server did not accept the credentials. A token may have expired or belong to another cluster, "+
				"an exec plugin may have returned a stale token, or a client certificate may not be signed by the "+
				"cluster's CA. Check `token`, `client_certificate`/`client_key`, the `exec` block or the kubeconfig user.")

	case strings.Contains(lower, "admission webhook") || strings.Contains(lower, "violates podsecurity") ||
		strings.Contains(lower, "validatingadmissionpolicy"):
		add("Request denied by admission control",
			"An admission webhook or policy of the cluster refused the object. Change the configuration to satisfy "+
				"the policy named above, or ask the cluster's administrators about it.")

	case s.Code == http.StatusForbidden:
		add("Permission denied by Kubernetes RBAC", rbacHint(action, ref))

	case IsResourceNotServed(err):
		add("Kubernetes resource type not installed", notServedHint(ref))

	case s.Code == http.StatusNotFound:
		if d := s.Details; d != nil && d.Kind == "namespaces" && ref.GVR.Resource != "namespaces" {
			add("Namespace not found", fmt.Sprintf("Namespace %q does not exist. Create it first (and make this "+
				"resource depend on it) or use an existing namespace.", d.Name))
			break
		}
		add("Kubernetes object not found",
			"The object does not exist; it may have been deleted outside Terraform. A refresh removes it from state "+
				"so that the next apply creates it again.")

	case s.Reason == metav1.StatusReasonAlreadyExists:
		add("Kubernetes object already exists",
			"An object with this name already exists but is not managed by this Terraform resource. Import it "+
				"(terraform import) to manage it, delete it, or choose another name.")

	case s.Code == http.StatusConflict:
		if conflicts := fieldManagerConflicts(s); len(conflicts) > 0 {
			add("Field manager conflict",
				"These fields are owned by another field manager (for example kubectl, an autoscaler or another "+
					"Terraform configuration), and server-side apply will not silently take them over:\n"+conflicts,
				"Either remove these fields from this configuration, undo the other manager's change, or re-apply "+
					"with conflicts forced, which makes this provider the owner and overwrites the other value.")
			break
		}
		add("Kubernetes object changed concurrently",
			"The object was modified by someone else between read and write. Run terraform apply again.")

	case s.Code == http.StatusUnprocessableEntity || (s.Code == http.StatusBadRequest && len(fieldCauses(s)) > 0):
		causes := fieldCauses(s)
		if len(causes) == 0 {
			add(fmt.Sprintf("Invalid %s", kindOf(ref)), "Fix the configuration so the object passes the API server's validation.")
			break
		}
		for _, c := range causes {
			summary := fmt.Sprintf("Invalid %s", kindOf(ref))
			what := "The API server rejected the object"
			if c.Field != "" {
				summary = fmt.Sprintf("Invalid %s field %s", kindOf(ref), c.Field)
				what = fmt.Sprintf("The API server rejected field %s", c.Field)
			}
			diags.AddError(summary, fmt.Sprintf("%s\n\n%s: %s (%s).\n\nFix the value of this field in the configuration.",
				sent, what, c.Message, c.Type))
		}

	case s.Code == http.StatusTooManyRequests:
		add("Kubernetes API server overloaded",
			"The API server kept asking the provider to slow down, and retries did not get through. Lower `qps` "+
				"and `burst`, reduce Terraform's -parallelism, or try again later.", RerunIsSafe)

	case strings.Contains(lower, "conversion webhook"):
		add("Kubernetes conversion webhook failed",
			"The API server could not convert the object between versions of its custom resource definition "+
				"because the conversion webhook (served by the controller) did not answer. Check that the "+
				"controller is running and ready, or upgrade to a release that serves a single version.")

	case IsContentRejected(err):
		// Server-side apply answers 500 when the object does not fit the
		// kind's schema (a number where a string belongs): the server is
		// fine, the object is not.
		add(fmt.Sprintf("The API server rejected the content of %s", kindOf(ref)),
			"The object does not match the schema of its kind, so the server refused it. This is not a problem of the "+
				"control plane: fix the field the answer names (for example quote a number that must be a string).")

	case s.Code >= 500 || s.Reason == metav1.StatusReasonTimeout || s.Reason == metav1.StatusReasonServerTimeout:
		add("Kubernetes API server error",
			"The API server failed to handle the request, and retries did not help. Check the health of the "+
				"control plane and try again.", RerunIsSafe)

	default:
		add("Kubernetes API request failed")
	}
	return diags
}

func transportDiagnostics(err error, add func(string, ...string)) {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verification     *tls.CertificateVerificationError
		dnsErr           *net.DNSError
		netErr           net.Error
	)
	msg := err.Error()
	switch {
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &verification):
		add("Kubernetes API server certificate not trusted",
			"TLS verification of the API server failed: "+msg+".",
			"Set `cluster_ca_certificate` (KUBE_CLUSTER_CA_CERT_DATA) to the CA that signed the server's "+
				"certificate, or `tls_server_name` when connecting through an address the certificate does not "+
				"name. `insecure = true` turns verification off; use it only against throw-away clusters.")
	case strings.Contains(msg, "getting credentials"):
		add("Kubernetes credential plugin failed",
			"Running the exec credential plugin failed: "+msg+".",
			"Check the `exec` block (or the kubeconfig user's exec section): the command must be installed and on "+
				"PATH for Terraform, take no interactive input, and print an ExecCredential of the configured api_version.")
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		add("Kubernetes API request timed out",
			"No answer arrived in time: "+msg+".",
			"Check that `host` (or the kubeconfig's server) is reachable from where Terraform runs, that "+
				"`proxy_url` is right, and raise the resource's timeouts if the cluster is merely slow.", RerunIsSafe)
	case errors.Is(err, context.Canceled):
		add("Kubernetes API request cancelled", "The operation was cancelled: "+msg+".")
	case errors.As(err, &dnsErr), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH), errors.As(err, &netErr):
		add("Cannot reach the Kubernetes API server",
			"The connection failed: "+msg+".",
			"Check `host` (or the kubeconfig's server and context), `proxy_url`, and that the cluster is running "+
				"and reachable from where Terraform runs.", RerunIsSafe)
	default:
		add("Kubernetes API request failed", "Error: "+msg+".")
	}
}

func sentLine(action string, ref ObjectRef) string {
	gv := ref.GVR.GroupVersion().String()
	target := ref.String()
	if ref.Name == "" {
		target = "the " + ref.GVR.Resource + " collection"
		if ref.Namespace != "" {
			target += fmt.Sprintf(" in namespace %q", ref.Namespace)
		}
	}
	switch action {
	case "apply":
		action = "apply (server-side)"
	case "wait":
		action = "wait for"
	}
	return fmt.Sprintf("Request: %s %s (API %s, resource %s).", action, target, gv, ref.GVR.Resource)
}

func answerLine(s metav1.Status) string {
	line := fmt.Sprintf("The API server answered %d", s.Code)
	if text := http.StatusText(int(s.Code)); text != "" {
		line += " " + text
	}
	if s.Reason != "" && string(s.Reason) != strings.ReplaceAll(http.StatusText(int(s.Code)), " ", "") {
		line += fmt.Sprintf(" (reason %s)", s.Reason)
	}
	if s.Message != "" {
		line += ": " + s.Message
	}
	return line + "."
}

func kindOf(ref ObjectRef) string {
	if ref.Kind != "" {
		return ref.Kind
	}
	return ref.GVR.Resource
}

// rbacHint names the RBAC rule the identity lacks, in the form an
// administrator would paste into a Role.
func rbacHint(action string, ref ObjectRef) string {
	var verbs []string
	switch action {
	case "apply":
		// Server-side apply is a PATCH, which also needs create when it
		// creates the object.
		verbs = []string{"patch", "create"}
	case "wait":
		verbs = []string{"list", "watch"}
	case "":
		verbs = []string{"get"}
	default:
		verbs = []string{action}
	}
	quoted := make([]string, len(verbs))
	for i, v := range verbs {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	scope := "cluster-wide (a ClusterRole)"
	if ref.Namespace != "" {
		scope = fmt.Sprintf("in namespace %q (a Role there, or a ClusterRole)", ref.Namespace)
	}
	resource := ref.GVR.Resource
	if ref.GVR.Group != "" {
		resource += "." + ref.GVR.Group
	}
	canI := fmt.Sprintf("kubectl auth can-i %s %s", verbs[0], resource)
	if ref.Namespace != "" {
		canI += " -n " + ref.Namespace
	}
	return fmt.Sprintf("The identity the provider authenticates as needs the RBAC verb(s) %s on resource %q "+
		"of API group %q %s, e.g. the rule {apiGroups: [%q], resources: [%q], verbs: [%s]}. "+
		"Check with `kubectl auth whoami` and `%s`, or use credentials that have this permission.",
		strings.Join(quoted, ", "), ref.GVR.Resource, ref.GVR.Group, scope,
		ref.GVR.Group, ref.GVR.Resource, strings.Join(quoted, ", "), canI)
}

func notServedHint(ref ObjectRef) string {
	gv := ref.GVR.GroupVersion().String()
	if strings.HasSuffix(ref.GVR.Group, "agents.x-k8s.io") {
		return fmt.Sprintf("The cluster does not serve %s %s: the agent-sandbox CRDs are not installed, or not at "+
			"this version. Install them with an `agentsandbox_controller` resource (and make this resource depend "+
			"on it), or enable GKE's managed add-on with `agentsandbox_gke_addon`; a controller older than the "+
			"v1beta1 API must be upgraded.", gv, ref.GVR.Resource)
	}
	return fmt.Sprintf("The cluster does not serve %s %s. Install the CustomResourceDefinition that provides it, "+
		"or check that the API version is supported by this cluster's Kubernetes version.", gv, ref.GVR.Resource)
}

var conflictManagerRE = regexp.MustCompile(`conflict with "([^"]*)"`)

// fieldManagerConflicts lists "field: owned by manager" lines for a server-side
// apply conflict, or "" when s is not one.
func fieldManagerConflicts(s metav1.Status) string {
	if s.Details == nil {
		return ""
	}
	var lines []string
	for _, c := range s.Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		owner := c.Message
		if m := conflictManagerRE.FindStringSubmatch(c.Message); m != nil {
			owner = fmt.Sprintf("field manager %q", m[1])
		}
		lines = append(lines, fmt.Sprintf("  - %s is owned by %s", c.Field, owner))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// fieldCauses are the causes that point at a field of the object.
func fieldCauses(s metav1.Status) []metav1.StatusCause {
	if s.Details == nil {
		return nil
	}
	var out []metav1.StatusCause
	for _, c := range s.Details.Causes {
		if c.Type == metav1.CauseTypeUnexpectedServerResponse {
			continue
		}
		out = append(out, c)
	}
	return out
}

// contentRejectedMarkers are what the API server says, with status 500,
// when server-side apply cannot convert the object to its kind's schema.
var contentRejectedMarkers = []string{"failed to create typed patch object", "failed to create typed live object"}

// IsContentRejected reports whether err is the API server refusing an
// object's content as not matching its schema, which server-side apply
// reports as an internal error (500) although nothing is wrong with the
// server and retrying cannot help.
func IsContentRejected(err error) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	return isContentRejectedMessage(st.Status().Message)
}

func isContentRejectedMessage(msg string) bool {
	for _, m := range contentRejectedMarkers {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}
