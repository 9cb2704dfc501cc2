package lockbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
)

// shardDir is one shard's results directory as read for a merge.
type shardDir struct {
	dir  string
	meta result.Meta
	sum  *result.Summary
}

// Merge joins the results directories of a sharded run into out, in the
// form of a single process's run (meta.json, summary.json, one .hlog per
// cell): histograms merged interval by interval (percentiles come from the
// merged histograms, never averages), counts summed, the servers' counters
// taken once over the span every shard covered, fairness over all clients,
// and mutual exclusion checked over every shard's grants. It refuses, with
// an error wrapping ErrUsage, shards of different plans, versions or
// seeds and a missing or doubled shard, and (with a plain error) shards
// that did not finish the same cells. The plan's SLO, which shards record
// but do not judge, is judged here over the merged cells (SLOMet,
// SLOBreaches). When a shard recorded a failure, what merged is written
// and the error wraps ErrShardFailed. It stops between cells when ctx
// ends, returning a nil summary and ctx's error; what it wrote by then is
// partial.
func Merge(ctx context.Context, out string, dirs []string) (*result.Summary, error) {
	shards, err := readShards(dirs)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("lockbench: %w", err)
	}
	first := shards[0].sum
	sum := &result.Summary{Schema: result.SchemaVersion, Version: first.Version, Started: first.Started, SLO: first.SLO}
	if sum.SLO == "" {
		sum.SLO = shards[0].meta.SLO
	}
	var failed error
	for _, s := range shards {
		if s.sum.Started.Before(sum.Started) {
			sum.Started = s.sum.Started
		}
		if s.sum.Failure != "" && sum.Failure == "" {
			sum.Failure = fmt.Sprintf("shard %d: %s", s.meta.Shard.Index, s.sum.Failure)
			failed = fmt.Errorf("%w: shard %d (%s): %s; the cells every shard finished are merged", ErrShardFailed, s.meta.Shard.Index, s.dir, s.sum.Failure)
		}
	}
	for _, c := range first.Cells {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("lockbench: merge: %w", err)
		}
		mc, err := mergeCell(out, shards, c.Key())
		if err != nil {
			return nil, err
		}
		sum.Cells = append(sum.Cells, mc)
	}
	if slo, err := result.ParseSLO(sum.SLO); err == nil && sum.SLO != "" {
		sum.Capacity = result.Capacity(sum.Cells, slo)
		sum.SLOBreaches = result.Breaches(sum.Cells, slo)
		met := len(sum.SLOBreaches) == 0
		sum.SLOMet = &met
	}
	meta := shards[0].meta
	meta.Shard = nil
	meta.Started = sum.Started
	for _, s := range shards {
		meta.Shards = append(meta.Shards, *s.meta.Shard)
	}
	if err := result.WriteJSON(filepath.Join(out, result.MetaFile), meta); err != nil {
		return nil, err
	}
	if err := result.WriteJSON(filepath.Join(out, result.SummaryFile), sum); err != nil {
		return nil, err
	}
	return sum, failed
}

// ErrShardFailed is wrapped by Merge's error when a shard's run ended in a
// failure: the summary it returns holds what merged.
var ErrShardFailed = errors.New("lockbench: a shard's run failed")

// CheckShards reads the shards' meta.json and summary.json and returns
// the error Merge would for a set that is not one whole run, writing
// nothing.
func CheckShards(dirs []string) error {
	_, err := readShards(dirs)
	return err
}

// readShards reads every shard's meta.json and summary.json and refuses a
// set that is not one whole run, naming what differs; they come back in
// shard order.
func readShards(dirs []string) ([]shardDir, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: merge needs the shards' results directories", ErrUsage)
	}
	var out []shardDir
	for _, d := range dirs {
		m, err := result.ReadMeta(filepath.Join(d, result.MetaFile))
		if err != nil {
			return nil, err
		}
		if m.Shard == nil {
			return nil, fmt.Errorf("%w: %s is not a shard's results (its meta.json names no shard)", ErrUsage, d)
		}
		s, err := result.ReadSummary(filepath.Join(d, result.SummaryFile))
		if err != nil {
			return nil, err
		}
		out = append(out, shardDir{dir: d, meta: m, sum: s})
	}
	slices.SortStableFunc(out, func(a, b shardDir) int { return a.meta.Shard.Index - b.meta.Shard.Index })
	if err := sameRun(out); err != nil {
		return nil, err
	}
	if err := sameCells(out); err != nil {
		return nil, err
	}
	return out, nil
}

// sameCells refuses shards that did not finish the same cells: one that
// stopped early (or ran on alone) would leave a cell merged from part of
// its clients, or dropped.
func sameCells(shards []shardDir) error {
	has := func(s shardDir, key string) bool {
		return slices.ContainsFunc(s.sum.Cells, func(c result.Cell) bool { return c.Key() == key })
	}
	for _, a := range shards {
		for _, c := range a.sum.Cells {
			for _, b := range shards {
				if !has(b, c.Key()) {
					return fmt.Errorf("lockbench: shard %d (%s) has no cell %s, which shard %d finished: the shards did not finish the same cells",
						b.meta.Shard.Index, b.dir, c.Key(), a.meta.Shard.Index)
				}
			}
		}
	}
	return nil
}

// sameRun refuses shards of different plans, versions, seeds or runs, and
// a set with a shard missing or given twice.
func sameRun(shards []shardDir) error {
	ref := shards[0]
	for _, s := range shards[1:] {
		differ := func(what, a, b string) error {
			return fmt.Errorf("%w: %s and %s are not shards of one run: %s %s ≠ %s", ErrUsage, ref.dir, s.dir, what, a, b)
		}
		switch {
		case s.meta.PlanHash != ref.meta.PlanHash:
			return differ("plan hash", ref.meta.PlanHash, s.meta.PlanHash)
		case s.meta.Version != ref.meta.Version:
			return differ("lockbench version", ref.meta.Version, s.meta.Version)
		case s.meta.Seed != ref.meta.Seed:
			return differ("seed", fmt.Sprint(ref.meta.Seed), fmt.Sprint(s.meta.Seed))
		case s.meta.Shard.Count != ref.meta.Shard.Count:
			return differ("shard count", fmt.Sprint(ref.meta.Shard.Count), fmt.Sprint(s.meta.Shard.Count))
		case s.meta.Shard.RunID != ref.meta.Shard.RunID:
			return differ("run id", ref.meta.Shard.RunID, s.meta.Shard.RunID)
		}
	}
	n := ref.meta.Shard.Count
	seen := map[int]string{}
	for _, s := range shards {
		i := s.meta.Shard.Index
		if prev, dup := seen[i]; dup {
			return fmt.Errorf("%w: shard %d/%d is given twice: %s and %s", ErrUsage, i, n, prev, s.dir)
		}
		seen[i] = s.dir
	}
	for i := range n {
		if _, ok := seen[i]; !ok {
			return fmt.Errorf("%w: shard %d/%d is missing (got %d of %d shards)", ErrUsage, i, n, len(shards), n)
		}
	}
	return nil
}

// mergeCell joins one cell's shards.
func mergeCell(out string, shards []shardDir, key string) (result.Cell, error) {
	cells := make([]result.Cell, len(shards))
	for i, s := range shards {
		j := slices.IndexFunc(s.sum.Cells, func(c result.Cell) bool { return c.Key() == key })
		if j < 0 {
			return result.Cell{}, fmt.Errorf("lockbench: shard %d (%s) has no cell %s: it did not finish the run", s.meta.Shard.Index, s.dir, key)
		}
		cells[i] = s.sum.Cells[j]
	}
	c := sumCells(cells)
	totals, err := mergeLogs(out, shards, cells[0])
	if err != nil {
		return c, err
	}
	c.AcquireLatencyUs = result.LatencyOf(totals[result.TagAcquire])
	c.ReleaseLatencyUs = result.LatencyOf(totals[result.TagRelease])
	c.HandoffGapUs = nil
	if h := totals[result.TagHandoff]; h != nil && h.TotalCount() > 0 {
		l := result.LatencyOf(h)
		c.HandoffGapUs = &l
	}
	per := make([]int64, c.Clients)
	for _, x := range cells {
		if x.Shard != nil && x.Fairness != nil {
			copy(per[x.Shard.First:], x.Fairness.PerClient)
		}
	}
	mergeTimeouts(&c, cells, totals)
	c.Fairness = result.FairnessOf(per, c.AcquireLatencyUs.Max)
	c.Server, c.ServerNote = mergeServer(cells)
	if err := checkGrants(shards, &c); err != nil {
		return c, err
	}
	return c, nil
}

// sumCells adds the shards' counts into one cell, taking what is the same
// in every shard (names, theory) from the first.
func sumCells(cells []result.Cell) result.Cell {
	c := cells[0]
	c.Shard, c.ServerRaw, c.Violations, c.Distributions = nil, nil, nil, nil
	c.Acquires, c.Errors, c.Counts, c.SafetyViolations = 0, 0, result.Counts{}, 0
	c.ErrorsByClass = map[string]int64{}
	c.Vectors = nil
	c.Merge = &result.MergeNote{Shards: len(cells)}
	settle := 0
	for _, x := range cells {
		c.Acquires += x.Acquires
		c.Errors += x.Errors
		c.Counts = c.Counts.Add(x.Counts)
		c.DurationS = max(c.DurationS, x.DurationS)
		for k, v := range x.ErrorsByClass {
			c.ErrorsByClass[k] += v
		}
		for k, v := range x.Vectors {
			if c.Vectors == nil {
				c.Vectors = map[string][]int64{}
			}
			for len(c.Vectors[k]) < len(v) {
				c.Vectors[k] = append(c.Vectors[k], 0)
			}
			for i, n := range v {
				c.Vectors[k][i] += n
			}
		}
		settle = max(settle, slices.Index([]string{"exact", "timeout", "none"}, x.Settle))
		if c.Truncated == "" {
			c.Truncated = x.Truncated
		}
		c.Generator = mergeGenerator(c.Generator, x.Generator, x.Shard)
	}
	if c.Settle != "" && settle >= 0 {
		c.Settle = []string{"exact", "timeout", "none"}[settle]
	}
	if len(cells[0].Distributions) > 0 {
		c.Merge.Note = "the implementation's own distributions are summaries per shard and do not merge: see each shard's results"
	}
	c.AcquiresPerS, c.RetriesPerAcquire, c.NotificationsPerAcquire, c.RoundTripsPerAcquire = 0, 0, 0, 0
	if c.DurationS > 0 {
		c.AcquiresPerS = float64(c.Acquires) / c.DurationS
	}
	if c.Acquires > 0 {
		n := float64(c.Acquires)
		c.RetriesPerAcquire = float64(c.Retries) / n
		c.NotificationsPerAcquire = float64(c.Notifications) / n
		c.RoundTripsPerAcquire = float64(c.RoundTrips) / n
	}
	return c
}

// mergeGenerator adds a shard's generator health to the merged one: CPU
// and collections summed, the worst pause, every warning named by shard.
func mergeGenerator(into, g *result.Generator, sh *result.CellShard) *result.Generator {
	if g == nil {
		return into
	}
	if into == nil {
		into = &result.Generator{}
	}
	into.CPUS += g.CPUS
	into.GCCount += g.GCCount
	into.Goroutines += g.Goroutines
	into.GCPauseMs = max(into.GCPauseMs, g.GCPauseMs)
	into.CPUShare = max(into.CPUShare, g.CPUShare)
	if g.Warning != "" && sh != nil {
		into.Warning = strings.TrimPrefix(into.Warning+"; ", "; ") + fmt.Sprintf("shard %d: %s", sh.Index, g.Warning)
	}
	return into
}

// mergeServer counts the servers once: every shard read the same servers'
// cumulative counters before and after its cell, so the span from the
// earliest reading before to the latest after covers all of them. The
// clients' own notifications are summed.
func mergeServer(cells []result.Cell) (map[string]int64, string) {
	before, after := map[string]int64{}, map[string]int64{}
	var clients int64
	for _, c := range cells {
		if c.ServerRaw == nil {
			if c.ServerNote != "" {
				return nil, fmt.Sprintf("shard %d: %s", c.Shard.Index, c.ServerNote)
			}
			return nil, ""
		}
		for k, v := range c.ServerRaw.Before {
			if b, ok := before[k]; !ok || v < b {
				before[k] = v
			}
		}
		for k, v := range c.ServerRaw.After {
			after[k] = max(after[k], v)
		}
		clients += c.Server["client_notifications"]
	}
	out := map[string]int64{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	out["client_notifications"] = clients
	return out, ""
}

// mergeLogs merges the shards' interval logs of cell c into out's: the
// histograms of the same tag and interval — intervals matched by their
// start on the servers' clock, to the nearest interval — are added, which
// HdrHistograms do without loss. It returns the cell's totals by tag.
func mergeLogs(out string, shards []shardDir, c result.Cell) (map[string]*hdrhistogram.Histogram, error) {
	type slot struct {
		start, end int64 // ms on the servers' clock
		h          map[string]*hdrhistogram.Histogram
	}
	var logs []*result.CellLog
	var offsets []int64
	base := int64(math.MaxInt64)
	for _, s := range shards {
		l, err := result.ReadCellLog(s.dir, c)
		if err != nil {
			return nil, err
		}
		if l == nil {
			return nil, fmt.Errorf("lockbench: shard %d (%s) has no interval log for %s", s.meta.Shard.Index, s.dir, c.Key())
		}
		off := int64(0)
		if sk := s.meta.Shard.Skew; sk != nil {
			off = int64(math.Round(sk.OffsetUs / 1e3))
		}
		for _, h := range l.Intervals {
			base = min(base, h.StartTimeMs()+off)
		}
		logs, offsets = append(logs, l), append(offsets, off)
	}
	slots := map[int64]*slot{}
	totals := map[string]*hdrhistogram.Histogram{}
	iv := result.IntervalLength.Milliseconds()
	for i, l := range logs {
		for _, h := range l.Intervals {
			start := h.StartTimeMs() + offsets[i]
			idx := (start - base + iv/2) / iv
			s := slots[idx]
			if s == nil {
				s = &slot{start: base + idx*iv, h: map[string]*hdrhistogram.Histogram{}}
				slots[idx] = s
			}
			s.end = max(s.end, h.EndTimeMs()+offsets[i])
			for _, m := range []map[string]*hdrhistogram.Histogram{s.h, totals} {
				if m[h.Tag()] == nil {
					m[h.Tag()] = result.NewHistogram()
				}
				m[h.Tag()].Merge(h)
			}
		}
	}
	w, err := result.CreateCellLog(out, c, "lockbench "+Version+" merge")
	if err != nil {
		return nil, err
	}
	keys := make([]int64, 0, len(slots))
	for k := range slots {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	start := time.UnixMilli(base)
	for _, k := range keys {
		s := slots[k]
		w.Write(start, result.Interval{Start: time.UnixMilli(s.start), End: time.UnixMilli(s.end),
			Acquire: s.h[result.TagAcquire], Release: s.h[result.TagRelease], Handoff: s.h[result.TagHandoff], Service: s.h[result.TagService],
			Abandon: s.h[result.TagAbandon], Renew: s.h[result.TagRenew]})
	}
	return totals, w.Close(start)
}

// mergeTimeouts joins the shards' abandoned acquisitions (--acquire-timeout),
// renewals (--renew) and findings: counts summed, latencies from the merged
// histograms, a finding of any shard kept (naming the first that had one).
func mergeTimeouts(c *result.Cell, cells []result.Cell, totals map[string]*hdrhistogram.Histogram) {
	c.Abandon, c.Renew, c.Finding, c.Livelock = nil, nil, "", nil
	var held float64 // seconds of holding, over which renewals were sent
	for _, x := range cells {
		if a := x.Abandon; a != nil {
			if c.Abandon == nil {
				c.Abandon = &result.Abandon{TimeoutMs: a.TimeoutMs, Granted: a.Granted, Leftover: a.Leftover}
			}
			c.Abandon.Count += a.Count
			c.Abandon.RoundTrips += a.RoundTrips
			c.Abandon.OutOfOrder += a.OutOfOrder
		}
		if r := x.Renew; r != nil {
			if c.Renew == nil {
				c.Renew = &result.Renew{}
			}
			c.Renew.Count += r.Count
			c.Renew.Lost += r.Lost
			c.Renew.Errors += r.Errors
			if r.PerHolderPerS > 0 {
				held += float64(r.Count) / r.PerHolderPerS
			}
		}
		if x.Finding != "" && c.Finding == "" {
			c.Finding, c.Livelock, c.Verdict = x.Finding, x.Livelock, x.Verdict
			if x.Shard != nil {
				c.Verdict = fmt.Sprintf("shard %d: %s", x.Shard.Index, x.Verdict)
			}
		}
	}
	if a := c.Abandon; a != nil {
		if h := totals[result.TagAbandon]; h != nil {
			a.WaitUs = result.LatencyOf(h)
		}
		if a.Count > 0 {
			a.RoundTripsPer = float64(a.RoundTrips) / float64(a.Count)
		}
	}
	if r := c.Renew; r != nil {
		if h := totals[result.TagRenew]; h != nil {
			r.LatencyUs = result.LatencyOf(h)
		}
		if held > 0 {
			r.PerHolderPerS = float64(r.Count) / held
		}
	}
}
