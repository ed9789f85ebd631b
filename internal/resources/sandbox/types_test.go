package sandbox

import (
	"context"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// TestDerivedTypesFitTheModels: the object types derived from the schema
// read into, and convert back from, the models the code uses.
func TestDerivedTypesFitTheModels(t *testing.T) {
	if err := tfvalues.CheckModel(context.Background(), conditionType, &conditionModel{}); err != nil {
		t.Error(err)
	}
}
