package nestedattr

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		path *tftypes.AttributePath
		want string
	}{
		{tftypes.NewAttributePath().WithAttributeName("name"), "name"},
		{tftypes.NewAttributePath().WithAttributeName("pod_template").WithAttributeName("containers").WithElementKeyInt(2).WithAttributeName("image"),
			"pod_template.containers[2].image"},
		{tftypes.NewAttributePath().WithAttributeName("labels").WithElementKeyString("a.b/c"), `labels["a.b/c"]`},
		{tftypes.NewAttributePath().WithAttributeName("zones").WithElementKeyValue(tftypes.NewValue(tftypes.String, "eu-1")), `zones["eu-1"]`},
		{tftypes.NewAttributePath().WithAttributeName("ports").WithElementKeyValue(tftypes.NewValue(tftypes.Number, 5)), `ports[?]`},
		{nil, ""},
	} {
		if got := Render(tc.path); got != tc.want {
			t.Errorf("Render(%v) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// config is the type of a schema with a top-level WholeNumberType, nested
// integers in an object, a list of objects, a map and a set, and a float.
func config() (attr.Type, tftypes.Type) {
	obj := types.ObjectType{AttrTypes: map[string]attr.Type{"replicas": types.Int64Type, "ratio": types.Float64Type}}
	t := types.ObjectType{AttrTypes: map[string]attr.Type{
		"count":      tfvalues.WholeNumberType{},
		"controller": obj,
		"ports":      types.ListType{ElemType: types.ObjectType{AttrTypes: map[string]attr.Type{"port": types.Int64Type}}},
		"weights":    types.MapType{ElemType: types.Int64Type},
		"ids":        types.SetType{ElemType: types.Int64Type},
	}}
	return t, t.TerraformType(context.Background())
}

func TestFractions(t *testing.T) {
	at, tt := config()
	ot := tt.(tftypes.Object)
	num := func(f float64) tftypes.Value { return tftypes.NewValue(tftypes.Number, big.NewFloat(f)) }
	ctrl := ot.AttributeTypes["controller"].(tftypes.Object)
	port := ot.AttributeTypes["ports"].(tftypes.List).ElementType.(tftypes.Object)
	v := tftypes.NewValue(tt, map[string]tftypes.Value{
		"count":      num(1.5), // WholeNumberType reports it itself
		"controller": tftypes.NewValue(ctrl, map[string]tftypes.Value{"replicas": num(1.5), "ratio": num(0.5)}),
		"ports": tftypes.NewValue(ot.AttributeTypes["ports"], []tftypes.Value{
			tftypes.NewValue(port, map[string]tftypes.Value{"port": num(80)}),
			tftypes.NewValue(port, map[string]tftypes.Value{"port": num(80.25)}),
			tftypes.NewValue(port, map[string]tftypes.Value{"port": tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)}),
		}),
		"weights": tftypes.NewValue(ot.AttributeTypes["weights"], map[string]tftypes.Value{"a": num(-2.5), "b": num(3)}),
		"ids":     tftypes.NewValue(ot.AttributeTypes["ids"], []tftypes.Value{num(7.75)}),
	})
	got := map[string]string{}
	for _, d := range Fractions(at, v) {
		got[Render(d.Attribute)] = d.Summary + ": " + d.Detail
	}
	want := map[string]string{
		"controller.replicas": "Not a whole number: controller.replicas must be a whole number; 1.5 has a fractional part. Give an integer such as 1 or 2.",
		"ports[1].port":       "Not a whole number: ports[1].port must be a whole number; 80.25 has a fractional part. Give an integer such as 80 or 81.",
		`weights["a"]`:        `Not a whole number: weights["a"] must be a whole number; -2.5 has a fractional part. Give an integer such as -3 or -2.`,
		"ids[?]":              "Not a whole number: ids[?] must be a whole number; 7.75 has a fractional part. Give an integer such as 7 or 8.",
	}
	if len(got) != len(want) {
		t.Errorf("got %d diagnostics, want %d: %v", len(got), len(want), got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("at %s: got %q, want %q", k, got[k], w)
		}
	}
}

func TestLocate(t *testing.T) {
	sh := shape{topLevel: map[string]bool{"name": true, "pod_template": true, "labels": true}, blocks: map[string]bool{"timeouts": true}}
	p := func(names ...any) *tftypes.AttributePath {
		ap := tftypes.NewAttributePath()
		for _, n := range names {
			switch n := n.(type) {
			case string:
				ap = ap.WithAttributeName(n)
			case int:
				ap = ap.WithElementKeyInt(n)
			}
		}
		return ap
	}
	for _, tc := range []struct {
		name   string
		path   *tftypes.AttributePath
		detail string
		want   string
	}{
		{"top level: Terraform quotes it", p("name"), "bad", "bad"},
		{"top-level list element: Terraform quotes it", p("labels", 0), "bad", "bad"},
		{"through a block: Terraform quotes it", p("timeouts", "create"), "bad", "bad"},
		{"nested, name of no top-level attribute", p("pod_template", "containers", 0, "image"), "bad",
			"At pod_template.containers[0].image: bad"},
		{"nested, ends in an index", p("pod_template", "containers", 1), "bad", "At pod_template.containers[1]: bad"},
		{"nested, shares a top-level name", p("pod_template", "containers", 0, "name"), "bad",
			"At pod_template.containers[0].name: bad\n\n(The line quoted above is the resource's own `name`: Terraform cannot yet quote a " +
				"line inside a nested attribute, hashicorp/terraform#33491. The error is at pod_template.containers[0].name.)"},
		{"already names its path", p("pod_template", "containers", 0, "image"), "pod_template.containers[0].image is bad",
			"pod_template.containers[0].image is bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityError, Summary: "S", Detail: tc.detail, Attribute: tc.path}
			sh.Locate([]*tfprotov6.Diagnostic{d, nil, {Summary: "no path"}})
			if d.Detail != tc.want {
				t.Errorf("detail:\n%s\nwant:\n%s", d.Detail, tc.want)
			}
			if strings.Contains(d.Summary, "At ") {
				t.Errorf("summary changed: %q", d.Summary)
			}
		})
	}
}
