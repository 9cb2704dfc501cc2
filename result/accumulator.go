package result

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Accumulator gathers one cell's figures from whatever measured it — a
// cell's clients, a fault scenario's repeats, the shards of a sharded run
// read back from their files — and derives every figure of the cell in one
// place, Cell: what is added is raw (counts, histograms, per-client
// acquisitions, violations), what Cell returns is derived from it (rates,
// ratios, percentiles, fairness). Merging two accumulators is adding one
// to the other, so a merged cell is derived exactly as a single one.
//
// It is not safe for concurrent use: the engine feeds it once its clients
// have stopped, a fault scenario under its own lock.
type Accumulator struct {
	base      Cell // identity, and the figures a scenario sets as they are
	durationS float64
	acquires  int64
	errors    int64
	errClass  map[string]int64
	counts    Counts
	// perClient counts acquisitions by global client id; nil when the
	// source does not know them per client (a fault scenario).
	perClient []int64
	hists     map[string]*hdrhistogram.Histogram
	vectors   map[string][]int64
	abandon   *Abandon
	renew     *Renew

	violations int64
	kept       []Violation
	possible   int64
	// grants is how many grants CheckGrants ordered, and how.
	grants int64
	order  string
	// safety is the merged shards' safety figures, added; overlaps and
	// tokenRegressions are what the checkers fed in found by kind, which
	// replace the shards' own where CheckGrants looked across them.
	safety                     *Safety
	overlaps, tokenRegressions int64
	checkedAcross              bool

	// Of merged shards: how many, their raw server readings and the
	// notifications their clients counted; which burst settle was worst.
	shards              int
	server              *ServerReadings
	serverNote          string
	clientNotifications int64
	settle              int
	generator           *Generator
	finding             *Cell // the first source whose cell had a finding
	findingShard        int
}

// settles are Cell.Settle's values, best first.
var settles = []string{"exact", "timeout", "none"}

// NewAccumulator starts a cell whose identity (Impl, Scenario, Kind,
// Clients, Locks, Theory) and scenario figures (Open, TheoryWakeups,
// Settle, …) are base's; base's counts and derived figures are ignored.
func NewAccumulator(base Cell) *Accumulator {
	a := &Accumulator{base: base, errClass: map[string]int64{}, hists: map[string]*hdrhistogram.Histogram{}}
	a.settle = slices.Index(settles, base.Settle)
	return a
}

// Rebase makes base the cell's identity and scenario figures, as
// NewAccumulator would have; what was added stays.
func (a *Accumulator) Rebase(base Cell) {
	a.base = base
	a.settle = slices.Index(settles, base.Settle)
}

// Measured sets the time the cell's figures cover, in seconds: of merged
// sources, the longest.
func (a *Accumulator) Measured(d time.Duration) { a.durationS = max(a.durationS, d.Seconds()) }

// AddMeasured adds d to the time the cell's figures cover: of sources
// measured one after another (a fault scenario's repeats), the sum.
func (a *Accumulator) AddMeasured(d time.Duration) { a.durationS += d.Seconds() }

// AddClient adds what one client did: its acquisitions, errors by class
// and counters. id is the client's global id (its place in fairness); a
// negative id adds to the totals alone.
func (a *Accumulator) AddClient(id int, acquires int64, errClass map[string]int64, c Counts) {
	a.acquires += acquires
	for k, v := range errClass {
		a.errors += v
		a.errClass[k] += v
	}
	a.counts = a.counts.Add(c)
	if id < 0 {
		return
	}
	for len(a.perClient) <= id {
		a.perClient = append(a.perClient, 0)
	}
	a.perClient[id] += acquires
}

// Acquired adds one acquisition that took d, by no client in particular.
func (a *Accumulator) Acquired(d time.Duration) {
	a.acquires++
	RecordMicros(a.hist(TagAcquire), d)
}

// Failed adds one error of class.
func (a *Accumulator) Failed(class string) {
	a.errors++
	a.errClass[class]++
}

// AddCounts adds counters that no one client owns.
func (a *Accumulator) AddCounts(c Counts) { a.counts = a.counts.Add(c) }

// AddHistogram adds h's values to the cell's histogram of tag (TagAcquire,
// …); HdrHistograms of one geometry add without loss.
func (a *Accumulator) AddHistogram(tag string, h *hdrhistogram.Histogram) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	a.hist(tag).Merge(h)
}

func (a *Accumulator) hist(tag string) *hdrhistogram.Histogram {
	h := a.hists[tag]
	if h == nil {
		h = NewHistogram()
		a.hists[tag] = h
	}
	return h
}

// Histogram returns the cell's histogram of tag so far; nil when nothing
// was recorded under it.
func (a *Accumulator) Histogram(tag string) *hdrhistogram.Histogram { return a.hists[tag] }

// AddViolations adds n violations of which vs are listed.
func (a *Accumulator) AddViolations(n int64, vs ...Violation) {
	a.violations += n
	for _, v := range vs {
		if len(a.kept) >= MaxViolationsKept {
			break
		}
		a.kept = append(a.kept, v)
	}
}

// Checked is what a mutual-exclusion checker found: violations (n, of
// which Kept are listed), overlaps within clocks' skew bounds, and the
// violations by kind.
type Checked struct {
	Violations                 int64
	Kept                       []Violation
	Possible                   int64
	Overlaps, TokenRegressions int64
}

// AddChecked adds what a checker found.
func (a *Accumulator) AddChecked(c Checked) {
	a.AddViolations(c.Violations, c.Kept...)
	a.possible += c.Possible
	a.overlaps += c.Overlaps
	a.tokenRegressions += c.TokenRegressions
}

// AddCheckedAcross adds what a checker found over grants seen by several
// sources (shards): c, how many grants it ordered, and by what (the
// order Checker.Check returns).
func (a *Accumulator) AddCheckedAcross(c Checked, grants int, order string) {
	a.AddChecked(c)
	a.checkedAcross = true
	a.grants += int64(grants)
	if a.order != "fencing token" {
		a.order = order
	}
}

// AddVectors adds an implementation's count vectors element-wise.
func (a *Accumulator) AddVectors(vs map[string][]int64) {
	for k, v := range vs {
		if a.vectors == nil {
			a.vectors = map[string][]int64{}
		}
		for len(a.vectors[k]) < len(v) {
			a.vectors[k] = append(a.vectors[k], 0)
		}
		for i, n := range v {
			a.vectors[k][i] += n
		}
	}
}

// AddAbandon adds abandoned acquisitions: counts and round trips summed,
// the timeout, grant order and leftovers taken from the first.
func (a *Accumulator) AddAbandon(x *Abandon) {
	if x == nil {
		return
	}
	if a.abandon == nil {
		a.abandon = &Abandon{TimeoutMs: x.TimeoutMs, Granted: x.Granted, Leftover: x.Leftover}
	}
	a.abandon.Count += x.Count
	a.abandon.RoundTrips += x.RoundTrips
	a.abandon.OutOfOrder += x.OutOfOrder
}

// AddRenew adds renewals: counts and the time held over which they were
// sent.
func (a *Accumulator) AddRenew(x *Renew) {
	if x == nil {
		return
	}
	if a.renew == nil {
		a.renew = &Renew{}
	}
	a.renew.Count += x.Count
	a.renew.Lost += x.Lost
	a.renew.Errors += x.Errors
	held := x.HeldS
	if held == 0 && x.PerHolderPerS > 0 { // a summary written before held_s
		held = float64(x.Count) / x.PerHolderPerS
	}
	a.renew.HeldS += held
}

// Cell derives the cell's figures from what was added.
func (a *Accumulator) Cell() Cell {
	c := a.base
	c.DurationS = a.durationS
	c.Acquires, c.Errors, c.Counts = a.acquires, a.errors, a.counts
	c.ErrorsByClass = maps(a.errClass)
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
	c.AcquireLatencyUs = LatencyOf(a.hists[TagAcquire])
	c.ReleaseLatencyUs = LatencyOf(a.hists[TagRelease])
	c.HandoffGapUs = nil
	if h := a.hists[TagHandoff]; h != nil {
		l := LatencyOf(h)
		c.HandoffGapUs = &l
	}
	c.Fairness = nil
	if a.perClient != nil {
		per := slices.Clone(a.perClient)
		// Merged shards account for every client of the cell, those of a
		// shard that acquired nothing at the end included.
		for a.shards > 0 && len(per) < c.Clients {
			per = append(per, 0)
		}
		c.Fairness = FairnessOf(per, c.AcquireLatencyUs.Max)
	}
	c.SafetyViolations, c.Violations = a.violations, slices.Clone(a.kept)
	if a.safety != nil {
		s := *a.safety
		if a.checkedAcross {
			// Each shard's checker saw its own clients; the merged one saw
			// every grant.
			s.Overlaps, s.TokenRegressions = a.overlaps, a.tokenRegressions
		}
		c.Safety = &s
	}
	c.Vectors = a.vectors
	c.Abandon = a.abandonFigures()
	c.Renew = a.renewFigures()
	if a.settle >= 0 && c.Settle != "" {
		c.Settle = settles[a.settle]
	}
	a.mergedFigures(&c)
	return c
}

func (a *Accumulator) abandonFigures() *Abandon {
	if a.abandon == nil {
		return nil
	}
	x := *a.abandon
	x.WaitUs = LatencyOf(a.hists[TagAbandon])
	x.RoundTripsPer = 0
	if x.Count > 0 {
		x.RoundTripsPer = float64(x.RoundTrips) / float64(x.Count)
	}
	return &x
}

func (a *Accumulator) renewFigures() *Renew {
	if a.renew == nil {
		return nil
	}
	x := *a.renew
	x.LatencyUs = LatencyOf(a.hists[TagRenew])
	x.PerHolderPerS = 0
	if x.HeldS > 0 {
		x.PerHolderPerS = float64(x.Count) / x.HeldS
	}
	return &x
}

func maps(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ShardAccumulator reads a shard's cell back as an accumulator: its counts,
// its clients' acquisitions at their global ids, its histograms (totals,
// by tag, from its interval log) and its raw server readings, ready to be
// merged with the other shards'.
func ShardAccumulator(c Cell, totals map[string]*hdrhistogram.Histogram) *Accumulator {
	base := c
	base.Shard, base.ServerRaw, base.Violations, base.Vectors = nil, nil, nil, nil
	base.Finding, base.Livelock, base.Verdict, base.Safety = "", nil, "", nil
	a := NewAccumulator(base)
	a.safety = a.safety.Add(c.Safety)
	a.durationS = c.DurationS
	first := -1
	if c.Shard != nil && c.Fairness != nil {
		first = c.Shard.First
	}
	a.acquires, a.errors, a.counts = c.Acquires, c.Errors, c.Counts
	for k, v := range c.ErrorsByClass {
		a.errClass[k] += v
	}
	if first >= 0 {
		a.perClient = make([]int64, first+len(c.Fairness.PerClient))
		copy(a.perClient[first:], c.Fairness.PerClient)
	}
	for tag, h := range totals {
		a.AddHistogram(tag, h)
	}
	a.AddVectors(c.Vectors)
	a.AddAbandon(c.Abandon)
	a.AddRenew(c.Renew)
	// A shard's own violations are not added: its checker saw its own
	// clients only, and CheckGrants finds them again among every shard's
	// grants.
	a.shards = 1
	a.server, a.serverNote = c.ServerRaw, c.ServerNote
	if c.ServerRaw == nil && c.ServerNote != "" && c.Shard != nil {
		a.serverNote = fmt.Sprintf("shard %d: %s", c.Shard.Index, c.ServerNote)
	}
	if c.ServerCounts != nil {
		a.clientNotifications = c.ServerCounts.ClientNotifications
	}
	a.generator = shardGenerator(c.Generator, c.Shard)
	if c.Finding != "" {
		f := c
		a.finding = &f
	}
	return a
}

// shardGenerator is a shard's generator health with its warning named by
// shard.
func shardGenerator(g *Generator, sh *CellShard) *Generator {
	if g == nil {
		return nil
	}
	out := *g
	if g.Warning != "" && sh != nil {
		out.Warning = fmt.Sprintf("shard %d: %s", sh.Index, g.Warning)
	}
	return &out
}

// Merge adds o's figures to a's: counts and histograms summed, per-client
// acquisitions placed by client id, violations listed, and of shards the
// servers' counters taken once over the span every shard covered, the
// generators' CPU summed and the worst settle, pause and finding kept.
func (a *Accumulator) Merge(o *Accumulator) {
	a.durationS = max(a.durationS, o.durationS)
	a.acquires += o.acquires
	a.errors += o.errors
	for k, v := range o.errClass {
		a.errClass[k] += v
	}
	a.counts = a.counts.Add(o.counts)
	if o.perClient != nil {
		for len(a.perClient) < len(o.perClient) {
			a.perClient = append(a.perClient, 0)
		}
		for i, n := range o.perClient {
			a.perClient[i] += n
		}
	}
	for tag, h := range o.hists {
		a.AddHistogram(tag, h)
	}
	a.AddVectors(o.vectors)
	a.AddAbandon(o.abandon)
	a.AddRenew(o.renew)
	a.AddViolations(o.violations, o.kept...)
	a.possible += o.possible
	a.settle = max(a.settle, o.settle)
	a.safety = a.safety.Add(o.safety)
	if a.base.Truncated == "" {
		a.base.Truncated = o.base.Truncated
	}
	a.mergeShard(o)
}

// mergeShard joins what only shards carry.
func (a *Accumulator) mergeShard(o *Accumulator) {
	if a.shards == 0 {
		a.server, a.serverNote, a.clientNotifications = o.server, o.serverNote, o.clientNotifications
		a.generator, a.finding = o.generator, o.finding
		a.shards = o.shards
		return
	}
	a.shards += o.shards
	a.clientNotifications += o.clientNotifications
	switch {
	case a.server == nil:
	case o.server == nil:
		a.server, a.serverNote = nil, o.serverNote
	default:
		a.server = spanReadings(a.server, o.server)
	}
	a.generator = addGenerator(a.generator, o.generator)
	if a.finding == nil {
		a.finding = o.finding
	}
}

// spanReadings is the span from the earliest reading before to the latest
// after: every shard read the same servers' cumulative counters.
func spanReadings(x, y *ServerReadings) *ServerReadings {
	out := &ServerReadings{Before: map[string]int64{}, After: map[string]int64{}}
	for _, r := range []*ServerReadings{x, y} {
		for k, v := range r.Before {
			if b, ok := out.Before[k]; !ok || v < b {
				out.Before[k] = v
			}
		}
		for k, v := range r.After {
			out.After[k] = max(out.After[k], v)
		}
	}
	if x.CountsBefore != nil && y.CountsBefore != nil && x.CountsAfter != nil && y.CountsAfter != nil {
		b, a := x.CountsBefore.Span(*y.CountsBefore, true), x.CountsAfter.Span(*y.CountsAfter, false)
		out.CountsBefore, out.CountsAfter = &b, &a
	}
	return out
}

// addGenerator adds a shard's generator health: CPU and collections
// summed, the worst pause and share, every warning kept.
func addGenerator(into, g *Generator) *Generator {
	if g == nil {
		return into
	}
	if into == nil {
		c := *g
		return &c
	}
	into.CPUSeconds += g.CPUSeconds
	into.GCCount += g.GCCount
	into.Allocs += g.Allocs
	into.AllocBytes += g.AllocBytes
	into.Goroutines += g.Goroutines
	into.GCPauseMs = max(into.GCPauseMs, g.GCPauseMs)
	into.CPUShare = max(into.CPUShare, g.CPUShare)
	if g.Warning != "" {
		into.Warning = strings.TrimPrefix(into.Warning+"; ", "; ") + g.Warning
	}
	return into
}

// mergedFigures sets what a merge of shards derives: the servers'
// counters over the span, the merge note, a finding and the generator.
func (a *Accumulator) mergedFigures(c *Cell) {
	if a.shards == 0 {
		return
	}
	c.Shard, c.ServerRaw, c.Distributions = nil, nil, nil
	c.Merge = &MergeNote{Shards: a.shards, PossibleOverlaps: a.possible, Grants: a.grants, By: a.order}
	if len(a.base.Distributions) > 0 {
		c.Merge.Note = "the implementation's own distributions are summaries per shard and do not merge: see each shard's results"
	}
	c.Server, c.ServerNote = nil, a.serverNote
	if a.server != nil {
		c.Server = map[string]int64{}
		for k, v := range a.server.After {
			c.Server[k] = v - a.server.Before[k]
		}
		counts, _ := a.server.Counts()
		counts.ClientNotifications = a.clientNotifications
		c.ServerCounts = &counts
		c.ServerNote = ""
	}
	c.Generator = a.generator
	if c.Generator != nil {
		c.Generator.PerCycle(c.Acquires)
	}
	c.Finding, c.Livelock, c.Verdict = "", nil, ""
	if f := a.finding; f != nil {
		c.Finding, c.Livelock = f.Finding, f.Livelock
		if f.Shard != nil && f.Livelock != nil {
			l := *f.Livelock
			shard := f.Shard.Index
			l.Shard = &shard
			c.Livelock = &l
		}
		// A shard written before schema 3 said it in a sentence.
		if f.Verdict != "" {
			c.Verdict = f.Verdict
			if f.Shard != nil {
				c.Verdict = fmt.Sprintf("shard %d: %s", f.Shard.Index, f.Verdict)
			}
		}
	}
}
