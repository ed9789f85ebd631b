package faultbudget

import "testing"

func takes(b *Budget, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = b.Take()
	}
	return out
}

func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		name        string
		skip, times int
		want        []bool
	}{
		{"zero times means once", 0, 0, []bool{true, false, false}},
		{"twice", 0, 2, []bool{true, true, false, false}},
		{"negative means every one", 0, -1, []bool{true, true, true, true}},
		{"skip passes the first ones", 2, 1, []bool{false, false, true, false}},
		{"skip then every one", 1, -1, []bool{false, true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Budget
			b.Arm(tc.skip, tc.times)
			got := takes(&b, len(tc.want))
			hits := 0
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("takes = %v, want %v", got, tc.want)
				}
				if got[i] {
					hits++
				}
			}
			if b.Hits() != hits {
				t.Errorf("Hits() = %d, want %d", b.Hits(), hits)
			}
		})
	}
}

func TestZeroBudgetAppliesToNothing(t *testing.T) {
	var b Budget
	if b.Take() {
		t.Fatal("an unarmed budget applied")
	}
}

func TestGiveBack(t *testing.T) {
	var b Budget
	b.Arm(0, 1)
	if !b.Take() {
		t.Fatal("first take refused")
	}
	b.GiveBack()
	if b.Hits() != 0 {
		t.Fatalf("Hits() = %d after giving back, want 0", b.Hits())
	}
	if !b.Take() || b.Take() {
		t.Fatal("a given-back application is not available exactly once more")
	}

	var every Budget
	every.Arm(0, -1)
	every.Take()
	every.GiveBack()
	if got := takes(&every, 3); got[0] != true || got[1] != true || got[2] != true {
		t.Fatalf("an unlimited budget stopped applying after GiveBack: %v", got)
	}
}

func TestSetPicksTheFirstThatApplies(t *testing.T) {
	type fault struct {
		name string
		b    Budget
	}
	a, b := &fault{name: "a"}, &fault{name: "b"}
	a.b.Arm(0, 1)
	b.b.Arm(0, -1)
	var s Set[*fault]
	s.Add(a, b)
	take := func(f *fault) bool { return f.b.Take() }
	for i, want := range []string{"a", "b", "b"} {
		f, ok := s.Pick(take)
		if !ok || f.name != want {
			t.Fatalf("pick %d = %v, %v; want %s", i, f, ok, want)
		}
	}
	s.Clear()
	if f, ok := s.Pick(take); ok {
		t.Fatalf("picked %s after Clear", f.name)
	}
	if a.b.Hits() != 1 || b.b.Hits() != 2 {
		t.Fatalf("hits a=%d b=%d, want 1 and 2 (kept across Clear)", a.b.Hits(), b.b.Hits())
	}
}
