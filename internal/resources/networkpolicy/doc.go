// Package networkpolicy implements agentsandbox_network_policy: a
// networking.k8s.io/v1 NetworkPolicy that isolates sandboxes, written from
// a few intent-level attributes (which sandboxes, who may connect, what they
// may reach) instead of raw policy YAML.
//
// The package owns the schema and its plan-time validation, the rendering of
// those attributes into a NetworkPolicy spec (render.go), the way back from
// a live spec to attributes for import (decode.go), and the CRUD, which goes
// through internal/object like every single-object resource.
//
// The one representation both directions meet in is the canonical spec
// JSON, the `rendered` attribute: planned from the configuration, read from
// the live object on refresh, so an out-of-band edit shows as a diff of the
// policy itself and the next apply puts it back.
package networkpolicy
