package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// waitForFile waits until path holds something, failing after a while.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing written to %s", path)
		}
	}
}

// run runs the command to its end: exit code, stdout, stderr.
func (b *blackBox) run(args ...string) (int, string, string) {
	b.t.Helper()
	cmd := exec.Command(b.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// partialFields is what summary.json and meta.json say of a partial merge.
type partialFields struct {
	Partial *struct {
		Reason  string `json:"reason"`
		Shards  []int  `json:"incomplete_shards"`
		Missing []struct {
			Cell, Why string
		} `json:"missing_cells"`
	} `json:"partial"`
	Cells []struct{ Clients int } `json:"cells"`
}

func readPartial(t *testing.T, path string) partialFields {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p partialFields
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// A shard process killed in the second of two cells: merge refuses the
// set in one line naming the shard, its directory and the cell; merge
// --partial merges the first cell, which both shards finished, and every
// place the result is shown says it is partial and names the missing
// cell; compare and benchcheck refuse it. It runs beside the other
// killed-shard test (see TestMergeRefusesAShardKilledMidCell).
func TestPartialMergeOfAShardKilledMidCell(t *testing.T) {
	t.Parallel()
	b := newBlackBox(t)
	plan := []string{"--impl", "redis", "--clients", "2,4", "--duration", "3s", "--warmup", "0s"}
	live, waitLive := b.start(b.shardArgs("part", 0, 2, "10s", plan...)...)
	defer live.Process.Kill()
	args := b.shardArgs("part", 1, 2, "10s", plan...)
	dying, waitDying := b.start(args...)
	dead := args[slices.Index(args, "--out")+1]
	// The second cell's log holds its first second once that is flushed.
	waitForFile(t, filepath.Join(dead, "cells", "redis", "hot_c4.hlog.partial"))
	if err := dying.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitDying()
	code, stderr := waitLive()
	t.Logf("the living shard: exit %d: %s", code, strings.TrimSpace(stderr))
	shards := []string{filepath.Join(b.dir, "part-0"), dead}
	const missing = "impl=redis/scenario=hot/clients=4"

	refused := filepath.Join(b.dir, "refused")
	code, _, stderr = b.run(append([]string{"merge", "--out", refused}, shards...)...)
	if code != 1 || !strings.Contains(stderr, dead) || !strings.Contains(stderr, missing) || !strings.Contains(stderr, "--partial") ||
		strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("merge: exit %d, stderr %q; want 1 in one line naming %s, %s and --partial", code, stderr, dead, missing)
	}
	if _, err := os.Stat(filepath.Join(refused, "summary.json")); err == nil {
		t.Errorf("merge refused but wrote %s", filepath.Join(refused, "summary.json"))
	}
	t.Logf("merge: exit %d: %s", code, strings.TrimSpace(stderr))

	out := filepath.Join(b.dir, "merged")
	code, stdout, stderr := b.run(append([]string{"merge", "--partial", "--out", out}, shards...)...)
	t.Logf("merge --partial: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	if code != 0 || !strings.HasPrefix(stdout, "PARTIAL: ") || !strings.Contains(strings.SplitN(stdout, "\n", 2)[0], missing) ||
		!strings.Contains(stderr, "missing "+missing+": shard 1 stopped mid-cell") {
		t.Fatalf("merge --partial: exit %d; want 0, stdout opening with a PARTIAL line naming %s, stderr naming shard 1", code, missing)
	}
	for _, f := range []string{"summary.json", "meta.json"} {
		p := readPartial(t, filepath.Join(out, f))
		if p.Partial == nil || !slices.Equal(p.Partial.Shards, []int{1}) || len(p.Partial.Missing) != 1 ||
			p.Partial.Missing[0].Cell != missing || !strings.Contains(p.Partial.Missing[0].Why, filepath.Join("cells", "redis", "hot_c4.hlog.partial")) {
			t.Errorf("%s: partial = %+v; want shard 1 incomplete and %s missing, its unfinished log named", f, p.Partial, missing)
		}
		if f == "summary.json" && (len(p.Cells) != 1 || p.Cells[0].Clients != 2) {
			t.Errorf("summary.json: cells %+v; want the 2-client cell alone", p.Cells)
		}
	}
	checkPartialRendering(t, out, missing)

	code, stdout, _ = b.run("report", out)
	if code != 0 || !strings.HasPrefix(stdout, "PARTIAL: ") {
		t.Errorf("report: exit %d, stdout %q; want 0 opening with the PARTIAL line", code, stdout)
	}
	code, _, stderr = b.run("compare", out, out)
	if code != 1 || !strings.Contains(stderr, "partial") || !strings.Contains(stderr, missing) {
		t.Errorf("compare of a partial result: exit %d, stderr %q; want 1 naming it partial", code, stderr)
	}
	bench := filepath.Join(out, "bench.txt")
	code, _, stderr = b.run("benchcheck", bench, bench)
	if code != 1 || !strings.Contains(stderr, "partial results: "+bench) {
		t.Errorf("benchcheck of a partial result: exit %d, stderr %q; want 1 naming %s partial", code, stderr, bench)
	}
}

// checkPartialRendering reads the rendered files of a partial merge: each
// must say so where its figures are titled, and name the missing cell.
func checkPartialRendering(t *testing.T, out, missing string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	html := read("report.html")
	for _, want := range []string{"<title>PARTIAL — lockbench report", "PARTIAL results: not a whole run", missing,
		`<h2 id="results">PARTIAL — Results</h2>`, "PARTIAL — Verdict", "<h2>PARTIAL — Plots</h2>"} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if md := read("summary.md"); !strings.HasPrefix(md, "## PARTIAL — lockbench results") || !strings.Contains(md, missing) {
		t.Errorf("summary.md does not open with the PARTIAL heading naming %s:\n%.300s", missing, md)
	}
	if !strings.HasPrefix(read("bench.txt"), "lockbench-partial: PARTIAL: ") {
		t.Errorf("bench.txt does not open with its lockbench-partial line")
	}
	svgs, _ := filepath.Glob(filepath.Join(out, "plots", "*.svg"))
	if len(svgs) == 0 {
		t.Fatal("no plots rendered")
	}
	for _, p := range svgs {
		if b, _ := os.ReadFile(p); !bytes.Contains(b, []byte("PARTIAL")) {
			t.Errorf("%s: its title does not say PARTIAL", p)
		}
	}
}
