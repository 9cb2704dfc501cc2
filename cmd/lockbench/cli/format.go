package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

// The forms a command's result takes on stdout (--format). Progress,
// notes and the files written go to stderr whatever the form, so that
// stdout can be piped into jq or a spreadsheet.
const (
	formatTable = "table"
	formatJSON  = "json"
	formatCSV   = "csv"
)

// errSLO is returned when a cell missed a threshold of --slo.
var errSLO = errors.New("the SLO was not met")

// formatFlag adds --format; what says what json and csv carry.
func formatFlag(fs *pflag.FlagSet, what string) *string {
	return fs.String("format", formatTable, "`FORMAT` of stdout: table (for people), "+what)
}

func checkFormat(f string) error {
	switch f {
	case formatTable, formatJSON, formatCSV:
		return nil
	}
	return fmt.Errorf("%w: --format %q: want table, json or csv", errUsage, f)
}

// writeJSON prints v as indented JSON, as the files hold it.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeSummary prints a summary in format f: the table, summary.json's
// JSON, or summary.csv's full table.
func writeSummary(w io.Writer, f string, sum *result.Summary) error {
	switch f {
	case formatJSON:
		return writeJSON(w, sum)
	case formatCSV:
		return report.WriteCSV(w, sum.Cells)
	}
	if sum.Partial != nil {
		fmt.Fprintln(w, sum.Partial.Label())
	}
	if err := report.WriteTable(w, sum.Cells); err != nil {
		return err
	}
	return report.WriteVerdict(w, sum.Cells, sloOf(sum.SLO))
}

// sloOf is the SLO s names, nil for none (the verdict's default then).
func sloOf(s string) *result.SLO {
	slo, err := result.ParseSLO(s)
	if s == "" || err != nil {
		return nil
	}
	return &slo
}

// applySLO plans capacity against slo and checks every cell against its
// thresholds, as run does after every cell.
func applySLO(sum *result.Summary, slo result.SLO) {
	sum.SLO = slo.String()
	plan.JudgeSLO(sum, slo)
}

// writeCapacity prints the capacity plan for the summary's SLO.
func writeCapacity(w io.Writer, sum *result.Summary) {
	slo, err := result.ParseSLO(sum.SLO)
	if err != nil || len(sum.Capacity) == 0 {
		return
	}
	fmt.Fprintf(w, "capacity at %s ≤ %v:\n", slo.Label(), slo.Limit)
	for _, row := range sum.Capacity {
		fmt.Fprintf(w, "  %-12s %-8s %s\n", row.Impl, row.Scenario, report.DescribeCapacity(row, slo))
	}
}

// sloError prints, on stderr, each cell and threshold that missed the SLO
// and by how much, and returns errSLO; nil when every cell met it.
func sloError(stderr io.Writer, sum *result.Summary) error {
	if len(sum.SLOBreaches) == 0 {
		return nil
	}
	cells := map[string]bool{}
	fmt.Fprintf(stderr, "SLO %s missed:\n", sum.SLO)
	for _, b := range sum.SLOBreaches {
		cells[b.Cell] = true
		fmt.Fprintf(stderr, "  %s  %s  %s\n", b.Cell, b.Threshold, report.BreachWords(b))
	}
	return fmt.Errorf("%w: %s missed in %d of %d cells (see slo_breaches in summary.json)",
		errSLO, sum.SLO, len(cells), len(result.WithoutFaults(sum.Cells)))
}
