package cluster

import _ "embed"

// kwokStages is the kwok configuration: the simulated lifecycle of fake
// nodes and of the pods bound to them.
//
//go:embed kwok-stages.yaml
var kwokStages []byte
