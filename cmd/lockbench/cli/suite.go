package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/report/site"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/suite"
)

const suiteSynopsis = `suite [list | render BUNDLE | compare OLD NEW | join --out DIR PART…] [flags]

Runs lockbench's standard benchmark: every workload of the suite's tier
(lockbench suite list shows them, with the commands they run) over every
registered row, or those --impl names, one workload after another, each
into a folder of the bundle named for it, beside suite.json (the suite's
version, the tier, the machine's and the servers' fingerprint, and each
workload's exit status). A workload that finds a mutual-exclusion
violation (exit 3) or misses an SLO (5) has a result, not a failure; one
that fails is noted, and the others still run.

Tiers: quick (every row, a few minutes of measuring), standard (the
published table, about an hour on 2 cores), full (standard, the other
faults and the capacity search).

Examples:
  lockbench suite                                  # the quick tier
  lockbench suite --tier standard --out results/standard
  lockbench suite --tier standard --impl redis,zk-pred,etcd
  lockbench suite --tier standard --part 0/4      # the first of four parts, by rows
  lockbench suite join --out results/standard part-0 part-1 part-2 part-3   # one table, if the machines agree
  lockbench suite list --tier full
  lockbench suite render results/standard          # the site again, from the bundle's files
  lockbench suite compare results/standard-a results/standard-b   # exits 4 when a figure got worse

Exit status: 0 every workload ran, 1 a workload failed (the others' results
are kept), 2 usage, 130 interrupted (completed workloads are kept);
compare: 4 a figure got worse beyond the rank test's doubt and beyond what
the yardstick says the machine itself moved.`

func suiteCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "list" {
		return suiteList(args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "render" {
		return suiteRender(args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "compare" {
		return suiteCompare(args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "join" {
		return suiteJoin(args[1:], stderr)
	}
	fs := newFlags("suite", suiteSynopsis, stdout)
	tierName := fs.String("tier", string(suite.Quick), "`TIER` to run: quick, standard or full")
	version := fs.String("suite", suite.Current, "suite `VERSION` to run")
	impls := fs.String("impl", "", "`NAMES` of the rows, comma-separated (default: every registered row)")
	only := fs.String("workload", "", "`NAMES` of the tier's workloads to run, comma-separated (default: all of them)")
	partText := fs.String("part", suite.Whole.String(), "run part `I/N` of the tier's rows (0-based): every N-th row from the I-th")
	profile := fs.String("servers", string(sandbox.ProfileProduction), "`PROFILE` of the servers: production (as their distributions ship them; the published table's) or fast")
	out := fs.String("out", "", "the bundle's `DIR`, new or empty (default: a new results/suite-<timestamp>)")
	force := fs.Bool("force", false, "with --out: clear a directory that holds an earlier bundle")
	quiet := fs.BoolP("quiet", "q", false, "no progress line")
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := suite.Load(*version)
	if err != nil {
		return fmt.Errorf("%w: --suite: %v", errUsage, err)
	}
	tier, err := suite.ParseTier(*tierName)
	if err != nil {
		return fmt.Errorf("%w: --tier: %v", errUsage, err)
	}
	var names []string
	if *only != "" {
		names = strings.Split(*only, ",")
	}
	workloads, err := s.Select(tier, names)
	if err != nil {
		return fmt.Errorf("%w: --workload: %v", errUsage, err)
	}
	part, err := suite.ParsePart(*partText)
	if err != nil {
		return fmt.Errorf("%w: --part: %v", errUsage, err)
	}
	if _, err := sandbox.ParseProfile(*profile); err != nil {
		return fmt.Errorf("%w: --servers: %q: want production or fast", errUsage, *profile)
	}
	rows, err := suiteRows(*impls)
	if err != nil {
		return err
	}
	if rows = part.Rows(rows); len(rows) == 0 {
		return fmt.Errorf("%w: --part %s: no row falls in it", errUsage, part)
	}
	// Every workload's command line is checked before anything runs: a
	// bad one fails the suite with nothing measured, not an hour in.
	for _, w := range workloads {
		if err := checkWorkload(w, suiteArgs(w, tier, rows, "", *profile, false)); err != nil {
			return err
		}
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", "suite-"+time.Now().Format("20060102-150405"))
		if _, err := os.Stat(dir); err == nil {
			return fmt.Errorf("%w: %s exists; name a new --out", errUsage, dir)
		}
	}
	if err := suiteDir(dir, *force); err != nil {
		return err
	}
	return runSuite(ctx, suiteRun{s: s, tier: tier, part: part, workloads: workloads, rows: rows, profile: *profile, dir: dir, quiet: *quiet}, stdout, stderr)
}

// suiteRun is a suite run as its flags chose it, checked.
type suiteRun struct {
	s         *suite.Suite
	tier      suite.Tier
	part      suite.Part
	workloads []suite.Workload
	rows      []string
	profile   string
	dir       string
	quiet     bool
}

// runSuite runs r's workloads one after another into its bundle, the
// yardstick measured beside them, and renders the bundle's site.
func runSuite(ctx context.Context, r suiteRun, stdout, stderr io.Writer) error {
	s, tier, part, workloads, rows, dir := r.s, r.tier, r.part, r.workloads, r.rows, r.dir
	b := &suite.Bundle{Schema: suite.BundleSchema, Suite: s.Version, Digest: s.Digest, Tier: tier,
		Part: part.String(), Lockbench: plan.Version, Rows: rows, Started: time.Now().UTC()}
	if err := b.Write(dir); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "lockbench suite %s, %s tier, part %s: %d workloads × %d rows → %s\n",
		s.Version, tier, part, len(workloads), len(rows), dir)
	ys := startYardstick(ctx)
	defer ys.close()
	ys.round(ctx)
	var metas []result.Meta
	var runErr error
	for i, w := range workloads {
		fmt.Fprintf(stdout, "\n== %s (%d of %d): %s\n", w.Name, i+1, len(workloads), w.Question)
		args := suiteArgs(w, tier, rows, filepath.Join(dir, w.Name), r.profile, r.quiet)
		start := time.Now()
		err := runWorkload(ctx, w, args, stdout, stderr)
		run := suite.Run{Name: w.Name, Question: w.Question, Command: w.Command, Args: append(w.ArgsFor(tier), w.RowArgsFor(tier, rows)...), Dir: w.Name,
			Exit: exitCode(err, ctx, stderr), Seconds: time.Since(start).Seconds()}
		if err != nil && !errors.Is(err, errUnsafe) && !errors.Is(err, errSLO) {
			run.Error = oneLine(err.Error())
		}
		b.Workloads = append(b.Workloads, run)
		if m, err := result.ReadMeta(filepath.Join(dir, w.Name, result.MetaFile)); err == nil {
			metas = append(metas, m)
		}
		ys.round(ctx)
		b.Machine, b.Yardstick = suite.FingerprintOf(metas), ys.figures()
		if werr := b.Write(dir); werr != nil {
			return werr
		}
		if ctx.Err() != nil {
			runErr = err
			break
		}
	}
	b.Ended = time.Now().UTC()
	if err := b.Write(dir); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "suite: %s\n", filepath.Join(dir, suite.BundleFile))
	if err := site.Render(dir); err != nil {
		fmt.Fprintf(stderr, "lockbench: site: %s\n", oneLine(err.Error()))
		if runErr == nil {
			runErr = fmt.Errorf("site: %w", err)
		}
	} else {
		fmt.Fprintf(stderr, "site: %s\n", filepath.Join(dir, site.IndexFile))
	}
	if runErr != nil {
		return runErr
	}
	if failed := b.Failed(); len(failed) > 0 {
		return fmt.Errorf("suite: %d of %d workloads failed: %s", len(failed), len(workloads), strings.Join(failed, "; "))
	}
	return nil
}

// suiteRows is the rows --impl names, each registered, or every
// registered row.
func suiteRows(list string) ([]string, error) {
	if list == "" {
		return rowNames(), nil
	}
	var rows []string
	for _, n := range strings.Split(list, ",") {
		if _, ok := impl.Lookup(n); !ok {
			return nil, fmt.Errorf("%w: --impl: unknown implementation %q (lockbench list shows them)", errUsage, n)
		}
		if !slices.Contains(rows, n) {
			rows = append(rows, n)
		}
	}
	slices.Sort(rows)
	return rows, nil
}

// suiteArgs is the command line workload w runs with: its own flags,
// then the suite's — the rows, the results directory, the profile.
func suiteArgs(w suite.Workload, t suite.Tier, rows []string, out, profile string, quiet bool) []string {
	args := append(w.ArgsFor(t), w.RowArgsFor(t, rows)...)
	args = append(args, "--impl", strings.Join(rows, ","), "--servers", profile)
	if out != "" {
		args = append(args, "--out", out)
	}
	if quiet {
		args = append(args, "--quiet")
	}
	return args
}

// checkWorkload parses w's command line as its command would, and
// judges the plan it states, without running anything.
func checkWorkload(w suite.Workload, args []string) error {
	var err error
	switch w.Command {
	case suite.CommandCapacity:
		var o capOpts
		fs := capacityFlags(&o, io.Discard)
		if err = parse(fs, args); err == nil {
			_, err = o.check(fs)
		}
	default:
		var o runOpts
		fs := runFlags(&o, io.Discard)
		if err = parse(fs, args); err == nil {
			var p plan.Plan
			if p, err = o.plan.Plan(fs); err == nil {
				err = p.Validate()
			}
		}
	}
	if err != nil {
		return fmt.Errorf("%w: workload %s: %v", errUsage, w.Name, strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
	}
	return nil
}

func runWorkload(ctx context.Context, w suite.Workload, args []string, stdout, stderr io.Writer) error {
	if w.Command == suite.CommandCapacity {
		return capacityCmd(ctx, args, stdout, stderr)
	}
	return runCmd(ctx, args, stdout, stderr)
}

// suiteDir makes the bundle's directory: new, empty, or an earlier
// bundle cleared with force.
func suiteDir(dir string, force bool) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("--out: %w", err)
	case len(ents) > 0 && !force:
		return fmt.Errorf("%w: --out %s holds files already; name a new directory, or add --force to clear an earlier bundle", errUsage, dir)
	case len(ents) > 0:
		if _, err := os.Stat(filepath.Join(dir, suite.BundleFile)); err != nil {
			return fmt.Errorf("%w: --out %s holds no %s; --force clears only a bundle", errUsage, dir, suite.BundleFile)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return os.MkdirAll(dir, 0o755)
}

// suiteList prints the suite's workloads in a tier (every tier by
// default) with the command line each runs.
func suiteList(args []string, stdout io.Writer) error {
	fs := newFlags("suite list", "suite list [--tier TIER] [--suite VERSION]", stdout)
	tierName := fs.String("tier", "", "`TIER` whose workloads to list (default: every tier)")
	version := fs.String("suite", suite.Current, "suite `VERSION`")
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := suite.Load(*version)
	if err != nil {
		return fmt.Errorf("%w: --suite: %v", errUsage, err)
	}
	tiers := suite.Tiers()
	if *tierName != "" {
		t, err := suite.ParseTier(*tierName)
		if err != nil {
			return fmt.Errorf("%w: --tier: %v", errUsage, err)
		}
		tiers = []suite.Tier{t}
	}
	fmt.Fprintf(stdout, "suite %s (digest %s)\n", s.Version, s.Digest)
	for _, t := range tiers {
		ws, err := s.Select(t, nil)
		if err != nil {
			continue
		}
		fmt.Fprintf(stdout, "\n%s:\n", t)
		for _, w := range ws {
			fmt.Fprintf(stdout, "  %-12s %s\n  %-12s lockbench %s %s\n", w.Name, w.Question, "", w.Command, strings.Join(w.ArgsFor(t), " "))
			for _, row := range rowNames() {
				if a := w.RowArgsFor(t, []string{row}); len(a) > 0 {
					fmt.Fprintf(stdout, "  %-12s   with %s: %s\n", "", row, strings.Join(a, " "))
				}
			}
		}
	}
	return nil
}

// suiteRender renders a bundle's site again from its files.
func suiteRender(args []string, stderr io.Writer) error {
	fs := newFlags("suite render", "suite render BUNDLE [--publish FILE]", stderr)
	publish := fs.String("publish", "", "also write the table as the guide publishes it (markdown) to `FILE`, e.g. docs/results.md")
	pos, err := parsePositional(fs, args, "BUNDLE")
	if err != nil {
		return err
	}
	if err := site.Render(pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "site: %s\n", filepath.Join(pos[0], site.IndexFile))
	if *publish == "" {
		return nil
	}
	b, err := suite.ReadBundle(pos[0])
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := site.WriteMarkdown(&buf, pos[0], b); err != nil {
		return err
	}
	if err := result.WriteFileAtomic(*publish, buf.Bytes()); err != nil {
		return fmt.Errorf("--publish: %w", err)
	}
	fmt.Fprintf(stderr, "published: %s\n", *publish)
	return nil
}

// suiteCompare compares two bundles figure by figure.
func suiteCompare(args []string, stdout io.Writer) error {
	fs := newFlags("suite compare", "suite compare OLD NEW", stdout)
	dirs, err := parsePositional(fs, args, "OLD", "NEW")
	if err != nil {
		return err
	}
	var bs [2]*suite.Bundle
	var figs [2][]suite.Figure
	for i, d := range dirs {
		if bs[i], err = suite.ReadBundle(d); err != nil {
			return fmt.Errorf("suite compare: %w", err)
		}
		figs[i] = suite.FiguresOf(suite.ReadResults(d, bs[i]))
	}
	c := judge.CompareBundles(bs[0], bs[1], figs[0], figs[1])
	if err := site.WriteComparison(stdout, bs[0], bs[1], c); err != nil {
		return err
	}
	if r := c.Regressed(); len(r) > 0 {
		return fmt.Errorf("%w: %d of %d figures worse", errRegressed, len(r), len(c.Figures))
	}
	return nil
}

// suiteJoin joins the bundles of a tier's parts into one, each part kept
// as it was written under the new bundle's parts/.
func suiteJoin(args []string, stderr io.Writer) error {
	fs := newFlags("suite join", "suite join --out DIR PART PART…", stderr)
	out := fs.String("out", "", "the joined bundle's `DIR`, new or empty")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	dirs := fs.Args()
	switch {
	case *out == "":
		return fmt.Errorf("%w: suite join needs --out DIR", errUsage)
	case len(dirs) < 2:
		return fmt.Errorf("%w: suite join needs two parts or more", errUsage)
	}
	var parts []*suite.Bundle
	for _, d := range dirs {
		b, err := suite.ReadBundle(d)
		if err != nil {
			return fmt.Errorf("suite join: %w", err)
		}
		parts = append(parts, b)
	}
	b, err := suite.Join(parts)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := suiteDir(*out, false); err != nil {
		return err
	}
	for i, d := range dirs {
		if err := os.CopyFS(filepath.Join(*out, suite.PartsDir, strconv.Itoa(i)), os.DirFS(d)); err != nil {
			return fmt.Errorf("suite join: %w", err)
		}
	}
	if err := b.Write(*out); err != nil {
		return err
	}
	if err := site.Render(*out); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	fmt.Fprintf(stderr, "suite: %s (parts %s, %d rows)\nsite: %s\n", filepath.Join(*out, suite.BundleFile), b.Part, len(b.Rows), filepath.Join(*out, site.IndexFile))
	return nil
}
