// Package cli is lockbench's command line: a table of subcommands, each
// parsing its flags into options and calling a function that returns an
// error. Main alone turns errors into exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
	"github.com/lockbench/lockbench/internal/sandbox"
	_ "github.com/lockbench/lockbench/internal/sandbox/kinds" // every server kind, registered
	"github.com/lockbench/lockbench/plan"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1 // a runtime failure: unreachable server, missing binary
	ExitUsage       = 2
	ExitUnsafe      = 3 // a cell saw a mutual-exclusion violation
	ExitRegressed   = 4 // compare, benchcheck: a figure regressed past noise or its limit
	ExitSLO         = 5 // a cell missed a threshold of --slo
	ExitInterrupted = 130
)

// errUsage marks errors that are the caller's input.
var errUsage = engine.ErrUsage

// errUnsafe is returned by run when a cell saw a safety violation.
var errUnsafe = errors.New("mutual exclusion was violated")

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "run implementations × scenarios × client counts and write results", runCmd},
		{"suite", "run the standard benchmark's workloads over every row, into one bundle", suiteCmd},
		{"capacity", "find the highest rate at --slo and the best client count (USL fit), per implementation", capacityCmd},
		{"merge", "join the results of a sharded run's shards into one results directory", mergeCmd},
		{"report", "re-render tables, plots and report.html from a results directory", reportCmd},
		{"compare", "compare two results directories cell by cell, noise-aware", compareCmd},
		{"list", "list implementations and scenarios", listCmd},
		{"sandbox", "start the servers lockbench would start, print their addresses, wait for Ctrl-C", sandboxCmd},
		{"benchcheck", "compare two `go test -bench` outputs; exit 4 on a regression past a limit", benchcheckCmd},
		{"version", "print lockbench's version", versionCmd},
	}
}

// Main runs lockbench with args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	defer engine.StopWakeProbe()
	if len(args) == 0 {
		usage(stderr) // not asked for: a usage error
		return ExitUsage
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return ExitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return exitCode(c.run(ctx, args[1:], stdout, stderr), ctx, stderr)
		}
	}
	fmt.Fprintf(stderr, "lockbench: unknown command %q (try `lockbench help`)\n", args[0])
	return ExitUsage
}

func exitCode(err error, ctx context.Context, stderr io.Writer) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, pflag.ErrHelp):
		return ExitOK
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "lockbench:", oneLine(strings.TrimPrefix(err.Error(), errUsage.Error()+": ")))
		return ExitUsage
	case errors.Is(err, errRegressed):
		fmt.Fprintln(stderr, "lockbench:", oneLine(err.Error()))
		return ExitRegressed
	case errors.Is(err, errSLO):
		fmt.Fprintln(stderr, "lockbench:", oneLine(err.Error()))
		return ExitSLO
	case errors.Is(err, errUnsafe):
		fmt.Fprintln(stderr, "lockbench:", oneLine(err.Error()))
		return ExitUnsafe
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "lockbench: interrupted:", oneLine(err.Error()))
		return ExitInterrupted
	default:
		fmt.Fprintln(stderr, "lockbench:", oneLine(err.Error()))
		return ExitFailure
	}
}

// oneLine keeps the first line of a message: multi-line errors (a joined
// error, a server's log tail) would bury the point.
func oneLine(s string) string {
	// A library's multi-line error (pgx puts the cause on a line of its
	// own) is joined, not cut: the cause is what the user needs.
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.TrimPrefix(strings.Join(parts, " "), "lockbench: ")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "lockbench — benchmark and load generator for distributed locks")
	fmt.Fprintln(w, "\nUsage: lockbench <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun `lockbench <command> --help` for its flags.")
	fmt.Fprintln(w, "\nResults go to stdout (--format table|json|csv), progress and notes to stderr.")
	fmt.Fprintln(w, "Exit status: 0 ok, 1 runtime failure, 2 usage (also a file or directory named to be")
	fmt.Fprintln(w, "read that is missing or unreadable, in every command), 3 a mutual-exclusion violation,")
	fmt.Fprintln(w, "4 a regression (compare, benchcheck), 5 an SLO missed (--slo), 130 interrupted.")
}

// newFlags makes a command's flag set; --help prints its usage to help
// (stdout: asked-for help is output, exit 0), once.
func newFlags(name, synopsis string, help io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(help)
	fs.SortFlags = false
	fs.Usage = func() {
		fs.VisitAll(placeholder)
		fmt.Fprintf(fs.Output(), "Usage: lockbench %s\n\nFlags:\n%s", synopsis, fs.FlagUsages())
	}
	return fs
}

// placeholder names the value of a flag whose usage names none (no
// `WORD` in it) for what it is rather than for its Go type: N for a count,
// DURATION for a duration — a string flag too when its default is one —
// and for other strings the last word of the flag's name (MODE for
// --redlock-mode), so that every line of --help reads as a sentence.
func placeholder(f *pflag.Flag) {
	if _, done := f.Value.(named); done || strings.Contains(f.Usage, "`") {
		return
	}
	var name string
	switch f.Value.Type() {
	case "bool":
		return
	case "int", "int64", "uint", "uint64":
		name = "N"
	case "duration":
		name = "DURATION"
	case "float64":
		name = "NUMBER"
	default:
		// "0" parses as a duration too: a duration's default names its unit.
		if _, err := time.ParseDuration(f.DefValue); err == nil && strings.Trim(f.DefValue, "0123456789.-") != "" {
			name = "DURATION"
		} else {
			name = strings.ToUpper(f.Name[strings.LastIndexByte(f.Name, '-')+1:])
		}
	}
	f.Value = named{f.Value, name}
}

// named is a flag value that --help names as it says.
type named struct {
	pflag.Value
	name string
}

func (n named) Type() string { return n.name }

// parse parses flags and no positional argument; a bad flag is a usage
// error in one line.
func parse(fs *pflag.FlagSet, args []string) error {
	_, err := parsePositional(fs, args)
	return err
}

func versionCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "version", stdout)
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "lockbench", plan.Version)
	return nil
}

// rowNames is the registered implementations a user runs, sorted: not
// the tests' own drivers (test-…).
func rowNames() []string {
	var out []string
	for _, n := range impl.Names() {
		if !strings.HasPrefix(n, "test-") {
			out = append(out, n)
		}
	}
	return out
}

func listCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("list", "list [--names]", stdout)
	names := fs.Bool("names", false, "print only the implementations' names, one a line (for scripts)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *names {
		for _, n := range rowNames() {
			fmt.Fprintln(stdout, n)
		}
		return nil
	}
	width := 10
	for _, n := range impl.Names() {
		width = max(width, len(n))
	}
	fmt.Fprintln(stdout, "Implementations:")
	for _, n := range rowNames() {
		d, _ := impl.Lookup(n)
		fmt.Fprintf(stdout, "  %-*s %s\n", width, n, d.Description)
		fmt.Fprintf(stdout, "  %-*s is %s\n", width, "", d.About())
		if fs := engine.FaultsFor(d); len(fs) > 0 {
			fmt.Fprintf(stdout, "  %-*s faults: %s\n", width, "", strings.Join(fs, ", "))
		}
	}
	fmt.Fprintln(stdout, "\nScenarios:")
	for _, s := range engine.Scenarios() {
		fmt.Fprintf(stdout, "  %-*s %s\n", width, s.Name(), s.Description())
	}
	return nil
}

func sandboxCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sandbox", "sandbox [--KIND N …]   (naming a kind starts only the kinds named; naming none, every kind)", stdout)
	counts := map[string]*int{}
	for _, k := range sandbox.Kinds() {
		def, usage := sandboxDefault(k)
		counts[k.Name] = fs.Int(k.Flag, def, usage)
	}
	profile := fs.String("servers", string(sandbox.EnvOr(sandbox.DefaultProfile)),
		"`PROFILE` the servers run in: production (as their distributions ship them: synced, default JVM) or fast (nothing synced, quick JIT)")
	check := fs.Bool("check", false, "start nothing: print each server kind as installed or missing (and how to install it), exit 1 if any is missing")
	rows := fs.String("impl", "", "with --check: only the server kinds these rows (`NAMES`, comma-separated) need")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *rows != "" && !*check {
		return fmt.Errorf("%w: --impl goes with --check", errUsage)
	}
	if *check {
		kinds, err := kindsOf(*rows)
		if err != nil {
			return err
		}
		return checkInstalled(stdout, kinds)
	}
	p, err := sandbox.ParseProfile(*profile)
	if err != nil {
		return fmt.Errorf("%w: --servers: %q: want production or fast", errUsage, *profile)
	}
	ctx = sandbox.WithProfile(ctx, p)
	n := map[string]int{}
	for k, v := range counts {
		n[k] = *v
	}
	spec, err := sandboxSpec(n, fs.Changed)
	if err != nil {
		return err
	}
	f, err := startEach(ctx, spec, func(k sandbox.Kind) bool { return fs.Changed(k.Flag) }, stdout)
	if err != nil {
		return err
	}
	defer f.close()
	for _, k := range sandbox.Kinds() {
		for _, a := range f.all.Addrs(k.Name) {
			fmt.Fprintf(stdout, "# %-10s %s\n", k.Name, a)
		}
	}
	for _, n := range impl.Roles() {
		if addrs := plan.RoleAddrs(&f.all, n); len(addrs) > 0 {
			fmt.Fprintf(stdout, "%s=%s\n", impl.EnvName(n.Role), strings.Join(addrs, ","))
		}
	}
	fmt.Fprintln(stdout, "# up until Ctrl-C")
	<-ctx.Done()
	return nil
}

// sandboxSpec is what lockbench sandbox starts: counts by kind, from
// its flags; named says a kind's flag was given. Naming any kind starts
// only the kinds named (sandbox --redis 1 is one Redis, not one Redis
// beside every other kind's default, whose idle etcd and kube-apiserver
// would share the CPU with what is measured against the Redis); naming
// none starts every kind at its default.
func sandboxSpec(counts map[string]int, named func(flag string) bool) (sandbox.Spec, error) {
	some := false
	for _, k := range sandbox.Kinds() {
		some = some || named(k.Flag)
	}
	spec := sandbox.Spec{}
	for _, k := range sandbox.Kinds() {
		n := counts[k.Name]
		if some && !named(k.Flag) {
			n = 0
		}
		if k.CheckSize != nil && n > 0 {
			if err := k.CheckSize(n); err != nil {
				return nil, fmt.Errorf("%w: --%s: %v", errUsage, k.Flag, err)
			}
		} else if n < 0 || k.Ensemble && n == 2 {
			return nil, fmt.Errorf("%w: --%s must be ≥ 0 (an ensemble: 0, 1 or ≥ 3), got %d", errUsage, k.Flag, n)
		}
		spec[k.Name] = n
	}
	return spec, nil
}

// kindsOf is the server kinds the rows named need as they run by
// default; every kind when none are named.
func kindsOf(rows string) ([]sandbox.Kind, error) {
	all := sandbox.Kinds()
	if rows == "" {
		return all, nil
	}
	need := map[string]bool{}
	for _, name := range strings.Split(rows, ",") {
		d, ok := impl.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("%w: --impl: unknown implementation %q (lockbench list shows them)", errUsage, name)
		}
		for _, n := range d.Needs {
			need[n.Kind] = true
		}
	}
	var out []sandbox.Kind
	for _, k := range all {
		if need[k.Name] {
			out = append(out, k)
		}
	}
	return out, nil
}

// checkInstalled prints a line per server kind of kinds: "installed KIND"
// or "missing KIND: how to install it". scripts/install-servers reads it,
// so that the install step means by installed what the sandbox does.
func checkInstalled(stdout io.Writer, kinds []sandbox.Kind) error {
	var missing []string
	for _, k := range kinds {
		if err := sandbox.Installed(k.Name); err != nil {
			fmt.Fprintf(stdout, "missing %s: %v\n", k.Name, err)
			missing = append(missing, k.Name)
			continue
		}
		fmt.Fprintf(stdout, "installed %s\n", k.Name)
	}
	if len(missing) > 0 {
		return fmt.Errorf("lockbench: not installed: %s", strings.Join(missing, ", "))
	}
	return nil
}

// fleets are the sandboxes of several kinds, started one kind at a time;
// all holds every server, for looking addresses up.
type fleets struct {
	each []*sandbox.Fleet
	all  sandbox.Fleet
}

func (f *fleets) close() {
	for _, x := range f.each {
		x.Close()
	}
}

// startEach starts each kind of spec in a sandbox of its own. A kind that
// is not installed is skipped with a note when the user did not ask for it
// (asked(k) false) — the defaults start every kind lockbench knows — and
// is an error when they did.
func startEach(ctx context.Context, spec sandbox.Spec, asked func(sandbox.Kind) bool, stdout io.Writer) (*fleets, error) {
	f := &fleets{all: sandbox.Fleet{Servers: map[string][]*sandbox.Server{}}}
	for _, k := range sandbox.Kinds() {
		if spec[k.Name] == 0 {
			continue
		}
		x, err := sandbox.Start(ctx, sandbox.Spec{k.Name: spec[k.Name]})
		if errors.Is(err, sandbox.ErrMissing) && !asked(k) {
			fmt.Fprintf(stdout, "# %-10s skipped: %s\n", k.Name, oneLine(err.Error()))
			continue
		}
		if err != nil {
			f.close()
			return nil, err
		}
		f.each = append(f.each, x)
		f.all.Servers[k.Name] = x.Servers[k.Name]
	}
	return f, nil
}

// sandboxDefault is how many servers of kind k `lockbench sandbox` starts
// by default: enough for every role of that kind (five Redis masters), one
// server of an ensemble kind.
func sandboxDefault(k sandbox.Kind) (int, string) {
	n := max(k.Default, 1)
	var roles []string
	for _, need := range impl.Roles() {
		if need.Kind != k.Name {
			continue
		}
		roles = append(roles, "--"+need.Role)
		if !k.Ensemble {
			n = max(n, need.Count)
		}
	}
	serves := ""
	if len(roles) > 0 {
		serves = " (serves " + strings.Join(roles, ", ") + ")"
	}
	switch {
	case k.Ensemble && k.SizeUsage != "":
		return n, k.SizeUsage + "; 0 for none" + serves
	case k.Ensemble:
		return n, fmt.Sprintf("%s servers: 1 standalone, 3 an ensemble, 0 none%s", k.Name, serves)
	}
	return n, fmt.Sprintf("number of %s servers, 0 for none%s", k.Name, serves)
}

// percent reads a flag's "5%" as a fraction.
func percent(flag, v string) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("%w: --%s %q: want a percentage, e.g. 5%%", errUsage, flag, v)
	}
	return p / 100, nil
}
