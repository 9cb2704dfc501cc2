package judge

import (
	"time"

	"github.com/lockbench/lockbench/result"
)

// Capacity plans capacity against slo: for each implementation and
// scenario, in the order they first appear, it considers the client
// counts in ascending order and reports the largest whose latency met the
// SLO (and every other threshold of it). A cell without acquisitions or that is unsafe (CellSafety) never meets
// it: a lock that is fast because it is wrong has no capacity; nor does one
// that dropped arrivals or failed more than 1% of its acquisitions. Fault
// scenarios are left out: their latency is the fault's.
func Capacity(cells []result.Cell, slo result.SLO) []result.CapacityRow {
	limitUs := float64(slo.Limit) / float64(time.Microsecond)
	var rows []result.CapacityRow
	for _, g := range result.GroupCells(result.WithoutFaults(cells)) {
		r := result.CapacityRow{Impl: g.Impl, Scenario: g.Scenario, BestUs: -1}
		for _, c := range g.Cells {
			r.Tested = append(r.Tested, c.Clients)
			v := slo.Of(c.AcquireLatencyUs)
			if c.Acquires > 0 && (r.BestUs < 0 || v < r.BestUs) {
				r.BestUs = v
			}
			if c.Acquires > 0 && !CellSafety(c).Bad() && v > 0 && v <= limitUs && Healthy(c) && metByOthers(slo, c) {
				r.Met, r.Clients, r.AcquiresPerS, r.LatencyUs = true, c.Clients, c.AcquiresPerS, v
			} else if r.FirstMissed == 0 {
				r.FirstMissed = c.Clients
			}
		}
		r.BestUs = max(r.BestUs, 0)
		rows = append(rows, r)
	}
	return rows
}

// MaxErrorShare is the share of failed acquisitions a cell may have and
// still count as meeting an SLO.
const MaxErrorShare = 0.01

// Healthy reports whether a cell's latency can stand for its load: an open
// loop that dropped arrivals, or a cell whose acquisitions often failed,
// served less than it was asked to, and its latency flatters it. A cell
// that ended in a finding (a livelock) stopped before its time: its few
// acquisitions say nothing of what the load would cost.
func Healthy(c result.Cell) bool {
	if c.Finding != "" {
		return false
	}
	if c.Open != nil && (c.Open.Dropped > 0 || c.Open.Unfinished > 0) {
		return false
	}
	if c.Truncated != "" {
		return false
	}
	return float64(c.Errors) <= MaxErrorShare*float64(c.Acquires+c.Errors)
}

// metByOthers reports whether c meets every threshold of slo but the
// capacity one.
func metByOthers(slo result.SLO, c result.Cell) bool {
	for _, t := range slo.Thresholds()[1:] {
		if !t.Met(c) {
			return false
		}
	}
	return true
}
