package acctest

import "testing"

// TestMain is what every package with acceptance tests writes; here it also
// proves that acctest.Main works for the package that defines it.
func TestMain(m *testing.M) { Main(m) }
