package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/internal/benchcheck"
)

// errRegressed is returned by benchcheck when a metric regressed.
var errRegressed = errors.New("benchmarks regressed")

const benchcheckSynopsis = `benchcheck OLD.txt NEW.txt [--limit UNIT=PCT]...

Compares two outputs of ` + "`go test -run '^$' -bench . -count 10`" + ` and fails (exit 4)
when a metric's median regressed past its limit. With at least 4 runs on each
side a change must also be significant (Mann-Whitney U-test, p < 0.05, as
benchstat judges it), so one noisy run does not fail a CI job.

Examples:
  lockbench benchcheck old.txt new.txt
  lockbench benchcheck old.txt new.txt --limit p99-ns=20% --limit acquires/s=-10%`

func benchcheckCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("benchcheck", benchcheckSynopsis, stderr)
	limits := fs.StringArray("limit", []string{"p99-ns=25%", "notifications/op=10%"},
		"UNIT=PCT: largest tolerated increase of the unit's median; -PCT for units where lower is worse (acquires/s=-10%)")
	files, err := parsePositional(fs, args, "OLD", "NEW")
	if err != nil {
		return err
	}
	var ls []benchcheck.Limit
	for _, s := range *limits {
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
	if n := benchcheck.Write(stdout, benchcheck.Compare(old, cur, ls)); n > 0 {
		return fmt.Errorf("%w: %d metric(s) past their limit", errRegressed, n)
	}
	return nil
}
