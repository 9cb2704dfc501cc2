package engine

import (
	"os"
	"strconv"
	"strings"
	"time"
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
