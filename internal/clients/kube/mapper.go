package kube

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// RESTMapper maps kinds to resources through discovery, done lazily on the
// first question and then kept in memory for the life of the Client (one
// per provider process), so a plan never pays for discovery per resource.
//
// The one case a cache gets wrong is a kind that appears after discovery,
// typically a CRD created earlier in the same apply. On a no-match error the
// mapper therefore refreshes once and asks again. Concurrent misses share
// a single refresh: a caller only resets the cache if nobody else has
// refreshed it since that caller started.
type RESTMapper struct {
	// static, when set, answers every question as is (NewClientFromDynamic).
	static   meta.RESTMapper
	deferred *restmapper.DeferredDiscoveryRESTMapper

	mu         sync.Mutex
	generation uint64
}

var _ meta.RESTMapper = (*RESTMapper)(nil)

// NewRESTMapper returns a mapper over a cached discovery client (typically
// memory.NewMemCacheClient). It contacts nothing until asked.
func NewRESTMapper(cached discovery.CachedDiscoveryInterface) *RESTMapper {
	return &RESTMapper{deferred: restmapper.NewDeferredDiscoveryRESTMapper(cached)}
}

// Reset forgets what discovery said; the next question rediscovers.
func (m *RESTMapper) Reset() {
	if m.static != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deferred.Reset()
	m.generation++
}

// withRefresh runs f against the delegate, refreshing discovery once when f
// fails with a no-match error.
func withRefresh[T any](ctx context.Context, m *RESTMapper, f func(context.Context, meta.RESTMapperWithContext) (T, error)) (T, error) {
	if m.static != nil {
		return f(ctx, meta.ToRESTMapperWithContext(m.static))
	}
	m.mu.Lock()
	gen := m.generation
	m.mu.Unlock()

	v, err := f(ctx, m.deferred)
	if err == nil || !meta.IsNoMatchError(err) {
		return v, err
	}
	m.mu.Lock()
	if m.generation == gen {
		m.deferred.ResetWithContext(ctx)
		m.generation++
	}
	m.mu.Unlock()
	return f(ctx, m.deferred)
}

// Mapping returns how to address objects of gvk: their resource and whether
// they are namespaced. ctx carries the request logging of the discovery
// calls, if any are needed.
func (m *RESTMapper) Mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return withRefresh(ctx, m, func(ctx context.Context, d meta.RESTMapperWithContext) (*meta.RESTMapping, error) {
		return d.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	})
}

// KindFor implements meta.RESTMapper.
func (m *RESTMapper) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return withRefresh(context.Background(), m, func(ctx context.Context, d meta.RESTMapperWithContext) (schema.GroupVersionKind, error) {
		return d.KindForWithContext(ctx, resource)
	})
}

// KindsFor implements meta.RESTMapper.
func (m *RESTMapper) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return withRefresh(context.Background(), m, func(ctx context.Context, d meta.RESTMapperWithContext) ([]schema.GroupVersionKind, error) {
		return d.KindsForWithContext(ctx, resource)
	})
}

// ResourceFor implements meta.RESTMapper.
func (m *RESTMapper) ResourceFor(input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return withRefresh(context.Background(), m, func(ctx context.Context, d meta.RESTMapperWithContext) (schema.GroupVersionResource, error) {
		return d.ResourceForWithContext(ctx, input)
	})
}

// ResourcesFor implements meta.RESTMapper.
func (m *RESTMapper) ResourcesFor(input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return withRefresh(context.Background(), m, func(ctx context.Context, d meta.RESTMapperWithContext) ([]schema.GroupVersionResource, error) {
		return d.ResourcesForWithContext(ctx, input)
	})
}

// RESTMapping implements meta.RESTMapper.
func (m *RESTMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return withRefresh(context.Background(), m, func(ctx context.Context, d meta.RESTMapperWithContext) (*meta.RESTMapping, error) {
		return d.RESTMappingWithContext(ctx, gk, versions...)
	})
}

// RESTMappings implements meta.RESTMapper.
func (m *RESTMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return withRefresh(context.Background(), m, func(ctx context.Context, d meta.RESTMapperWithContext) ([]*meta.RESTMapping, error) {
		return d.RESTMappingsWithContext(ctx, gk, versions...)
	})
}

// ResourceSingularizer implements meta.RESTMapper.
func (m *RESTMapper) ResourceSingularizer(resource string) (string, error) {
	return withRefresh(context.Background(), m, func(ctx context.Context, d meta.RESTMapperWithContext) (string, error) {
		return d.ResourceSingularizerWithContext(ctx, resource)
	})
}
