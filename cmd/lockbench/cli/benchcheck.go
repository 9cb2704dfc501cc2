package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/benchcheck"
)

// errRegressed is returned by benchcheck and compare when a figure
// regressed.
var errRegressed = errors.New("regressed")

// errMissing is returned by benchcheck when a benchmark of OLD, or a gated
// unit of one, is not in NEW. It exits 1 (ExitFailure), not 4: nothing was
// measured to be slower — the new run is incomplete (a benchmark renamed,
// skipped for want of a server, or crashed), so the gate cannot vouch for
// it. It wins over a regression found among the rest, whose count the
// message adds.
var errMissing = errors.New("missing from")

const benchcheckSynopsis = `benchcheck OLD.txt NEW.txt [--limit UNIT=PCT]...

Compares two outputs of ` + "`go test -run '^$' -bench . -count 10`" + ` and fails (exit 4)
when a metric's median regressed past its limit. With at least 4 runs on each
side a change must also be significant (Mann-Whitney U-test, p < 0.05, as
benchstat judges it), so one noisy run does not fail a CI job.

It fails (exit 1) when either output records a FAIL or is the bench.txt of
partial lockbench results (a lockbench-partial line), or when a benchmark
of OLD (or a limited unit of one) is missing from NEW. A --limit whose unit is in
neither output is a usage error (exit 2), as is an OLD or NEW that is
missing or unreadable.

Examples:
  lockbench benchcheck old.txt new.txt
  lockbench benchcheck old.txt new.txt --limit p99-ns=20% --limit acquires/s=-10%`

func benchcheckCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("benchcheck", benchcheckSynopsis, stdout)
	limits := fs.StringArray("limit", []string{"p99-ns=25%", "notifications/op=10%"},
		"`UNIT=PCT`: largest tolerated increase of the unit's median; -PCT for units where lower is worse (acquires/s=-10%)")
	files, err := parsePositional(fs, args, "OLD", "NEW")
	if err != nil {
		return err
	}
	if err := checkInputs("benchcheck", files...); err != nil {
		return err
	}
	var ls []benchcheck.Limit
	for _, s := range *limits {
		// pflag keeps the defaults unless --limit is given.
		l, err := benchcheck.ParseLimit(s)
		if err != nil {
			return fmt.Errorf("%w: --limit: %v", errUsage, err)
		}
		ls = append(ls, l)
	}
	read := func(path string) (map[string]map[string][]float64, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return benchcheck.Read(f, path)
	}
	old, err := read(files[0])
	if err != nil {
		return err
	}
	cur, err := read(files[1])
	if err != nil {
		return err
	}
	// A limit on a unit neither output has gates nothing: a typo
	// (p99=25%, "p99-ns =25%") would pass every run.
	units := benchcheck.Units(old, cur)
	for i, l := range ls {
		if slices.Contains(units, l.Unit) {
			continue
		}
		flag := fmt.Sprintf("--limit %s", (*limits)[i])
		if !fs.Changed("limit") {
			flag = "default " + flag + " (pass --limit for the units to gate)"
		}
		return fmt.Errorf("%w: %s: unit %q is in neither %s nor %s, which have: %s",
			errUsage, flag, l.Unit, files[0], files[1], strings.Join(units, ", "))
	}
	rows := benchcheck.Compare(old, cur, ls)
	n := benchcheck.Write(stdout, rows)
	if gone := benchcheck.Gone(rows); len(gone) > 0 {
		also := ""
		if n > 0 {
			also = fmt.Sprintf("; and %d metric(s) past their limit", n)
		}
		return fmt.Errorf("%w %s but in %s (renamed, skipped or crashed?): %s%s",
			errMissing, files[1], files[0], strings.Join(gone, ", "), also)
	}
	if n > 0 {
		return fmt.Errorf("benchmarks %w: %d metric(s) past their limit", errRegressed, n)
	}
	return nil
}
