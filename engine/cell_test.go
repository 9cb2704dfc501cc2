package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/exclusion"
	"github.com/lockbench/lockbench/internal/allocs"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
	"github.com/lockbench/lockbench/result"
)

func scenario(t testing.TB, name string) Scenario {
	s, ok := LookupScenario(name)
	if !ok {
		t.Fatalf("no scenario %s", name)
	}
	return s
}

func TestSpecErrorsAreUsage(t *testing.T) {
	t.Parallel()
	cases := map[string]CellSpec{
		"unknown impl":        {Impl: "nope", Clients: 1, Duration: time.Second},
		"no clients":          {Impl: "inproc", Clients: 0, Duration: time.Second},
		"duration & acquires": {Impl: "inproc", Clients: 1, Duration: time.Second, Acquires: 5},
		"neither":             {Impl: "inproc", Clients: 1},
	}
	for name, spec := range cases {
		if _, err := RunCell(context.Background(), spec); !errors.Is(err, ErrUsage) {
			t.Errorf("%s: want ErrUsage, got %v", name, err)
		}
	}
}

var failingDials atomic.Int64

type closeCounter struct{ impl.Locker }

var closed atomic.Int64

func (c closeCounter) Close() error { closed.Add(1); return c.Locker.Close() }

func init() {
	impl.Register(impl.Driver{Name: "test-fails-third", New: func(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
		if cfg.Client == 2 {
			failingDials.Add(1)
			return nil, impl.ErrUnreachable
		}
		l, _ := inproc.New(ctx, cfg)
		return closeCounter{l}, nil
	}})
}

func TestConnectFailureClosesTheRest(t *testing.T) {
	closed.Store(0) // counted again under -count
	_, err := RunCell(context.Background(), CellSpec{Impl: "test-fails-third", Clients: 5, Duration: time.Second, ConnectParallel: 1})
	if !errors.Is(err, impl.ErrUnreachable) {
		t.Fatalf("want ErrUnreachable, got %v", err)
	}
	// With one connect at a time, clients 0 and 1 were made and must be closed.
	if closed.Load() != 2 {
		t.Errorf("closed %d clients, want 2", closed.Load())
	}
}

func TestRecordingPathAllocatesNothing(t *testing.T) {
	l, _ := inproc.New(context.Background(), impl.Config{Namespace: t.Name()})
	w := newWorker(0, l, 1)
	w.hist = result.NewOpLog(600) // full before the runs end: dropping allocates nothing either
	start := time.Now()
	iv := newIntervals(start, []*Client{w}, nil)
	k := exclusion.NewChecker(start, 1, result.LockName)
	lease, _ := l.Acquire(context.Background(), "lock-0")
	t.Cleanup(func() { lease.Release(context.Background()) })
	// Every cycle is stamped in the cell's first interval: the collector's
	// goroutine, which opens an interval's totals once a second, then
	// allocates nothing either, so what is counted is the recording path
	// alone, however slowly (race detector, a loaded machine) it runs.
	cycle := func() {
		t0 := start
		w.recordOp(result.OpAcquire, lockIndex("lock-0"), t0, t0, result.OutOK, lease)
		w.recordOp(result.OpRelease, 0, t0, t0, outcome(impl.ErrLockLost), nil)
		w.recordAcquire(t0, time.Since(t0)+3*time.Millisecond)
		v := k.Enter(0, 0, 1, false, t0)
		k.Exit(v, 0, time.Now())
		w.Record(TagRelease, t0, 2*time.Hour) // beyond range: clamped, no error value
		w.Record(TagLag, t0, time.Microsecond)
		k.Released(0, t0)
		k.Handoff(0, t0, time.Now())
	}
	// A cell past its peak: every batch it can need made (a live cell
	// makes them as its first batches fill; how many depends on how the
	// collector is scheduled, so the test does not leave that to chance),
	// then two collections, which would have emptied a sync.Pool of them.
	for len(iv.free) < cap(iv.free) {
		iv.free <- new(batch)
	}
	allocs.Total(chanBatches*batchLen, cycle)
	runtime.GC()
	runtime.GC()
	// The count is the process's: the collector's goroutine makes an
	// interval's totals once an interval (a second), which a run of these
	// cycles may cross. Ten in 100,000 is that; one a cycle, or one in a
	// few hundred (the pool's refills), is not.
	const cycles = 100_000
	if n := allocs.Total(cycles, cycle); n > cycles/10_000 {
		t.Fatalf("recording path allocated %d times in %d cycles", n, cycles)
	}
}

func TestLiveBucketsBracketValues(t *testing.T) {
	t.Parallel()
	for _, us := range []int64{0, 1, 3, 4, 7, 8, 100, 999, 12345, 1 << 40} {
		b := liveBucket(us)
		if hi := liveValue(b); hi < us || (us >= 8 && float64(hi) > float64(us)*1.26) {
			t.Errorf("us=%d bucket %d upper edge %d", us, b, hi)
		}
		if b > 0 && liveValue(b-1) > us {
			t.Errorf("us=%d: previous bucket edge %d above it", us, liveValue(b-1))
		}
	}
}

func TestRunningOutOfFilesIsSaidAsSuch(t *testing.T) {
	err := connectError("x", 7, fmt.Errorf("dial: %w", syscall.EMFILE))
	if !errors.Is(err, syscall.EMFILE) || !strings.Contains(err.Error(), "out of file descriptors") {
		t.Errorf("EMFILE reads %q", err)
	}
	if err := connectError("x", 7, errors.New("refused")); strings.Contains(err.Error(), "file descriptors") {
		t.Errorf("a refused connection reads %q", err)
	}
}

func TestFairnessIndex(t *testing.T) {
	t.Parallel()
	h := newHist()
	if f := fairness([]int64{5, 5, 5, 5}, h); f.Jain != 1 || f.Starved != 0 {
		t.Errorf("equal shares: %+v", f)
	}
	if f := fairness([]int64{20, 0, 0, 0}, h); f.Jain != 0.25 || f.Starved != 3 || f.MaxShare != 1 {
		t.Errorf("one took all: %+v", f)
	}
}
