package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/discovery"
	"k8s.io/kube-openapi/pkg/spec3"
)

// ErrNoSchema says SchemaCheck could not check an object: the cluster
// publishes no OpenAPI v3 schema for its kind, or reading it failed. The
// caller falls back to what the server says (a dry run once possible).
var ErrNoSchema = errors.New("the cluster publishes no OpenAPI v3 schema for this kind")

// schemas holds, per group-version path of the cluster's OpenAPI v3
// document ("api/v1", "apis/apps/v1"), the type converter built from it.
type schemas struct {
	mu   sync.Mutex
	disc discovery.DiscoveryInterface
	gv   map[string]managedfields.TypeConverter
}

// SchemaCheck checks obj against the OpenAPI v3 schema the cluster
// publishes for its kind, with the typed conversion the API server makes
// of a server-side apply (structured-merge-diff, through
// k8s.io/apimachinery's managedfields.TypeConverter, the one kubectl's
// client-side validation also builds from this document), without sending
// obj. It is for objects a dry run cannot check yet, such as objects in a
// namespace that does not exist yet: a document the server would refuse
// for its shape (a number where the schema wants a string, a list where it
// wants a map, a field the kind does not have) is found before anything is
// written. It cannot see what only the server checks (names, immutable
// fields, admission). One request per group-version, cached on the client.
//
// It returns ErrNoSchema (wrapped) when the cluster does not publish the
// kind's group-version, and the conversion's error, naming the field path,
// when obj does not fit.
func (c *Client) SchemaCheck(obj *unstructured.Unstructured) error {
	if c.schemas == nil {
		return fmt.Errorf("%w: no discovery client", ErrNoSchema)
	}
	gvk := obj.GroupVersionKind()
	path := "apis/" + gvk.Group + "/" + gvk.Version
	if gvk.Group == "" {
		path = "api/" + gvk.Version
	}
	conv, err := c.schemas.converter(path)
	if err != nil {
		if errors.Is(err, ErrNoSchema) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrNoSchema, err)
	}
	if _, err := conv.ObjectToTyped(obj); err != nil {
		// The converter's own "no corresponding type" error is not
		// exported (managedfields/internal/versionconverter.go).
		if strings.HasPrefix(err.Error(), "no corresponding type for") {
			return fmt.Errorf("%w: %s", ErrNoSchema, gvk)
		}
		return err
	}
	return nil
}

func (s *schemas) converter(path string) (managedfields.TypeConverter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if conv, ok := s.gv[path]; ok {
		return conv, nil
	}
	paths, err := s.disc.OpenAPIV3().Paths()
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's OpenAPI v3 index: %w", err)
	}
	gv, ok := paths[path]
	if !ok {
		return nil, fmt.Errorf("%w: /openapi/v3/%s is not published", ErrNoSchema, path)
	}
	b, err := gv.Schema("application/json")
	if err != nil {
		return nil, fmt.Errorf("reading /openapi/v3/%s: %w", path, err)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("decoding /openapi/v3/%s: %w", path, err)
	}
	if doc.Components == nil {
		return nil, fmt.Errorf("%w: /openapi/v3/%s has no schemas", ErrNoSchema, path)
	}
	conv, err := managedfields.NewTypeConverter(doc.Components.Schemas, false)
	if err != nil {
		return nil, fmt.Errorf("building a type converter from /openapi/v3/%s: %w", path, err)
	}
	if s.gv == nil {
		s.gv = map[string]managedfields.TypeConverter{}
	}
	s.gv[path] = conv
	return conv, nil
}
