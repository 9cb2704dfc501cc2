package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
)

// Workers that fill batches faster than the collector drains them unasked
// fill the channel past half (a nudge) and past full (a wait): every value
// still reaches the totals, under its own tag, and finish returns.
func TestBatchesBeyondTheChannelAreAllRecorded(t *testing.T) {
	const workers, perWorker = 3, (chanBatches + 50) * batchLen
	ws := make([]*Client, workers)
	for i := range ws {
		l, err := inproc.New(context.Background(), impl.Config{Namespace: t.Name()})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = newWorker(i, l, 1)
	}
	start := time.Now()
	iv := newIntervals(start, ws, nil)
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Flush()
			for i := range perWorker {
				w.Record(TagAcquire+i%2, start, time.Duration(w.id+1)*time.Millisecond)
			}
		}()
	}
	wg.Wait()
	_, total := iv.finish(time.Now())
	for _, tag := range []int{TagAcquire, TagRelease} {
		if got, want := total[tag].TotalCount(), int64(workers*perWorker/2); got != want {
			t.Errorf("tag %d: %d values recorded, want %d", tag, got, want)
		}
		if got := total[tag].Max(); got < 3000 || got > 3010 {
			t.Errorf("tag %d: max %d µs, want the third worker's 3000", tag, got)
		}
	}
	if n := total[TagHandoff].TotalCount(); n != 0 {
		t.Errorf("%d hand-offs recorded, none sent", n)
	}
}
