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

const mergeSynopsis = `merge --out DIR [--format table|json|csv] SHARD_DIR...

Joins the results directories of a sharded run (lockbench run --shard i/N)
into one results directory of the same form as a single process's run:
histograms merged interval by interval without loss, counts summed, the
servers' counters taken once, fairness over all clients, and mutual
exclusion checked over every shard's grants (by fencing token where the
lock has one, by wall clock within the shards' measured clock skew
otherwise). Refuses shards of different plans, versions or seeds, and a
missing or doubled shard. The run's --slo, which shards record but do not
judge, is judged over the merged cells. Prints the merged cells on stdout
(or the summary as JSON or CSV) and its notes — the safety check, the
files written — on stderr.

Examples:
  lockbench merge --out results/merged results/shard-0 results/shard-1

Exit status: 0 ok, 1 a shard's files unreadable, shards that did not finish
the same cells or a shard whose run failed (what merged is still written),
2 usage or shards that are not one run, 3 a mutual-exclusion violation,
5 the --slo missed by a merged cell.`

func mergeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", mergeSynopsis, stdout)
	out := fs.String("out", "", "results `DIR` to write, new or empty")
	force := fs.Bool("force", false, "clear --out first if it holds an earlier run's files")
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
	if err := plan.CheckShards(fs.Args()); err != nil {
		return err
	}
	had := existed(*out)
	dir, err := outDir(*out, *force)
	if err != nil {
		return err
	}
	// A shard that failed leaves its finished cells merged: they are
	// shown and rendered, and the failure is the exit status.
	sum, failed := plan.Merge(ctx, dir, fs.Args())
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
