package blueprint

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
)

// ValidateServiceName refuses, when service is true, a sandbox name that
// cannot name a Service: the controller names the headless Service like the
// sandbox, and a Service name must be an RFC 1035 label (a letter first, at
// most 63 characters, no dots), stricter than the RFC 1123 subdomain a
// Sandbox may have. Without this check the API server refuses the Service,
// the sandbox never becomes Ready and the apply waits out its timeout. The
// error is on name, which is what has to change (or service = false).
func ValidateServiceName(name types.String, service types.Bool) diag.Diagnostics {
	var diags diag.Diagnostics
	if name.IsNull() || name.IsUnknown() || service.IsNull() || service.IsUnknown() || !service.ValueBool() {
		return diags
	}
	problems := k8svalidation.IsDNS1035Label(name.ValueString())
	if len(problems) == 0 {
		return diags
	}
	diags.AddAttributeError(path.Root("name"), "Name cannot be a Service name",
		fmt.Sprintf("service = true makes the controller create a headless Service named %q, and a Service name must be "+
			"an RFC 1035 label: %s. The API server would refuse the Service and the sandbox would never become Ready. "+
			"Choose a name of lower-case letters, digits and '-', starting with a letter, at most 63 characters "+
			"(for example %q), or set service = false.",
			name.ValueString(), strings.Join(problems, "; "), serviceNameExample(name.ValueString())))
	return diags
}

// serviceNameExample turns s into a valid RFC 1035 label, as a suggestion.
func serviceNameExample(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" || out[0] < 'a' || out[0] > 'z' {
		out = "sandbox-" + out
	}
	if len(out) > 63 {
		out = strings.TrimRight(out[:63], "-")
	}
	return out
}
