package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// splitRun is one set of acquire latencies, interval by interval, dealt at
// random to the shards of a run: what merge must put back together.
type splitRun struct {
	whole  []*hdrhistogram.Histogram   // per interval, every value
	shards [][]*hdrhistogram.Histogram // per shard, per interval, its share
	total  *hdrhistogram.Histogram     // every value of every interval
}

// newSplitRun draws perInterval values for each of intervals intervals,
// spread over three decades (50µs to 500ms) so that they fall in many
// buckets, and deals each to a random one of n shards.
func newSplitRun(seed uint64, n, intervals, perInterval int) splitRun {
	r := rand.New(rand.NewPCG(seed, seed+1))
	s := splitRun{total: result.NewHistogram(), shards: make([][]*hdrhistogram.Histogram, n)}
	for range intervals {
		w := result.NewHistogram()
		for i := range s.shards {
			s.shards[i] = append(s.shards[i], result.NewHistogram())
		}
		for range perInterval {
			v := int64(50 * math.Pow(10, 4*r.Float64()))
			w.RecordValue(v)
			s.total.RecordValue(v)
			s.shards[r.IntN(n)][len(s.whole)].RecordValue(v)
		}
		s.whole = append(s.whole, w)
	}
	return s
}

// writeSplitShard writes shard i's directory as a shard process would:
// meta.json with its clock skew, summary.json with its slice of the cell,
// the interval log in its own clock, and its grants.
func writeSplitShard(t *testing.T, dir string, s splitRun, i int, started time.Time, skewMs int64, grants []result.Grant) {
	t.Helper()
	n := len(s.shards)
	meta := result.Meta{Version: "test", Started: started, Seed: 1, PlanHash: "split", Shard: &result.ShardMeta{
		Index: i, Count: n, RunID: "split", Skew: &result.Skew{OffsetUs: float64(skewMs) * 1000, BoundUs: 50, Against: "redis", Samples: 5}}}
	var acquires int64
	var ivs []hlog.Interval
	local := started.Add(-time.Duration(skewMs) * time.Millisecond) // server time = local + skew
	for k, h := range s.shards[i] {
		acquires += h.TotalCount()
		ivs = append(ivs, hlog.Interval{Start: local.Add(time.Duration(k) * time.Second), Acquire: h})
	}
	c := result.Cell{Impl: "redis", Scenario: "hot", Clients: n, Locks: 1, DurationS: float64(len(ivs)),
		Acquires: acquires, AcquiresPerS: float64(acquires) / float64(len(ivs)),
		Shard: &result.CellShard{Index: i, Count: n, First: i, Clients: 1}}
	sum := result.Summary{Schema: result.SchemaVersion, Version: "test", Started: started, Cells: []result.Cell{c}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{result.MetaFile: meta, result.SummaryFile: sum} {
		if err := result.WriteJSON(filepath.Join(dir, name), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := hlog.WriteCell(dir, c, local, ivs, "test"); err != nil {
		t.Fatal(err)
	}
	g, err := result.CreateGrants(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	for j := range grants { // grants are given in server time; the shard wrote its own
		grants[j].Enter -= skewMs * 1e6
		grants[j].Exit -= skewMs * 1e6
	}
	g.Write(grants)
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

// Merge equals one run: values split at random over three shards — one
// of them 700 ms behind the servers' clock, so that its intervals would
// land one early without its skew — merge into interval histograms equal,
// bucket for bucket, to those of the whole set, and so into the same
// percentiles. Grants that overlap in server time across two shards are a
// violation (exit 3); grants that overlap only in one shard's local clock
// are not.
func TestMergeEqualsOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "lockbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	const shards, intervals, perInterval = 3, 4, 5000
	s := newSplitRun(29, shards, intervals, perInterval)
	started := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	t0 := started.UnixNano()
	ms := int64(time.Millisecond)
	// In server time, shard 0 holds lock 0 from 100 to 110 ms and shard 2
	// from 105 to 115 ms: an overlap of 5 ms, far past the 100 µs of
	// their skew bounds. Shard 1 holds lock 1 from 2000 to 2010 ms and
	// shard 2 from 2700 to 2710 ms — which shard 2, 700 ms behind, wrote
	// as 2000 to 2010 ms: an overlap on paper only.
	grants := [][]result.Grant{
		{{Enter: t0 + 100*ms, Exit: t0 + 110*ms, Lock: 0, Client: 0}},
		{{Enter: t0 + 2000*ms, Exit: t0 + 2010*ms, Lock: 1, Client: 1}},
		{{Enter: t0 + 105*ms, Exit: t0 + 115*ms, Lock: 0, Client: 2}, {Enter: t0 + 2700*ms, Exit: t0 + 2710*ms, Lock: 1, Client: 2}},
	}
	var dirs []string
	for i := range shards {
		d := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		skew := int64(0)
		if i == 2 {
			skew = 700
		}
		writeSplitShard(t, d, s, i, started, skew, grants[i])
		dirs = append(dirs, d)
	}
	out := filepath.Join(dir, "merged")
	cmd := exec.Command(bin, append([]string{"merge", "--out", out}, dirs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Fatalf("merge: exit %d, want 3 (one violation across shards): %s", code, stderr.String())
	}
	checkMergedLog(t, out, s)
	checkMergedSummary(t, out, s)
}

// checkMergedLog compares the merged interval log with the whole set's.
func checkMergedLog(t *testing.T, out string, s splitRun) {
	t.Helper()
	c := result.Cell{Impl: "redis", Scenario: "hot", Clients: len(s.shards)}
	l, err := hlog.Read(result.CellPath(out, c, result.HlogExt))
	if err != nil {
		t.Fatal(err)
	}
	got := l.Tagged(result.TagAcquire)
	slices.SortFunc(got, func(a, b *hdrhistogram.Histogram) int { return int(a.StartTimeMs() - b.StartTimeMs()) })
	if len(got) != len(s.whole) {
		t.Fatalf("merged log has %d acquire intervals, want %d", len(got), len(s.whole))
	}
	for k, h := range got {
		if !h.Equals(s.whole[k]) {
			t.Errorf("interval %d: merged %d values (p50 %d, p99 %d, max %d), whole set %d (p50 %d, p99 %d, max %d): buckets differ",
				k, h.TotalCount(), h.ValueAtQuantile(50), h.ValueAtQuantile(99), h.Max(),
				s.whole[k].TotalCount(), s.whole[k].ValueAtQuantile(50), s.whole[k].ValueAtQuantile(99), s.whole[k].Max())
		}
	}
}

// checkMergedSummary compares the merged cell's figures with the whole
// set's: its acquisitions, every percentile, and the one violation.
func checkMergedSummary(t *testing.T, out string, s splitRun) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(out, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var sum result.Summary
	if err := json.Unmarshal(raw, &sum); err != nil || len(sum.Cells) != 1 {
		t.Fatalf("merged summary.json: %v, %d cells", err, len(sum.Cells))
	}
	c := sum.Cells[0]
	if want := result.LatencyOf(s.total); c.Acquires != s.total.TotalCount() || c.AcquireLatencyUs != want {
		t.Errorf("merged cell: %d acquisitions, latency %+v; the whole set: %d, %+v", c.Acquires, c.AcquireLatencyUs, s.total.TotalCount(), want)
	}
	if c.SafetyViolations != 1 {
		t.Errorf("merged cell has %d violations, want 1 (shards 0 and 2 on lock 0; shard 1 and 2 on lock 1 only in shard 2's local clock)", c.SafetyViolations)
	}
}
