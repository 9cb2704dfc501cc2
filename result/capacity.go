package result

import "slices"

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
