package plan

import (
	"context"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/engine"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
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
//
// With opts.Partial, shards that did not finish the same cells (one
// killed mid-cell, or out of disk) are merged over the cells every shard
// finished, and the summary and meta.json say so (result.Partial), naming
// the shards and cells left out.
func Merge(ctx context.Context, out string, dirs []string, opts MergeOptions) (*result.Summary, error) {
	shards, partial, err := readShards(dirs, opts.Partial)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("lockbench: %w", err)
	}
	first := shards[0].sum
	sum := &result.Summary{Schema: result.SchemaVersion, Version: first.Version, Started: first.Started, SLO: first.SLO, Partial: partial}
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
			// A partial merge was asked to do without what the shard
			// did not finish: its failure is part of the label, not an
			// error.
			if partial == nil {
				failed = fmt.Errorf("%w: shard %d (%s): %s; the cells every shard finished are merged", ErrShardFailed, s.meta.Shard.Index, s.dir, s.sum.Failure)
			}
		}
	}
	for _, c := range completeCells(shards) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("lockbench: merge: %w", err)
		}
		mc, err := mergeCell(out, shards, c.Key())
		if err != nil {
			return nil, err
		}
		mc.Derive()
		sum.Cells = append(sum.Cells, mc)
	}
	if slo, err := result.ParseSLO(sum.SLO); err == nil && sum.SLO != "" {
		JudgeSLO(sum, slo)
	}
	meta := shards[0].meta
	meta.Shard = nil
	meta.Started = sum.Started
	meta.Partial = partial
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

// MergeOptions tune Merge.
type MergeOptions struct {
	// Partial merges the cells every shard finished when some shard did
	// not finish them all, instead of refusing, and labels the result
	// partial.
	Partial bool
}

// CheckShards reads the shards' meta.json and summary.json and returns
// the error Merge would for a set that is not one whole run (or, with
// opts.Partial, not one run), writing nothing.
func CheckShards(dirs []string, opts MergeOptions) error {
	_, _, err := readShards(dirs, opts.Partial)
	return err
}

// readShards reads every shard's meta.json and summary.json and refuses a
// set that is not one whole run, naming what differs; they come back in
// shard order. With partial, shards that finished different cells are
// accepted and what they lack is returned (nil when nothing).
func readShards(dirs []string, partial bool) ([]shardDir, *result.Partial, error) {
	if len(dirs) == 0 {
		return nil, nil, fmt.Errorf("%w: merge needs the shards' results directories", engine.ErrUsage)
	}
	var out []shardDir
	for _, d := range dirs {
		m, err := result.ReadMeta(filepath.Join(d, result.MetaFile))
		if err != nil {
			return nil, nil, err
		}
		if m.Shard == nil {
			return nil, nil, fmt.Errorf("%w: %s is not a shard's results (its meta.json names no shard)", engine.ErrUsage, d)
		}
		s, err := readShardSummary(d, m, partial)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, shardDir{dir: d, meta: m, sum: s})
	}
	slices.SortStableFunc(out, func(a, b shardDir) int { return a.meta.Shard.Index - b.meta.Shard.Index })
	if err := sameRun(out); err != nil {
		return nil, nil, err
	}
	if partial {
		missing := missingCells(out)
		if len(completeCells(out)) == 0 {
			why := ""
			if missing != nil {
				why = fmt.Sprintf(" (%s: %s)", missing.Missing[0].Cell, missing.Missing[0].Why)
			}
			return nil, nil, fmt.Errorf("lockbench: merge --partial: no cell was finished by every shard, so there is nothing to merge%s", why)
		}
		return out, missing, nil
	}
	if err := sameCells(out); err != nil {
		return nil, nil, err
	}
	if err := noneUnfinished(out); err != nil {
		return nil, nil, err
	}
	return out, nil, nil
}

// readShardSummary reads a shard's summary.json. A shard stopped before
// its first cell ended has none: without partial that is a refusal naming
// the shard, with partial a shard that finished nothing.
func readShardSummary(dir string, m result.Meta, partial bool) (*result.Summary, error) {
	path := filepath.Join(dir, result.SummaryFile)
	s, err := result.ReadSummary(path)
	if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	if partial {
		return &result.Summary{Schema: result.SchemaVersion, Version: m.Version, Started: m.Started}, nil
	}
	return nil, fmt.Errorf("lockbench: shard %d/%d (%s) finished no cell (no %s: killed, out of disk or stopped before its first cell ended); --partial merges what the other shards finished",
		m.Shard.Index, m.Shard.Count, dir, result.SummaryFile)
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
					return fmt.Errorf("lockbench: shard %d (%s) has no cell %s, which shard %d finished: the shards did not finish the same cells%s; --partial merges the cells every shard finished",
						b.meta.Shard.Index, b.dir, c.Key(), a.meta.Shard.Index, unfinishedNote(b.dir, c))
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
			return fmt.Errorf("%w: %s and %s are not shards of one run: %s %s ≠ %s", engine.ErrUsage, ref.dir, s.dir, what, a, b)
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
			return fmt.Errorf("%w: shard %d/%d is given twice: %s and %s", engine.ErrUsage, i, n, prev, s.dir)
		}
		seen[i] = s.dir
	}
	for i := range n {
		if _, ok := seen[i]; !ok {
			return fmt.Errorf("%w: shard %d/%d is missing (got %d of %d shards)", engine.ErrUsage, i, n, len(shards), n)
		}
	}
	return nil
}

// mergeCell joins one cell's shards: each shard's cell and histograms
// read back as an accumulator, the accumulators merged, and mutual
// exclusion checked over every shard's grants.
func mergeCell(out string, shards []shardDir, key string) (result.Cell, error) {
	cells := make([]result.Cell, len(shards))
	for i, s := range shards {
		j := slices.IndexFunc(s.sum.Cells, func(c result.Cell) bool { return c.Key() == key })
		if j < 0 {
			return result.Cell{}, fmt.Errorf("lockbench: shard %d (%s) has no cell %s: it did not finish the run", s.meta.Shard.Index, s.dir, key)
		}
		cells[i] = s.sum.Cells[j]
	}
	totals, err := mergeLogs(out, shards, cells[0])
	if err != nil {
		return result.Cell{}, err
	}
	acc := result.ShardAccumulator(cells[0], totals[0])
	for i := 1; i < len(cells); i++ {
		acc.Merge(result.ShardAccumulator(cells[i], totals[i]))
	}
	if err := checkGrants(shards, acc, cells[0]); err != nil {
		return result.Cell{}, err
	}
	return acc.Cell(), nil
}

// mergeLogs merges the shards' interval logs of cell c into out's: the
// histograms of the same tag and interval — intervals matched by their
// start on the servers' clock, to the nearest interval — are added, which
// HdrHistograms do without loss. It returns each shard's totals by tag.
func mergeLogs(out string, shards []shardDir, c result.Cell) ([]map[string]*hdrhistogram.Histogram, error) {
	type slot struct {
		start, end int64 // ms on the servers' clock
		h          map[string]*hdrhistogram.Histogram
	}
	var logs []*hlog.CellLog
	var offsets []int64
	base := int64(math.MaxInt64)
	for _, s := range shards {
		l, err := hlog.ReadCell(s.dir, c)
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
	totals := make([]map[string]*hdrhistogram.Histogram, len(logs))
	iv := hlog.IntervalLength.Milliseconds()
	for i, l := range logs {
		totals[i] = map[string]*hdrhistogram.Histogram{}
		for _, h := range l.Intervals {
			start := h.StartTimeMs() + offsets[i]
			idx := (start - base + iv/2) / iv
			s := slots[idx]
			if s == nil {
				s = &slot{start: base + idx*iv, h: map[string]*hdrhistogram.Histogram{}}
				slots[idx] = s
			}
			s.end = max(s.end, h.EndTimeMs()+offsets[i])
			for _, m := range []map[string]*hdrhistogram.Histogram{s.h, totals[i]} {
				if m[h.Tag()] == nil {
					m[h.Tag()] = result.NewHistogram()
				}
				m[h.Tag()].Merge(h)
			}
		}
	}
	w, err := hlog.Create(out, c, "lockbench "+Version+" merge")
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
		w.Write(start, hlog.Interval{Start: time.UnixMilli(s.start), End: time.UnixMilli(s.end),
			Acquire: s.h[result.TagAcquire], Release: s.h[result.TagRelease], Handoff: s.h[result.TagHandoff], Service: s.h[result.TagService],
			Abandon: s.h[result.TagAbandon], Renew: s.h[result.TagRenew]})
	}
	return totals, w.Close(start)
}

// noneUnfinished refuses shards one of which stopped mid-cell: even when
// the shards finished the same cells (all stopped at the one that died),
// the plan's later cells are missing, and a merge without --partial would
// not say so.
func noneUnfinished(shards []shardDir) error {
	for _, s := range shards {
		for _, c := range result.PlanCells(s.meta) {
			if s.finished(c.Key()) {
				continue
			}
			if f := result.Unfinished(s.dir, c); f != "" {
				return fmt.Errorf("lockbench: shard %d (%s) stopped mid-cell in %s (%s left unfinished: killed or out of disk); --partial merges the cells every shard finished",
					s.meta.Shard.Index, s.dir, c.Key(), f)
			}
		}
	}
	return nil
}

// unfinishedNote is ", stopping mid-cell (FILE left unfinished)" when the
// shard left the cell's files unfinished.
func unfinishedNote(dir string, c result.Cell) string {
	if f := result.Unfinished(dir, c); f != "" {
		return fmt.Sprintf(" (it stopped mid-cell: %s left unfinished)", f)
	}
	return ""
}

// finished says whether shard s finished the cell with key.
func (s shardDir) finished(key string) bool {
	return slices.ContainsFunc(s.sum.Cells, func(c result.Cell) bool { return c.Key() == key })
}

// completeCells are the cells every shard finished, in the order of
// shard 0's summary: the order asked.
func completeCells(shards []shardDir) []result.Cell {
	var out []result.Cell
	for _, c := range shards[0].sum.Cells {
		if !slices.ContainsFunc(shards, func(s shardDir) bool { return !s.finished(c.Key()) }) {
			out = append(out, c)
		}
	}
	return out
}

// missingCells says what shards that did not all finish the same cells
// lack: every cell of the plan (and any a shard finished) that some shard
// did not finish, with which shards finished it and what became of it on
// the others. Nil when every shard finished every cell.
func missingCells(shards []shardDir) *result.Partial {
	all := result.PlanCells(shards[0].meta)
	for _, s := range shards {
		for _, c := range s.sum.Cells {
			if !slices.ContainsFunc(all, func(d result.Cell) bool { return d.Key() == c.Key() }) {
				all = append(all, c)
			}
		}
	}
	ended := slices.ContainsFunc(shards, func(s shardDir) bool { return s.sum.Failure != "" })
	p := &result.Partial{}
	incomplete := map[int]bool{}
	for _, c := range all {
		if !ended && !slices.ContainsFunc(shards, func(s shardDir) bool { return s.finished(c.Key()) || result.Unfinished(s.dir, c) != "" }) {
			continue // no shard began it and none ended early: a cell that did not apply
		}
		var done, why []string
		for _, s := range shards {
			i := s.meta.Shard.Index
			if s.finished(c.Key()) {
				done = append(done, fmt.Sprint(i))
				continue
			}
			incomplete[i] = true
			if f := result.Unfinished(s.dir, c); f != "" {
				why = append(why, fmt.Sprintf("shard %d stopped mid-cell (%s left unfinished)", i, f))
			} else {
				why = append(why, fmt.Sprintf("shard %d did not finish it", i))
			}
		}
		if len(why) == 0 {
			continue
		}
		if len(done) > 0 {
			why = append(why, "finished by shard "+strings.Join(done, ", "))
		}
		p.Missing = append(p.Missing, result.MissingCell{Cell: c.Key(), Why: strings.Join(why, "; ")})
	}
	if len(p.Missing) == 0 {
		return nil
	}
	for i := range shards[0].meta.Shard.Count {
		if incomplete[i] {
			p.Shards = append(p.Shards, i)
		}
	}
	p.Reason = fmt.Sprintf("merged with --partial; %s of %d did not finish every cell", shardList(p.Shards), shards[0].meta.Shard.Count)
	return p
}

// shardList is "shard 1" or "shards 0, 2".
func shardList(is []int) string {
	s := make([]string, len(is))
	for k, i := range is {
		s[k] = fmt.Sprint(i)
	}
	if len(is) == 1 {
		return "shard " + s[0]
	}
	return "shards " + strings.Join(s, ", ")
}
