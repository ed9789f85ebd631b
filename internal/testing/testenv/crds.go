package testenv

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/bundles"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/sandboxapi/releases"
)

// FieldManager is the server-side apply field manager of the harness; it
// differs from the provider's so a test can tell their fields apart.
const FieldManager = "agentsandbox-testenv"

// CRDGVR is the resource of CustomResourceDefinitions.
var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// SandboxCRDs returns the agent-sandbox CRDs the tests run against: those
// of the release ProfileVar names (releases.Default when unset), as its
// release assets have them (ReleaseCRDs), as unstructured objects for
// apply.
func SandboxCRDs() ([]*unstructured.Unstructured, error) {
	p, err := ProfileFromEnv()
	if err != nil {
		return nil, err
	}
	return ReleaseCRDs(context.Background(), p)
}

// crds returns the CRDs of the environment's release, as the release ships
// them; without one, those of releases.Default.
func (e *Env) crds(ctx context.Context) ([]*unstructured.Unstructured, error) {
	p := releases.Default
	if e.opts.Profile != nil {
		p = *e.opts.Profile
	}
	return ReleaseCRDs(ctx, p)
}

// ReleaseCRDs returns the four CRDs of release p as its release assets
// have them (package bundles: upstream's files rendered from the release's
// module), as unstructured objects for apply.
func ReleaseCRDs(_ context.Context, p releases.Profile) ([]*unstructured.Unstructured, error) {
	out, err := bundles.CRDs(p.Name)
	if err != nil {
		return nil, err
	}
	for _, u := range out {
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	}
	return out, nil
}

// routeWebhookService creates the release's conversion webhook Service
// (namespace agent-sandbox-system, which the controller also needs for its
// certificate Secret) and, on the local cluster, routes the API server's
// connections to it to port on 127.0.0.1, where the release's controller
// serves its webhook.
func (e *Env) routeWebhookService(ctx context.Context, cfg *rest.Config, port int) error {
	svc := webhookService
	ip, err := ensureWebhookService(ctx, cfg, svc)
	if err != nil {
		return err
	}
	if e.bin == "" {
		e.logf("conversion webhook Service %s/%s not routed: the API server of a given cluster cannot reach this machine's loopback, "+
			"so v1alpha1 requests fail there", svc.Namespace, svc.Name)
		return nil
	}
	socket, err := egressSocket(e.Dir)
	if err != nil {
		return err
	}
	backend := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	r, err := startServiceRoute(socket, hostPort(ip, svc.Port), backend)
	if err != nil {
		return err
	}
	e.route = r
	e.logf("conversion webhook reached as the release names it, Service %s/%s (%s), routed from the cluster egress %s to the controller's webhook at %s",
		svc.Namespace, svc.Name, r.target, socket, backend)
	return nil
}

// InstallCRDs server-side applies crds and waits until the API server
// reports each Established (served) with its names accepted. It is
// idempotent, so it is as safe against a long-lived cluster as against a
// fresh one.
func InstallCRDs(ctx context.Context, cfg *rest.Config, crds []*unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, crdTimeout)
	defer cancel()
	client := dyn.Resource(CRDGVR)
	for _, crd := range crds {
		// Force: the harness is the authority on what the test CRDs look
		// like, even over an earlier run that used another field manager.
		if _, err := client.Apply(ctx, crd.GetName(), crd, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying CRD %s: %w", crd.GetName(), err)
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, client, crd.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// waitEstablished polls rather than watches: establishing takes ~0.35 s, so a
// 50 ms poll costs a handful of GETs and keeps the code trivially correct.
func waitEstablished(ctx context.Context, client dynamic.NamespaceableResourceInterface, name string) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		obj, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			// Retried until the timeout, which reports the last error.
			last = err.Error()
			return false, nil //nolint:nilerr // see above
		}
		ok, why := crdEstablished(obj)
		last = why
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %s", name, last)
	}
	return nil
}

// crdEstablished reads the Established and NamesAccepted conditions; the
// second string explains a false result.
func crdEstablished(crd *unstructured.Unstructured) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	status := map[string]string{}
	var reasons []string
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		status[t] = s
		if s != "True" {
			msg, _ := m["message"].(string)
			reasons = append(reasons, fmt.Sprintf("%s=%s (%s)", t, s, msg))
		}
	}
	if status["Established"] == "True" && status["NamesAccepted"] == "True" {
		return true, ""
	}
	if len(reasons) == 0 {
		return false, "no Established condition yet"
	}
	return false, strings.Join(reasons, "; ")
}
