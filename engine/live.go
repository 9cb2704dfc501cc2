package engine

import "github.com/lockbench/lockbench/result"

// clientStates counts the cell's clients holding the lock and waiting for
// it, for the progress readers (a live metrics endpoint). It only loads
// atomics the workers already keep for the livelock watch, so the
// recording path is untouched; the two reads are not one instant, so a
// client handing over may be seen in both or neither.
func (r *Cell) clientStates() (holding, waiting int64) {
	for _, w := range r.Clients {
		if w.trying.Load() {
			waiting++
		}
	}
	return max(r.live.holding(), 0), waiting
}

// liveCounts sums the clients' counters as they stand, for the progress
// readers: atomics the clients keep anyway, read once a second off the
// recording path. They include the warm-up: a reader that wants the
// measured part subtracts its first snapshot after the warm-up, and gets
// at most what the result will say.
func (r *Cell) liveCounts() (c result.Counts, abandons int64) {
	for _, w := range r.Clients {
		if w.l == nil {
			continue
		}
		c = c.Add(w.l.Counters().Snapshot())
		abandons += w.abandons.Load()
	}
	return c, abandons
}
