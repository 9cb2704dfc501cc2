package ranktest

import "testing"

func TestNeedsFourValuesASide(t *testing.T) {
	lo, hi := []float64{1, 2, 3}, []float64{10, 11, 12}
	if c := Test(lo, hi); c.Tested || c.Significant || c.P != 1 {
		t.Fatalf("three rounds a side: %+v, want untested", c)
	}
	lo, hi = append(lo, 4), append(hi, 13)
	if c := Test(lo, hi); !c.Tested || !c.Significant {
		t.Fatalf("four rounds a side, wholly apart: %+v, want significant", c)
	}
	if c := Test(lo, []float64{2, 3, 1, 4}); c.Significant {
		t.Fatalf("the same values: %+v, want no difference", c)
	}
}

func TestLeavesTheValuesInOrder(t *testing.T) {
	a, b := []float64{4, 1, 3, 2}, []float64{9, 7, 8, 6}
	Test(a, b)
	if a[0] != 4 || b[0] != 9 {
		t.Fatalf("Test reordered its arguments: %v %v", a, b)
	}
}
