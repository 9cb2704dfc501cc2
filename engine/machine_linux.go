package engine

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/lockbench/lockbench/result"
)

// MachineCPU is the CPU time every process on the machine has used since
// boot, all cores together (the busy columns of /proc/stat's cpu line),
// and false when it cannot be read.
func MachineCPU() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	return busyOf(string(b))
}

// busyOf reads the busy time off /proc/stat's text.
func busyOf(stat string) (time.Duration, bool) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	// user nice system idle iowait irq softirq steal: idle and iowait are
	// not busy; steal is time the hypervisor gave to others.
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / clockTicks, true
}

// clockTicks is USER_HZ, /proc/stat's unit: 100 on every Linux
// architecture Go runs on.
const clockTicks = 100

// wakeProbe measures the machine's scheduling noise while a cell runs: a
// thread of its own sleeps wakeEvery at a time and records how late it
// woke, as redis-cli --intrinsic-latency does by spinning (a spinning
// probe would hold one of the cores it measures). It is off the clients'
// path; a wake costs a few microseconds of CPU.
type wakeProbe struct {
	hist *hdrhistogram.Histogram
	stop chan struct{}
	done chan struct{}
}

// wakeEvery is the probe's sleep: short enough to see a stall of a
// millisecond, long enough to cost nothing.
const wakeEvery = time.Millisecond

func startWakeProbe() *wakeProbe {
	p := &wakeProbe{hist: result.NewHistogram(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ts := unix.NsecToTimespec(int64(wakeEvery))
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			t := time.Now()
			if unix.Nanosleep(&ts, nil) != nil {
				continue
			}
			p.hist.RecordValue(micros(time.Since(t) - wakeEvery))
		}
	}()
	return p
}

// finish stops the probe and returns how late its wakes were, in µs.
func (p *wakeProbe) finish() *result.Latency {
	close(p.stop)
	<-p.done
	if p.hist.TotalCount() == 0 {
		return nil
	}
	l := result.LatencyOf(p.hist)
	return &l
}
