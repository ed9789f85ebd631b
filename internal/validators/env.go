package validators

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// EnvVarName accepts what Kubernetes accepts as an environment variable
// name (k8s.io/apimachinery's IsEnvVarName).
func EnvVarName() validator.String {
	return Check{
		Summary: "Invalid environment variable name",
		Desc:    "must be a valid environment variable name (printable ASCII, no '=')",
		Problem: func(s string) string {
			if errs := k8svalidation.IsEnvVarName(s); len(errs) > 0 {
				return fmt.Sprintf("%q is not a valid environment variable name: %s.", s, strings.Join(errs, "; "))
			}
			return ""
		},
	}
}

// UniqueEnv validates a list of environment entries, objects with the
// string attributes name and container_name (empty meaning the first
// container): each variable may be set once per container, since which of
// two entries wins would depend on the controller. The error is at the
// later entry's name.
func UniqueEnv() validator.List { return uniqueEnv{"each variable may be set once per container"} }

type uniqueEnv struct{ described }

func (uniqueEnv) ValidateList(_ context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	seen := map[[2]string]int{}
	for i, e := range req.ConfigValue.Elements() {
		obj, ok := e.(basetypes.ObjectValue)
		if !ok || obj.IsNull() || obj.IsUnknown() {
			continue
		}
		name, nameKnown := tfvalues.StringIfKnown(obj.Attributes()["name"])
		container, containerKnown := tfvalues.StringIfKnown(obj.Attributes()["container_name"])
		if !nameKnown || !containerKnown {
			continue
		}
		key := [2]string{name, container}
		if first, dup := seen[key]; dup {
			where := "the first container"
			if container != "" {
				where = fmt.Sprintf("container %q", container)
			}
			resp.Diagnostics.AddAttributeError(req.Path.AtListIndex(i).AtName("name"), "Duplicate environment variable",
				fmt.Sprintf("env[%d] and env[%d] both set %q in %s. Set each variable once.", first, i, name, where))
			continue
		}
		seen[key] = i
	}
}
