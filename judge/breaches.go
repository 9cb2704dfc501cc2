package judge

import (
	"math"

	"github.com/lockbench/lockbench/result"
)

// Breaches checks every load cell against every threshold of slo, in cell
// order: the figure, the limit and the excess of each miss; package
// report says them in words. Fault scenarios are left out: their latency
// is the fault's.
func Breaches(cells []result.Cell, slo result.SLO) []result.Breach {
	var out []result.Breach
	for _, c := range result.WithoutFaults(cells) {
		if c.Finding != "" {
			out = append(out, result.Breach{Cell: c.Key(), Impl: c.Impl, Scenario: c.Scenario, Clients: c.Clients,
				Threshold: "finding", Kind: result.BreachFinding, Finding: c.Finding})
		}
		for _, t := range slo.Thresholds() {
			if t.Met(c) {
				continue
			}
			v := t.Value(c)
			b := result.Breach{Cell: c.Key(), Impl: c.Impl, Scenario: c.Scenario, Clients: c.Clients,
				Threshold: t.String(), Value: v, Limit: t.Limit}
			switch {
			case t.IsLatency() && c.Acquires == 0:
				b.Kind = result.BreachNoAcquisitions
			case t.IsLatency() && v == 0:
				b.Kind = result.BreachNotRecorded
			case t.Limit != 0:
				b.Excess = math.Abs(v-t.Limit) / t.Limit
			}
			out = append(out, b)
		}
	}
	return out
}

// SLO judges sum's cells against slo: the capacity plan, every breach
// and whether none was found. A caller that writes the summary has
// package report word the breaches.
func SLO(sum *result.Summary, slo result.SLO) {
	sum.Capacity = Capacity(sum.Cells, slo)
	sum.SLOBreaches = Breaches(sum.Cells, slo)
	met := len(sum.SLOBreaches) == 0
	sum.SLOMet = &met
}
