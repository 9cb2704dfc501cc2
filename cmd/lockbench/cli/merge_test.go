package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// fakeShards writes the meta.json and summary.json of n shards of one
// run, one cell each, and returns their directories.
func fakeShards(t *testing.T, n int) []string {
	t.Helper()
	var dirs []string
	for i := range n {
		d := filepath.Join(t.TempDir(), fmt.Sprintf("shard-%d", i))
		os.MkdirAll(d, 0o755)
		meta := fmt.Sprintf(`{"lockbench_version":"x","seed":1,"impls":["redis"],"scenarios":["hot"],"clients":[4],"plan_hash":"h","shard":{"index":%d,"count":%d,"run_id":"r"}}`, i, n)
		sum := fmt.Sprintf(`{"schema":%d,"lockbench_version":"x","cells":[{"impl":"redis","scenario":"hot","clients":4}]}`, result.SchemaVersion)
		os.WriteFile(filepath.Join(d, result.MetaFile), []byte(meta), 0o644)
		os.WriteFile(filepath.Join(d, result.SummaryFile), []byte(sum), 0o644)
		c := result.Cell{Impl: "redis", Scenario: "hot", Clients: 4}
		if err := hlog.WriteCell(d, c, time.Unix(1e9, 0), nil, "test"); err != nil {
			t.Fatal(err)
		}
		g, err := result.CreateGrants(d, c)
		if err != nil {
			t.Fatal(err)
		}
		g.Close()
		dirs = append(dirs, d)
	}
	return dirs
}

// An interrupted merge ends with the context's error (exit 130) and
// leaves no partial results: the directory it made is gone, and a
// directory the user made is left empty.
func TestMergeHonoursInterrupt(t *testing.T) {
	shards := fakeShards(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, made := range map[string]bool{"new dir": false, "user's empty dir": true} {
		out := filepath.Join(t.TempDir(), "merged")
		if made {
			os.Mkdir(out, 0o755)
		}
		var o, e bytes.Buffer
		err := mergeCmd(ctx, append([]string{"--out", out}, shards...), &o, &e)
		if !errors.Is(err, context.Canceled) || exitCode(err, ctx, &e) != ExitInterrupted {
			t.Errorf("%s: merge under a cancelled context: %v; want it interrupted (exit %d)", name, err, ExitInterrupted)
		}
		ents, statErr := os.ReadDir(out)
		switch {
		case made && (statErr != nil || len(ents) > 0):
			t.Errorf("%s: the user's directory after the interrupt: %v, %v; want it there and empty", name, ents, statErr)
		case !made && !errors.Is(statErr, os.ErrNotExist):
			t.Errorf("%s: the merge's own directory is left after the interrupt: %v", name, ents)
		}
	}
}

// report and compare, too, end on an interrupt (exit 130) rather than
// finish as if it had not come.
func TestReportAndCompareHonourInterrupt(t *testing.T) {
	dir := fakeShards(t, 1)[0]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, f := range map[string]func() error{
		"report":  func() error { return reportCmd(ctx, []string{dir}, &bytes.Buffer{}, &bytes.Buffer{}) },
		"compare": func() error { return compareCmd(ctx, []string{dir, dir}, &bytes.Buffer{}, &bytes.Buffer{}) },
	} {
		if err := f(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s under a cancelled context: %v; want it interrupted", name, err)
		}
	}
}

// merge's stdout carries only the result — the table, or summary.json
// with --format json — and its notes (the safety check, the files
// written) go to stderr, as run's do.
func TestMergeStdoutIsTheResult(t *testing.T) {
	shards := fakeShards(t, 2)
	var o, e bytes.Buffer
	if err := mergeCmd(context.Background(), append([]string{"--out", filepath.Join(t.TempDir(), "m")}, shards...), &o, &e); err != nil {
		t.Fatalf("merge: %v; stderr %q", err, e.String())
	}
	for _, note := range []string{"grants checked", "report:", "results:"} {
		if bytes.Contains(o.Bytes(), []byte(note)) || !bytes.Contains(e.Bytes(), []byte(note)) {
			t.Errorf("note %q: want it on stderr only; stdout %q, stderr %q", note, o.String(), e.String())
		}
	}
	o.Reset()
	e.Reset()
	if err := mergeCmd(context.Background(), append([]string{"--format", "json", "--out", filepath.Join(t.TempDir(), "m")}, shards...), &o, &e); err != nil {
		t.Fatalf("merge --format json: %v; stderr %q", err, e.String())
	}
	var sum result.Summary
	if err := json.Unmarshal(o.Bytes(), &sum); err != nil || len(sum.Cells) != 1 {
		t.Errorf("merge --format json: stdout is not the summary (%v): %q", err, o.String())
	}
}

// merge --out naming one of its inputs is refused in one line before
// anything is cleared: --force would delete the shard being merged.
func TestMergeRefusesAnInputAsOut(t *testing.T) {
	shards := fakeShards(t, 2)
	for _, out := range []string{shards[1], shards[1] + "/", filepath.Join(shards[1], "..", filepath.Base(shards[1]))} {
		code, _, stderr := run(append([]string{"merge", "--force", "--out", out}, shards...)...)
		if code != ExitUsage || !strings.Contains(stderr, "is one of the shards") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("merge --out %s: exit %d, stderr %q; want %d and one line", out, code, stderr, ExitUsage)
		}
		if _, err := os.Stat(filepath.Join(shards[1], result.MetaFile)); err != nil {
			t.Fatalf("merge --out %s cleared the shard: %v", out, err)
		}
	}
}

// A shard directory that is not there, or holds no results, is named in
// one usage line, not as a failure to open a file inside it.
func TestMergeNamesAMissingShard(t *testing.T) {
	shards := fakeShards(t, 1)
	missing := filepath.Join(t.TempDir(), "nosuchdir")
	code, _, stderr := run("merge", "--out", filepath.Join(t.TempDir(), "m"), shards[0], missing)
	want := "lockbench: merge: " + missing + " is not a results directory (no meta.json)\n"
	if code != ExitUsage || stderr != want {
		t.Errorf("merge of a missing shard: exit %d, stderr %q; want %d, %q", code, stderr, ExitUsage, want)
	}
}
