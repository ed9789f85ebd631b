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
