package controller

import (
	"testing"
	"time"
)

// SetFetchBackoff shortens the pause between download attempts for one
// test (the provider runs in the test process), so a test of an
// unreachable URL does not sit through the production backoff.
func SetFetchBackoff(t testing.TB, d time.Duration) {
	saved := fetchBackoff
	fetchBackoff = d
	t.Cleanup(func() { fetchBackoff = saved })
}

// RenderedChartArgs are the args the typed controller values render from
// the chart values file testdata/chartargs/<name>.yaml, and the args
// `helm template` rendered from it (<name>.args).
func RenderedChartArgs(t *testing.T, name string) (rendered, helm []string) {
	chart, helm := chartValues(t, name)
	for _, f := range renderFlags(attributesFor(t, chart)) {
		rendered = append(rendered, f.Arg)
	}
	return rendered, helm
}
