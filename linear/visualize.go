package linear

import (
	"fmt"
	"os"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lockbench/lockbench/result"
)

// VisualizationExt ends the name of a cell's visualization of its
// shortest illegal window, written beside the report.
const VisualizationExt = ".linearizability.html"

// Visualize writes porcupine's visualization of the report's shortest
// illegal window to path; a report without one writes nothing.
func (r Report) Visualize(path string) error {
	if r.illegal == nil {
		return nil
	}
	m := model()
	_, info := porcupine.CheckOperationsVerbose(m, r.illegal, 10*time.Second)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("linear: %w", err)
	}
	if err := porcupine.Visualize(m, info, f); err != nil {
		f.Close()
		return fmt.Errorf("linear: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("linear: %w", err)
	}
	return nil
}

// WriteVisualization checks h again within budget and, if it finds an
// illegal window, writes its visualization to path and returns true.
func WriteVisualization(h *result.History, budget time.Duration, path string) (bool, error) {
	rep := Check(h, budget)
	if rep.illegal == nil {
		return false, nil
	}
	return true, rep.Visualize(path)
}
