package engine

import (
	"context"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// RunRepeats runs spec's load scenario spec.Repeat times, one after
// another, each repeat on connections of its own, and returns one cell
// for them all beside each repeat's own: counts and the servers' counter
// deltas added, the latency histograms merged from every repeat's
// intervals, fairness over every acquisition, the time measured being the
// repeats' times together. base names the cell (its implementation,
// scenario, kind, theory). each, if set, prepares repeat r's spec (a
// namespace, servers behind proxies of its own) and returns what undoes
// it once the repeat is over. What one repeat says of itself — cut
// short, a finding, counters unread — is said of the cell.
func RunRepeats(ctx context.Context, spec CellSpec, base result.Cell, each func(r int, s *CellSpec) (func(), error)) (result.Cell, []result.Cell, error) {
	rs := NewRounds(base)
	for r := range max(spec.Repeat, 1) {
		s := rs.Spec(spec)
		undo := func() {}
		if each != nil {
			var err error
			if undo, err = each(r, &s); err != nil {
				return rs.joined(), rs.Each(), err
			}
		}
		res, err := RunCellDetail(ctx, s)
		undo()
		if res.Impl != "" {
			rs.AddDetail(res)
		}
		if err != nil {
			return rs.joined(), rs.Each(), err
		}
	}
	return rs.joined(), rs.Each(), nil
}

// joined is the repeats' cell as RunRepeats's callers have always had it:
// their generators are theirs to add (sumGenerators or their own way).
func (r *Rounds) joined() result.Cell {
	out := closeRepeats(r.acc, r.server, r.dists, r.marked)
	out.Safety, out.History = r.safety, r.hist
	out.Rounds = result.RoundsOf(r.cells)
	return out
}

// closeRepeats is the repeats' cell: the accumulator's figures, the
// servers' counter deltas added up, and what the first repeat that said
// anything of itself said — also when a repeat failed, so that nothing a
// finished repeat measured is lost.
func closeRepeats(acc *result.Accumulator, server *serverSum, dists map[string]*hdrhistogram.Histogram, marked result.Cell) result.Cell {
	out := acc.Cell()
	if len(server.raw) > 0 {
		out.Server = server.raw
	}
	out.ServerCounts = server.counts
	if len(dists) > 0 { // the driver's own, over every repeat's clients
		out.Distributions = spreadsOf(dists)
	}
	out.Truncated, out.Finding, out.Livelock, out.ServerNote = marked.Truncated, marked.Finding, marked.Livelock, marked.ServerNote
	return out
}

// mergeDistributions adds a repeat's own distributions (the driver's
// histograms) to into.
func mergeDistributions(into, from map[string]*hdrhistogram.Histogram) {
	for k, h := range from {
		if into[k] == nil {
			into[k] = newHist()
		}
		into[k].Merge(h)
	}
}

// intervalsInto feeds each closing interval's histograms of a repeat to
// acc — the only way to them: a cell run with OnInterval set returns no
// intervals, and the interval's histograms are reused once the callback
// returns — then hands the interval on to next (the run's .hlog) as the
// scenario's, the repeats' cell.
func intervalsInto(acc *result.Accumulator, scenario string, next func(result.Cell, time.Time, hlog.Interval)) func(result.Cell, time.Time, hlog.Interval) {
	return func(c result.Cell, start time.Time, iv hlog.Interval) {
		// The cell's one goroutine of intervals calls this, and the repeat
		// ends only after its last call: acc is not shared meanwhile.
		for tag, h := range map[string]*hdrhistogram.Histogram{result.TagAcquire: iv.Acquire, result.TagRelease: iv.Release,
			result.TagHandoff: iv.Handoff, result.TagAbandon: iv.Abandon, result.TagRenew: iv.Renew} {
			acc.AddHistogram(tag, h)
		}
		if next != nil {
			if scenario != "" {
				c.Scenario = scenario
			}
			next(c, start, iv)
		}
	}
}

// addRepeat adds a repeat's counts to acc, its clients' acquisitions by
// client id, and the servers' counter deltas to server; its histograms
// came through intervalsInto.
func addRepeat(acc *result.Accumulator, server *serverSum, c result.Cell) {
	acc.AddMeasured(time.Duration(c.DurationS * float64(time.Second)))
	var per int64
	if c.Fairness != nil {
		for _, n := range c.Fairness.PerClient {
			per += n
		}
	}
	if c.Fairness != nil && per == c.Acquires {
		for i, n := range c.Fairness.PerClient {
			acc.AddClient(i, n, nil, result.Counts{})
		}
		acc.AddClient(-1, 0, c.ErrorsByClass, c.Counts)
	} else {
		acc.AddClient(-1, c.Acquires, c.ErrorsByClass, c.Counts)
	}
	acc.AddViolations(c.SafetyViolations, c.Violations...)
	acc.AddVectors(c.Vectors)
	acc.AddAbandon(c.Abandon)
	acc.AddRenew(c.Renew)
	server.add(c)
}

// serverSum is the servers' counters over a cell's repeats: their deltas
// by name, and what their kinds say those mean.
type serverSum struct {
	raw    map[string]int64
	counts *result.ServerCounts
}

func (s *serverSum) add(c result.Cell) {
	for k, v := range c.Server {
		s.raw[k] += v
	}
	if c.ServerCounts != nil {
		sum := *c.ServerCounts
		if s.counts != nil {
			sum = s.counts.Add(sum)
		}
		s.counts = &sum
	}
}
