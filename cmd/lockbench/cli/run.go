package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
)

const runSynopsis = `run [flags]

Runs every implementation × scenario × client count as one cell after
another, over the servers given or, by default, over a sandbox of real
servers it starts on loopback and stops at exit. Prints a table row per
cell on stdout (progress and notes on stderr) and writes DIR/meta.json and
DIR/summary.json (rewritten after every cell); with --format json or csv,
stdout carries summary.json or summary.csv once the run ends instead.

Examples:
  lockbench run --impl redis --clients 1,8 --duration 3s
  lockbench run --impl zk-naive,zk-pred --scenario burst --clients 8,32,128 --hold 5ms
  lockbench run --impl redis --locks 16 --clients 16 --acquires 100000   # uncontended
  lockbench run --impl redis,zk-pred --scenario keys --locks 100 --dist zipf:1.2 --clients 32
  lockbench run --impl redis,zk-pred --clients 64 --ramp 8:8:5s --hold 1ms   # 8, 16, … 64 clients
  lockbench run --impl zk-pred --scenario rate --rate 2000 --arrival poisson --clients 64 --hold exp:1ms
  lockbench run --impl zk-pred --zk 10.0.0.5:2181 --clients 64 --duration 30s
  lockbench run --impl zk-naive,zk-pred --scenario abandon --clients 32   # waiters giving up
  lockbench run --impl redis,redlock --ttl 200ms --hold 400ms --renew --clients 4
  lockbench run --impl redis,zk-pred --clients 1,4,16,64 --hold 1ms --slo 'p99<=5ms,errors<=0.1%'
  lockbench run --impl redis --clients 4 --format json | jq '.cells[] | {impl, clients, p99: .acquire_latency_us.p99}'
  lockbench run --shard 0/4 --zk 10.0.0.5:2181 --impl zk-pred --scenario burst --clients 200 --out shard-0   # then lockbench merge

Exit status: 0 ok, 1 runtime failure, 2 usage, 3 a mutual-exclusion
violation, 5 a cell missed a threshold of --slo (3 and 5 after every result
is written), 130 interrupted (completed cells are kept).`

// runOpts holds run's flags as parsed: the plan's own (plan.Flags, which
// Plan.Validate judges) and the command's.
type runOpts struct {
	plan                          plan.Flags
	format                        string
	quiet, force                  bool
	cpuProfile, memProfile, trace string
	metricsAddr                   string
}

// RunFlags returns `lockbench run`'s flags as a user meets them, defaults
// (and the LOCKBENCH_… variables they read) included; the compose tests
// parse the compose file's command with them.
func RunFlags() *pflag.FlagSet {
	var o runOpts
	return runFlags(&o, io.Discard)
}

func runFlags(o *runOpts, help io.Writer) *pflag.FlagSet {
	fs := newFlags("run", runSynopsis, help)
	o.plan.Register(fs)
	fs.StringVar(&o.format, "format", formatTable, "`FORMAT` of stdout: table (a row per cell as it ends), json (summary.json) or csv (summary.csv, every column)")
	fs.BoolVar(&o.force, "force", false, "with --out: clear a directory that holds files already")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress line")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve the run's figures live to Prometheus on `HOST:PORT` (/metrics; labels impl, scenario, clients, shard, run_id); at the end waits up to 20s for a last scrape")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof FILE)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile at the end of the run to `FILE`")
	fs.StringVar(&o.trace, "trace", "", "write an execution trace of the whole run to `FILE` (go tool trace FILE)")
	return fs
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o runOpts
	fs := runFlags(&o, stdout)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkFormat(o.format); err != nil {
		return err
	}
	if err := checkMetricsAddr(o.metricsAddr); err != nil {
		return err
	}
	p, err := o.plan.Plan(fs)
	if err != nil {
		return err
	}
	if err := p.Validate(); err != nil {
		return err
	}
	had := p.Out != "" && existed(p.Out)
	if p.Out, err = outDir(p.Out, o.force); err != nil {
		return err
	}
	attachMetrics, stopMetrics, err := serveMetrics(ctx, o.metricsAddr, p.Shard, stderr)
	if err != nil {
		dropUnused(p.Out, had)
		return err
	}
	stopProfiles, err := startProfiles(o.cpuProfile, o.memProfile, o.trace)
	if err != nil {
		stopMetrics()
		return err
	}
	live := stdout
	if o.format != formatTable {
		live = io.Discard // the rows come as one document at the end
	}
	sum, err := runPlan(ctx, p, o.quiet, live, stderr, attachMetrics)
	stopMetrics()
	if perr := stopProfiles(); perr != nil && err == nil {
		err = perr
	}
	if sum == nil || len(sum.Cells) == 0 {
		dropUnused(p.Out, had)
	}
	var rerr error
	if sum != nil && len(sum.Cells) > 0 {
		rerr = printOutcome(stdout, stderr, o.format, p, sum)
	}
	if err != nil {
		return err
	}
	if err := unsafeCells(sum); err != nil {
		return err
	}
	if rerr != nil {
		return rerr
	}
	if p.Shard != nil && p.SLO != "" {
		fmt.Fprintf(stderr, "note: shard %d/%d records --slo %s but does not judge it: a shard's cells are slices; lockbench merge judges the merged cells\n",
			p.Shard.Index, p.Shard.Count, p.SLO)
	}
	return sloError(stderr, sum)
}

// startProfiles starts a CPU profile into cpu and an execution trace into
// tr, and arranges a heap profile into mem, as Go's own tools do, so that
// a user who doubts a number can see where lockbench's time went (and, in
// the trace, what held up a late send); stop ends them.
func startProfiles(cpu, mem, tr string) (stop func() error, err error) {
	var cf, tf *os.File
	if cpu != "" {
		if cf, err = os.Create(cpu); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(cf); err != nil {
			cf.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	if tr != "" {
		if tf, err = os.Create(tr); err == nil {
			if err = trace.Start(tf); err != nil {
				tf.Close()
			}
		}
		if err != nil {
			if cf != nil {
				pprof.StopCPUProfile()
				cf.Close()
			}
			return nil, fmt.Errorf("--trace: %w", err)
		}
	}
	return func() error {
		var errs []error
		if cf != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cf.Close())
		}
		if tf != nil {
			trace.Stop()
			errs = append(errs, tf.Close())
		}
		if mem != "" {
			f, err := os.Create(mem)
			if err != nil {
				return fmt.Errorf("--memprofile: %w", err)
			}
			runtime.GC() // the heap as it stands, not as of the last collection
			errs = append(errs, pprof.WriteHeapProfile(f), f.Close())
		}
		return errors.Join(errs...)
	}, nil
}

// outDir makes the results directory. The default is new for every run —
// results/<timestamp>, with a suffix when another run took it — so that no
// run replaces another's files; a directory the user names must be empty,
// or is cleared first with force.
func outDir(dir string, force bool) (string, error) {
	if dir == "" {
		base := filepath.Join("results", time.Now().Format("20060102-150405"))
		if err := os.MkdirAll("results", 0o755); err != nil {
			return "", fmt.Errorf("results directory: %w", err)
		}
		for i := 1; ; i++ {
			dir = base
			if i > 1 {
				dir = fmt.Sprintf("%s-%d", base, i)
			}
			err := os.Mkdir(dir, 0o755)
			if err == nil {
				return dir, nil
			}
			if !errors.Is(err, fs.ErrExist) || i >= 1000 {
				return "", fmt.Errorf("results directory: %w", err)
			}
		}
	}
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("--out: %w", err)
	case len(ents) > 0 && !force:
		return "", fmt.Errorf("%w: --out %s holds files of an earlier run; name a new directory, or add --force to clear it", errUsage, dir)
	case len(ents) > 0:
		if f := foreign(ents); f != "" {
			return "", fmt.Errorf("%w: --out %s holds %s, which no run wrote; --force clears only a results directory", errUsage, dir, f)
		}
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("--out: %w", err)
		}
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// foreign names the first entry of a directory that a run or a report
// would not have written, "" when every one is a results file.
func foreign(ents []os.DirEntry) string {
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir() && (name == report.PlotsDir || name == result.TrialsDir || name == result.CellsDir): // plots, a capacity search's trials, the cells' files
		case !e.IsDir() && strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp"): // an interrupted atomic write
		case !e.IsDir() && slices.Contains([]string{".json", ".hlog", ".hgrm", ".csv", ".md", ".html", ".txt", result.GrantsExt, result.PartialExt, result.HistoryExt}, filepath.Ext(name)):
		default:
			return name
		}
	}
	return ""
}

// runPlan runs the plan, printing the sandbox, a row per cell and the
// progress line.
func runPlan(ctx context.Context, p plan.Plan, quiet bool, stdout, stderr io.Writer, observers ...func(*plan.Plan)) (*result.Summary, error) {
	table := report.NewTableFor(stdout, report.TableOptions{Impls: p.Impls, Scenarios: p.Scenarios, Herd: p.WakesWaiters()})
	prog := newProgressLine(stderr, quiet)
	p.OnServers = func(s impl.Servers, sandboxed []string) {
		if len(sandboxed) > 0 {
			fmt.Fprintf(stderr, "lockbench %s — sandbox: %s\n", plan.Version, plan.DescribeServers(s, sandboxed))
		}
	}
	p.OnProgress = prog.update
	noted := map[string]bool{} // one note per implementation × scenario, not per client count
	p.OnSkip = func(spec engine.CellSpec, err error) {
		k := spec.Impl + "/" + spec.Scenario.Name()
		if noted[k] {
			return
		}
		noted[k] = true
		prog.clear()
		fmt.Fprintf(stderr, "skipped %s/%s: %s\n", spec.Impl, spec.Scenario.Name(),
			oneLine(strings.TrimPrefix(err.Error(), engine.ErrNotApplicable.Error()+": ")))
	}
	p.OnResult = func(c result.Cell) {
		prog.clear()
		table.Row(c)
		// Little's law on every closed-loop cell: one far off it lost time
		// where nothing measures it.
		if l := judge.LittleCheck(c, p.Cell.Hold, p.Cell.Think); judge.LittleOff(l) {
			fmt.Fprintf(stderr, "note: %s: %s\n", c.Key(), report.LittleNote(l))
		}
	}
	for _, o := range observers {
		o(&p)
	}
	sum, err := plan.Run(ctx, p)
	prog.clear()
	return sum, err
}

// printOutcome prints the result in format f on stdout — the capacity
// plan after the table, or the summary as JSON or CSV — renders the report
// and names the files on stderr: what was measured is shown even when a
// later cell failed or the run was interrupted; the data files are
// already written.
func printOutcome(stdout, stderr io.Writer, f string, p plan.Plan, sum *result.Summary) error {
	switch f {
	case formatTable:
		writeCapacity(stdout, sum)
		if err := report.WriteVerdict(stdout, sum.Cells, sloOf(p.SLO)); err != nil {
			return err
		}
	default:
		if err := writeSummary(stdout, f, sum); err != nil {
			return err
		}
	}
	rerr := report.Render(p.Out, report.RenderOptions{SLO: p.SLO})
	if rerr != nil {
		rerr = fmt.Errorf("report: %w", rerr)
	} else {
		fmt.Fprintf(stderr, "report: %s\n", filepath.Join(p.Out, "report.html"))
	}
	fmt.Fprintf(stderr, "results: %s\n", filepath.Join(p.Out, "summary.json"))
	for _, c := range sum.Cells {
		if c.Server == nil && c.ServerNote != "" {
			fmt.Fprintf(stderr, "note: %s: no server counters: %s\n", c.Key(), oneLine(c.ServerNote))
		}
		if s := c.Safety; s != nil && s.Linearizable == result.VerdictUnknown {
			fmt.Fprintf(stderr, "note: %s: linearizability unknown: the check's time budget ran out (%.1f s, %d operations); neither safe nor unsafe is claimed\n",
				c.Key(), s.CheckMs/1e3, s.Ops)
		}
	}
	return rerr
}

// unsafeCells is the error for cells judge finds unsafe, each named with
// what broke it.
func unsafeCells(sum *result.Summary) error {
	var unsafe []string
	for _, c := range sum.Cells {
		if u := judge.CellSafety(c); u.Bad() {
			unsafe = append(unsafe, fmt.Sprintf("%s (%s)", c.Key(), report.UnsafetyWords(u)))
		}
	}
	if len(unsafe) > 0 {
		return fmt.Errorf("%w in %s", errUnsafe, strings.Join(unsafe, ", "))
	}
	return nil
}

// progressLine shows one status line on stderr: redrawn each second on a
// terminal; otherwise (a CI log) a plain line when a cell starts, every
// 10 s while it runs, and its last when it ends.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	quiet bool
	last  time.Time
	shown bool
	// Off a terminal: the cell last printed, and its latest line not
	// printed yet (clear prints it).
	cell    int
	pending string
}

func newProgressLine(w io.Writer, quiet bool) *progressLine {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &progressLine{w: w, tty: tty, quiet: quiet, cell: -1}
}

func (p *progressLine) update(i, total int, spec engine.CellSpec, pr engine.Progress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	of := ""
	if pr.Total > 0 {
		of = "/" + pr.Total.Round(time.Second).String()
	}
	msg := fmt.Sprintf("[%d/%d] %s %s clients=%d  %s%s  %.0f acq/s  p99≈%s  errors %d",
		i+1, total, spec.Impl, spec.Scenario.Name(), spec.Clients, pr.Elapsed.Round(time.Second), of,
		pr.AcquiresPerS, result.Dur(pr.P99Us), pr.Errors)
	if pr.Warmup {
		msg = fmt.Sprintf("[%d/%d] %s %s clients=%d  warming up", i+1, total, spec.Impl, spec.Scenario.Name(), spec.Clients)
	}
	switch {
	case p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K%s", msg)
		p.shown = true
	case i != p.cell || time.Since(p.last) >= 10*time.Second:
		fmt.Fprintln(p.w, msg)
		p.cell, p.last, p.pending = i, time.Now(), ""
	default:
		p.pending = msg
	}
}

// clear ends the line before other output: on a terminal it wipes it;
// off one it prints the cell's latest line if not printed yet, so that a
// log holds how each cell ended.
func (p *progressLine) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
	if p.pending != "" {
		fmt.Fprintln(p.w, p.pending)
		p.pending = ""
	}
}
