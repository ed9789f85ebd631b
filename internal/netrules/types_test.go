package netrules

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// TestDerivedTypesFitTheModels: the object types derived from the schema
// read into, and convert back from, the models the code uses.
func TestDerivedTypesFitTheModels(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		typ   types.ObjectType
		model any
	}{
		"rules":    {rulesType(), &Rules{}},
		"ingress":  {ingressType, &ingressModel{}},
		"ip_block": {ipBlockType, &ipBlockModel{}},
		"egress":   {egressType, &egressModel{}},
		"port":     {portType, &portModel{}},
	} {
		if err := tfvalues.CheckModel(ctx, c.typ, c.model); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
