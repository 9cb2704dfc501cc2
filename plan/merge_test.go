package plan_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/cmd/lockbench/cli"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// fakeShard is one shard's results as a shard process writes them, built
// by hand: what merge reads, and nothing a server must have measured.
type fakeShard struct {
	failure string
	cells   []result.Cell
	// acquireUs, abandonUs and renewUs are the values of each cell's
	// histograms (one each per acquisition, abandonment, renewal).
	acquireUs, abandonUs, renewUs int64
}

// writeShards writes shards as the results directories of one run of
// len(shards) shards with the given SLO, and returns them.
func writeShards(t *testing.T, slo string, shards ...fakeShard) []string {
	t.Helper()
	started := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	var dirs []string
	for i, s := range shards {
		dir := filepath.Join(t.TempDir(), "shard")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		meta := result.Meta{Version: "test", Started: started, Seed: 1, SLO: slo, PlanHash: "plan",
			Shard: &result.ShardMeta{Index: i, Count: len(shards), RunID: "run"}}
		sum := result.Summary{Schema: result.SchemaVersion, Version: "test", Started: started, SLO: slo, Failure: s.failure}
		for _, c := range s.cells {
			c.Shard = &result.CellShard{Index: i, Count: len(shards), First: i * c.Clients / len(shards), Clients: c.Clients / len(shards)}
			sum.Cells = append(sum.Cells, c)
			iv := hlog.Interval{Start: started, End: started.Add(time.Second)}
			hist := func(n, v int64) *hdrhistogram.Histogram {
				h := result.NewHistogram()
				for range n {
					h.RecordValue(v)
				}
				return h
			}
			iv.Acquire = hist(c.Acquires, s.acquireUs)
			if c.Abandon != nil {
				iv.Abandon = hist(c.Abandon.Count, s.abandonUs)
			}
			if c.Renew != nil {
				iv.Renew = hist(c.Renew.Count, s.renewUs)
			}
			if err := hlog.WriteCell(dir, c, started, []hlog.Interval{iv}, "test"); err != nil {
				t.Fatal(err)
			}
			g, err := result.CreateGrants(dir, c) // no grants, and the end record that says so
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := result.WriteJSON(filepath.Join(dir, result.MetaFile), meta); err != nil {
			t.Fatal(err)
		}
		if err := result.WriteJSON(filepath.Join(dir, result.SummaryFile), sum); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// mergeMain runs `lockbench merge` in-process and returns its exit code,
// stderr and the merged summary (nil when none was written).
func mergeMain(t *testing.T, dirs []string) (int, string, *result.Summary) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "merged")
	var stdout, stderr bytes.Buffer
	code := cli.Main(append([]string{"merge", "--out", out}, dirs...), &stdout, &stderr)
	sum, err := result.ReadSummary(filepath.Join(out, result.SummaryFile))
	if err != nil {
		sum = nil
	}
	return code, stderr.String(), sum
}

func hotCell(acquires int64) result.Cell {
	return result.Cell{Impl: "redis", Scenario: "hot", Clients: 4, Locks: 1, DurationS: 1,
		Acquires: acquires, AcquiresPerS: float64(acquires)}
}

// A shard records the SLO but cannot judge it; merge judges the merged
// cells: a miss is exit 5 with slo_met false and the breach listed, and
// a cell that met it is exit 0 with slo_met true.
func TestMergeJudgesTheSLO(t *testing.T) {
	t.Parallel()
	// Shard 0's slice is quick and shard 1's slow: the merged p99 is
	// shard 1's 9ms, over the 5ms limit.
	missed := writeShards(t, "p99<=5ms",
		fakeShard{cells: []result.Cell{hotCell(1000)}, acquireUs: 1000},
		fakeShard{cells: []result.Cell{hotCell(1000)}, acquireUs: 9000})
	code, stderr, sum := mergeMain(t, missed)
	if code != cli.ExitSLO || sum == nil || sum.SLOMet == nil || *sum.SLOMet || len(sum.SLOBreaches) != 1 ||
		sum.SLOBreaches[0].Threshold != "p99<=5ms" || !strings.Contains(stderr, "p99<=5ms") {
		t.Errorf("a merged miss: exit %d, stderr %q, summary %+v", code, stderr, sum)
	}
	met := writeShards(t, "p99<=5ms",
		fakeShard{cells: []result.Cell{hotCell(1000)}, acquireUs: 1000},
		fakeShard{cells: []result.Cell{hotCell(1000)}, acquireUs: 2000})
	code, stderr, sum = mergeMain(t, met)
	if code != 0 || sum == nil || sum.SLOMet == nil || !*sum.SLOMet || len(sum.Capacity) != 1 {
		t.Errorf("a merged pass: exit %d, stderr %q, summary %+v", code, stderr, sum)
	}
}

// Abandoned acquisitions, renewals and a livelock finding survive a
// merge: counts summed over the shards, latencies from the merged
// histograms (also written to the merged .hlog), a finding of any shard.
func TestMergeKeepsTimeoutsRenewalsAndFindings(t *testing.T) {
	t.Parallel()
	a, b := hotCell(100), hotCell(50)
	a.Abandon = &result.Abandon{TimeoutMs: 10, Count: 3, RoundTrips: 6}
	a.Renew = &result.Renew{Count: 10, PerHolderPerS: 5, Lost: 1}
	b.Abandon = &result.Abandon{TimeoutMs: 10, Count: 2, RoundTrips: 4}
	b.Renew = &result.Renew{Count: 20, PerHolderPerS: 10, Errors: 2}
	b.Finding, b.Livelock = result.FindingLivelock, &result.Livelock{LimitS: 1, AtS: 2, Attempts: 40}
	dirs := writeShards(t, "",
		fakeShard{cells: []result.Cell{a}, acquireUs: 500, abandonUs: 10_000, renewUs: 300},
		fakeShard{cells: []result.Cell{b}, acquireUs: 500, abandonUs: 20_000, renewUs: 700})
	out := filepath.Join(t.TempDir(), "merged")
	sum, err := plan.Merge(context.Background(), out, dirs, plan.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Cells[0]
	ab, rn := c.Abandon, c.Renew
	if ab == nil || ab.Count != 5 || ab.RoundTrips != 10 || ab.RoundTripsPer != 2 || ab.WaitUs.Max < 19_000 || ab.WaitUs.P50 > 11_000 {
		t.Errorf("merged abandon %+v, want 5 abandoned, 10 round trips, waits from 10ms to 20ms", ab)
	}
	if rn == nil || rn.Count != 30 || rn.Lost != 1 || rn.Errors != 2 || rn.PerHolderPerS != 7.5 || rn.LatencyUs.Max < 650 {
		t.Errorf("merged renew %+v, want 30 renewals over 4s of holding (7.5/s), 1 lost, 2 errors, max ≈ 700µs", rn)
	}
	if c.Finding != result.FindingLivelock || c.Livelock == nil || c.Livelock.Attempts != 40 {
		t.Errorf("merged finding %q, livelock %+v; want shard 1's", c.Finding, c.Livelock)
	}
	l, err := hlog.ReadCell(out, c)
	if err != nil || l == nil {
		t.Fatalf("merged log: %v", err)
	}
	if n, m := l.Merged(result.TagAbandon).TotalCount(), l.Merged(result.TagRenew).TotalCount(); n != 5 || m != 30 {
		t.Errorf("merged .hlog holds %d abandon and %d renew values, want 5 and 30", n, m)
	}
}

// Merge refuses shards that did not finish the same cells, naming the
// shard and the cell, and exits 1 on a shard whose run failed, writing
// what merged.
func TestMergeRefusesPartialShards(t *testing.T) {
	t.Parallel()
	more := hotCell(10)
	more.Clients = 8
	partial := writeShards(t, "",
		fakeShard{cells: []result.Cell{hotCell(10)}, acquireUs: 100},
		fakeShard{cells: []result.Cell{hotCell(10), more}, acquireUs: 100})
	code, stderr, sum := mergeMain(t, partial)
	if code != cli.ExitFailure || sum != nil || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "shard 0") || !strings.Contains(stderr, more.Key()) {
		t.Errorf("shards of different cells: exit %d, stderr %q, summary written %v", code, stderr, sum != nil)
	}
	failed := writeShards(t, "",
		fakeShard{cells: []result.Cell{hotCell(10)}, acquireUs: 100},
		fakeShard{cells: []result.Cell{hotCell(10)}, acquireUs: 100, failure: "server died"})
	code, stderr, sum = mergeMain(t, failed)
	if code != cli.ExitFailure || sum == nil || len(sum.Cells) != 1 || sum.Cells[0].Acquires != 20 ||
		!strings.Contains(sum.Failure, "server died") || !strings.Contains(stderr, "shard 1") {
		t.Errorf("a failed shard: exit %d, stderr %q, summary %+v", code, stderr, sum)
	}
}
