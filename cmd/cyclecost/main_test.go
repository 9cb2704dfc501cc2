package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// dumpText is a callgrind dump in the form callgrind writes: compressed
// names, a call's inclusive cost on the line after calls=, relative
// positions, and a recursion suffix. cycles calls of the cycle function
// from the loop; the loop costs loopIr a call of its own, and the cycle
// function cycleIr.
func dumpText(cycles, loopIr, cycleIr int) string {
	return fmt.Sprintf(`# callgrind format
version: 1
positions: line
events: Ir
summary: 999

ob=(1) /tmp/lockbench
fl=(1) /work/engine/worker.go
fn=(1) github.com/lockbench/lockbench/engine.(*Cell).HoldAndRelease
10 %d
+2 %d
cfl=(2) /work/impl/redis/conn.go
cfn=(2) github.com/lockbench/lockbench/impl/redis.(*Conn).EvalSha
calls=%d +3
* 1000000

fl=(2)
fn=(2)
5 %d
fn=(3) runtime.mcall'2
7 %d
`, cycles*loopIr/2, cycles*loopIr-cycles*loopIr/2, cycles, cycles*cycleIr, cycles)
}

func TestReadDump(t *testing.T) {
	p, err := readDump(strings.NewReader(dumpText(100, 30, 7)))
	if err != nil {
		t.Fatal(err)
	}
	hold := "github.com/lockbench/lockbench/engine.(*Cell).HoldAndRelease"
	eval := "github.com/lockbench/lockbench/impl/redis.(*Conn).EvalSha"
	// The call's inclusive 1,000,000 is EvalSha's, not HoldAndRelease's.
	if got := p.self[hold]; got != 3000 {
		t.Errorf("HoldAndRelease's own Ir %d, want 3000", got)
	}
	if got := p.self[eval]; got != 700 {
		t.Errorf("EvalSha's own Ir (a compressed name used again) %d, want 700", got)
	}
	if got := p.self["runtime.mcall"]; got != 100 {
		t.Errorf("runtime.mcall (recursion suffix dropped) %d, want 100; have %v", got, p.self)
	}
	if got := p.calls[eval]; got != 100 {
		t.Errorf("calls to EvalSha %d, want 100", got)
	}
}

func TestReadDumpRefusesOtherEvents(t *testing.T) {
	_, err := readDump(strings.NewReader("events: Dr Ir\nfn=(1) f\n1 2 3\n"))
	if err == nil || !strings.Contains(err.Error(), "want Ir first") {
		t.Fatalf("a dump whose first event is not Ir: %v", err)
	}
	// With instruction addresses too, the second word is a line, not Ir.
	_, err = readDump(strings.NewReader("positions: instr line\nevents: Ir\nfn=(1) f\n0x4 12 3\n"))
	if err == nil || !strings.Contains(err.Error(), "positions by line alone") {
		t.Fatalf("a dump with positions by instruction and line: %v", err)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeDumps writes prefix.1 … with the given cycles in each.
func writeDumps(t *testing.T, prefix string, cycles []int, loopIr, cycleIr int) {
	t.Helper()
	for i, n := range cycles {
		writeFile(t, prefix+"."+strconv.Itoa(i+1), dumpText(n, loopIr, cycleIr))
	}
}

// The per-cycle figures come from the dumps taken while cycles ran, less
// the first and the last: a start-up dump and partial ones at either end
// are left out, whatever they hold.
func TestSteadyLeavesOutTheEnds(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // a prefix as a user types it, ./ and all
	lb, row := "./lb.cg", "row.cg"
	// lb: a dump before any cycle, a partial first, seven steady at 40
	// Ir of loop a cycle and one between them with no cycle, a partial
	// last. Dump 11 sorts after 9, not after 1.
	writeDumps(t, lb, []int{0, 3, 1000, 1000, 1000, 0, 1000, 1000, 1000, 1000, 5}, 40, 10)
	// Ends that would move the average were they counted.
	for _, n := range []int{2, 11} {
		writeFile(t, fmt.Sprintf("%s.%d", lb, n), dumpText(3, 100000, 10))
	}
	// The cycle-less dump between: 7,000 Ir of per-second histogram work,
	// one a cycle over the 7,000 cycles around it.
	writeFile(t, lb+".6", "events: Ir\nfn=(1) github.com/HdrHistogram/hdrhistogram-go.(*Histogram).Max\n3 7000\n")
	writeDumps(t, row, []int{7, 500, 500, 9}, 0, 8)
	writeFile(t, lb+".notadump", "x")
	writeFile(t, lb+".07", dumpText(3, 100000, 10)) // not a number callgrind writes

	var out bytes.Buffer
	if err := run([]string{"--top", "3", lb, row}, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.Contains(text, "7000 cycles in 8 dumps") || !strings.Contains(text, "1000 cycles in 2 dumps") {
		t.Errorf("cycles and dumps counted:\n%s", text)
	}
	// engine 40 against 0, driver 10 against 8, the histograms' dump 1
	// against 0, the runtime 1 against 1: total 52 against 9.
	want := map[string][2]float64{
		"engine (loop, scenarios, draws)":     {40, 0},
		"lock driver (impl/redis)":            {10, 8},
		"runtime: scheduler, timers, netpoll": {1, 1},
		"histograms and interval logs":        {1, 0},
		"total":                               {52, 9},
	}
	for part, v := range want {
		re := regexp.MustCompile(regexp.QuoteMeta(part) + `\s+(\d+)\s+(\d+)\s+([+-]\d+)`)
		m := re.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("no line for %q in:\n%s", part, text)
			continue
		}
		s, _ := strconv.ParseFloat(m[1], 64)
		b, _ := strconv.ParseFloat(m[2], 64)
		d, _ := strconv.ParseFloat(m[3], 64)
		if s != v[0] || b != v[1] || d != v[0]-v[1] {
			t.Errorf("%s: %v %v %v, want %v %v %v", part, s, b, d, v[0], v[1], v[0]-v[1])
		}
	}
	// The function that differs most is listed first.
	if i, j := strings.Index(text, "engine.(*Cell).HoldAndRelease"), strings.Index(text, "impl/redis.(*Conn).EvalSha"); i < 0 || j < 0 || i > j {
		t.Errorf("functions not in order of their difference:\n%s", text)
	}
}

func TestUsageAndMissingDumps(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{}, {"a"}, {"--top", "-1", "a", "b"}, {"--nosuch", "a", "b"}} {
		if err := run(args, new(bytes.Buffer)); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	lb := filepath.Join(dir, "lb.cg")
	err := run([]string{lb, lb}, new(bytes.Buffer))
	if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "no callgrind dumps") {
		t.Errorf("no dumps: %v", err)
	}
	// Two dumps with cycles leave nothing steady between them.
	writeDumps(t, lb, []int{10, 10}, 1, 1)
	if err := run([]string{lb, lb}, new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "want 3 or more") {
		t.Errorf("too few dumps: %v", err)
	}
}

// Each part takes what it names, and the first part that matches counts.
func TestPartOf(t *testing.T) {
	for fn, want := range map[string]string{
		"github.com/lockbench/lockbench/engine.(*Client).recordOp":    "history",
		"github.com/lockbench/lockbench/engine.(*Client).Record":      "engine (loop, scenarios, draws)",
		"github.com/lockbench/lockbench/scenarios.loop":               "engine (loop, scenarios, draws)",
		"github.com/lockbench/lockbench/exclusion.(*Checker).Enter":   "exclusion checker",
		"github.com/lockbench/lockbench/impl/redis.(*Locker).Acquire": "lock driver (impl/redis)",
		"github.com/HdrHistogram/hdrhistogram-go.(*Histogram).Max":    "histograms and interval logs",
		"time.Time.Sub":                     "clock reads and time arithmetic",
		"runtime.nanotime1.abi0":            "clock reads and time arithmetic",
		"runtime.mallocgcSmallScanNoHeader": "runtime: allocation",
		"runtime.scanObjectsSmall":          "runtime: garbage collection",
		"runtime.findRunnable":              "runtime: scheduler, timers, netpoll",
		"runtime.pcvalue":                   "runtime: other",
		"main.(*goRedis).cycle":             "the plain loop (cmd/redisloop)",
		"image/png.filter":                  "other",
	} {
		if got := partOf(fn); got != want {
			t.Errorf("partOf(%s) = %q, want %q", fn, got, want)
		}
	}
}
