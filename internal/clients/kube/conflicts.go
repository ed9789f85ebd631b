package kube

import (
	"errors"
	"regexp"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FieldConflict is one field a server-side apply could not take without
// force, and who holds it.
type FieldConflict struct {
	// Field is the field's path as the API server prints it, e.g.
	// .metadata.labels.team or .spec.replicas.
	Field string
	// Manager is the field manager that owns it.
	Manager string
	// Applied says the owner set it with a server-side apply of its own,
	// so declared that it owns the field; otherwise it set it with an
	// ordinary write (kubectl edit, patch, a controller's update), which
	// records ownership without declaring it.
	Applied bool
}

// conflictCauseRE reads a conflict cause: the manager, and " using " when
// its entry is an Update (a subresource's entry names it in between).
var conflictCauseRE = regexp.MustCompile(`^conflict with "([^"]*)"(?: with subresource "[^"]*")?( using )?`)

// FieldConflicts returns the conflicts a 409 of a server-side apply names,
// sorted by field, or nil when err is not such a refusal.
//
// The API server names the owner of each field in the cause's message:
// `conflict with "<manager>"` for an Apply entry, followed by ` using
// <apiVersion>` (and ` at <time>`) for an Update entry (printManager in
// k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go).
func FieldConflicts(err error) []FieldConflict {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return nil
	}
	var out []FieldConflict
	for _, c := range st.Status().Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		m := conflictCauseRE.FindStringSubmatch(c.Message)
		if m == nil {
			continue
		}
		out = append(out, FieldConflict{Field: c.Field, Manager: m[1], Applied: m[2] == ""})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}
