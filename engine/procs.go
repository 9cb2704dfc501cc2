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
// when its rate is trialMargin higher, and only when each was granted at
// least trialMinGrants times — fewer cannot tell two rates 3 % apart.
const (
	trialMargin    = 0.03
	trialMinGrants = 200
)

// trialTurns is how a warm-up is split: it settles first (connections
// warm, a JVM compiles), then the candidates take turns A B A B, so that
// a drift over the warm-up favours neither; the last part runs on the
// winner before measuring begins.
const (
	trialSettle = 0.2  // of the warm-up
	trialTail   = 0.08 // of the warm-up, on the winner
	trialRounds = 2
)

// startProcsTrial tries r.Spec.ProcsTrial during the warm-up, from a
// goroutine of its own; wait returns once it has set the winner (or the
// cell ended first) and says what was tried.
func (r *Cell) startProcsTrial(ctx context.Context) (wait func() (tries []result.ProcsTry, why string)) {
	cands := r.Spec.ProcsTrial
	if len(cands) < 2 || r.Spec.Warmup < MinTrialWarmup {
		return func() ([]result.ProcsTry, string) { return nil, "" }
	}
	var tries []result.ProcsTry
	var why string
	done := make(chan struct{})
	go func() {
		defer close(done)
		tries, why = r.procsTrial(ctx, cands)
	}()
	return func() ([]result.ProcsTry, string) { <-done; return tries, why }
}

func (r *Cell) procsTrial(ctx context.Context, cands []int) ([]result.ProcsTry, string) {
	w := r.Spec.Warmup
	turn := time.Duration(float64(w) * (1 - trialSettle - trialTail) / float64(trialRounds*len(cands)))
	at := r.start.Add(time.Duration(float64(w) * trialSettle))
	grants := make([]int64, len(cands))
	spent := make([]time.Duration, len(cands))
	for range trialRounds {
		for i, p := range cands {
			if sleepUntil(ctx, at) != nil {
				return nil, ""
			}
			runtime.GOMAXPROCS(p)
			// The first tenth of a turn goes to the change itself: threads
			// parked or woken, goroutines moved between run queues.
			from := at.Add(turn / 10)
			at = at.Add(turn)
			if sleepUntil(ctx, from) != nil {
				return nil, ""
			}
			g0, t0 := r.live.grants.Load(), time.Now()
			if sleepUntil(ctx, at) != nil {
				return nil, ""
			}
			grants[i] += r.live.grants.Load() - g0
			spent[i] += time.Since(t0)
		}
	}
	tries := make([]result.ProcsTry, len(cands))
	for i, p := range cands {
		tries[i] = result.ProcsTry{Procs: p, Grants: grants[i], GrantsPerS: float64(grants[i]) / spent[i].Seconds()}
	}
	keep, why := pickProcs(tries)
	runtime.GOMAXPROCS(tries[keep].Procs)
	return tries, why
}

// pickProcs is the trial's verdict: the candidate its clients were
// granted the lock most often under, unless it beats the first by less
// than trialMargin or some candidate saw too few grants to tell.
func pickProcs(tries []result.ProcsTry) (keep int, why string) {
	best, fewest := 0, tries[0].Grants
	for i, t := range tries {
		if t.GrantsPerS > tries[best].GrantsPerS {
			best = i
		}
		fewest = min(fewest, t.Grants)
	}
	switch {
	case fewest < trialMinGrants:
		return 0, describeTrial(tries, 0) + fmt.Sprintf(": too few grants to tell (%d, under %d)", fewest, trialMinGrants)
	case tries[best].GrantsPerS < tries[0].GrantsPerS*(1+trialMargin):
		if best != 0 {
			return 0, describeTrial(tries, 0) + fmt.Sprintf(", the first: no other was %.0f %% faster", 100*trialMargin)
		}
	}
	return best, describeTrial(tries, best)
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
