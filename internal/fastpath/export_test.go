package fastpath

// TerraformMsgPack is terraformMsgPack, for the equivalence tests with
// go-cty (package fastpath_test).
var TerraformMsgPack = terraformMsgPack

// TranscodeState is transcodeState, for the equivalence tests with
// tftypes (package fastpath_test).
var TranscodeState = transcodeState
