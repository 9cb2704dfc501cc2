package engine

// clientStates counts the cell's clients holding the lock and waiting for
// it, for the progress readers (a live metrics endpoint). It only loads
// atomics the workers already keep for the livelock watch, so the
// recording path is untouched; the two reads are not one instant, so a
// client handing over may be seen in both or neither.
func (r *cellRun) clientStates() (holding, waiting int64) {
	for _, w := range r.workers {
		if w.trying.Load() {
			waiting++
		}
	}
	return max(r.live.holding(), 0), waiting
}
