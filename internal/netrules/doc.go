// Package netrules is the network rule sub-schema shared by
// agentsandbox_network_policy (at its top level) and
// agentsandbox_sandbox_template (nested in network_policy): who may connect
// to the selected pods (ingress) and what they may reach (allow_dns,
// allow_internet, allow_egress), with the cloud metadata server carved out
// of every allowed range (block_metadata_server).
//
// Both resources spell isolation the same way and go through the same code:
// Attributes is the schema, Rules its model, Rules.Intent turns a plan into
// an Intent (plain values), Intent.Render writes the NetworkPolicy rules,
// Decode reads live rules back (import) and Flatten turns an Intent back
// into attribute values. SpecContent and CanonicalJSON are the one canonical
// form both resources show in their rendered attributes.
package netrules
