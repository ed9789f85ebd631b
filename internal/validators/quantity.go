package validators

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
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
				return quantityProblem(s, err)
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
				return quantityProblem(s, err)
			}
			if q.Sign() < 0 {
				return []string{"must not be negative"}
			}
			return nil
		},
	}
}

// quantityProblem explains why s is not a quantity and, when it looks like a
// familiar unit spelt another way (1Gb, 512MB, 2 Gi, 1gi, 1KiB), which
// spelling Kubernetes means.
func quantityProblem(s string, err error) []string {
	out := []string{err.Error()}
	if hint := QuantitySuggestion(s); hint != "" {
		out = append(out, fmt.Sprintf("did you mean %q? Kubernetes writes binary units as Ki, Mi, Gi, Ti "+
			"(powers of 1024) and decimal units as k, M, G, T (powers of 1000), with no B and no space", hint))
	}
	return out
}

// QuantitySuggestion returns the quantity a user most likely meant by s, a
// spelling that is not a Kubernetes quantity, or "" when there is no
// obvious one. Byte-style units (Gb, GB, GiB) become the binary suffix,
// which is what memory and storage sizes are almost always meant in.
func QuantitySuggestion(s string) string {
	t := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if t == "" {
		return ""
	}
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' })
	if i <= 0 {
		return ""
	}
	num, unit := t[:i], t[i:]
	binary := map[string]string{"k": "Ki", "m": "Mi", "g": "Gi", "t": "Ti", "p": "Pi", "e": "Ei"}
	u := strings.ToLower(unit)
	u = strings.TrimSuffix(u, "bytes")
	u = strings.TrimSuffix(u, "b")
	u = strings.TrimSuffix(u, "i")
	if binary[u] == "" {
		return ""
	}
	out := num + binary[u]
	if out == s {
		return ""
	}
	if _, err := resource.ParseQuantity(out); err != nil {
		return ""
	}
	return out
}

// ResourceList validates a map of compute resources (requests or limits):
// each key a resource name, each value a non-negative quantity, and CPU in
// whole millicores.
func ResourceList() []validator.Map {
	return []validator.Map{
		mapvalidator.KeysAre(ResourceName()),
		mapvalidator.ValueStringsAre(NonNegativeQuantity()),
		cpuMillicores{"cpu must be a whole number of millicores (1m = 0.001 CPU)"},
	}
}

// cpuMillicores refuses a CPU quantity finer than a millicore ("100u",
// "0.0005", "1.0001"): the API server rounds it up to whole millicores
// (100u is stored as 1m), so the plan would never match what is read back.
type cpuMillicores struct{ described }

func (cpuMillicores) ValidateMap(_ context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	e, ok := req.ConfigValue.Elements()["cpu"].(types.String)
	if !ok || e.IsNull() || e.IsUnknown() {
		return
	}
	q, err := resource.ParseQuantity(e.ValueString())
	if err != nil || q.Sign() <= 0 {
		return // reported by NonNegativeQuantity or the zero-limit check
	}
	rounded := resource.NewMilliQuantity(q.MilliValue(), resource.DecimalSI)
	if q.Cmp(*rounded) == 0 {
		return
	}
	resp.Diagnostics.AddAttributeError(req.Path.AtMapKey("cpu"), "CPU finer than a millicore",
		fmt.Sprintf("%s[\"cpu\"] = %q is finer than 1m (a thousandth of a CPU), the smallest unit Kubernetes counts CPU "+
			"in: the API server would store %q, and every plan would show it changing back. Write cpu = %q.",
			req.Path, e.ValueString(), rounded.String(), rounded.String()))
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
