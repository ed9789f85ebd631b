package fastpath

// TerraformMsgPack is terraformMsgPack, for the equivalence tests with
// go-cty (package fastpath_test).
var TerraformMsgPack = terraformMsgPack
