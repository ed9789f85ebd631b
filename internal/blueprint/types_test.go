package blueprint

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// TestDerivedTypesFitTheModels: the object types derived from the schema
// read into, and convert back from, the models the code uses; the data
// source's attribute has the same shape.
func TestDerivedTypesFitTheModels(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		typ   types.ObjectType
		model any
	}{
		"volume claim template": {VolumeClaimTemplateType, &VolumeClaimTemplateModel{}},
		"resources":             {claimResType, &ClaimResourcesModel{}},
		"requests":              {requestsType, &ClaimRequestsModel{}},
	} {
		if err := tfvalues.CheckModel(ctx, c.typ, c.model); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if ds := tfvalues.ElementType(VolumeClaimTemplatesDataSourceAttribute()); !ds.Equal(VolumeClaimTemplateType) {
		t.Errorf("data source element type %s, resource %s", ds, VolumeClaimTemplateType)
	}
}
