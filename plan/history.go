package plan

import (
	"path/filepath"

	"github.com/lockbench/lockbench/linear"
	"github.com/lockbench/lockbench/result"
)

// writeHistory spills a cell's recorded operations beside its interval
// log and, when the check found the history not linearizable, writes
// porcupine's visualization of the shortest illegal window beside the
// report, naming it in the cell's safety figures.
func (m *matrix) writeHistory(c *result.Cell) error {
	h := c.History
	if h == nil {
		return nil
	}
	if err := result.WriteHistory(m.plan.Out, *c, h); err != nil {
		return err
	}
	s := c.Safety
	if s == nil || s.Linearizable != result.NotLinearizable || s.Illegal == nil {
		return nil
	}
	path, err := result.CreateCellPath(m.plan.Out, *c, linear.VisualizationExt)
	if err != nil {
		return err
	}
	ok, err := linear.WriteVisualization(h, linear.DefaultBudget, path)
	if err != nil {
		return err
	}
	if ok {
		s.Illegal.File = filepath.ToSlash(result.CellRel(m.plan.Out, *c, linear.VisualizationExt))
	}
	return nil
}
