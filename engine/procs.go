package engine

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/lockbench/lockbench/result"
)

// Choosing lockbench's own parallelism by trial. Where lockbench shares
// the machine with the servers it drives, how many threads it should run
// depends on the machine: on one 2-core machine, leaving redis-server a
// core (GOMAXPROCS=1) reached 0.92–1.31 of redis-benchmark's rate where
// Go's default of 2 reached 0.85–0.91; on another, Go's default was 1.5×
// faster at 1 client and 1.2× at 64, and leaving the core 1.2× faster at
// 4. No rule fits every machine, so a closed-loop cell with a warm-up
// tries its candidates in turn while it warms up and keeps the one under
// which its clients were granted the lock most often: for a closed loop,
// the most grants per second is the least time per cycle, lockbench's
// share of it included.

// MinTrialWarmup is the shortest warm-up that holds a trial: four turns,
// each long enough for a few hundred grants of a fast lock.
const MinTrialWarmup = 400 * time.Millisecond

// Trial limits: a candidate replaces the first (Go's own choice) only
// when it was TrialMargin faster in every round, and each candidate was
// granted at least TrialMinGrants times in all. One turn's rate is
// noisy — 200 grants alone vary by about 7 % — so a single round's lead
// proves little, but a lead in both rounds, A B then B A, is one no drift
// over the warm-up and no single stall gives.
const (
	TrialMargin    = 0.03
	TrialMinGrants = 200
)

// The warm-up's split: it settles first (connections warm, a JVM
// compiles), then the candidates take turns A B B A, so that a steady
// drift over the warm-up favours neither; the last part runs on the
// winner before measuring begins.
const (
	trialSettle = 0.15 // of the warm-up
	trialTail   = 0.15 // of the warm-up: slack for turns that end late, then the winner
	trialRounds = 2
)

// startProcsTrial tries r.Spec.ProcsTrial during the warm-up, from a
// goroutine of its own; wait returns once it has set the winner (or the
// cell ended first) and says what was tried. A sharded cell tries
// nothing: each shard would choose apart, on its share of the grants.
func (r *Cell) startProcsTrial(ctx context.Context) (wait func() (tries []result.ProcsTry, why string, undecided bool)) {
	cands := r.Spec.ProcsTrial
	if len(cands) < 2 || r.Spec.Warmup < MinTrialWarmup || r.Spec.Shard != nil {
		return func() ([]result.ProcsTry, string, bool) { return nil, "", false }
	}
	var tries []result.ProcsTry
	var why string
	var undecided bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		tries, why, undecided = r.procsTrial(ctx, cands)
	}()
	return func() ([]result.ProcsTry, string, bool) { <-done; return tries, why, undecided }
}

func (r *Cell) procsTrial(ctx context.Context, cands []int) ([]result.ProcsTry, string, bool) {
	w := r.Spec.Warmup
	turn := time.Duration(float64(w) * (1 - trialSettle - trialTail) / float64(trialRounds*len(cands)))
	// Turns are timed from when the trial's goroutine actually woke: on
	// threads kept busy it wakes late, and a window timed from the plan
	// would shrink to nothing. A trial that falls behind so far that it
	// would run into the measurement gives up instead.
	latest := r.measureFrom.Add(-time.Duration(float64(w) * trialTail / 5))
	planned := r.start.Add(time.Duration(float64(w) * trialSettle))
	tries := make([]result.ProcsTry, len(cands))
	spent := make([]time.Duration, len(cands))
	for i, p := range cands {
		tries[i] = result.ProcsTry{Procs: p, RoundsPerS: make([]float64, trialRounds)}
	}
	const cutShort = "the GOMAXPROCS trial was cut short as the cell ended: Go's kept"
	give := func(why string) ([]result.ProcsTry, string, bool) {
		runtime.GOMAXPROCS(cands[0])
		return nil, why, true
	}
	if sleepUntil(ctx, r.start.Add(time.Duration(float64(w)*trialSettle))) != nil {
		return give(cutShort)
	}
	for round := range trialRounds {
		for k := range cands {
			i := k
			if round%2 == 1 { // A B, then B A
				i = len(cands) - 1 - k
			}
			runtime.GOMAXPROCS(cands[i])
			// The first tenth of a turn goes to the change itself: threads
			// parked or woken, goroutines moved between run queues.
			if sleepUntil(ctx, time.Now().Add(turn/10)) != nil {
				return give(cutShort)
			}
			g0, t0 := r.live.grants.Load(), time.Now()
			if sleepUntil(ctx, t0.Add(turn-turn/10)) != nil {
				return give(cutShort)
			}
			g, d := r.live.grants.Load()-g0, time.Since(t0)
			planned = planned.Add(turn)
			if now := time.Now(); now.After(latest) {
				return give(fmt.Sprintf("the GOMAXPROCS trial fell %v behind its turns by GOMAXPROCS %d (its timers woke late: lockbench's threads were busy) and kept Go's %d",
					now.Sub(planned).Round(time.Millisecond), cands[i], cands[0]))
			}
			tries[i].Grants += g
			tries[i].RoundsPerS[round] = float64(g) / d.Seconds()
			spent[i] += d
		}
	}
	for i := range tries {
		tries[i].GrantsPerS = float64(tries[i].Grants) / spent[i].Seconds()
	}
	keep, why, undecided := pickProcs(tries)
	runtime.GOMAXPROCS(tries[keep].Procs)
	return tries, why, undecided
}

// pickProcs is the trial's verdict: the candidate its clients were
// granted the lock most often under, when it was TrialMargin faster than
// every other in every round and each saw enough grants to tell; else
// the first, undecided.
func pickProcs(tries []result.ProcsTry) (keep int, why string, undecided bool) {
	best, fewest := 0, tries[0].Grants
	for i, t := range tries {
		if t.GrantsPerS > tries[best].GrantsPerS {
			best = i
		}
		fewest = min(fewest, t.Grants)
	}
	if fewest < TrialMinGrants {
		return 0, describeTrial(tries, 0) + fmt.Sprintf(": too few grants to tell (%d, under %d)", fewest, TrialMinGrants), true
	}
	for i, t := range tries {
		for r, rate := range t.RoundsPerS {
			if i != best && tries[best].RoundsPerS[r] < rate*(1+TrialMargin) {
				return 0, describeTrial(tries, 0) + fmt.Sprintf(": none was %.0f %% faster than the rest in every round", 100*TrialMargin), true
			}
		}
	}
	return best, describeTrial(tries, best), false
}

// describeTrial says what a trial found: "GOMAXPROCS 2 vs 1 in the
// warm-up: 58,050 vs 42,762 grants/s, kept 2".
func describeTrial(tries []result.ProcsTry, keep int) string {
	procs := make([]string, len(tries))
	rates := make([]string, len(tries))
	for i, t := range tries {
		procs[i] = fmt.Sprint(t.Procs)
		rates[i] = fmt.Sprintf("%.0f", t.GrantsPerS)
	}
	return fmt.Sprintf("GOMAXPROCS %s tried in the warm-up: %s grants/s, kept %d",
		strings.Join(procs, " vs "), strings.Join(rates, " vs "), tries[keep].Procs)
}
