package blueprint

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestRefusePastShutdownTime(t *testing.T) {
	now := time.Date(2030, 1, 2, 15, 0, 0, 0, time.UTC)
	for in, refused := range map[types.String]bool{
		types.StringValue("2030-01-02T14:59:59Z"):      true,
		types.StringValue("2030-01-02T15:00:00Z"):      true,
		types.StringValue("2030-01-02T17:00:00+02:00"): true, // 15:00 UTC
		types.StringValue("2030-01-02T15:00:01Z"):      false,
		types.StringValue("tomorrow"):                  false, // the validator's
		types.StringNull():                             false,
		types.StringUnknown():                          false,
	} {
		d := RefusePastShutdownTime(in, "claim", now)
		if d.HasError() != refused {
			t.Errorf("%v: %v", in, d)
		}
		if refused && !strings.Contains(d[0].Detail(), "new claim") {
			t.Errorf("%v: %s", in, d[0].Detail())
		}
	}
}
