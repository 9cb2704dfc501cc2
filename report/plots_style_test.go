package report

import (
	"fmt"
	"testing"
)

// Twenty implementations in one report each get a colour of their own,
// and no two share both colour and marker: the demo's sixteen rows cycled
// ten colours, so that two locks looked alike in every plot.
func TestEveryImplementationLooksItsOwn(t *testing.T) {
	t.Parallel()
	var cells []Cell
	for i := range 20 {
		cells = append(cells, Cell{Impl: fmt.Sprintf("lock-%d", i), Scenario: "hot"})
	}
	st := newStyler(cells)
	colours, pairs := map[string]string{}, map[string]string{}
	for _, c := range cells {
		col, shape := st.implStyle(c.Impl)
		ck := fmt.Sprint(col)
		if other, ok := colours[ck]; ok {
			t.Errorf("%s and %s share colour %v", c.Impl, other, col)
		}
		colours[ck] = c.Impl
		pk := fmt.Sprintf("%v %T", col, shape)
		if other, ok := pairs[pk]; ok {
			t.Errorf("%s and %s look alike: %s", c.Impl, other, pk)
		}
		pairs[pk] = c.Impl
		ls, gs := st.line(series{Impl: c.Impl, Scenario: "hot"})
		if ls.Color != col || gs.Color != col || fmt.Sprintf("%T", gs.Shape) != fmt.Sprintf("%T", shape) {
			t.Errorf("%s: its lines are not drawn in its own colour and marker", c.Impl)
		}
	}
}
