package object_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/conn"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/clients/kube"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/object"
	"github.com/agentsandbox/terraform-provider-agentsandbox/internal/testing/acctest"
)

var configMapKind = object.Kind{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", ResourceType: "test_config_map"}

func configMap(ns, name string, data map[string]any) *unstructured.Unstructured {
	obj := configMapKind.New()
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.Object["data"] = data
	return obj
}

func accMeta(t *testing.T) (*conn.Meta, *kube.Client) {
	t.Helper()
	kc, err := kube.NewClientForRESTConfig(acctest.RESTConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return conn.ForClients("agentsandbox", kc, nil), kc
}

// TestAccCreate_atomicUnderRace: many creators of one name at the same
// moment, for a built-in kind and a custom resource: exactly one creates
// it, every other one is refused with AlreadyExists, and the refusal seen
// through Kind.Create names the object and says how to import it.
func TestAccCreate_atomicUnderRace(t *testing.T) {
	ns := acctest.Namespace(t)
	meta, kc := accMeta(t)
	ctx := context.Background()
	const racers = 8
	for _, tc := range []struct {
		kind object.Kind
		obj  func(name string, i int) *unstructured.Unstructured
	}{
		{configMapKind, func(name string, i int) *unstructured.Unstructured {
			return configMap(ns, name, map[string]any{"racer": string(rune('a' + i))})
		}},
		{templateKind, func(name string, _ int) *unstructured.Unstructured { return template(ns, name) }},
	} {
		t.Run(tc.kind.Kind, func(t *testing.T) {
			for round := 0; round < 3; round++ {
				name := acctest.RandomName("race")
				var wg sync.WaitGroup
				start := make(chan struct{})
				errs := make([]error, racers)
				details := make([]string, racers)
				for i := range racers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						_, diags := tc.kind.Create(ctx, meta, tc.obj(name, i))
						if diags.HasError() {
							errs[i] = errString(diags[0].Summary())
							details[i] = diags[0].Detail()
						}
					}()
				}
				close(start)
				wg.Wait()
				created := 0
				for i, err := range errs {
					if err == nil {
						created++
						continue
					}
					// The winner is another create of this provider
					// process (one apply), so the losers are told two
					// resources declare the object, never to import it
					// (which would make two resources own it).
					if !strings.Contains(err.Error(), "already exists: two resources of this configuration declare it") ||
						strings.Contains(details[i], "terraform import") {
						t.Errorf("racer %d: want 'two resources of this configuration declare it' without an import command, got %v: %s", i, err, details[i])
					}
				}
				if created != 1 {
					t.Fatalf("round %d: %d of %d racers created %s; want exactly one", round, created, racers, name)
				}
				live, err := kc.Get(ctx, tc.kind.GVR, ns, name)
				if err != nil {
					t.Fatal(err)
				}
				assertOnlyApplyEntry(t, live, "agentsandbox")
			}
		})
	}
}

// TestAccCreate_removedFieldIsRemoved: after Kind.Create, a field the
// configuration drops is removed from the live object by the next apply,
// as with an object created by server-side apply. The control shows why
// Create needs its ownership step: after a plain POST by the same field
// manager, the same apply leaves the field in place forever.
func TestAccCreate_removedFieldIsRemoved(t *testing.T) {
	ns := acctest.Namespace(t)
	meta, kc := accMeta(t)
	ctx := context.Background()

	name := acctest.RandomName("owned")
	if _, diags := configMapKind.Create(ctx, meta, configMap(ns, name, map[string]any{"keep": "1", "drop": "2"})); diags.HasError() {
		t.Fatal(diags)
	}
	live, diags := configMapKind.Apply(ctx, meta, configMap(ns, name, map[string]any{"keep": "1"}))
	assertOnlyApplyEntry(t, live, "agentsandbox")
	if diags.HasError() {
		t.Fatal(diags)
	}
	if data, _, _ := unstructured.NestedStringMap(live.Object, "data"); len(data) != 1 || data["keep"] != "1" {
		t.Errorf("after dropping a key from the configuration the live data is %v; want only keep=1", data)
	}

	// Custom resource: a container's env variable dropped from the spec.
	tname := acctest.RandomName("owned")
	withEnv := template(ns, tname)
	_ = unstructured.SetNestedSlice(withEnv.Object, []any{map[string]any{
		"name": "main", "image": "python:3.13", "env": []any{map[string]any{"name": "DROP_ME", "value": "x"}},
	}}, "spec", "podTemplate", "spec", "containers")
	if _, diags := templateKind.Create(ctx, meta, withEnv); diags.HasError() {
		t.Fatal(diags)
	}
	live, diags = templateKind.Apply(ctx, meta, template(ns, tname))
	if diags.HasError() {
		t.Fatal(diags)
	}
	if strings.Contains(specString(live), "DROP_ME") {
		t.Errorf("the env variable dropped from the configuration is still on the template: %s", specString(live))
	}

	// Control: POST by the same manager, then the same applies.
	control := acctest.RandomName("control")
	if _, err := kc.Dynamic().Resource(configMapKind.GVR).Namespace(ns).Create(ctx,
		configMap(ns, control, map[string]any{"keep": "1", "drop": "2"}), metav1.CreateOptions{FieldManager: "agentsandbox"}); err != nil {
		t.Fatal(err)
	}
	if _, err := kc.Apply(ctx, configMapKind.GVR, configMap(ns, control, map[string]any{"keep": "1", "drop": "2"}), kube.ApplyOptions{FieldManager: "agentsandbox", Force: true}); err != nil {
		t.Fatal(err)
	}
	out, err := kc.Apply(ctx, configMapKind.GVR, configMap(ns, control, map[string]any{"keep": "1"}), kube.ApplyOptions{FieldManager: "agentsandbox", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if data, _, _ := unstructured.NestedStringMap(out.Object, "data"); data["drop"] != "2" {
		t.Fatalf("control: expected the API server to keep a field listed by the manager's Update entry (the reason for the ownership step), got %v", data)
	}

	// Kind.Apply repairs such an object (a create interrupted after its
	// POST): the same apply removes the field, and only the Apply entry is
	// left.
	out, diags = configMapKind.Apply(ctx, meta, configMap(ns, control, map[string]any{"keep": "1"}))
	if diags.HasError() {
		t.Fatal(diags)
	}
	if data, _, _ := unstructured.NestedStringMap(out.Object, "data"); len(data) != 1 {
		t.Errorf("after Kind.Apply repaired the leftover Update entry the data is %v; want only keep=1", data)
	}
	assertOnlyApplyEntry(t, out, "agentsandbox")
	live, err = kc.Get(ctx, configMapKind.GVR, ns, control)
	if err != nil {
		t.Fatal(err)
	}
	if data, _, _ := unstructured.NestedStringMap(live.Object, "data"); len(data) != 1 {
		t.Errorf("live data %v; want only keep=1", data)
	}
}

// assertOnlyApplyEntry: the manager's only entry for the main resource is
// its Apply entry.
func assertOnlyApplyEntry(t *testing.T, live *unstructured.Unstructured, manager string) {
	t.Helper()
	var ops []string
	for _, e := range live.GetManagedFields() {
		if e.Manager == manager && e.Subresource == "" {
			ops = append(ops, string(e.Operation))
		}
	}
	if len(ops) != 1 || ops[0] != string(metav1.ManagedFieldsOperationApply) {
		t.Errorf("%s/%s: managed fields entries of %q are %v; want exactly one Apply entry", live.GetNamespace(), live.GetName(), manager, ops)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
