package scenarios

import (
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/result"
)

func init() {
	engine.RegisterScenario(engine.Load(engine.LoadSpec{Name: "keys", Kind: result.KindClosed, Shardable: true, NewShape: func() engine.Shape { return keysLoop{} },
		Description: "closed loop over --locks names, each acquisition's name drawn by --dist uniform|zipf:S|hot:F/P"}))
}

// keysLoop is the keys scenario's shape: the closed loop, each acquisition
// drawing its lock from --locks names by the key distribution.
type keysLoop struct{ closedLoop }

func (keysLoop) Prepare(r *engine.Cell) {
	for _, w := range r.Clients {
		w.Picker = r.Spec.Keys.NewPicker(r.Spec.Locks, w.Rand())
	}
}
