package faults

import (
	"slices"
	"sync"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// tally gathers what a fault cell counts over its repeats, in the cell's
// accumulator, beside what only faults measure (recovery, stale writes,
// details). Clients of one repeat record into it from their own
// goroutines, hence the mutex; none of it is on a hot path.
type tally struct {
	spec  engine.CellSpec
	start time.Time

	mu       sync.Mutex
	acc      *result.Accumulator
	recovery []float64 // ms, one per repeat that recovered
	// recoveries are recovery times of a named way of failing (ms), for
	// scenarios that measure more than one per repeat.
	recoveries map[string][]float64
	// notes are words a verdict states beside the figures (settings in
	// force, say); they are not figures and stay out of Details.
	notes    map[string]string
	accepted int64
	rejected int64
	details  map[string]float64
	// What the safety figures need: the operations, whether the cell
	// wrote to guarded resources, what the unfenced one accepted, and
	// where tokens came from; expiring says leases end without holders.
	hist             history
	guarded          bool
	unfencedAccepted int64
	tokens           result.TokenSource
	expiring         bool
}

func newTally(spec engine.CellSpec) *tally {
	id := result.Cell{Impl: spec.Impl, Clients: spec.Clients, Locks: 1}
	if spec.Scenario != nil {
		id.Scenario = spec.Scenario.Name()
	}
	acc := result.NewAccumulator(id)
	t := &tally{spec: spec, start: time.Now(), acc: acc, details: map[string]float64{},
		recoveries: map[string][]float64{}, notes: map[string]string{}, tokens: result.TokensNone}
	if d := spec.Driver; d.New != nil {
		t.expiring = d.Caps.Any(impl.LeaseTTL | impl.LeaseSession | impl.LeaseConn)
		if d.Caps.Has(impl.Fencing) {
			t.tokens = result.TokensLock
		}
	}
	return t
}

// acquired records one acquisition and how long its Acquire call took.
func (t *tally) acquired(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.acc.Acquired(d)
}

// failed records an error by class.
func (t *tally) failed(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.acc.Failed(impl.Class(err))
}

func (t *tally) count(c impl.Counts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.acc.AddCounts(c)
}

func (t *tally) violate(vs ...result.Violation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.acc.AddViolations(int64(len(vs)), vs...)
}

func (t *tally) recovered(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recovery = append(t.recovery, ms(d))
}

// recoveredAs records a recovery of the way of failing named way; the
// cell's details carry their p50 and max as WAY_recovery_ms_p50, _max.
func (t *tally) recoveredAs(way string, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recoveries[way] = append(t.recoveries[way], ms(d))
}

// note keeps words for the verdict.
func (t *tally) note(key, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notes[key] = text
}

func (t *tally) stale(accepted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if accepted {
		t.accepted++
	} else {
		t.rejected++
	}
}

// add adds v to a detail.
func (t *tally) add(key string, v float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.details[key] += v
}

// set sets a detail.
func (t *tally) set(key string, v float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.details[key] = v
}

// at is when, in seconds after the cell started, something happened.
func (t *tally) at(when time.Time) float64 { return when.Sub(t.start).Seconds() }

// cell builds the results. configured is the bound recovery is compared
// with (0: none).
func (t *tally) cell(configured time.Duration, verdict string) result.Cell {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.acc.Measured(time.Since(t.start))
	c := t.acc.Cell()
	c.Verdict = verdict
	c.Faults = &result.Faults{
		Repeats: t.spec.Repeat, ConfiguredMs: ms(configured),
		StaleWritesAccepted: t.accepted, StaleWritesRejected: t.rejected,
		Details: t.details,
	}
	if len(t.recovery) > 0 {
		c.Faults.RecoveryMs = spread(t.recovery)
	}
	for way, vs := range t.recoveries {
		sp := spread(vs)
		t.details[way+"_recovery_ms_p50"] = sp.P50
		t.details[way+"_recovery_ms_max"] = sp.Max
	}
	if len(t.details) == 0 {
		c.Faults.Details = nil
	}
	t.safety(&c, t.expiring)
	return c
}

// spread summarises a few values by nearest rank.
func spread(vs []float64) *result.Spread {
	s := slices.Clone(vs)
	slices.Sort(s)
	rank := func(q float64) float64 {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return &result.Spread{Count: int64(len(s)), Min: s[0], P1: rank(0.01), P50: rank(0.5), P99: rank(0.99), Max: s[len(s)-1]}
}

// holds records who held a lock when, to find overlaps afterwards. A span
// ends when its holder released or stopped being entitled to the lock (its
// lease ran out by its own reckoning, or it crashed).
type holds struct {
	mu    sync.Mutex
	lock  string
	spans []span
}

type span struct {
	client   int
	from, to time.Time // to is zero while open
}

func (h *holds) enter(client int, at time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.spans = append(h.spans, span{client: client, from: at})
	return len(h.spans) - 1
}

func (h *holds) exit(i int, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.spans[i].to.IsZero() {
		h.spans[i].to = at
	}
}

// overlaps returns the overlaps of different clients' spans, found by
// the cell's one checker; spans still open count as ending at end.
func (h *holds) overlaps(t *tally, end time.Time) []result.Violation {
	h.mu.Lock()
	defer h.mu.Unlock()
	gs := make([]result.SourcedGrant, len(h.spans))
	for i, s := range h.spans {
		to := s.to
		if to.IsZero() {
			to = end
		}
		gs[i] = result.SourcedGrant{Grant: result.Grant{Enter: s.from.UnixNano(), Exit: to.UnixNano(), Client: int32(s.client)}}
	}
	k := result.NewChecker(t.start, 1, func(int) string { return h.lock })
	k.Check(gs, nil)
	_, vs := k.Violations()
	return vs
}
