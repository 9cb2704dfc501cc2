package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// BreachWords says a breach of an SLO in words: "7.20ms against 5.00ms
// (+44%)", or for a miss of twice the limit or more "97.3ms against
// 5.00ms (19.5×)". A breach from a summary that kept only its words
// reads as it was written.
func BreachWords(b result.Breach) string {
	switch b.Kind {
	case result.BreachFinding:
		return "the cell ended in " + b.Finding
	case result.BreachNoAcquisitions:
		return "no acquisitions"
	}
	t, err := result.ParseThreshold(b.Threshold)
	if err != nil || b.Kind == "" && b.Over != "" {
		return b.Over
	}
	if b.Kind == result.BreachNotRecorded {
		return t.Label() + " not recorded (a summary from an older lockbench)"
	}
	v := b.Value
	if t.Limit == 0 {
		return fmt.Sprintf("%s against %s", t.Format(v), t.Format(t.Limit))
	}
	by := excess(100 * (v - t.Limit) / t.Limit)
	if v >= 2*t.Limit {
		by = fmt.Sprintf("%.1f×", v/t.Limit)
	}
	return fmt.Sprintf("%s against %s (%s)", t.Format(v), t.Format(t.Limit), by)
}

// WordBreaches fills each breach's Over, which a summary carries for
// those who read it without lockbench.
func WordBreaches(bs []result.Breach) {
	for i := range bs {
		bs[i].Over = BreachWords(bs[i])
	}
}

// excess writes a miss in percent with as many decimals as it takes not
// to read as none: +12%, −0.3%, +0.04%.
func excess(pct float64) string {
	switch a := math.Abs(pct); {
	case a >= 10:
		return fmt.Sprintf("%+.0f%%", pct)
	case a >= 0.05:
		return fmt.Sprintf("%+.1f%%", pct)
	}
	return fmt.Sprintf("%+.2g%%", pct)
}

// TrialWhy says why a capacity trial failed, each miss in turn; "" when
// it passed.
func TrialWhy(v judge.TrialVerdict) string {
	words := make([]string, 0, len(v.Misses))
	for _, m := range v.Misses {
		words = append(words, missWords(m))
	}
	return strings.Join(words, "; ")
}

func missWords(m judge.Miss) string {
	switch m.Kind {
	case judge.MissNoAcquisitions:
		return "no acquisitions"
	case judge.MissThreshold:
		return m.Breach.Threshold + ": " + BreachWords(m.Breach)
	case judge.MissUnsafe:
		return fmt.Sprintf("%d safety violations", m.N)
	case judge.MissDropped:
		return fmt.Sprintf("%d of %d arrivals dropped", m.N, m.Of)
	case judge.MissUnserved:
		return fmt.Sprintf("%d arrivals unserved", m.N)
	case judge.MissErrors:
		return fmt.Sprintf("%d errors", m.N)
	case judge.MissCutShort:
		return "cut short: " + m.Reason
	case judge.MissFinding:
		return m.Reason
	}
	return fmt.Sprintf("miss of kind %d", m.Kind)
}
