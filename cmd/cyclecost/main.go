// Command cyclecost counts the instructions a lock cycle costs, by part,
// from callgrind dumps of two programs running the same cycle: lockbench's
// redis row and the plain loop of cmd/redisloop, say. Instruction counts
// are exact where this machine's CPU time drifts by ±20 % and it has no
// hardware counters: a change to the per-cycle path shows in them to the
// instruction, though they leave out the kernel's share of a cycle and
// what a cache miss costs.
//
// Each program runs under callgrind with periodic dumps
// (--dump-every-bb); cyclecost keeps the dumps between the first and the
// last that hold cycles (those two partial), and divides each function's
// own instructions by the cycles counted in them: the calls to --cycle, a
// function called once a cycle in both programs.
//
//	cyclecost [--cycle FUNC] [--top N] SUBJECT_PREFIX BASE_PREFIX
//
// scripts/cycle-instructions runs both programs and this.
package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"
)

// defaultCycle is called once a cycle by the redis row and by redisloop
// --row: the release's EVALSHA.
const defaultCycle = "github.com/lockbench/lockbench/impl/redis.(*Conn).EvalSha"

var errUsage = errors.New("usage")

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cyclecost:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("cyclecost", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cycle := fs.String("cycle", defaultCycle, "a function called once a cycle in both programs")
	top := fs.Int("top", 25, "how many functions to list by their difference")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() != 2 || *top < 0 {
		return fmt.Errorf("%w: cyclecost [--cycle FUNC] [--top N] SUBJECT_PREFIX BASE_PREFIX", errUsage)
	}
	subject, err := steady(fs.Arg(0), *cycle)
	if err != nil {
		return err
	}
	base, err := steady(fs.Arg(1), *cycle)
	if err != nil {
		return err
	}
	return report(w, subject, base, *top)
}

// perCycle is a program's instructions a cycle, by function.
type perCycle struct {
	prefix string
	dumps  int
	cycles int64
	fn     map[string]float64
}

// steady reads the dumps prefix.1, prefix.2 … and returns the
// instructions a cycle over those between the first and the last that
// hold cycles, both left out (partial): a dump between them with no cycle
// in it (a collection, the per-second histogram work) counts, since its
// instructions are the cycles' cost too. Callgrind's final dump, at exit,
// has no number and is not read.
func steady(prefix, cycle string) (perCycle, error) {
	paths, err := dumps(prefix)
	if err != nil {
		return perCycle{}, err
	}
	ps := make([]profile, len(paths))
	first, last, with := -1, -1, 0
	for i, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return perCycle{}, err
		}
		ps[i], err = readDump(f)
		f.Close()
		if err != nil {
			return perCycle{}, fmt.Errorf("%s: %w", path, err)
		}
		if ps[i].calls[cycle] > 0 {
			if first < 0 {
				first = i
			}
			last = i
			with++
		}
	}
	if with < 3 {
		return perCycle{}, fmt.Errorf("%s: %d dumps with calls to %s, want 3 or more: dump more often (--dump-every-bb) or run longer",
			prefix, with, cycle)
	}
	sum := profile{self: map[string]int64{}, calls: map[string]int64{}}
	for _, p := range ps[first+1 : last] {
		sum.add(p)
	}
	pc := perCycle{prefix: prefix, dumps: last - first - 1, cycles: sum.calls[cycle], fn: map[string]float64{}}
	if pc.cycles == 0 {
		return perCycle{}, fmt.Errorf("%s: no calls to %s between the first and last dumps that hold some", prefix, cycle)
	}
	for fn, ir := range sum.self {
		pc.fn[fn] = float64(ir) / float64(pc.cycles)
	}
	return pc, nil
}

// dumps lists prefix.N in N's order: the files in prefix's directory named
// its base, a dot and a number.
func dumps(prefix string) ([]string, error) {
	dir, base := filepath.Dir(prefix), filepath.Base(prefix)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: no callgrind dumps: %w", prefix, err)
	}
	type dump struct {
		path string
		n    int
	}
	var ds []dump
	for _, e := range entries {
		num, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(num); err == nil && n > 0 && strconv.Itoa(n) == num {
			ds = append(ds, dump{filepath.Join(dir, e.Name()), n})
		}
	}
	if len(ds) == 0 {
		return nil, fmt.Errorf("%s: no callgrind dumps %s.1, %s.2 …", prefix, prefix, prefix)
	}
	slices.SortFunc(ds, func(a, b dump) int { return a.n - b.n })
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.path
	}
	return out, nil
}

// report prints each part's instructions a cycle for subject and base,
// and the functions whose counts differ most.
func report(w io.Writer, subject, base perCycle, top int) error {
	bw := &errWriter{w: w}
	bw.printf("instructions a cycle (callgrind Ir, user space only)\n")
	bw.printf("  subject %s: %d cycles in %d dumps\n  base    %s: %d cycles in %d dumps\n\n",
		subject.prefix, subject.cycles, subject.dumps, base.prefix, base.cycles, base.dumps)
	bypart := func(pc perCycle) map[string]float64 {
		m := map[string]float64{}
		for fn, v := range pc.fn {
			m[partOf(fn)] += v
		}
		return m
	}
	sp, bp := bypart(subject), bypart(base)
	names := make([]string, 0, len(parts)+1)
	for _, p := range parts {
		names = append(names, p.name)
	}
	names = append(names, "other")
	bw.printf("%-38s %9s %9s %11s\n", "part", "subject", "base", "difference")
	var st, bt float64
	for _, n := range names {
		st, bt = st+sp[n], bt+bp[n]
		if sp[n] == 0 && bp[n] == 0 {
			continue
		}
		bw.printf("%-38s %9.0f %9.0f %+11.0f\n", n, sp[n], bp[n], sp[n]-bp[n])
	}
	bw.printf("%-38s %9.0f %9.0f %+11.0f (%+.1f %%)\n", "total", st, bt, st-bt, 100*(st-bt)/bt)
	if top == 0 {
		return bw.err
	}
	fns := make([]string, 0, len(subject.fn)+len(base.fn))
	for fn := range subject.fn {
		fns = append(fns, fn)
	}
	for fn := range base.fn {
		if _, ok := subject.fn[fn]; !ok {
			fns = append(fns, fn)
		}
	}
	diff := func(fn string) float64 { return subject.fn[fn] - base.fn[fn] }
	slices.SortFunc(fns, func(a, b string) int {
		return cmp.Or(cmp.Compare(math.Abs(diff(b)), math.Abs(diff(a))), strings.Compare(a, b))
	})
	bw.printf("\nfunctions that differ most, Ir a cycle (difference, subject, base, part):\n")
	for _, fn := range fns[:min(top, len(fns))] {
		bw.printf("%+8.0f %8.0f %8.0f  %-30.30s %s\n", diff(fn), subject.fn[fn], base.fn[fn], partOf(fn), shortName(fn))
	}
	return bw.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
