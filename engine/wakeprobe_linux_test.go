package engine

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// total is how many wakes a snapshot counts.
func total(s *hdrhistogram.Snapshot) int64 {
	var n int64
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// The probe is a process of its own that counts its wakes, no more of them
// than the time between two asks allows, and answers with its CPU time.
func TestWakeProbeCountsInAProcessOfItsOwn(t *testing.T) {
	p := theProbe()
	if p.err != nil {
		t.Fatal(p.err)
	}
	if pid := p.cmd.Process.Pid; pid == os.Getpid() || syscall.Kill(pid, 0) != nil {
		t.Fatalf("probe pid %d: not a live process of its own (this is %d)", pid, os.Getpid())
	}
	s0, cpu0, err := p.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(100 * time.Millisecond)
	s1, cpu1, err := p.snapshot()
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// Every wake sleeps at least wakeEvery, and one may have begun before
	// the first ask.
	n, most := total(s1)-total(s0), int64(elapsed/wakeEvery)+1
	if n <= 0 || n > most {
		t.Errorf("%d wakes in %v; want 1 to %d", n, elapsed, most)
	}
	if cpu1 <= cpu0 {
		t.Errorf("probe CPU %v then %v: not counted", cpu0, cpu1)
	}
	// A cell's figures are the difference: it sees only its own wakes.
	w := startWakeProbe()
	time.Sleep(20 * time.Millisecond)
	late, cpu := w.finish()
	if late == nil || late.Max < late.P50 || cpu <= 0 {
		t.Errorf("a cell's wake lateness %+v, probe CPU %v", late, cpu)
	}
}

// A Ctrl-C reaches the probe with lockbench, and the probe stays to
// answer for the cell it interrupted; it exits when its parent is gone,
// whose pipe to it the kernel closes however it ended.
func TestWakeProbeOutlivesInterruptNotItsParent(t *testing.T) {
	p := startProbeProc()
	if p.err != nil {
		t.Fatal(p.err)
	}
	defer p.cmd.Process.Kill()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if _, _, err := p.snapshot(); err != nil {
		t.Fatalf("after an interrupt: %v", err)
	}
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("probe exited with %v; want 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("probe still running 10 s after its input closed")
	}
}

// StopWakeProbe ends the probe and reaps it before it returns, so that a
// process checking for children left running finds none; the next cell
// starts another.
func TestStopWakeProbeEndsItAndTheNextCellStartsAnother(t *testing.T) {
	first := theProbe()
	if first.err != nil {
		t.Fatal(first.err)
	}
	pid := first.cmd.Process.Pid
	StopWakeProbe()
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Errorf("probe %d after StopWakeProbe: kill 0 gave %v; want ESRCH (gone and reaped)", pid, err)
	}
	if _, _, err := first.snapshot(); err == nil {
		t.Error("a stopped probe still answered")
	}
	StopWakeProbe() // nothing runs: no-op
	w := startWakeProbe()
	time.Sleep(5 * time.Millisecond)
	if late, _ := w.finish(); late == nil {
		t.Error("no wake lateness from the probe started after the stop")
	}
	if next := theProbe(); next == first || next.cmd.Process.Pid == pid {
		t.Error("the cell after the stop reused the stopped probe")
	}
}

// switches is how often the thread tid of process pid gave up its CPU.
func switches(t *testing.T, pid, tid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
			m, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			n += m
		}
	}
	return n
}

// The probe sleeps on a goroutine of its own, not on the main thread that
// init's goroutine is locked to: there, every yield the scheduler's
// watchdog asked of it was a hand-off between two threads (see init).
// The main thread, blocked until the probe ends, switches no more.
func TestWakeProbeSleepsOffTheMainThread(t *testing.T) {
	p := theProbe()
	if p.err != nil {
		t.Fatal(p.err)
	}
	pid := p.cmd.Process.Pid
	before := switches(t, pid, pid)
	time.Sleep(200 * time.Millisecond)
	if n := switches(t, pid, pid) - before; n > 2 {
		t.Errorf("the probe's main thread switched %d times in 200 ms: the probe sleeps on it", n)
	}
	if _, _, err := p.snapshot(); err != nil {
		t.Fatalf("the probe stopped answering: %v", err)
	}
}
