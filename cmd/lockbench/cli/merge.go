package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

const mergeSynopsis = `merge --out DIR [--partial] [--format table|json|csv] SHARD_DIR...

Joins the results directories of a sharded run (lockbench run --shard i/N)
into one results directory of the same form as a single process's run:
histograms merged interval by interval without loss, counts summed, the
servers' counters taken once, fairness over all clients, and mutual
exclusion checked over every shard's grants (by fencing token where the
lock has one, by wall clock within the shards' measured clock skew
otherwise). Refuses shards of different plans, versions or seeds, and a
missing or doubled shard, and (exit 1, naming them) shards that did not
finish the same cells — a shard killed mid-cell, or out of disk. With
--partial it merges the cells every shard finished instead, and labels
the result PARTIAL everywhere it is shown (summary.json and meta.json's
"partial", the table, report.html's headline, tables and plots,
summary.md, bench.txt), naming the shards and cells left out; compare
and benchcheck refuse such a result. The run's --slo, which shards record but do not
judge, is judged over the merged cells. Prints the merged cells on stdout
(or the summary as JSON or CSV) and its notes — the safety check, the
files written — on stderr.

Examples:
  lockbench merge --out results/merged results/shard-0 results/shard-1
  lockbench merge --partial --out results/merged results/shard-0 results/shard-1

Exit status: 0 ok, 1 a shard's files unreadable, shards that did not finish
the same cells (without --partial) or a shard whose run failed (what
merged is still written; with --partial, a failure that left cells out
is part of the label instead),
2 usage, a shard's directory missing or unreadable, or shards that are
not one run, 3 a mutual-exclusion violation,
5 the --slo missed by a merged cell.`

func mergeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", mergeSynopsis, stdout)
	out := fs.String("out", "", "results `DIR` to write, new or empty")
	force := fs.Bool("force", false, "clear --out first if it holds an earlier run's files")
	partial := fs.Bool("partial", false, "merge the cells every shard finished when some shard stopped early, and label the result partial")
	format := formatFlag(fs, "json (summary.json) or csv (summary.csv, every column)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: merge needs --out DIR", errUsage)
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: merge needs the shards' results directories", errUsage)
	}
	if err := mergeDirs(*out, fs.Args()); err != nil {
		return err
	}
	opts := plan.MergeOptions{Partial: *partial}
	if err := plan.CheckShards(fs.Args(), opts); err != nil {
		return err
	}
	had := existed(*out)
	dir, err := outDir(*out, *force)
	if err != nil {
		return err
	}
	// A shard that failed leaves its finished cells merged: they are
	// shown and rendered, and the failure is the exit status.
	sum, failed := plan.Merge(ctx, dir, fs.Args(), opts)
	if sum == nil {
		if ctx.Err() != nil { // a partial merge is no result: leave none
			failed = errors.Join(failed, clearOut(dir, had))
		}
		return failed
	}
	if err := writeSummary(stdout, *format, sum); err != nil {
		return err
	}
	if *format == formatTable {
		writeCapacity(stdout, sum)
	}
	writePartial(stderr, sum.Partial)
	for _, c := range sum.Cells {
		if m := c.Merge; m != nil {
			fmt.Fprintf(stderr, "%s: %d shards, %d grants checked by %s: %d violations, %d possible overlaps within clock skew\n",
				c.Key(), m.Shards, m.Grants, m.By, c.SafetyViolations, m.PossibleOverlaps)
		}
	}
	if err := interruptible(ctx, func() error { return report.Render(dir, report.RenderOptions{SLO: sum.SLO}) }); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(stderr, "report: %s\nresults: %s\n", filepath.Join(dir, "report.html"), filepath.Join(dir, result.SummaryFile))
	if failed != nil {
		return failed
	}
	if err := unsafeCells(sum); err != nil {
		return err
	}
	return sloError(stderr, sum)
}

// writePartial says on stderr, a line per missing cell, what a partial
// result lacks.
func writePartial(w io.Writer, p *result.Partial) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "PARTIAL: %s\n", p.Reason)
	for _, m := range p.Missing {
		fmt.Fprintf(w, "  missing %s: %s\n", m.Cell, m.Why)
	}
}
