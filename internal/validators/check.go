package validators

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// Check is a plan-time string validator made of a function that returns
// what is wrong with a value ("" when nothing is): the error is Summary
// ("Invalid value" when empty) with the returned text as its detail, at the
// attribute's path. Null and unknown values are left alone: Required and
// later plans take care of them.
type Check struct {
	Summary string
	Desc    string // what a valid value is, for the docs of the validator
	Problem func(string) string
}

// Valid makes a Check from a predicate: a value it refuses gets the detail
// `"<value>" <desc>.`.
func Valid(summary, desc string, ok func(string) bool) Check {
	return Check{Summary: summary, Desc: desc, Problem: func(s string) string {
		if ok(s) {
			return ""
		}
		return fmt.Sprintf("%q %s.", s, desc)
	}}
}

var _ validator.String = Check{}

// described is the Description and MarkdownDescription of a validator
// whose description is fixed, for validator types to embed.
type described string

func (d described) Description(context.Context) string { return string(d) }

func (d described) MarkdownDescription(context.Context) string { return string(d) }

func (v Check) Description(context.Context) string { return v.Desc }

func (v Check) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v Check) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	problem := v.Problem(req.ConfigValue.ValueString())
	if problem == "" {
		return
	}
	summary := v.Summary
	if summary == "" {
		summary = "Invalid value"
	}
	resp.Diagnostics.AddAttributeError(req.Path, summary, problem)
}
