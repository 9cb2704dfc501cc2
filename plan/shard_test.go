package plan_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/internal/serverkind"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
	"github.com/lockbench/lockbench/sandboxtest"
)

// shardBench is the lockbench command built once for a test, and the
// servers its shards share.
type shardBench struct {
	t       *testing.T
	bin     string
	servers []string // --role addrs flags
	dir     string
}

func newShardBench(t *testing.T) *shardBench {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command and runs shards as processes")
	}
	var needs []impl.Need
	for _, n := range impl.Roles() {
		if (n.Kind == serverkind.Redis || n.Kind == serverkind.ZooKeeper) && n.Count <= 1 {
			needs = append(needs, n)
		}
	}
	srv := sandboxtest.Start(t, needs...)
	dir := t.TempDir()
	b := &shardBench{t: t, bin: filepath.Join(dir, "lockbench"), dir: dir}
	if out, err := exec.Command("go", "build", "-o", b.bin, "../cmd/lockbench").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for role, addrs := range srv {
		b.servers = append(b.servers, "--"+role, strings.Join(addrs, ","))
	}
	return b
}

// run runs the command and returns its exit code and stderr.
func (b *shardBench) run(args ...string) (int, string) {
	cmd := exec.Command(b.bin, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stderr.String()
	}
	if err != nil {
		b.t.Fatal(err)
	}
	return 0, stderr.String()
}

// shards runs n shards of one plan as n processes at once and returns
// their results directories.
func (b *shardBench) shards(name string, n int, args ...string) []string {
	b.t.Helper()
	dirs := make([]string, n)
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := range n {
		dirs[i] = filepath.Join(b.dir, fmt.Sprintf("%s-%d", name, i))
		wg.Go(func() {
			a := append([]string{"run", "-q", "--shard", fmt.Sprintf("%d/%d", i, n), "--shard-wait", "60s",
				"--run-id", name, "--out", dirs[i]}, append(b.servers, args...)...)
			if code, stderr := b.run(a...); code != 0 {
				errs[i] = fmt.Sprintf("shard %d: exit %d: %s", i, code, stderr)
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			b.t.Fatal(e)
		}
	}
	return dirs
}

// merge merges dirs into a new directory and returns it with the merged
// summary.
func (b *shardBench) merge(name string, dirs ...string) (string, *result.Summary) {
	b.t.Helper()
	out := filepath.Join(b.dir, name)
	if code, stderr := b.run(append([]string{"merge", "--out", out}, dirs...)...); code != 0 {
		b.t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	sum, err := result.ReadSummary(filepath.Join(out, result.SummaryFile))
	if err != nil {
		b.t.Fatal(err)
	}
	return out, sum
}

// acquires is the total count of a cell's acquire histograms in dir's log.
func acquires(t *testing.T, dir string, c result.Cell) int64 {
	t.Helper()
	l, err := hlog.ReadCell(dir, c)
	if err != nil || l == nil {
		t.Fatalf("%s: no interval log for %s: %v", dir, c.Key(), err)
	}
	return l.Merged(result.TagAcquire).TotalCount()
}

// A burst split over four shard processes drains as in one process: the
// release wake-ups are exactly what theory says (n−1 for a predecessor
// watch, n(n−1)/2 for watching every change), and the servers' own watch
// triggers equal the clients' notifications, counted once.
func TestShardedBurstIsExact(t *testing.T) {
	b := newShardBench(t)
	const n, shards = 24, 4
	seen := map[int64]bool{}
	for _, name := range impl.Names() {
		d, _ := impl.Lookup(name)
		if d.Theory == nil || len(d.Needs) != 1 || d.Needs[0].Kind != serverkind.ZooKeeper {
			continue
		}
		// A hand-off that never met every shard's waiters settled would
		// wait out the settle timeout each time: the cell limit makes that
		// a quick failure (a cut-short cell) rather than a hung test.
		dirs := b.shards("burst-"+name, shards, "--impl", name, "--scenario", "burst", "--clients", fmt.Sprint(n), "--max-cell-time", "90s")
		out, sum := b.merge("merged-"+name, dirs...)
		if len(sum.Cells) != 1 {
			t.Fatalf("%s: %d merged cells, want 1", name, len(sum.Cells))
		}
		c := sum.Cells[0]
		if c.Truncated != "" {
			t.Errorf("%s: %s", name, c.Truncated)
		}
		want := d.Theory.BurstWakeups(n)
		seen[want] = true
		if c.ReleaseWakeups != want || c.Settle != "exact" || c.Acquires != n {
			t.Errorf("%s: %d release wake-ups over %d acquires (settle %s), want exactly %d over %d", name, c.ReleaseWakeups, c.Acquires, c.Settle, want, n)
		}
		if got := c.Server["watch_triggered"]; got != c.ServerCounts.Received() || got < want {
			t.Errorf("%s: servers triggered %d watches, clients counted %d notifications", name, got, c.ServerCounts.Received())
		}
		if c.SafetyViolations != 0 || c.Merge == nil || c.Merge.Grants != n || c.Fairness == nil || len(c.Fairness.PerClient) != n || c.Fairness.Starved != 0 {
			t.Errorf("%s: merged cell: %d violations, merge %+v, fairness %+v", name, c.SafetyViolations, c.Merge, c.Fairness)
		}
		if got := acquires(t, out, c); got != n {
			t.Errorf("%s: merged acquire histograms hold %d values, want %d", name, got, n)
		}
	}
	if !seen[n-1] || !seen[n*(n-1)/2] {
		t.Errorf("theories covered: %v; want both n−1 and n(n−1)/2", seen)
	}
}

// A hot cell over four shards merges losslessly: the merged histograms
// hold every shard's values, the report renders and parses, and merge
// refuses a shard of another plan and a missing one, in one line each.
func TestShardedHotMergesAndRefuses(t *testing.T) {
	b := newShardBench(t)
	args := []string{"--impl", "redis", "--clients", "8", "--duration", "1s", "--warmup", "0s"}
	dirs := b.shards("hot", 4, args...)
	out, sum := b.merge("merged-hot", dirs...)
	c := sum.Cells[0]
	var shardTotal, shardAcq int64
	for _, d := range dirs {
		s, err := result.ReadSummary(filepath.Join(d, result.SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		shardTotal += acquires(t, d, s.Cells[0])
		shardAcq += s.Cells[0].Acquires
	}
	if got := acquires(t, out, c); got != shardTotal || got != c.Acquires || c.Acquires != shardAcq || got == 0 {
		t.Errorf("merged histograms hold %d acquisitions, shards' %d; merged cell says %d, shards' cells %d", got, shardTotal, c.Acquires, shardAcq)
	}
	if c.SafetyViolations != 0 || c.Merge.Grants != c.Acquires {
		t.Errorf("safety over all shards: %d violations, %d grants checked for %d acquisitions", c.SafetyViolations, c.Merge.Grants, c.Acquires)
	}
	checkHTML(t, filepath.Join(out, "report.html"), filepath.ToSlash(result.CellRel(out, c, result.HgrmExt)))
	meta, err := result.ReadMeta(filepath.Join(out, result.MetaFile))
	if err != nil || len(meta.Shards) != 4 || meta.Shards[1].Skew == nil {
		t.Errorf("merged meta.json: shards %+v, err %v", meta.Shards, err)
	}

	// A shard whose partner never comes gives up within --shard-wait,
	// naming it, with the runtime-failure status.
	code, stderr := b.run(append([]string{"run", "-q", "--shard", "0/2", "--shard-wait", "1s", "--run-id", "alone",
		"--out", filepath.Join(b.dir, "alone")}, append(b.servers, args...)...)...)
	if code != 1 || !strings.Contains(stderr, "shard 1/2 did not arrive within 1s") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("a shard alone: exit %d, stderr %q; want 1 and one line naming shard 1/2", code, stderr)
	}

	other := b.shards("other", 1, "--impl", "redis", "--clients", "4", "--duration", "1s", "--warmup", "0s")
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"another plan", []string{dirs[0], dirs[1], dirs[2], other[0]}, "not shards of one run: plan hash"},
		{"missing", dirs[:3], "shard 3/4 is missing"},
		{"twice", []string{dirs[0], dirs[1], dirs[2], dirs[2]}, "shard 2/4 is given twice"},
	} {
		code, stderr := b.run(append([]string{"merge", "--out", filepath.Join(b.dir, "refused-"+strings.ReplaceAll(tc.name, " ", "-"))}, tc.dirs...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", tc.name, code, stderr, tc.want)
		}
	}
}

// checkHTML parses path as HTML and wants text in it.
func checkHTML(t *testing.T, path, text string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s does not parse: %v", path, err)
		}
	}
	if !bytes.Contains(b, []byte(text)) {
		t.Errorf("%s does not mention %s", path, text)
	}
}

// A shard records --slo but does not judge it on its slice of the
// clients: shards of a plan whose SLO no cell can meet exit 0, saying so,
// and the merge judges the merged cells, exiting 5 with slo_met false.
func TestShardedSLOIsJudgedByTheMerge(t *testing.T) {
	b := newShardBench(t)
	dirs := make([]string, 2)
	codes, stderrs := make([]int, 2), make([]string, 2)
	var wg sync.WaitGroup
	for i := range dirs {
		dirs[i] = filepath.Join(b.dir, fmt.Sprintf("slo-%d", i))
		wg.Go(func() {
			codes[i], stderrs[i] = b.run(append([]string{"run", "-q", "--shard", fmt.Sprintf("%d/2", i), "--shard-wait", "60s",
				"--run-id", "slo", "--out", dirs[i], "--impl", "redis", "--clients", "4", "--duration", "1s", "--warmup", "0s",
				"--slo", "p99<=1us"}, b.servers...)...)
		})
	}
	wg.Wait()
	for i := range dirs {
		sum, err := result.ReadSummary(filepath.Join(dirs[i], result.SummaryFile))
		if codes[i] != 0 || !strings.Contains(stderrs[i], "does not judge") || err != nil || sum.SLOMet != nil || sum.SLO == "" {
			t.Fatalf("shard %d: exit %d, stderr %q, summary %+v (%v); want 0, a note, the SLO recorded and not judged", i, codes[i], stderrs[i], sum, err)
		}
	}
	out := filepath.Join(b.dir, "merged-slo")
	code, stderr := b.run("merge", "--out", out, dirs[0], dirs[1])
	sum, err := result.ReadSummary(filepath.Join(out, result.SummaryFile))
	if code != 5 || err != nil || sum.SLOMet == nil || *sum.SLOMet || len(sum.SLOBreaches) == 0 || !strings.Contains(stderr, "p99<=1us") {
		t.Errorf("merge: exit %d, stderr %q, summary %+v (%v); want 5 and the breach", code, stderr, sum, err)
	}
}

// The same plan run again at once, under its default run id (from the
// plan's hash), meets under the keys of the run before while they still
// live: every shard of each rerun meets its partners and finishes. Shard
// 1 of a rerun comes late, so that shard 0 finds the run before's shard
// 1's ready key first.
func TestShardedRerunMeetsAtOnce(t *testing.T) {
	b := newShardBench(t)
	// A lock on ZooKeeper meets on Redis, whose ready keys outlive their
	// shard by a TTL (ZooKeeper's ephemeral nodes go with the session).
	var zkLock string
	for _, name := range impl.Names() {
		if d, _ := impl.Lookup(name); len(d.Needs) == 1 && d.Needs[0].Kind == serverkind.ZooKeeper {
			zkLock = name
			break
		}
	}
	for run := range 3 {
		codes, stderrs := make([]int, 2), make([]string, 2)
		var wg sync.WaitGroup
		for i := range 2 {
			out := filepath.Join(b.dir, fmt.Sprintf("rerun%d-%d", run, i))
			if i == 1 && run > 0 {
				first := filepath.Join(b.dir, fmt.Sprintf("rerun%d-0", run), result.MetaFile)
				for n := 0; n < 200; n++ {
					if _, err := os.Stat(first); err == nil {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				time.Sleep(time.Second)
			}
			wg.Go(func() {
				codes[i], stderrs[i] = b.run(append([]string{"run", "-q", "--shard", fmt.Sprintf("%d/2", i), "--shard-wait", "15s",
					"--out", out, "--impl", zkLock, "--clients", "4", "--duration", "300ms", "--warmup", "0s"}, b.servers...)...)
			})
		}
		wg.Wait()
		for i := range 2 {
			if codes[i] != 0 {
				t.Fatalf("run %d, shard %d: exit %d: %s", run, i, codes[i], stderrs[i])
			}
		}
	}
}
