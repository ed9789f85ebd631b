package validators

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TestImageReference: what the kubelet accepts passes; what it refuses
// with InvalidImageName is refused with the reason and, for capitals, the
// lower-case spelling.
func TestImageReference(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	for in, want := range map[string]string{
		"python:3.13": "", "python": "", "library/python:3.13-slim": "",
		"us-docker.pkg.dev/my-proj/repo/agent:1.2": "", "localhost:5000/agent": "",
		"Registry.Example.com/team/agent:1": "", "python@" + digest: "", "python:3.13@" + digest: "",
		"Python:3.13":             `did you mean python:3.13?`,
		"ghcr.io/Org/Agent:v1":    "did you mean ghcr.io/org/agent:v1?",
		"python@sha256:abc":       "digest is malformed",
		"python@md5:" + digest:    "digest is malformed",
		"python:3.13 ":            "whitespace",
		"python:":                 "invalid reference format",
		"python:tag:extra":        "invalid reference format",
		"":                        "empty",
		"http://docker.io/python": "invalid reference format",
	} {
		resp := &validator.StringResponse{}
		ImageReference().ValidateString(context.Background(), validator.StringRequest{
			Path: path.Root("image"), ConfigValue: types.StringValue(in)}, resp)
		switch {
		case want == "" && resp.Diagnostics.HasError():
			t.Errorf("%q refused: %v", in, resp.Diagnostics)
		case want != "" && !resp.Diagnostics.HasError():
			t.Errorf("%q accepted", in)
		case want != "" && !strings.Contains(resp.Diagnostics[0].Detail(), want):
			t.Errorf("%q: %q lacks %q", in, resp.Diagnostics[0].Detail(), want)
		case want != "" && !resp.Diagnostics[0].(diag.DiagnosticWithPath).Path().Equal(path.Root("image")):
			t.Errorf("%q: path %v", in, resp.Diagnostics[0])
		}
	}
	for _, v := range []types.String{types.StringNull(), types.StringUnknown()} {
		resp := &validator.StringResponse{}
		ImageReference().ValidateString(context.Background(), validator.StringRequest{Path: path.Root("image"), ConfigValue: v}, resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("%v judged", v)
		}
	}
}
