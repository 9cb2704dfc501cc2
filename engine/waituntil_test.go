package engine

import (
	"context"
	"testing"
	"time"
)

// A client's alarm wakes it once its time has come, and at once when its
// context ends — an open-loop client must never sleep through the end of
// its cell.
func TestAlarmWakesAtItsTimeAndWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	a := newAlarm(ctx)
	if a == nil {
		t.Skip("no alarm on this OS: clients wait on their timers")
	}
	defer a.close()
	start := time.Now()
	if !a.sleep(2 * time.Millisecond) {
		t.Fatal("a sleep with the context alive reported it ended")
	}
	if time.Since(start) < 2*time.Millisecond {
		t.Fatalf("woke after %v, before its time", time.Since(start))
	}
	done := make(chan bool)
	go func() { done <- a.sleep(time.Hour) }()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("a sleep the context ended reported it ran its course")
		}
	case <-time.After(time.Minute):
		t.Fatal("an hour's sleep went on after its context ended")
	}
}

// An alarm's lead follows the leadQuantile of its wakes' lateness, within
// its bounds, and a wait allocates nothing.
func TestAlarmLearnsItsLead(t *testing.T) {
	a := newAlarm(context.Background())
	if a == nil {
		t.Skip("no alarm on this OS: clients wait on their timers")
	}
	defer a.close()
	// Lateness spread evenly over 0–199 µs: the lead settles near its
	// leadQuantile, 180 µs, not near the mean.
	for i := range 20000 {
		a.learn(time.Duration(i*37%200) * time.Microsecond)
	}
	if want := time.Duration(leadQuantile * 200 * float64(time.Microsecond)); a.lead < want-20*time.Microsecond || a.lead > want+20*time.Microsecond {
		t.Errorf("lead %v after lateness spread over 0–200µs, want %v ± 20µs", a.lead, want)
	}
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
	a.lead = maxLead
	for range 100 {
		a.wakeBefore(time.Now().Add(maxLead / 2))
	}
	if a.lead > maxLead-50*time.Microsecond {
		t.Errorf("lead %v after 100 waits shorter than it, want it shrinking from %v", a.lead, maxLead)
	}
	if allocs := testing.AllocsPerRun(50, func() {
		if !a.wakeBefore(time.Now().Add(100 * time.Microsecond)) {
			t.Fatal("a wait with the context alive reported it ended")
		}
	}); allocs != 0 {
		t.Errorf("a wait allocates %.1f times, want 0", allocs)
	}
}
