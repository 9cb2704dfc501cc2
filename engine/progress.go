package engine

import (
	"context"
	"sync"
	"time"
)

// startProgress reports the cell's progress every ProgressEvery until the
// returned stop is called.
func (r *Cell) startProgress(ctx context.Context) (stop func()) {
	if r.Spec.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(r.Spec.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				r.Spec.Progress(r.progress())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func (r *Cell) progress() Progress {
	var p Progress
	var sum [len(liveHist{}.b)]int64
	for _, w := range r.Clients {
		p.Acquires += w.acquires.Load()
		p.Errors += w.errors.Load()
		for i := range sum {
			sum[i] += w.live.b[i].Load()
		}
	}
	p.Holding, p.Waiting = r.clientStates()
	p.Counts, p.Abandons = r.liveCounts()
	p.Elapsed = max(time.Since(r.measureFrom), 0)
	p.Warmup = time.Now().Before(r.measureFrom)
	if !r.deadline.IsZero() {
		p.Total = r.deadline.Sub(r.measureFrom)
	}
	if s := p.Elapsed.Seconds(); s > 0 {
		p.AcquiresPerS = float64(p.Acquires) / s
	}
	var total int64
	for _, n := range sum {
		total += n
	}
	if total > 0 {
		rank := (total*99 + 99) / 100
		var seen int64
		for i, n := range sum {
			seen += n
			if seen >= rank {
				p.P99Us = float64(liveValue(i))
				break
			}
		}
	}
	return p
}
