package sandbox

import (
	"os"
	"testing"
	"time"
)

// A process's CPU time from its threads' schedstat agrees with the 10 ms
// ticks of /proc/PID/stat and is finer than them: this test's own
// process, spinning, read both ways.
func TestSchedstatAgreesWithTicks(t *testing.T) {
	pid := os.Getpid()
	// Spin until the ticks show some CPU time: bounded, and however
	// loaded the machine is.
	var ticks time.Duration
	for end := time.Now().Add(20 * time.Second); ticks < 200*time.Millisecond && time.Now().Before(end); {
		var ok bool
		if ticks, ok = statCPU(pid); !ok {
			t.Fatal("/proc/self/stat unreadable")
		}
	}
	ns, ok := schedstatCPU(pid)
	if !ok {
		t.Fatal("schedstat unreadable")
	}
	// Both count every thread; ticks are read first and round down.
	if d := ns - ticks; d < -20*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("schedstat %v, ticks %v: apart by %v", ns, ticks, d)
	}
	if ns%(10*time.Millisecond) == 0 && ticks%(10*time.Millisecond) == 0 && ns == ticks {
		t.Errorf("schedstat %v reads in whole ticks", ns)
	}
}
