package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

const reportSynopsis = `report DIR [--slo p99=10ms]

Re-renders everything in a results directory from its data files
(meta.json, summary.json, *.hlog) without running anything: summary.csv,
bench.txt, a .hgrm per cell, summary.md, plots/ and report.html. Prints the
results table and the files written.

Examples:
  lockbench report results/20261122-050146
  lockbench report results/20261122-050146 --slo p99=10ms`

func reportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", reportSynopsis, stdout)
	slo := fs.String("slo", "", "latency objective for capacity planning, QUANTILE=DURATION (p50, p90, p99, p999, max), e.g. p99=10ms")
	dirs, err := parsePositional(fs, args, "DIR")
	if err != nil {
		return err
	}
	dir := dirs[0]
	if *slo != "" {
		if _, err := result.ParseSLO(*slo); err != nil {
			return fmt.Errorf("%w: --slo: %v", errUsage, err)
		}
	}
	var written []string
	err = report.Render(dir, report.RenderOptions{SLO: *slo, OnWrite: func(p string) { written = append(written, p) }})
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
	if err := report.WriteTable(stdout, sum.Cells); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	for _, p := range written {
		fmt.Fprintln(stdout, "wrote", p)
	}
	return nil
}

const compareSynopsis = `compare OLD NEW [--noise 5%]

Compares two results directories cell by cell (matched by implementation,
scenario and client count): throughput, p50, p99 and notifications per
acquisition, old → new. A change smaller than --noise, or (when both runs
have at least three seconds of .hlog intervals) than twice the standard
error of the difference, is marked "~ noise". Cells measured in one run only
are listed.

Examples:
  lockbench compare results/before results/after
  lockbench compare results/before results/after --noise 10`

func compareCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", compareSynopsis, stdout)
	noiseText := fs.String("noise", fmt.Sprintf("%g%%", 100*report.DefaultNoise), "change below which a difference counts as run-to-run noise: 5%, 5 (percent) or 0.05 (a fraction)")
	dirs, err := parsePositional(fs, args, "OLD", "NEW")
	if err != nil {
		return err
	}
	noise, err := parseNoise(*noiseText)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	cmp, err := report.CompareDirs(dirs[0], dirs[1], report.CompareOptions{Noise: noise})
	if err != nil {
		return err
	}
	return cmp.Write(stdout)
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
