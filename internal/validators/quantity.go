package validators

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"k8s.io/apimachinery/pkg/api/resource"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
)

// Like those in kubernetes.go, the validators in this file and network.go
// apply the API server's own rules (from k8s.io/apimachinery) at plan time, so
// a value the cluster would refuse is refused by `terraform plan` with the
// attribute's path, before any write.

// Quantity accepts a Kubernetes resource quantity ("500m", "1", "1.5",
// "512Mi", "1Gi", "1e3"), as resource.ParseQuantity does; "1Gx" is refused.
func Quantity() validator.String {
	return stringCheck{
		summary: "Invalid quantity",
		desc:    "must be a Kubernetes quantity such as 500m, 2, 512Mi or 1Gi",
		check: func(s string) []string {
			if _, err := resource.ParseQuantity(s); err != nil {
				return []string{err.Error()}
			}
			return nil
		},
	}
}

// NonNegativeQuantity is Quantity that also refuses values below zero
// (resource requests and limits, size limits).
func NonNegativeQuantity() validator.String {
	return stringCheck{
		summary: "Invalid quantity",
		desc:    "must be a non-negative Kubernetes quantity such as 500m, 2, 512Mi or 1Gi",
		check: func(s string) []string {
			q, err := resource.ParseQuantity(s)
			if err != nil {
				return []string{err.Error()}
			}
			if q.Sign() < 0 {
				return []string{"must not be negative"}
			}
			return nil
		},
	}
}

// ResourceName accepts a compute resource name as used in requests and
// limits: one of the standard names (cpu, memory, ephemeral-storage,
// hugepages-<size>) or a domain-prefixed extended resource such as
// nvidia.com/gpu.
func ResourceName() validator.String {
	return stringCheck{
		summary: "Invalid resource name",
		desc:    "must be cpu, memory, ephemeral-storage, hugepages-<size> or a domain-prefixed extended resource such as nvidia.com/gpu",
		check: func(s string) []string {
			switch {
			case s == "cpu" || s == "memory" || s == "ephemeral-storage":
				return nil
			case strings.HasPrefix(s, "hugepages-"):
				if _, err := resource.ParseQuantity(strings.TrimPrefix(s, "hugepages-")); err != nil {
					return []string{"the hugepages size is not a quantity"}
				}
				return nil
			case !strings.Contains(s, "/"):
				return []string{"an extended resource needs a domain prefix (example.com/name)"}
			}
			return k8svalidation.IsQualifiedName(s)
		},
	}
}

// stringCheck adapts a Kubernetes-style check (which returns the reasons a
// value is invalid) to a framework string validator. Null and unknown values
// are left alone: Required/Optional and later plans take care of them.
type stringCheck struct {
	summary string
	desc    string
	check   func(string) []string
}

func (v stringCheck) Description(context.Context) string { return v.desc }

func (v stringCheck) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	s := req.ConfigValue.ValueString()
	if problems := v.check(s); len(problems) > 0 {
		resp.Diagnostics.AddAttributeError(req.Path, v.summary,
			fmt.Sprintf("%q %s: %s.", s, v.desc, strings.Join(problems, "; ")))
	}
}
