package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
	Elapsed    float64 // seconds, on a test's pass or fail
}

// summary is the state of one read: each running test's output, kept
// until the test ends, and the skips so far.
type summary struct {
	w       io.Writer
	running map[string][]string // package + " " + test → output lines
	skipped int
	failed  bool
	// ci fails a skip that is not on the allowed list; strays are those.
	ci     bool
	strays int
	// slow are the top-level tests that took longest, for keeping CI
	// within its time.
	slow []timed
}

// timed is a test and the seconds it took.
type timed struct {
	name string
	s    float64
}

// slowShown is how many of the slowest tests close names.
const slowShown = 10

func newSummary(w io.Writer, ci bool) *summary {
	return &summary{w: w, running: map[string][]string{}, ci: ci}
}

// read handles every line of r; a line that is not an event (go's own
// messages before the tests start) is copied as it is.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(s.w, sc.Text())
			continue
		}
		s.handle(e)
	}
	return sc.Err()
}

func (s *summary) handle(e event) {
	key := e.Package + " " + e.Test
	switch {
	case e.Action == "build-output":
		io.WriteString(s.w, e.Output)
	case e.Action == "build-fail":
		s.failed = true
	case e.Test == "" && e.Action == "output":
		io.WriteString(s.w, e.Output) // the package's own lines: ok, FAIL, panics outside a test
	case e.Test == "" && e.Action == "skip":
		// A package without tests: go test's own "?" line says so.
	case e.Test == "" && e.Action == "fail":
		s.failed = true
		s.flush(e.Package) // tests cut off by a panic or a timeout
	case e.Action == "output":
		s.running[key] = append(s.running[key], e.Output)
	case e.Action == "skip":
		s.skipped++
		why := reason(s.running[key])
		fmt.Fprintf(s.w, "SKIP %s %s: %s\n", e.Package, e.Test, why)
		if s.ci && !allowedSkip(key, why) {
			s.strays++
			s.failed = true
			fmt.Fprintf(s.w, "FAIL %s %s: skipped with CI set, and the skip is not on the allowed list (cmd/testsummary/allow.go, docs/ci.md)\n", e.Package, e.Test)
		}
		delete(s.running, key)
	case e.Action == "fail":
		s.failed = true
		io.WriteString(s.w, strings.Join(s.running[key], ""))
		delete(s.running, key)
	case e.Action == "pass":
		delete(s.running, key)
	}
	if (e.Action == "pass" || e.Action == "fail") && e.Test != "" && !strings.Contains(e.Test, "/") {
		s.slow = append(s.slow, timed{e.Package + " " + e.Test, e.Elapsed})
	}
}

// flush writes the output of the package's tests that never ended.
func (s *summary) flush(pkg string) {
	for key, out := range s.running {
		if strings.HasPrefix(key, pkg+" ") {
			io.WriteString(s.w, strings.Join(out, ""))
			delete(s.running, key)
		}
	}
}

// close writes the count of skipped tests.
func (s *summary) close() {
	fmt.Fprintf(s.w, "testsummary: %d tests skipped (each listed above as SKIP, with its reason)\n", s.skipped)
	if s.strays > 0 {
		fmt.Fprintf(s.w, "testsummary: %d of them not on the allowed list with CI set: each failed the run\n", s.strays)
	}
	slices.SortStableFunc(s.slow, func(a, b timed) int { return cmp.Compare(b.s, a.s) })
	if len(s.slow) > 0 {
		fmt.Fprintf(s.w, "testsummary: the %d slowest tests (seconds, tests in parallel overlap):\n", min(slowShown, len(s.slow)))
	}
	for _, t := range s.slow[:min(slowShown, len(s.slow))] {
		fmt.Fprintf(s.w, "  %6.1f %s\n", t.s, t.name)
	}
}

// reason is what a skipped test said: its log lines, without go test's
// own === and --- lines and the file:line prefixes.
func reason(out []string) string {
	var parts []string
	for _, l := range out {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if i := strings.Index(l, ": "); i > 0 && strings.Contains(l[:i], ".go:") {
			l = l[i+2:]
		}
		parts = append(parts, l)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " / ")
}
