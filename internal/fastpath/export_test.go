package fastpath

import "github.com/hashicorp/terraform-plugin-go/tftypes"

// TerraformMsgPack is terraformMsgPack, for the equivalence tests with
// go-cty (package fastpath_test).
var TerraformMsgPack = terraformMsgPack

// TranscodeState is transcodeState, for the equivalence tests with
// tftypes (package fastpath_test).
var TranscodeState = transcodeState

// HasDynamic reports whether t holds a dynamic type (which the state
// upgrade does not transcode).
func HasDynamic(t tftypes.Type) bool {
	return typeHas(t, func(t tftypes.Type) bool { return t.Is(tftypes.DynamicPseudoType) })
}
