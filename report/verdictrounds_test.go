package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

func roundsCells() []Cell {
	mk := func(impl string, rates []float64) Cell {
		var rs []result.Cell
		for _, r := range rates {
			rs = append(rs, result.Cell{AcquiresPerS: r, Acquires: 100, AcquireLatencyUs: result.Latency{P50: 900, P99: 5000, P999: 9000}})
		}
		return Cell{Impl: impl, Scenario: "hot", Clients: 8, Acquires: 600, AcquiresPerS: 1000, DurationS: 0.6,
			AcquireLatencyUs: result.Latency{P50: 900, P99: 5000, P999: 9000}, Rounds: result.RoundsOf(rs)}
	}
	drift := []float64{1000, 1200, 850, 1100, 950, 1050}
	faster := make([]float64, len(drift))
	for i, v := range drift {
		faster[i] = 1.1 * v
	}
	return []Cell{mk("a", drift), mk("b", faster)}
}

// A run in rounds says each ratio with its interval, calls the difference
// it can tell and says what it could not, and puts the noise floor on the
// Limit line.
func TestVerdictRendersRatiosAndNoise(t *testing.T) {
	lines := Lines(judge.Judge(roundsCells(), nil))
	var side, limit *VerdictLine
	for i := range lines {
		switch lines[i].Question {
		case "Side by side":
			side = &lines[i]
		case "Limit":
			limit = &lines[i]
		}
	}
	if side == nil || limit == nil {
		t.Fatalf("lines %+v: want a Side by side and a Limit line", lines)
	}
	rows := side.Table.Rows
	if len(rows) != 2 || rows[0][1] != "acq/s" || rows[0][2] != "1.10× [1.10, 1.10]" || rows[0][3] != "differs" {
		t.Fatalf("acq/s ratio row %v", rows)
	}
	if rows[1][1] != "p99" || !strings.HasPrefix(rows[1][3], "cannot tell") && !strings.HasPrefix(rows[1][3], "no difference found; this run could tell ±") {
		t.Fatalf("equal p99 row %v", rows[1])
	}
	if !strings.Contains(limit.Answer, "noise floor: one row's acq/s moved ±") || !strings.Contains(limit.Answer, "--repeat ") {
		t.Fatalf("Limit %q: want the noise floor and the rounds advised", limit.Answer)
	}
}

func TestTableShowsIntervalsOnASecondLine(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, roundsCells()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "6 rounds (median, order statistics, 95 %): acq/s 1,025 [850, 1,200]") {
		t.Fatalf("table:\n%s", b.String())
	}
}

func TestAnUnstableP99IsARangeNotAPoint(t *testing.T) {
	c := Cell{Impl: "redsync", Scenario: "hot", Clients: 8, Acquires: 1000, AcquiresPerS: 100,
		AcquireLatencyUs: result.Latency{P50: 7000, P985: 7300, P99: 7300, P995: 101900}}
	if got := p99Interval(c); got != "unstable: 7.30ms–101.9ms" {
		t.Fatalf("p99 cell %q", got)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, []Cell{c}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "p99 unstable: it sits in the gap of a bimodal distribution") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// A table cell gives the cell's own figure, the one every other section
// gives, with the rounds' interval beside it: not the median of the
// rounds (1,025 here), which a reader would find nowhere else.
func TestTableCellIsTheCellsFigureWithTheRoundsInterval(t *testing.T) {
	c := roundsCells()[0]
	if got := rateInterval(c); got != "1,000 [850–1,200]" {
		t.Errorf("acq/s cell %q, want the cell's 1,000 with the rounds' [850–1,200]", got)
	}
	c.AcquireLatencyUs.P99 = 6000
	if got := p99Interval(c); !strings.HasPrefix(got, "6.00ms [") {
		t.Errorf("p99 cell %q, want the cell's own 6.00ms first", got)
	}
}

// In report.html an interval goes under its figure, so that the results
// table of a run in rounds keeps within a 1280 px screen.
func TestHTMLPutsTheIntervalUnderTheFigure(t *testing.T) {
	if got := string(intervalHTML("979 [664–1,297]")); got != "979<br><small>[664–1,297]</small>" {
		t.Errorf("interval cell %q", got)
	}
	if got := string(intervalHTML("<6.17ms>")); got != "&lt;6.17ms&gt;" {
		t.Errorf("a cell without an interval %q: want it escaped, alone", got)
	}
}

// Under a results table the verdict is text: a line a question, with the
// table behind an answer indented below it.
func TestWriteVerdictAsText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteVerdict(&b, roundsCells(), nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"\nverdict:\n", "  Safety: ", "  Side by side: ", "    rows  ", "b / a, hot ×8"} {
		if !strings.Contains(out, want) {
			t.Errorf("verdict lacks %q:\n%s", want, out)
		}
	}
}
