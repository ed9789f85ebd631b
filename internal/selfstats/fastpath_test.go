package selfstats

import (
	"reflect"
	"testing"
)

// Every counter of FastPathCounts is summed by Add, so a counter added to
// the struct and forgotten in Add fails here; MaxCallsInFlight keeps the
// larger maximum.
func TestFastPathCountsAdd_sumsEveryCounter(t *testing.T) {
	var a, b FastPathCounts
	av, bv := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := range av.NumField() {
		av.Field(i).SetInt(int64(i + 1))
		bv.Field(i).SetInt(int64(100 * (i + 1)))
	}
	a.Add(b)
	for i := range av.NumField() {
		name := av.Type().Field(i).Name
		want := int64(101 * (i + 1))
		if name == "MaxCallsInFlight" {
			want = int64(100 * (i + 1))
		}
		if got := av.Field(i).Int(); got != want {
			t.Errorf("%s after Add: %d, want %d", name, got, want)
		}
	}
}
