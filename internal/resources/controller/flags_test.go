package controller

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/semver"
	"sigs.k8s.io/yaml"
)

// chartValues reads testdata/chartargs/<name>.yaml (a values file of
// upstream's chart) and the args `helm template` renders from it
// (<name>.args, checked against the real Helm CLI by
// TestAccController_chartArgsMatchHelm).
func chartValues(t *testing.T, name string) (map[string]any, []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "chartargs", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Controller map[string]any `json:"controller"`
	}
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	args, err := os.ReadFile(filepath.Join("testdata", "chartargs", name+".args"))
	if err != nil {
		t.Fatal(err)
	}
	return v.Controller, strings.Fields(string(args))
}

// attributesFor maps the chart's controller values to the resource's
// typed values through chartFlags, as Terraform would hand them over
// (whole numbers as int64).
func attributesFor(t *testing.T, chart map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for key, v := range chart {
		if key == "extensions" || key == "extraArgs" {
			continue // the top-level `extensions`; `args`
		}
		i := slices.IndexFunc(chartFlags, func(f chartFlag) bool { return f.Value == key })
		if i < 0 {
			t.Fatalf("the chart's controller.%s has no attribute in chartFlags", key)
		}
		f := chartFlags[i]
		switch f.Kind {
		case flagInt:
			out[f.Attr] = int64(v.(float64))
		case flagFloat:
			out[f.Attr] = v.(float64)
		default:
			out[f.Attr] = v
		}
	}
	return out
}

// TestRenderFlagsAsTheChart: the typed values render the args `helm
// template` renders from the same values, in the same order, except
// --extensions (the top-level `extensions` chooses the release's asset,
// whose controller already has it) and an integer Helm prints in
// exponent form, which the controller refuses: there the resource writes
// the decimal.
func TestRenderFlagsAsTheChart(t *testing.T) {
	for _, name := range []string{"every-value", "commented-defaults"} {
		t.Run(name, func(t *testing.T) {
			chart, helmArgs := chartValues(t, name)
			var got []string
			for _, f := range renderFlags(attributesFor(t, chart)) {
				got = append(got, f.Arg)
			}
			var want []string
			for _, a := range helmArgs {
				name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if name == "extensions" {
					continue
				}
				i := slices.IndexFunc(chartFlags, func(f chartFlag) bool { return f.Flag == name })
				if i < 0 {
					t.Fatalf("helm renders %s, which no attribute renders", a)
				}
				if chartFlags[i].Kind == flagInt {
					if _, err := strconv.ParseInt(value, 10, 64); err != nil {
						// What the controller makes of the chart's arg.
						fs := flag.NewFlagSet("agent-sandbox-controller", flag.ContinueOnError)
						fs.SetOutput(io.Discard)
						fs.Int(name, 0, "")
						if fs.Parse([]string{a}) == nil {
							t.Fatalf("the controller's flag.IntVar accepts %s; render it as the chart does", a)
						}
						t.Logf("helm renders %s, which the controller's flag.IntVar refuses (%v); the resource writes the integer", a, fs.Parse([]string{a}))
						f, _ := strconv.ParseFloat(value, 64)
						a = "--" + name + "=" + strconv.FormatInt(int64(f), 10)
					}
				}
				want = append(want, a)
			}
			if !slices.Equal(got, want) {
				t.Errorf("rendered\n  %s\nhelm template renders\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

// TestChartFlagsAreTheReleasesFlags reads cmd/agent-sandbox-controller/main.go
// of every release in releasesRead: each typed value's flag is defined
// there with its Go type exactly from its Since release on.
func TestChartFlagsAreTheReleasesFlags(t *testing.T) {
	kinds := map[flagKind]string{flagBool: "Bool", flagInt: "Int", flagFloat: "Float64", flagDuration: "Duration", flagString: "String"}
	for _, r := range releasesRead {
		out, err := exec.CommandContext(t.Context(), "go", "mod", "download", "-json", "sigs.k8s.io/agent-sandbox@"+r).Output()
		if err != nil {
			t.Fatalf("go mod download sigs.k8s.io/agent-sandbox@%s: %v", r, err)
		}
		var info struct{ Dir string }
		if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
			t.Fatalf("go mod download -json: no directory in %s (%v)", out, err)
		}
		src, err := os.ReadFile(filepath.Join(info.Dir, "cmd", "agent-sandbox-controller", "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(slices.Clone(chartFlags), metricsTLSFlags...) {
			def := regexp.MustCompile(`flag\.(\w+)Var\(&\w+,\s*"` + regexp.QuoteMeta(f.Flag) + `"`).FindSubmatch(src)
			want := f.Since == "" || semver.Compare(r, f.Since) >= 0
			switch {
			case want && def == nil:
				t.Errorf("%s: main.go does not define --%s (controller.%s says from %q on)", r, f.Flag, f.Attr, f.Since)
			case !want && def != nil:
				t.Errorf("%s: main.go defines --%s, but controller.%s is refused before %s", r, f.Flag, f.Attr, f.Since)
			case def != nil && string(def[1]) != kinds[f.Kind]:
				t.Errorf("%s: --%s is a flag.%sVar, controller.%s is typed %s", r, f.Flag, def[1], f.Attr, kinds[f.Kind])
			}
		}
	}
}
