package engine

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
)

// The clock reading a release left behind starts the next acquisition
// only if nothing that takes time came between: a pause or a hand-on of
// latencies makes the next start read the clock afresh, so that neither
// is ever counted in an acquisition's latency.
func TestReadingIsReusedOnlyRightAfterARelease(t *testing.T) {
	l, err := inproc.New(context.Background(), impl.Config{Namespace: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorker(0, l, 1)
	w.iv = newIntervals(time.Now(), []*Client{w}, nil)
	defer func() { close(w.iv.ch); <-w.iv.done }()

	released := time.Now().Add(-time.Hour) // recognisable: no fresh reading is this old
	w.fresh = released
	if got := w.Reading(); !got.Equal(released) {
		t.Fatalf("right after a release the start is %v, want the release's reading", got)
	}
	if got := w.Reading(); got.Equal(released) {
		t.Fatal("a reading was used twice")
	}

	w.fresh = released
	w.Pause(context.Background(), time.Microsecond)
	if got := w.Reading(); got.Equal(released) {
		t.Fatal("after a pause the start is the release's reading: the pause would count as latency")
	}

	w.fresh = released
	w.Record(TagAcquire, time.Now(), time.Millisecond)
	w.Flush()
	if got := w.Reading(); got.Equal(released) {
		t.Fatal("after a hand-on the start is the release's reading: the hand-on would count as latency")
	}
}
