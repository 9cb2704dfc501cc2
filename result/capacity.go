package result

import (
	"slices"
	"time"
)

// CapacityRow is the capacity of one implementation under one scenario:
// the largest client count whose acquire latency met the SLO.
type CapacityRow struct {
	Impl     string `json:"impl"`
	Scenario string `json:"scenario"`
	// Met is false when no client count met the SLO; Clients,
	// AcquiresPerS and LatencyUs are then zero.
	Met          bool    `json:"met"`
	Clients      int     `json:"clients"`
	AcquiresPerS float64 `json:"acquires_per_s"`
	LatencyUs    float64 `json:"latency_us"` // the SLO's quantile at Clients
	// Tested lists the client counts measured, ascending.
	Tested []int `json:"tested"`
	// FirstMissed is the smallest client count that missed the SLO, 0 if
	// none did. Below Clients, it says the curve was not monotonic.
	FirstMissed int `json:"first_missed,omitempty"`
	// BestUs is the lowest value of the SLO's quantile seen in any cell.
	BestUs float64 `json:"best_us"`
}

// Capacity plans capacity against slo: for each implementation and
// scenario, in the order they first appear, it considers the client
// counts in ascending order and reports the largest whose latency met the
// SLO (and every other threshold of it). A cell without acquisitions or with a safety violation never meets
// it: a lock that is fast because it is wrong has no capacity; nor does one
// that dropped arrivals or failed more than 1% of its acquisitions. Fault
// scenarios are left out: their latency is the fault's.
func Capacity(cells []Cell, slo SLO) []CapacityRow {
	limitUs := float64(slo.Limit) / float64(time.Microsecond)
	var rows []CapacityRow
	for _, g := range GroupCells(WithoutFaults(cells)) {
		r := CapacityRow{Impl: g.Impl, Scenario: g.Scenario, BestUs: -1}
		for _, c := range g.Cells {
			r.Tested = append(r.Tested, c.Clients)
			v := slo.Of(c.AcquireLatencyUs)
			if c.Acquires > 0 && (r.BestUs < 0 || v < r.BestUs) {
				r.BestUs = v
			}
			if c.Acquires > 0 && c.SafetyViolations == 0 && v > 0 && v <= limitUs && Healthy(c) && slo.metByOthers(c) {
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

// Group is the cells of one implementation and scenario, by ascending
// client count.
type Group struct {
	Impl, Scenario string
	Cells          []Cell
}

// GroupCells groups cells by implementation and scenario, in the order
// each pair first appears.
func GroupCells(cells []Cell) []Group {
	var groups []Group
	index := map[[2]string]int{}
	for _, c := range cells {
		k := [2]string{c.Impl, c.Scenario}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, Group{Impl: c.Impl, Scenario: c.Scenario})
		}
		groups[i].Cells = append(groups[i].Cells, c)
	}
	for i := range groups {
		slices.SortStableFunc(groups[i].Cells, func(a, b Cell) int { return a.Clients - b.Clients })
	}
	return groups
}

// maxErrorShare is the share of failed acquisitions a cell may have and
// still count as meeting an SLO.
const maxErrorShare = 0.01

// Healthy reports whether a cell's latency can stand for its load: an open
// loop that dropped arrivals, or a cell whose acquisitions often failed,
// served less than it was asked to, and its latency flatters it. A cell
// that ended in a finding (a livelock) stopped before its time: its few
// acquisitions say nothing of what the load would cost.
func Healthy(c Cell) bool {
	if c.Finding != "" {
		return false
	}
	if c.Open != nil && (c.Open.Dropped > 0 || c.Open.Unfinished > 0) {
		return false
	}
	if c.Truncated != "" {
		return false
	}
	return float64(c.Errors) <= maxErrorShare*float64(c.Acquires+c.Errors)
}

// WithoutFaults keeps the cells of load scenarios: those whose numbers
// belong on throughput, latency and capacity curves.
func WithoutFaults(cells []Cell) []Cell {
	var out []Cell
	for _, c := range cells {
		if c.KindOf() != KindFault {
			out = append(out, c)
		}
	}
	return out
}
