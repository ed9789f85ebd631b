package sandbox

// WaitFor is waitFor, for the latency measurement in the external tests.
var WaitFor = waitFor
