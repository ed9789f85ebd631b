package sandbox

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
)

// WaitFor waits for a sandbox as an apply with wait_for_ready does, for the
// latency measurement in the external tests.
func WaitFor(ctx context.Context, cm *conn.Meta, namespace, name, mode string) (*unstructured.Unstructured, diag.Diagnostics) {
	live := Kind.New()
	live.SetNamespace(namespace)
	live.SetName(name)
	m := &resourceModel{WaitForReady: types.BoolValue(true), sandboxModel: sandboxModel{OperatingMode: types.StringValue(mode)}}
	return wait(ctx, object.Call{Op: object.OpCreate, Meta: cm}, live, m, nil)
}
