package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

const reportSynopsis = `report DIR [--slo THRESHOLDS] [--format table|json|csv]

Re-renders everything in a results directory from its data files
(meta.json, summary.json, *.hlog) without running anything: summary.csv,
bench.txt, a .hgrm per cell, summary.md, plots/ and report.html. Prints the
results on stdout (the table and, with an SLO, the capacity plan; or the
summary as JSON or CSV) and the files written on stderr. A capacity
search's directory (capacity.json) gets its plots and its answer again.

Examples:
  lockbench report results/20261122-050146
  lockbench report results/20261122-050146 --slo 'p99<=10ms,errors<=0.1%'
  lockbench report results/20261122-050146 --format csv > cells.csv

Results that are partial (merge --partial, or a run that ended early
leaving cells unwritten) are labelled PARTIAL in every file and on
stdout, and the missing cells are named on stderr.

Exit status: 0 ok, 1 results that cannot be used, 2 usage (a DIR that is
missing or unreadable too), 5 a cell missed a threshold of --slo (or of the
run's own SLO).`

func reportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", reportSynopsis, stdout)
	slo := fs.String("slo", "", "`THRESHOLDS` to check every cell against and plan capacity on, e.g. 'p99<=10ms,errors<=0.1%' (default: the run's own --slo)")
	format := formatFlag(fs, "json (summary.json) or csv (summary.csv, every column)")
	dirs, err := parsePositional(fs, args, "DIR")
	if err != nil {
		return err
	}
	dir := dirs[0]
	if err := checkFormat(*format); err != nil {
		return err
	}
	if err := checkInputs("report", dir); err != nil {
		return err
	}
	if *slo != "" {
		if _, err := result.ParseSLO(*slo); err != nil {
			return fmt.Errorf("%w: --slo: %v", errUsage, err)
		}
	}
	if result.IsCapacityDir(dir) {
		return reportCapacity(ctx, dir, *slo, *format, stdout, stderr)
	}
	err = interruptible(ctx, func() error {
		return report.Render(dir, report.RenderOptions{SLO: *slo, OnWrite: func(p string) { fmt.Fprintln(stderr, "wrote", p) }})
	})
	if errors.Is(err, result.ErrSLO) {
		return fmt.Errorf("%s: %w", filepath.Join(dir, result.MetaFile), err)
	}
	if err != nil {
		return err
	}
	sum, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		return err
	}
	if meta, err := result.ReadMeta(filepath.Join(dir, result.MetaFile)); err == nil {
		sum.Partial = result.MissingFromRun(dir, meta, sum)
	}
	writePartial(stderr, sum.Partial)
	if *slo != "" || sum.SLO != "" {
		s, err := result.ParseSLO(cmp.Or(*slo, sum.SLO))
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, result.SummaryFile), err)
		}
		applySLO(sum, s)
	}
	if err := writeSummary(stdout, *format, sum); err != nil {
		return err
	}
	if *format == formatTable {
		writeCapacity(stdout, sum)
	}
	return sloError(stderr, sum)
}

// reportCapacity re-renders a capacity search's results directory: its
// plots from capacity.json, and the answer on stdout, with the exit
// status the search itself ended with. Each trial's directory is a run's
// and renders on its own (report DIR/trials/IMPL/NN-…).
func reportCapacity(ctx context.Context, dir, slo, format string, stdout, stderr io.Writer) error {
	if format == formatCSV {
		return fmt.Errorf("%w: %s is a capacity search: --format table or json", errUsage, dir)
	}
	rep, err := result.ReadCapacity(dir)
	if err != nil {
		return err
	}
	if slo != "" && slo != rep.SLO {
		return fmt.Errorf("%w: %s is a capacity search at %s; another SLO needs another search (lockbench capacity --slo)", errUsage, dir, rep.SLO)
	}
	var plots []string
	err = interruptible(ctx, func() (err error) {
		plots, err = report.RenderCapacity(dir, rep)
		return err
	})
	for _, p := range plots {
		fmt.Fprintln(stderr, "wrote", p)
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if format == formatJSON {
		if err := writeJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		report.WriteCapacitySearch(stdout, rep)
	}
	return capacityOutcome(rep)
}

const compareSynopsis = `compare OLD NEW [--noise 5%] [--format table|json|csv]

Compares two results directories cell by cell (matched by implementation,
scenario and client count): throughput, p50, p99 and notifications per
acquisition, old → new. When both runs measured a cell in 4 rounds or more
(run --repeat), its throughput, p50 and p99 are the rounds' medians and
benchstat's rank test decides: "~ (p=…)" where the difference is not
significant, and only a significant change beyond --noise counts as a
regression. Otherwise it says it cannot test, and a change smaller than
--noise, or (when both runs have at least three seconds of .hlog intervals)
than twice the standard error of the difference, is marked "~ noise". Cells
measured in one run only
are listed. Warns on stderr, naming each difference, when the two runs were
not set up alike (plan, implementations, client counts, server versions,
machine; from meta.json).

Examples:
  lockbench compare results/before results/after
  lockbench compare results/before results/after --noise 10
  lockbench compare results/before results/after --format json | jq .regressions

Refuses (exit 1) the results of merge --partial, and warns of a run that
ended early, naming the cells it lacks.

Exit status: 0 no regression, 1 results that cannot be used or partial
results, 2 usage (OLD or NEW missing or unreadable too), 4 a figure got
worse by more than noise, significantly where tested (for CI to gate on).`

func compareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", compareSynopsis, stdout)
	noiseText := fs.String("noise", fmt.Sprintf("%g%%", 100*judge.DefaultNoise), "`SHARE` of change below which a difference counts as run-to-run noise: 5%, 5 (percent) or 0.05 (a fraction)")
	format := formatFlag(fs, "json (the comparison, warnings and regressions) or csv (a row per cell and figure)")
	dirs, err := parsePositional(fs, args, "OLD", "NEW")
	if err != nil {
		return err
	}
	noise, err := parseNoise(*noiseText)
	if err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	if err := checkInputs("compare", dirs...); err != nil {
		return err
	}
	var c report.Comparison
	err = interruptible(ctx, func() (err error) {
		c, err = report.CompareDirs(dirs[0], dirs[1], report.CompareOptions{Noise: noise})
		return err
	})
	if errors.Is(err, report.ErrPartial) {
		return fmt.Errorf("compare: %w", err)
	}
	if err != nil {
		return err
	}
	for _, w := range c.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	switch *format {
	case formatJSON:
		err = writeJSON(stdout, c)
	case formatCSV:
		err = c.WriteCSV(stdout)
	default:
		err = c.Write(stdout)
	}
	if err != nil {
		return err
	}
	if len(c.Regressions) > 0 {
		for _, r := range c.Regressions {
			fmt.Fprintln(stderr, "regressed:", r)
		}
		return fmt.Errorf("%s %w: %d figures got worse by more than noise (--noise %s)", dirs[1], errRegressed, len(c.Regressions), *noiseText)
	}
	return nil
}

// parseNoise reads --noise as a fraction: "5%" and "5" are percent,
// "0.05" (below 1) a fraction; it must lie strictly between 0 and 1.
func parseNoise(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err == nil && (pct || v >= 1) {
		v /= 100
	}
	if err != nil || !(v > 0 && v < 1) {
		return 0, fmt.Errorf("%w: --noise %q: want a share above 0 and below 100%%: 5%%, 5 or 0.05", errUsage, s)
	}
	return v, nil
}

// parsePositional parses flags and exactly the positional arguments
// named, which may come before or after the flags.
func parsePositional(fs *pflag.FlagSet, args []string, names ...string) ([]string, error) {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	defer fs.SetOutput(out)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) { // pflag printed to io.Discard
			fs.SetOutput(out)
			fs.Usage()
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	switch {
	case fs.NArg() < len(names):
		return nil, fmt.Errorf("%w: %s needs %s (see `lockbench %s --help`)", errUsage, fs.Name(), joinNames(names), fs.Name())
	case fs.NArg() > len(names):
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(len(names)))
	}
	return fs.Args(), nil
}

func joinNames(names []string) string {
	s := names[0]
	for _, n := range names[1:] {
		s += " and " + n
	}
	return s
}
