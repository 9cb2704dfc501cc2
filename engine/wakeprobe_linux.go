package engine

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/lockbench/lockbench/result"
)

// wakeProbe measures the machine's scheduling noise while a cell runs: how
// late a thread that sleeps wakeEvery at a time woke, as redis-cli
// --intrinsic-latency does by spinning (a spinning probe would hold one of
// the cores it measures). A cell reads the probe's counts when it starts
// and when it ends, and keeps the difference, so cells that run at once
// share it.
//
// The sleeping thread is a process of its own: this executable started
// again as the probe (probeEnv), once, living as long as this process. As a
// thread of this process it cost far more than its wakes. A goroutine in a
// 1 ms syscall leaves its P to the scheduler's watchdog, which hands it to
// another thread it wakes for nothing, and the syscall's return wakes the
// watchdog again from its sleep; and a P taken back every millisecond keeps
// the watchdog polling at its fastest. At one Redis client that was 0.44
// context switches and 0.25 futex calls a lock cycle beside the 2 context
// switches the cycle needs, and lockbench's CPU a cycle was 0.877× [0.832,
// 0.902] without the probe (12 interleaved pairs). The process sleeps by a
// raw syscall on its only P, which nothing else in it wants; its CPU time
// is lockbench's and is counted in the cell's.
type wakeProbe struct {
	from *hdrhistogram.Snapshot // the probe's counts when the cell started
	cpu0 time.Duration          // the probe's CPU time then
}

// wakeEvery is the probe's sleep: short enough to see a stall of a
// millisecond, long enough to cost nothing.
const wakeEvery = time.Millisecond

// probeEnv set to 1 makes this executable the wake probe (see init).
const probeEnv = "LOCKBENCH_WAKE_PROBE"

// probeAnswer bounds the wait for the probe's answer: it answers within a
// millisecond, unless it is gone or stopped.
const probeAnswer = 5 * time.Second

// init turns a process started as the probe into one, before main or a
// test runs: every binary that links engine can start itself as its probe.
//
// The probe runs on a goroutine of its own, not on init's: init's is
// locked to the main thread until main starts. The probe's goroutine looks
// busy to the scheduler's watchdog (its sleep is a raw syscall), which asks
// it to yield every 10 ms; a goroutine locked to its thread yields by
// handing its P to another thread and being handed it back, two futex
// wakes and two context switches each time. On init's goroutine that was
// 50 such hand-offs a second in the probe, and as many sleeps of the
// watchdog cut short.
func init() {
	if os.Getenv(probeEnv) == "1" {
		code := make(chan int)
		go func() { code <- runProbe(os.Stdin, os.Stdout) }()
		os.Exit(<-code)
	}
}

func startWakeProbe() *wakeProbe {
	s, cpu, err := theProbe().snapshot()
	if err != nil {
		return &wakeProbe{}
	}
	return &wakeProbe{from: s, cpu0: cpu}
}

// finish returns how late the probe's wakes were since start, in µs (nil
// when there were none or the probe failed), and the CPU time it used.
func (w *wakeProbe) finish() (*result.Latency, time.Duration) {
	if w.from == nil {
		return nil, 0
	}
	s, cpu, err := theProbe().snapshot()
	if err != nil || len(s.Counts) != len(w.from.Counts) {
		return nil, 0
	}
	for i, c := range w.from.Counts {
		s.Counts[i] -= c
	}
	h := hdrhistogram.Import(s)
	if h.TotalCount() == 0 {
		return nil, cpu - w.cpu0
	}
	l := result.LatencyOf(h)
	return &l, cpu - w.cpu0
}

// probeProc is the running probe, asked for its counts over a pair of
// pipes; it exits when its input closes, as it does when this process
// ends however it ends.
type probeProc struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  *os.File
	out *os.File
	rd  *bufio.Reader
	err error // why it cannot be asked: it is not asked again
}

var probe struct {
	mu sync.Mutex
	p  *probeProc
}

// readyWakeProbe starts this process's probe if it has not started, and
// waits until it answers.
func readyWakeProbe() { theProbe() }

// theProbe is this process's probe, started when first wanted.
func theProbe() *probeProc {
	probe.mu.Lock()
	defer probe.mu.Unlock()
	if probe.p == nil {
		probe.p = startProbeProc()
	}
	return probe.p
}

// StopWakeProbe stops this process's wake probe, if one runs, and waits
// for it to exit; a cell after it starts another. The probe exits with
// its parent anyway: this is for a process that must not end with
// children running, or that runs no more cells.
func StopWakeProbe() {
	probe.mu.Lock()
	p := probe.p
	probe.p = nil
	probe.mu.Unlock()
	if p != nil {
		p.stop(errors.New("wake probe: stopped"))
	}
}

// stop ends the probe for why: its input closed, it exits; one that does
// not within probeAnswer is killed.
func (p *probeProc) stop(why error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return // never started, or already stopped
	}
	p.err = why
	p.in.Close()
	exited := make(chan struct{})
	go func() {
		p.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(probeAnswer):
		p.cmd.Process.Kill()
		<-exited
	}
	p.out.Close()
}

func startProbeProc() *probeProc {
	p, err := spawnProbe()
	if err != nil {
		return &probeProc{err: fmt.Errorf("wake probe: %w", err)}
	}
	p.snapshot() // once it answers it is the probe, no longer starting up
	return p
}

// spawnProbe starts this executable as the probe, its input and output
// piped to this process.
func spawnProbe() (*probeProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer inR.Close() // the probe's ends, its own once it started
	outR, outW, err := os.Pipe()
	if err != nil {
		inW.Close()
		return nil, err
	}
	defer outW.Close()
	// One P and no preemption signals: its one goroutine sleeps in a raw
	// syscall and must not be woken from it.
	env := append(os.Environ(), probeEnv+"=1", "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1")
	cmd := &exec.Cmd{Path: exe, Args: []string{"lockbench-wake-probe"}, Env: env, Stdin: inR, Stdout: outW}
	if err := cmd.Start(); err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	return &probeProc{cmd: cmd, in: inW, out: outR, rd: bufio.NewReader(outR)}, nil
}

// snapshot is the probe's counts and CPU time so far. A probe that does
// not answer is stopped, and not asked again.
func (p *probeProc) snapshot() (*hdrhistogram.Snapshot, time.Duration, error) {
	p.mu.Lock()
	if p.err != nil {
		err := p.err
		p.mu.Unlock()
		return nil, 0, err
	}
	s, cpu, err := p.ask()
	p.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("wake probe: %w", err)
		p.cmd.Process.Kill() // it did not answer: no wait for it to exit
		p.stop(err)
		return nil, 0, err
	}
	return s, cpu, nil
}

func (p *probeProc) ask() (*hdrhistogram.Snapshot, time.Duration, error) {
	if _, err := p.in.Write([]byte{'?'}); err != nil {
		return nil, 0, err
	}
	if err := p.out.SetReadDeadline(time.Now().Add(probeAnswer)); err != nil {
		return nil, 0, err
	}
	line, err := p.rd.ReadString('\n')
	if err != nil {
		return nil, 0, err
	}
	cpu, enc, ok := strings.Cut(strings.TrimSpace(line), " ")
	ns, err := strconv.ParseInt(cpu, 10, 64)
	if !ok || err != nil {
		return nil, 0, fmt.Errorf("answer %.40q is not CPU time and counts", line)
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		return nil, 0, err
	}
	return h.Export(), time.Duration(ns), nil
}

// runProbe is the probe process: it sleeps wakeEvery at a time, in a poll
// of in that also ends when this process's parent asks for its counts (a
// byte on in) or is gone (in closed), and records how late each sleep woke.
// It answers a byte with a line: its CPU time in ns and its counts
// (hdrhistogram's V2 encoding).
func runProbe(in, out *os.File) int {
	signal.Ignore(os.Interrupt) // a Ctrl-C stops the parent, which still asks
	hist := result.NewHistogram()
	fds := []unix.PollFd{{Fd: int32(in.Fd()), Events: unix.POLLIN}}
	var buf [64]byte
	for {
		ts := unix.NsecToTimespec(int64(wakeEvery)) // ppoll leaves the rest of it here
		t := time.Now()
		n, err := rawPoll(fds, &ts)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return 1
		case n == 0:
			hist.RecordValue(micros(time.Since(t) - wakeEvery))
			continue
		}
		m, err := in.Read(buf[:])
		if m == 0 || err != nil {
			return 0 // the parent is gone
		}
		for range m {
			if err := answer(out, hist); err != nil {
				return 1
			}
		}
	}
}

func answer(out *os.File, hist *hdrhistogram.Histogram) error {
	enc, err := hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%d %s\n", cpuTime().Nanoseconds(), enc)
	return err
}

// rawPoll is ppoll made without telling the scheduler: a syscall it is told
// of leaves the P, and the watchdog would wake a thread to take it.
func rawPoll(fds []unix.PollFd, ts *unix.Timespec) (int, error) {
	n, _, e := syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)),
		uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
