package engine_test

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
)

// slowUnder is the in-process lock made slow — 200 µs an acquisition —
// while GOMAXPROCS is slow, and yielding the thread otherwise: a lock whose speed depends on lockbench's
// threads, as a real one's does on a shared machine. It counts the
// acquisitions it saw under each GOMAXPROCS.
type slowUnder struct {
	impl.Locker
	slow int
	seen *[8]atomic.Int64
}

func (l slowUnder) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	p := runtime.GOMAXPROCS(0)
	l.seen[min(p, 7)].Add(1)
	if p == l.slow {
		time.Sleep(200 * time.Microsecond)
	} else {
		runtime.Gosched() // as a lock that waits for a server would let others run
	}
	return l.Locker.Acquire(ctx, name)
}

// A cell given GOMAXPROCS to try takes turns with them while it warms up
// and measures under the one its clients cycled fastest with, whichever
// that is, and says so; a warm-up too short for a trial leaves GOMAXPROCS
// alone. Not parallel: GOMAXPROCS is the process's.
func TestProcsTrialKeepsTheFasterAndSaysSo(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	run := func(warmup time.Duration, slow int) (*engine.Result, *[8]atomic.Int64) {
		t.Helper()
		var seen [8]atomic.Int64
		d := impl.Driver{Name: "slow-under", New: func(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
			l, err := inproc.New(ctx, cfg)
			return slowUnder{Locker: l, slow: slow, seen: &seen}, err
		}}
		res, err := engine.RunCellDetail(context.Background(), engine.CellSpec{
			Driver: d, Scenario: scenario(t, "hot"), Clients: 4, Locks: 4,
			Warmup: warmup, Duration: 100 * time.Millisecond, ProcsTrial: []int{3, 1},
			Config: impl.Config{Namespace: t.Name()},
		})
		if err != nil {
			t.Fatal(err)
		}
		return &res, &seen
	}
	for _, tc := range []struct{ slow, want int }{{3, 1}, {1, 3}} {
		// A warm-up above the least: the race detector and other
		// packages' tests beside this one make timers late.
		res, seen := run(2*engine.MinTrialWarmup, tc.slow)
		g := res.Cell.Generator
		if len(g.ProcsTrial) != 2 || g.ProcsTrial[0].Procs != 3 || g.ProcsTrial[1].Procs != 1 {
			t.Fatalf("tried %+v (%s), want 3 then 1", g.ProcsTrial, g.ProcsWhy)
		}
		if seen[3].Load() == 0 || seen[1].Load() == 0 {
			t.Errorf("the lock saw %d acquisitions under GOMAXPROCS 3 and %d under 1: both must have had turns", seen[3].Load(), seen[1].Load())
		}
		for _, try := range g.ProcsTrial {
			if len(try.RoundsPerS) != 2 || try.RoundsPerS[0] <= 0 || try.RoundsPerS[1] <= 0 || try.CPUPerGrantUs <= 0 || len(try.RoundsCPUPerGrantUs) != 2 {
				t.Errorf("GOMAXPROCS %d: rounds %v, CPU a grant %.2f µs %v", try.Procs, try.RoundsPerS, try.CPUPerGrantUs, try.RoundsCPUPerGrantUs)
			}
		}
		if g.Procs != tc.want || runtime.GOMAXPROCS(0) != tc.want || g.ProcsUndecided {
			t.Errorf("slow under %d: measured on %d (now %d), undecided %v, after %+v; want %d", tc.slow, g.Procs, runtime.GOMAXPROCS(0), g.ProcsUndecided, g.ProcsTrial, tc.want)
		}
		if !strings.Contains(g.ProcsWhy, "GOMAXPROCS 3 vs 1 tried in the warm-up") || !strings.HasSuffix(g.ProcsWhy, "kept "+map[int]string{1: "1", 3: "3"}[tc.want]) {
			t.Errorf("procs_why %q", g.ProcsWhy)
		}
	}

	runtime.GOMAXPROCS(2)
	res, _ := run(engine.MinTrialWarmup-time.Millisecond, 2)
	if g := res.Cell.Generator; g.ProcsTrial != nil || g.ProcsWhy != "" || g.Procs != 2 {
		t.Errorf("a warm-up too short for a trial: procs %d, tried %+v, why %q", g.Procs, g.ProcsTrial, g.ProcsWhy)
	}
}

// A cell that ends while it tries says so, and which GOMAXPROCS it was
// left at.
func TestProcsTrialCutShortSaysSo(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, _ := engine.RunCellDetail(ctx, engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 2, Locks: 2,
		Warmup: 2 * time.Second, Duration: time.Second, ProcsTrial: []int{3, 1},
		Config: impl.Config{Namespace: t.Name()},
	})
	g := res.Cell.Generator
	if g == nil || !g.ProcsUndecided || g.ProcsTrial != nil || !strings.Contains(g.ProcsWhy, "trial was cut short as the cell ended") {
		t.Errorf("interrupted mid-trial: %+v", g)
	}
}

// A cell that ends in the middle of a candidate's turn — here the moment
// the trial has switched to GOMAXPROCS 1 — gives Go's choice back, not the
// turn's, and says in whose turn it was cut.
func TestProcsTrialCutInATurnGivesGOMAXPROCSBack(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	runtime.GOMAXPROCS(3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switched := make(chan struct{})
	go func() { // cut the cell as soon as the second candidate's turn begins
		defer close(switched)
		for ctx.Err() == nil && runtime.GOMAXPROCS(0) != 1 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	res, _ := engine.RunCellDetail(ctx, engine.CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 2, Locks: 2,
		Warmup: 2 * time.Second, Duration: time.Second, ProcsTrial: []int{3, 1},
		Config: impl.Config{Namespace: t.Name()},
	})
	<-switched
	g := res.Cell.Generator
	if g == nil || !g.ProcsUndecided || g.ProcsTrial != nil || !strings.Contains(g.ProcsWhy, "cut short as the cell ended, in GOMAXPROCS 1's turn") {
		t.Errorf("cut in GOMAXPROCS 1's turn: %+v", g)
	}
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("GOMAXPROCS %d after a cut in GOMAXPROCS 1's turn, want Go's 3 given back", got)
	}
}
