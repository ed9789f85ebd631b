package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// CRDDir is where the generated agent-sandbox CRDs live, relative to the
// repository root. They are read from disk rather than through an embedded
// copy so that the harness always installs what `make generate` last wrote.
const CRDDir = "internal/sandboxapi/crds"

// FieldManager is the server-side apply field manager of the harness; it
// differs from the provider's so a test can tell their fields apart.
const FieldManager = "agentsandbox-testenv"

// CRDGVR is the resource of CustomResourceDefinitions.
var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// LoadCRDs reads every CustomResourceDefinition from the *.yaml files in dir
// (multi-document files allowed), sorted by name for a stable order.
func LoadCRDs(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRD files (*.yaml) in %s; run `make generate`", dir)
	}
	var crds []*unstructured.Unstructured
	for _, f := range files {
		objs, err := decodeYAMLFile(f)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				return nil, fmt.Errorf("%s: unexpected %s %q among the CRDs", f, o.GetKind(), o.GetName())
			}
			crds = append(crds, o)
		}
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].GetName() < crds[j].GetName() })
	return crds, nil
}

func decodeYAMLFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(m) == 0 { // an empty document between two "---"
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// InstallCRDs server-side applies the CRDs found in dir and waits until the
// API server reports each Established (served) with its names accepted. It is
// idempotent, so it is as safe against a long-lived cluster as against a
// fresh one. It returns the number of CRDs.
func InstallCRDs(ctx context.Context, cfg *rest.Config, dir string) (int, error) {
	crds, err := LoadCRDs(dir)
	if err != nil {
		return 0, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, crdTimeout)
	defer cancel()
	client := dyn.Resource(CRDGVR)
	for _, crd := range crds {
		// Force: the harness is the authority on what the test CRDs look
		// like, even over an earlier run that used another field manager.
		if _, err := client.Apply(ctx, crd.GetName(), crd, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return 0, fmt.Errorf("applying CRD %s: %w", crd.GetName(), err)
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, client, crd.GetName()); err != nil {
			return 0, err
		}
	}
	return len(crds), nil
}

// waitEstablished polls rather than watches: establishing takes ~0.35 s, so a
// 50 ms poll costs a handful of GETs and keeps the code trivially correct.
func waitEstablished(ctx context.Context, client dynamic.NamespaceableResourceInterface, name string) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		obj, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		ok, why := crdEstablished(obj)
		last = why
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %s", name, last)
	}
	return nil
}

// crdEstablished reads the Established and NamesAccepted conditions; the
// second string explains a false result.
func crdEstablished(crd *unstructured.Unstructured) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	status := map[string]string{}
	var reasons []string
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		status[t] = s
		if s != "True" {
			msg, _ := m["message"].(string)
			reasons = append(reasons, fmt.Sprintf("%s=%s (%s)", t, s, msg))
		}
	}
	if status["Established"] == "True" && status["NamesAccepted"] == "True" {
		return true, ""
	}
	if len(reasons) == 0 {
		return false, "no Established condition yet"
	}
	return false, strings.Join(reasons, "; ")
}
