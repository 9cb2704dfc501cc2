package faults

import (
	"github.com/lockbench/lockbench/exclusion"
	"slices"
	"sync"
	"time"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// tally gathers what a fault cell counts over its repeats, in the cell's
// accumulator, beside what only faults measure (recovery, stale writes,
// the scenario's own figures). Clients of one repeat record into it from
// their own goroutines, hence the mutex; none of it is on a hot path.
type tally struct {
	spec  engine.CellSpec
	start time.Time

	mu       sync.Mutex
	acc      *result.Accumulator
	recovery []float64 // ms, one per repeat that recovered
	accepted int64
	rejected int64
	// faults holds the scenario's typed figures (one of its Crash …
	// Freeze), set by the runner before any client runs and changed under
	// mu through update.
	faults result.Faults
	// What the safety figures need: the operations, whether the cell
	// wrote to guarded resources, what the unfenced one accepted, and
	// where tokens came from; expiring says leases end without holders.
	hist             history
	guarded          bool
	unfencedAccepted int64
	tokens           result.TokenSource
	expiring         bool
	// g is the guarded register (--guard).
	g guards
}

func newTally(spec engine.CellSpec) *tally {
	id := result.Cell{Impl: spec.Impl, Clients: spec.Clients, Locks: 1}
	if spec.Scenario != nil {
		id.Scenario = spec.Scenario.Name()
	}
	acc := result.NewAccumulator(id)
	t := &tally{spec: spec, start: time.Now(), acc: acc, tokens: result.TokensNone}
	if d := spec.Driver; d.New != nil {
		t.expiring = d.Caps.Any(impl.LeaseTTL | impl.LeaseSession | impl.LeaseConn)
		if d.Caps.Has(impl.Fencing) {
			t.tokens = result.TokensLock
		}
	}
	t.initGuards()
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

func (t *tally) stale(accepted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if accepted {
		t.accepted++
	} else {
		t.rejected++
	}
}

// update changes the scenario's figures under the tally's lock.
func (t *tally) update(change func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	change()
}

// at is when, in seconds after the cell started, something happened.
func (t *tally) at(when time.Time) float64 { return when.Sub(t.start).Seconds() }

// cell builds the results. configured is the bound recovery is compared
// with (0: none), bound which lease bound it is ("": not a lease's).
func (t *tally) cell(configured time.Duration, bound result.Bound) result.Cell {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.acc.Measured(time.Since(t.start))
	for l, g := range t.g.clients { // clients a script closed itself
		g.Close()
		delete(t.g.clients, l)
	}
	c := t.acc.Cell()
	f := t.faults
	f.Repeats, f.ConfiguredMs, f.Bound = t.spec.Repeat, ms(configured), bound
	f.StaleWritesAccepted, f.StaleWritesRejected = t.accepted, t.rejected
	if len(t.recovery) > 0 {
		f.RecoveryMs = spread(t.recovery)
	}
	c.Faults = &f
	t.safety(&c, t.expiring)
	return c
}

// spread summarises a few values by nearest rank; none gives nil.
func spread(vs []float64) *result.Spread {
	if len(vs) == 0 {
		return nil
	}
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
	gs := make([]exclusion.SourcedGrant, len(h.spans))
	for i, s := range h.spans {
		to := s.to
		if to.IsZero() {
			to = end
		}
		gs[i] = exclusion.SourcedGrant{Grant: result.Grant{Enter: s.from.UnixNano(), Exit: to.UnixNano(), Client: int32(s.client)}}
	}
	k := exclusion.NewChecker(t.start, 1, func(int) string { return h.lock })
	k.Check(gs, nil)
	_, vs := k.Violations()
	return vs
}
