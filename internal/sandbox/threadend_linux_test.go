package sandbox

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// A server thread that ends between two readings of its server's CPU time
// keeps what it had run in the sum: the second reading is not lower than
// the first. Here the thread is one of this test's own process, locked to
// a goroutine that spins 100 ms and then returns without unlocking, which
// ends the thread.
func TestThreadEndingMidCellKeepsItsTime(t *testing.T) {
	pid := os.Getpid()
	tid := make(chan int)
	release, ended, hold := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(hold)
	var spin func()
	spin = func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		me := syscall.Gettid()
		if me == pid { // the main thread never ends: keep it, and try again elsewhere
			go spin()
			<-hold
			return
		}
		for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
			if ns, ok := threadTimes(pid); ok && ns[strconv.Itoa(me)] >= 100*time.Millisecond {
				break
			}
		}
		tid <- me
		<-release
		close(ended)
	}
	go spin()
	me := strconv.Itoa(<-tid)
	var m cpuMemo
	before, ok := m.procCPU(pid)
	if !ok {
		t.Fatal("no CPU time for this process")
	}
	spun, _ := threadTimes(pid)
	close(release)
	<-ended
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/self/task/" + me); err != nil {
			break
		}
	}
	if _, err := os.Stat("/proc/self/task/" + me); err == nil {
		t.Fatal("the locked thread did not end")
	}
	after, _ := m.procCPU(pid)
	stateless, _ := procCPU(pid)
	t.Logf("thread %s ran %v; memo %v → %v, stateless now %v", me, spun[me], before, after, stateless)
	if after < before {
		t.Errorf("CPU time fell from %v to %v when a thread that had run %v ended", before, after, spun[me])
	}
}
