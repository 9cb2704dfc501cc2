package engine

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
)

func TestBusyOfReadsProcStat(t *testing.T) {
	t.Parallel()
	// user nice system idle iowait irq softirq steal guest guest_nice:
	// busy is everything but idle and iowait, guest time being inside
	// user already.
	d, ok := busyOf("cpu  100 2 30 5000 40 0 7 1 50 0\ncpu0 50 1 15 2500 20 0 3 1 25 0\n")
	if want := 140 * time.Second / clockTicks; !ok || d != want {
		t.Errorf("busy %v, %v; want %v", d, ok, want)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5 6 7 8"} {
		if _, ok := busyOf(bad); ok {
			t.Errorf("%q read as a cpu line", bad)
		}
	}
}

// procCPU is the CPU time process pid has used (utime + stime).
func procCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * time.Second / clockTicks
}

// A process that is neither lockbench nor one of its servers is counted
// among the other processes, at least as busy as it was.
func TestCellCountsOtherProcessesAndWakes(t *testing.T) {
	spin := exec.Command("sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Skip("no sh to spin:", err)
	}
	defer func() { spin.Process.Kill(); spin.Wait() }()
	started := time.Now()
	cpu0 := procCPU(t, spin.Process.Pid)
	res, err := RunCellDetail(context.Background(), CellSpec{
		Impl: "inproc", Scenario: scenario(t, "hot"), Clients: 2, Duration: time.Second,
		Warmup: 0, Hold: time.Millisecond, Config: impl.Config{Namespace: t.Name()},
	})
	spun := float64(procCPU(t, spin.Process.Pid)-cpu0) / float64(time.Since(started))
	if err != nil {
		t.Fatal(err)
	}
	g := res.Cell.Generator
	if g == nil || g.WakeLateUs == nil {
		t.Fatalf("generator %+v: no wake probe", g)
	}
	if g.WakeLateUs.P50 < 0 || g.WakeLateUs.Max < g.WakeLateUs.P99 {
		t.Errorf("wake lateness %+v out of order", *g.WakeLateUs)
	}
	// The spinner used `spun` cores over a span a little longer than the
	// cell's: a tenth of a core and /proc/stat's hundredths are slack.
	if g.OtherCores < spun-0.1 || g.OtherCores > float64(g.Cores) {
		t.Errorf("other processes %.2f cores, while a spinner alone used %.2f of %d", g.OtherCores, spun, g.Cores)
	}
}

// allocatingLocker is inproc whose every acquisition allocates one
// object of allocatingSize: past 32 KiB, so the runtime counts it when it
// is made. Small objects are counted only as their span is refilled, a few
// hundred at a time, so a cell as free of allocations as lockbench's may
// read none over half a second, and a test could not tell that from a
// count that is broken.
type allocatingLocker struct{ impl.Locker }

const allocatingSize = 64 << 10

var allocSink atomic.Pointer[[allocatingSize]byte]

func (l allocatingLocker) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	allocSink.Store(new([allocatingSize]byte))
	return l.Locker.Acquire(ctx, name)
}

func init() {
	impl.Register(impl.Driver{Name: "test-allocating", Description: "inproc whose every acquisition allocates 64 KiB",
		New: func(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
			l, err := inproc.New(ctx, cfg)
			return allocatingLocker{l}, err
		}})
}

// A cell counts lockbench's heap allocations over its measured span and
// per acquisition: the garbage behind its collections. Every acquisition
// allocates one 64 KiB object here, so the bytes a cycle lie near 64 KiB:
// not under 0.9 of it, as the count begins when the warm-up's timer fires,
// a little after the measurement's acquisitions do, nor over 1.2, where a
// count that took in the warm-up's would read about 1.4.
func TestCellCountsAllocations(t *testing.T) {
	res, err := RunCellDetail(context.Background(), CellSpec{
		Impl: "test-allocating", Scenario: scenario(t, "hot"), Clients: 2, Duration: time.Second,
		Warmup: 400 * time.Millisecond, Hold: 100 * time.Microsecond, Config: impl.Config{Namespace: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Cell
	g := c.Generator
	if g == nil || c.Acquires == 0 {
		t.Fatalf("generator %+v, %d acquires", g, c.Acquires)
	}
	t.Logf("%d acquires: %d allocations (%.2f a cycle), %d bytes (%.0f a cycle), %d collections",
		c.Acquires, g.Allocs, g.AllocsPerCycle, g.AllocBytes, g.AllocBytesPerCycle, g.GCCount)
	if r := g.AllocBytesPerCycle / allocatingSize; r < 0.9 || r > 1.2 || g.AllocsPerCycle < 0.9 {
		t.Errorf("%.2f allocations and %.0f bytes a cycle, where every acquisition allocated one object of %d bytes", g.AllocsPerCycle, g.AllocBytesPerCycle, allocatingSize)
	}
	if want := float64(g.Allocs) / float64(c.Acquires); math.Abs(g.AllocsPerCycle-want) > 1e-9*want {
		t.Errorf("allocations per cycle %g, want %d/%d = %g", g.AllocsPerCycle, g.Allocs, c.Acquires, want)
	}
	if want := float64(g.AllocBytes) / float64(c.Acquires); math.Abs(g.AllocBytesPerCycle-want) > 1e-9*want {
		t.Errorf("bytes per cycle %g, want %d/%d = %g", g.AllocBytesPerCycle, g.AllocBytes, c.Acquires, want)
	}
}
