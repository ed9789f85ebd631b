package acctest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// Bounds of the helpers below. Deletion is usually immediate (no
// finalizers in this API), but garbage collection and namespace
// finalisation on a busy 2-core machine can take tens of seconds.
const (
	// GoneTimeout bounds waiting for a deleted object to disappear.
	GoneTimeout = 90 * time.Second
	// pollInterval is short: the local API server answers a GET in about a
	// millisecond, and the tests' latency is what is being saved.
	pollInterval   = 100 * time.Millisecond
	cleanupTimeout = 30 * time.Second
)

// ObjectRef names one object in the test cluster.
type ObjectRef struct {
	GVR       schema.GroupVersionResource
	Namespace string // "" for cluster-scoped objects
	Name      string
}

func (r ObjectRef) String() string {
	res := r.GVR.Resource
	if r.GVR.Group != "" {
		res += "." + r.GVR.Group
	}
	if r.Namespace == "" {
		return res + " " + r.Name
	}
	return res + " " + r.Namespace + "/" + r.Name
}

func (r ObjectRef) client(dyn dynamic.Interface) dynamic.ResourceInterface {
	if r.Namespace == "" {
		return dyn.Resource(r.GVR)
	}
	return dyn.Resource(r.GVR).Namespace(r.Namespace)
}

// GetObject reads an object from the API server. It needs no *testing.T, so
// it works inside CheckDestroy and other terraform-plugin-testing callbacks;
// a missing object yields an error for which apierrors.IsNotFound is true.
func GetObject(ctx context.Context, ref ObjectRef) (*unstructured.Unstructured, error) {
	c, err := getClients()
	if err != nil {
		return nil, err
	}
	return ref.client(c.dyn).Get(ctx, ref.Name, metav1.GetOptions{})
}

// Get reads an object and fails t if it cannot (including when it does not
// exist).
func Get(t testing.TB, ref ObjectRef) *unstructured.Unstructured {
	t.Helper()
	obj, err := ref.client(Dynamic(t)).Get(t.Context(), ref.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", ref, err)
	}
	return obj
}

// Delete deletes an object out of band (as `kubectl delete` would) and
// waits until it is gone, so that the next Terraform step is guaranteed to
// see it missing. Dependants are left to the garbage collector.
func Delete(t testing.TB, ref ObjectRef) {
	t.Helper()
	if err := deleteAndWait(t.Context(), ref); err != nil {
		t.Fatal(err)
	}
}

// Patch changes an object out of band, as another tool or a person would;
// `_drift` tests use it and then expect a plan that restores the object.
// The patch is JSON for types.MergePatchType and types.JSONPatchType.
func Patch(t testing.TB, ref ObjectRef, pt types.PatchType, patch string) *unstructured.Unstructured {
	t.Helper()
	obj, err := patchObject(t.Context(), ref, pt, patch)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// WaitFor polls cond until it reports done, fails t if it returns an error,
// and fails t after timeout naming what was awaited and the last status
// cond reported (so a timeout says why, not just that).
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (done bool, status string, err error)) {
	t.Helper()
	if err := waitFor(t.Context(), timeout, what, cond); err != nil {
		t.Fatal(err)
	}
}

func waitFor(ctx context.Context, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) error {
	var status string
	var condErr error
	t0 := time.Now()
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		done, st, cerr := cond(ctx)
		if !done && cerr == nil && ctx.Err() != nil {
			// The deadline cut this poll short: its status is only
			// "context deadline exceeded", so keep the last real one.
			return false, nil //nolint:nilerr // the deadline ends the poll; PollUntilContextTimeout reports it
		}
		status, condErr = st, cerr
		return done || condErr != nil, nil
	})
	switch {
	case condErr != nil:
		return fmt.Errorf("waiting for %s: %w", what, condErr)
	case err != nil:
		if status == "" {
			status = "no status reported"
		}
		return fmt.Errorf("%s: not done after %s: %s", what, time.Since(t0).Round(time.Millisecond), status)
	}
	return nil
}

func deleteAndWait(ctx context.Context, ref ObjectRef) error {
	c, err := getClients()
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	if err := ref.client(c.dyn).Delete(ctx, ref.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		return fmt.Errorf("deleting %s out of band: %w", ref, err)
	}
	return waitGone(ctx, ref, GoneTimeout)
}

func waitGone(ctx context.Context, ref ObjectRef, timeout time.Duration) error {
	// lastSeen is what the last successful read said. A failed read (a
	// transient API error, or the last poll refused by the rate limiter
	// because the deadline is near) says nothing new about the object, so
	// it is only reported when no read ever succeeded.
	var lastSeen string
	return waitFor(ctx, timeout, ref.String()+" to be deleted", func(ctx context.Context) (bool, string, error) {
		obj, err := GetObject(ctx, ref)
		switch {
		case apierrors.IsNotFound(err):
			return true, "", nil
		case err != nil && lastSeen != "":
			return false, lastSeen, nil //nolint:nilerr // see above
		case err != nil:
			return false, err.Error(), nil //nolint:nilerr // see above
		}
		lastSeen = describeExisting(obj)
		return false, lastSeen, nil
	})
}

// describeExisting says why an object that should be gone is still there.
func describeExisting(obj *unstructured.Unstructured) string {
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		return fmt.Sprintf("still exists, deleting since %s, finalizers %v", ts.Format(time.RFC3339), obj.GetFinalizers())
	}
	return "still exists and is not being deleted"
}

func patchObject(ctx context.Context, ref ObjectRef, pt types.PatchType, patch string) (*unstructured.Unstructured, error) {
	c, err := getClients()
	if err != nil {
		return nil, err
	}
	obj, err := ref.client(c.dyn).Patch(ctx, ref.Name, pt, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("patching %s out of band: %w", ref, err)
	}
	return obj, nil
}

// RefFromAttributes locates the object behind a Terraform resource: its
// "namespace" and "name" attributes when it has a "name", else its ID read as
// "namespace/name" or "name". Resources of this provider follow the first
// convention; the ID fallback serves types that do not.
func RefFromAttributes(gvr schema.GroupVersionResource, attrs map[string]string, id string) (ObjectRef, error) {
	if name := attrs["name"]; name != "" {
		return ObjectRef{GVR: gvr, Namespace: attrs["namespace"], Name: name}, nil
	}
	if id == "" {
		return ObjectRef{}, errors.New("resource has neither a name attribute nor an ID")
	}
	if ns, name, ok := strings.Cut(id, "/"); ok {
		if ns == "" || name == "" || strings.Contains(name, "/") {
			return ObjectRef{}, fmt.Errorf("cannot read %q as namespace/name", id)
		}
		return ObjectRef{GVR: gvr, Namespace: ns, Name: name}, nil
	}
	return ObjectRef{GVR: gvr, Name: id}, nil
}

func refFromState(s *terraform.State, address string, gvr schema.GroupVersionResource) (ObjectRef, error) {
	rs, ok := s.RootModule().Resources[address]
	if !ok {
		return ObjectRef{}, fmt.Errorf("%s is not in the state", address)
	}
	if rs.Primary == nil {
		return ObjectRef{}, fmt.Errorf("%s has no instance in the state", address)
	}
	return RefFromAttributes(gvr, rs.Primary.Attributes, rs.Primary.ID)
}

// CheckExists is a TestStep Check: the object behind address exists in the
// cluster and passes every check.
func CheckExists(address string, gvr schema.GroupVersionResource, checks ...func(*unstructured.Unstructured) error) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ref, err := refFromState(s, address, gvr)
		if err != nil {
			return err
		}
		obj, err := GetObject(context.Background(), ref)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", address, ref, err)
		}
		for _, check := range checks {
			if err := check(obj); err != nil {
				return fmt.Errorf("%s: %s: %w", address, ref, err)
			}
		}
		return nil
	}
}

// CheckDestroy is a TestCase CheckDestroy: every resource of resourceType
// that was in the state is gone from the cluster. It waits up to
// GoneTimeout, since a destroy may legitimately return before the API
// server has finished deleting.
func CheckDestroy(resourceType string, gvr schema.GroupVersionResource) resource.TestCheckFunc {
	return checkDestroy(resourceType, gvr, GoneTimeout)
}

func checkDestroy(resourceType string, gvr schema.GroupVersionResource, timeout time.Duration) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		var errs []error
		for address, rs := range s.RootModule().Resources {
			if rs.Type != resourceType || strings.HasPrefix(address, "data.") || rs.Primary == nil {
				continue
			}
			ref, err := RefFromAttributes(gvr, rs.Primary.Attributes, rs.Primary.ID)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", address, err))
				continue
			}
			if err := waitGone(context.Background(), ref, timeout); err != nil {
				errs = append(errs, fmt.Errorf("%s after destroy: %w", address, err))
			}
		}
		return errors.Join(errs...)
	}
}

// CheckDisappears is a TestStep Check for `_disappears` tests: it deletes
// the object behind address out of band and waits until it is gone. Pair
// it with ExpectNonEmptyPlan: the next plan must want to create it again.
func CheckDisappears(address string, gvr schema.GroupVersionResource) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ref, err := refFromState(s, address, gvr)
		if err != nil {
			return err
		}
		return deleteAndWait(context.Background(), ref)
	}
}

// CheckPatch is a TestStep Check for `_drift` tests: it patches the object
// behind address out of band (see Patch). Pair it with ExpectNonEmptyPlan,
// or follow it with a step whose plan checks expect the update.
func CheckPatch(address string, gvr schema.GroupVersionResource, pt types.PatchType, patch string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ref, err := refFromState(s, address, gvr)
		if err != nil {
			return err
		}
		_, err = patchObject(context.Background(), ref, pt, patch)
		return err
	}
}

// ExpectObject is a ConfigStateChecks entry: the object behind address
// exists in the cluster and passes every check, e.g. that a field the
// provider manages has the value Terraform stored.
func ExpectObject(address string, gvr schema.GroupVersionResource, checks ...func(*unstructured.Unstructured) error) statecheck.StateCheck {
	return objectStateCheck{address: address, gvr: gvr, checks: checks}
}

type objectStateCheck struct {
	address string
	gvr     schema.GroupVersionResource
	checks  []func(*unstructured.Unstructured) error
}

func (c objectStateCheck) CheckState(ctx context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	res := findResource(req.State, c.address)
	if res == nil {
		resp.Error = fmt.Errorf("%s is not in the state", c.address)
		return
	}
	attrs := map[string]string{}
	for _, k := range []string{"name", "namespace", "id"} {
		if v, ok := res.AttributeValues[k].(string); ok {
			attrs[k] = v
		}
	}
	ref, err := RefFromAttributes(c.gvr, attrs, attrs["id"])
	if err != nil {
		resp.Error = fmt.Errorf("%s: %w", c.address, err)
		return
	}
	obj, err := GetObject(ctx, ref)
	if err != nil {
		resp.Error = fmt.Errorf("%s: %s: %w", c.address, ref, err)
		return
	}
	for _, check := range c.checks {
		if err := check(obj); err != nil {
			resp.Error = fmt.Errorf("%s: %s: %w", c.address, ref, err)
			return
		}
	}
}

// findResource looks address up in the root module and, recursively, in
// child modules (whose resource addresses carry the module path).
func findResource(state *tfjson.State, address string) *tfjson.StateResource {
	if state == nil || state.Values == nil {
		return nil
	}
	var walk func(m *tfjson.StateModule) *tfjson.StateResource
	walk = func(m *tfjson.StateModule) *tfjson.StateResource {
		if m == nil {
			return nil
		}
		for _, r := range m.Resources {
			if r.Address == address {
				return r
			}
		}
		for _, child := range m.ChildModules {
			if r := walk(child); r != nil {
				return r
			}
		}
		return nil
	}
	return walk(state.Values.RootModule)
}

// cleanupContext is for t.Cleanup functions, which run after t.Context()
// has been cancelled.
func cleanupContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), cleanupTimeout)
}
