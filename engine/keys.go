package engine

import "github.com/lockbench/lockbench/result"

func init() {
	RegisterScenario(loadScenario{name: "keys", kind: result.KindClosed, newShape: func() shape { return keysLoop{} },
		description: "closed loop over --locks names, each acquisition's name drawn by --dist uniform|zipf:S|hot:F/P"})
}

// keysLoop is the keys scenario's shape: the closed loop, each acquisition
// drawing its lock from --locks names by the key distribution.
type keysLoop struct{ closedLoop }

func (keysLoop) prepare(r *cellRun) {
	for _, w := range r.workers {
		w.picker = r.spec.Keys.NewPicker(r.spec.Locks, w.rng)
	}
}
