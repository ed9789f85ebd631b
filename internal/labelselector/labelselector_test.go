package labelselector

import (
	"context"
	"testing"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/tfvalues"
)

// TestDerivedTypesFitTheModels: the object types derived from the
// attributes read into, and convert back from, the models the code uses.
func TestDerivedTypesFitTheModels(t *testing.T) {
	ctx := context.Background()
	if err := tfvalues.CheckModel(ctx, Type, &Model{}); err != nil {
		t.Errorf("selector: %v", err)
	}
	if err := tfvalues.CheckModel(ctx, RequirementType, &RequirementModel{}); err != nil {
		t.Errorf("requirement: %v", err)
	}
}

// TestOperatorLists: node selector requirements take every label selector
// operator and Gt and Lt; adding them must not change Operators.
func TestOperatorLists(t *testing.T) {
	if got := quoteList(Operators); got != "`In`, `NotIn`, `Exists` or `DoesNotExist`" {
		t.Errorf("Operators: %s", got)
	}
	if got := quoteList(NodeOperators); got != "`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt` or `Lt`" {
		t.Errorf("NodeOperators: %s", got)
	}
}
