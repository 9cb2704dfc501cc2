package engine

import (
	"context"
	"github.com/lockbench/lockbench/internal/allocs"
	"testing"
	"time"
)

// An alarm's lead follows the 90th percentile of its wakes' lateness, but
// exceeds their median by no more than its spin allowance, within its
// bounds; the allowance shrinks as the arrival rate grows; and a wait
// allocates nothing.
func TestAlarmLearnsItsLead(t *testing.T) {
	if got := spinAllowance(10000); got != 2*time.Microsecond {
		t.Errorf("spin allowance at 10,000/s: %v, want 2µs (2%% of a core)", got)
	}
	if got := spinAllowance(1000); got != 20*time.Microsecond {
		t.Errorf("spin allowance at 1,000/s: %v, want 20µs", got)
	}
	a := newAlarm(context.Background(), time.Hour)
	if a == nil { // Linux has timerfd: no alarm here is a breakage, not a platform
		t.Fatal("newAlarm returned nil on Linux: timerfd_create failed")
	}
	defer a.close()
	// Lateness spread evenly over 0–199 µs: with room to spin, the lead
	// settles near the 90th percentile, 180 µs, not near the mean.
	late := func(a *alarm) {
		for i := range 20000 {
			a.learn(time.Duration(i*37%200) * time.Microsecond)
		}
	}
	near := func(got, want time.Duration) bool {
		return got > want-20*time.Microsecond && got < want+20*time.Microsecond
	}
	if late(a); !near(a.lead, 180*time.Microsecond) {
		t.Errorf("lead %v after lateness spread over 0–200µs, want 180µs ± 20µs", a.lead)
	}
	// With 30 µs to spin, the median (100 µs) plus that.
	a.spin = 30 * time.Microsecond
	if late(a); !near(a.lead, 130*time.Microsecond) {
		t.Errorf("lead %v with 30µs to spin past a 100µs median, want 130µs ± 20µs", a.lead)
	}
	a.spin = time.Hour
	for range 1000 {
		a.learn(time.Second)
	}
	if a.lead != maxLead {
		t.Errorf("lead %v after late wakes, want the cap %v", a.lead, maxLead)
	}
	for range 10000 {
		a.learn(0)
	}
	if a.lead != minLead {
		t.Errorf("lead %v after punctual wakes, want the floor %v", a.lead, minLead)
	}
	// A lead as long as the waits gives no sleep to learn from: it must
	// still shrink, or the client would yield through every gap.
	a.lead, a.late50, a.late90 = maxLead, maxLead, maxLead
	for range 100 {
		a.wakeBefore(time.Now().Add(maxLead / 2))
	}
	if a.lead > maxLead-50*time.Microsecond {
		t.Errorf("lead %v after 100 waits shorter than it, want it shrinking from %v", a.lead, maxLead)
	}
	if n := allocs.Total(50, func() {
		if !a.wakeBefore(time.Now().Add(100 * time.Microsecond)) {
			t.Fatal("a wait with the context alive reported it ended")
		}
	}); n != 0 {
		t.Errorf("50 waits allocated %d times, want 0", n)
	}
}
