package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/result"
)

// Ramp is a staircase of client counts within one series: Start clients,
// then Step more every Every, up to the cell's Clients.
type Ramp struct {
	Start, Step int
	Every       time.Duration
}

// ParseRamp reads "start:step:every", e.g. "4:4:5s".
func ParseRamp(s string) (Ramp, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return Ramp{}, fmt.Errorf("ramp %q: want start:step:every, e.g. 4:4:5s", s)
	}
	start, err1 := strconv.Atoi(parts[0])
	step, err2 := strconv.Atoi(parts[1])
	every, err3 := time.ParseDuration(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || start < 1 || step < 1 || every <= 0 {
		return Ramp{}, fmt.Errorf("ramp %q: start and step must be whole numbers ≥ 1, every a positive duration", s)
	}
	return Ramp{Start: start, Step: step, Every: every}, nil
}

// Stairs returns the client counts of the staircase up to top: rising,
// none above top, the last one top. A step that would pass top (or
// overflow an int on the way, as a step of 9223372036854775807 did)
// ends the staircase at top.
func (r Ramp) Stairs(top int) []int {
	var out []int
	for k := r.Start; k < top; k += r.Step {
		out = append(out, k)
		if r.Step < 1 || r.Step >= top-k {
			break
		}
	}
	return append(out, top)
}

// RunRamp connects spec.Clients clients once and runs one cell per stair of
// the ramp, each for ramp.Every, the first k clients taking part. Keeping
// the connections makes the stairs one series with no connect cost between
// them; warm-up applies to the first stair only.
func RunRamp(ctx context.Context, spec CellSpec, ramp Ramp) ([]Result, error) {
	spec.Duration, spec.Acquires = ramp.Every, 0
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	ls, ok := spec.Scenario.(interface{ NewShape() Shape })
	if k := spec.Scenario.Kind(); !ok || k != result.KindClosed && k != result.KindOpen {
		return nil, fmt.Errorf("%w: --ramp needs a closed- or open-loop scenario, not %s", ErrUsage, spec.Scenario.Name())
	}
	if ramp.Start > spec.Clients {
		return nil, fmt.Errorf("%w: ramp starts at %d clients, above the %d connected", ErrUsage, ramp.Start, spec.Clients)
	}
	d, lockers, err := setUp(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, l := range lockers {
			l.Close()
		}
		if d.Cleanup != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			d.Cleanup(cctx, spec.Config.Servers, spec.Config.Namespace)
			cancel()
		}
	}()
	var out []Result
	for i, k := range ramp.Stairs(spec.Clients) {
		s := spec
		s.Clients = k
		if s.Scenario.Kind() == result.KindOpen && spec.MaxInflight == spec.Clients {
			s.MaxInflight = k // the default follows the stair
		}
		if i > 0 {
			s.Warmup = 0
		}
		r := newCellRun(s, d, lockers[:k], ls.NewShape())
		r.keepOpen = true
		res, err := r.run(ctx)
		if res.Impl != "" {
			out = append(out, res) // an interrupted stair keeps what it measured
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
