package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
)

// Create-only server-side apply
//
// Server-side apply has no "create only" mode: an apply to a name that
// exists merges into that object. Checking with a GET first races with
// anyone creating the same name in between (two Terraform resources with
// the same name in one parallel apply both "created" the object, and then
// took it from each other on every apply). A precondition in the applied
// object does not help either: the API server refuses an apply whose
// metadata.uid names no existing object (patch.go in k8s.io/apiserver), and
// a resourceVersion is only a precondition on an existing object.
//
// The one atomic "create if absent" is POST: the server refuses it with
// AlreadyExists whatever the kind. But a POST records its fields under an
// Update entry of the field manager (operation Update), and fields listed
// by an Update entry are never pruned by a later apply of the same manager
// (server-side apply removes only fields no other entry lists; see
// k8s.io/client-go/util/csaupgrade, which exists for this problem). So
// Create continues with two more requests:
//
//  1. POST (under a field manager unique to this create, see "Create
//     attempts" below): created here, or AlreadyExists;
//  2. a forced server-side apply of the same object with the same manager,
//     which records exactly the applied fields under its Apply entry;
//  3. a merge patch of metadata.managedFields, guarded by the
//     resourceVersion, that drops the manager's Update entry from step 1.
//
// Afterwards the object's ownership is exactly what an apply-created object
// has: fields the configuration later drops are removed from the object.
// Fields only the Update entry listed (server defaults) become unowned and
// stay, as they would after an apply. An interruption between steps 1 and
// 3 leaves the Update entry behind; RepairUpdateEntries, run after every
// apply of the object layer, repairs that (it costs nothing otherwise).

// maxOwnershipAttempts bounds the managedFields rewrite when the object
// keeps changing under it (a 409 on the resourceVersion precondition): a
// controller typically answers a create with a burst of its own writes, so
// the attempts are spaced by ConflictBackoff.
const maxOwnershipAttempts = 10

// ConflictBackoff waits before the next attempt of a read-modify-write
// that lost the resourceVersion race for the attempt-th time: 50 ms,
// doubling up to 1 s (about 5 s over ten attempts), or until ctx ends.
// Back-to-back retries lose again and again against a controller that is
// writing the same object at that moment (seen on a loaded CI machine).
func ConflictBackoff(ctx context.Context, attempt int) error {
	d := min(50*time.Millisecond<<min(max(attempt-1, 0), 5), time.Second)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PartialCreateError says the object was created (step 1) but a later step
// failed. Object is what the server returned for the create.
type PartialCreateError struct {
	Ref    ObjectRef
	Object *unstructured.Unstructured
	Err    error
}

func (e *PartialCreateError) Error() string {
	return fmt.Sprintf("%s was created, but recording the provider as its server-side apply owner failed: %v", e.Ref, e.Err)
}

func (e *PartialCreateError) Unwrap() error { return e.Err }

// IsAlreadyExists reports whether err is the server's refusal to create an
// object that exists.
func IsAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// Create creates obj only if no object of that name exists, atomically
// (the server refuses with AlreadyExists, see IsAlreadyExists), and leaves
// it owned by opts.FieldManager exactly as a server-side apply would (see
// above). It returns the live object. With opts.DryRun it only asks the
// server to validate the creation (one request, nothing persisted).
//
// When the object was created but taking ownership failed, the error is a
// *PartialCreateError carrying the created object, so that the caller can
// record it instead of leaving it behind.
func (c *Client) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, errors.New("create: no object")
	}
	ref := RefFor(gvr, obj)
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
		return nil, fmt.Errorf("create %s: apiVersion, kind and metadata.name must be set", ref)
	}
	manager := opts.FieldManager
	if manager == "" {
		manager = DefaultFieldManager
	}
	o := obj.DeepCopy()
	o.SetManagedFields(nil)
	o.SetResourceVersion("")
	if opts.DryRun {
		co := metav1.CreateOptions{FieldManager: manager, DryRun: []string{metav1.DryRunAll}}
		return c.resource(gvr, o.GetNamespace()).Create(ctx, o, co)
	}
	created, err := c.createOnce(ctx, gvr, o, manager)
	if err != nil {
		return nil, err
	}
	live, err := c.Apply(ctx, gvr, obj, ApplyOptions{FieldManager: manager, Force: true})
	if err != nil {
		return nil, &PartialCreateError{Ref: ref, Object: created, Err: err}
	}
	live, err = c.dropUpdateEntry(ctx, gvr, live, manager)
	if err != nil {
		return nil, &PartialCreateError{Ref: ref, Object: created, Err: err}
	}
	return live, nil
}

// Create attempts
//
// A create whose answer is lost (the connection reset after the request was
// sent, a 502/503/504 from a proxy or load balancer in front of the API
// server, a 500) may or may not have created the object, so the transport
// does not resend a POST (resending could only be answered AlreadyExists,
// which would refuse a create that in fact succeeded). createOnce resends
// it itself and tells the two cases apart: each create sends its POST under
// a field manager of its own, manager + "-create-" + a random token, which
// the server records in the new object's managedFields. When a resent POST
// is answered AlreadyExists, one GET says whether that entry is there: the
// object is this create's own (an earlier attempt created it), and the
// create goes on with it; otherwise another creator has the name and the
// create is refused, atomic as ever. The token's entry is dropped at step 3
// like any Update entry of the provider (see splitUpdateEntry).

// createManagerInfix joins the field manager and the token of one create.
const createManagerInfix = "-create-"

// maxCreateAttempts bounds the POSTs of one create.
const maxCreateAttempts = 5

// createBackoff is the delay before POST attempt n+1; a variable so tests
// can shorten it.
var createBackoff = func(attempt int) time.Duration {
	return min(250*time.Millisecond<<(attempt-1), 4*time.Second)
}

// createOnce POSTs o under a field manager unique to this create, resending
// the POST when its outcome is unknown, and returns the object this create
// made, or the error that ended it (AlreadyExists when another creator has
// the name).
func (c *Client) createOnce(ctx context.Context, gvr schema.GroupVersionResource, o *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	token := manager + createManagerInfix + randomToken()
	res := c.resource(gvr, o.GetNamespace())
	// ours looks for the object an earlier attempt may have created.
	ours := func() (*unstructured.Unstructured, bool, error) {
		live, err := c.Get(ctx, gvr, o.GetNamespace(), o.GetName())
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return live, hasManagerEntry(live.GetManagedFields(), token), nil
	}
	unknown := false // an earlier attempt's answer was lost
	for attempt := 1; ; attempt++ {
		created, err := res.Create(ctx, o, metav1.CreateOptions{FieldManager: token})
		switch {
		case err == nil:
			return created, nil
		case apierrors.IsAlreadyExists(err) && unknown:
			if live, mine, gerr := ours(); gerr == nil && mine {
				return live, nil
			}
			return nil, err
		case !createOutcomeUnknown(err):
			return nil, err
		}
		unknown = true
		if attempt >= maxCreateAttempts || ctx.Err() != nil {
			live, mine, gerr := ours()
			switch {
			case gerr == nil && mine:
				return live, nil
			case gerr == nil && live == nil:
				return nil, fmt.Errorf("%w (the create was sent %d times; none of them created the object)", err, attempt)
			}
			return nil, fmt.Errorf("%w (the create was sent %d times; whether one of them created the object could not be "+
				"checked, so it may exist without being in the Terraform state)", err, attempt)
		}
		retryTotal.Add(1)
		timer := time.NewTimer(createBackoff(attempt))
		select {
		case <-ctx.Done():
			timer.Stop()
		case <-timer.C:
		}
	}
}

// createOutcomeUnknown says whether a failed POST may have been sent
// without an answer coming back, or was refused for a passing reason, so
// that resending it (with the token check) is right: connection resets and
// unexpected EOFs, 500, 502, 503, 504 and server timeouts. A refusal that
// would only repeat (400, 403, 404, 409, 422, a schema rejection) is not.
func createOutcomeUnknown(err error) bool {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return false
	}
	if IsContentRejected(err) {
		return false
	}
	switch st.Status().Code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}

func randomToken() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// isCreateManager says whether an Update entry's manager is one of the
// provider's own: the field manager itself (a create made before per-create
// tokens) or one create's token manager.
func isCreateManager(entryManager, manager string) bool {
	return entryManager == manager || strings.HasPrefix(entryManager, manager+createManagerInfix)
}

func hasManagerEntry(entries []metav1.ManagedFieldsEntry, m string) bool {
	for _, e := range entries {
		if e.Manager == m {
			return true
		}
	}
	return false
}

// dropUpdateEntry removes manager's Update entry (main resource, not a
// subresource) from live's managedFields, when manager also has an Apply
// entry, so that its applies alone decide which fields it owns: step 3 of
// Create, where the Apply entry lists exactly the configured fields.
func (c *Client) dropUpdateEntry(ctx context.Context, gvr schema.GroupVersionResource, live *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	return c.rewriteManagedFields(ctx, gvr, live, func(entries []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, bool, error) {
		keep, drop := splitUpdateEntry(entries, manager)
		return keep, drop, nil
	})
}

// RepairUpdateEntries finishes what an interrupted Create left: when live
// (the answer of an apply of obj) still has an Update entry of the field
// manager, the fields it lists are moved into the manager's Apply entry
// (k8s.io/client-go/util/csaupgrade) and obj is applied again, so that
// fields obj no longer sets are removed from the object as they would be
// after any apply. Without such an entry (the normal case) it sends
// nothing; otherwise it costs a merge patch of metadata.managedFields,
// guarded by the resourceVersion, and one apply.
func (c *Client) RepairUpdateEntries(ctx context.Context, gvr schema.GroupVersionResource, live, obj *unstructured.Unstructured, opts ApplyOptions) (*unstructured.Unstructured, error) {
	manager := opts.FieldManager
	if manager == "" {
		manager = DefaultFieldManager
	}
	if !hasUpdateEntry(live.GetManagedFields(), manager) {
		return live, nil
	}
	_, err := c.rewriteManagedFields(ctx, gvr, live, func(entries []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, bool, error) {
		if !hasUpdateEntry(entries, manager) {
			return entries, false, nil
		}
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetManagedFields(entries)
		csaManagers := sets.New(manager)
		for _, e := range entries {
			if isCreateManager(e.Manager, manager) && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
				csaManagers.Insert(e.Manager)
			}
		}
		if err := csaupgrade.UpgradeManagedFields(u, csaManagers, manager); err != nil {
			return nil, false, fmt.Errorf("moving the fields of the %q Update entry to its Apply entry: %w", manager, err)
		}
		return u.GetManagedFields(), true, nil
	})
	if err != nil {
		return nil, err
	}
	return c.Apply(ctx, gvr, obj, opts)
}

func hasUpdateEntry(entries []metav1.ManagedFieldsEntry, manager string) bool {
	for _, e := range entries {
		if isCreateManager(e.Manager, manager) && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			return true
		}
	}
	return false
}

// rewriteManagedFields replaces live's managedFields with what rewrite
// makes of them, by a merge patch guarded by the resourceVersion; when the
// object changed in between (409) it starts over from a fresh read, a few
// times. rewrite says whether there is anything to write at all.
func (c *Client) rewriteManagedFields(ctx context.Context, gvr schema.GroupVersionResource, live *unstructured.Unstructured,
	rewrite func([]metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, bool, error)) (*unstructured.Unstructured, error) {
	for attempt := 1; ; attempt++ {
		keep, write, err := rewrite(live.GetManagedFields())
		if err != nil {
			return nil, err
		}
		if !write {
			return live, nil
		}
		entries := make([]any, 0, len(keep))
		for _, e := range keep {
			u, err := toUnstructuredEntry(e)
			if err != nil {
				return nil, err
			}
			entries = append(entries, u)
		}
		patch := map[string]any{"metadata": map[string]any{
			"resourceVersion": live.GetResourceVersion(),
			"managedFields":   entries,
		}}
		data, err := json.Marshal(patch)
		if err != nil {
			return nil, fmt.Errorf("encoding the managed fields patch: %w", err)
		}
		// The patch changes no field, so it records no entry of its own.
		out, err := c.resource(gvr, live.GetNamespace()).Patch(ctx, live.GetName(), types.MergePatchType, data, metav1.PatchOptions{})
		switch {
		case err == nil:
			return out, nil
		case !IsConflict(err):
			return nil, err
		case attempt >= maxOwnershipAttempts:
			return nil, fmt.Errorf("the object kept changing while its managed fields were rewritten (%d attempts): %w", attempt, err)
		}
		if err := ConflictBackoff(ctx, attempt); err != nil {
			return nil, err
		}
		if live, err = c.Get(ctx, gvr, live.GetNamespace(), live.GetName()); err != nil {
			return nil, err
		}
	}
}

// splitUpdateEntry returns the entries to keep, and whether manager's main
// resource Update entry is to be dropped (only when manager also applies).
func splitUpdateEntry(entries []metav1.ManagedFieldsEntry, manager string) ([]metav1.ManagedFieldsEntry, bool) {
	hasApply := false
	for _, e := range entries {
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			hasApply = true
		}
	}
	if !hasApply {
		return entries, false
	}
	keep := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	drop := false
	for _, e := range entries {
		if isCreateManager(e.Manager, manager) && e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "" {
			drop = true
			continue
		}
		keep = append(keep, e)
	}
	return keep, drop
}

func toUnstructuredEntry(e metav1.ManagedFieldsEntry) (map[string]any, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{e})
	list, ok, err := unstructured.NestedSlice(u.Object, "metadata", "managedFields")
	if err != nil || !ok || len(list) != 1 {
		return nil, fmt.Errorf("encoding the managed fields entry of %q: %w", e.Manager, err)
	}
	m, ok := list[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("encoding the managed fields entry of %q", e.Manager)
	}
	return m, nil
}
