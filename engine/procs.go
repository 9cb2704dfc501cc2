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
// which its clients were granted the lock most often — for a closed loop,
// the most grants per second is the least time per cycle, lockbench's
// share of it included — or, when the rates are one within the noise,
// the one that spends the least of lockbench's CPU a grant (pickProcs).

// MinTrialWarmup is the shortest warm-up that holds a trial: four turns,
// each long enough for a few hundred grants of a fast lock.
const MinTrialWarmup = 400 * time.Millisecond

// Trial limits: a candidate replaces the first (Go's own choice) only
// when it was TrialMargin faster in every round — or as fast, and
// TrialCPUMargin cheaper in lockbench's CPU a grant (pickProcs) — and
// each candidate was granted at least TrialMinGrants times in all. One
// turn's rate is noisy — 200 grants alone vary by about 7 % — so a single
// round's lead proves little, but a lead in both rounds, A B then B A, is
// one no drift over the warm-up and no single stall gives.
const (
	TrialMargin    = 0.03
	TrialCPUMargin = 0.10
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
	spent, cpu := make([]time.Duration, len(cands)), make([]time.Duration, len(cands))
	for i, p := range cands {
		tries[i] = result.ProcsTry{Procs: p, RoundsPerS: make([]float64, trialRounds), RoundsCPUPerGrantUs: make([]float64, trialRounds)}
	}
	const cutShort = "the GOMAXPROCS trial was cut short as the cell ended: Go's kept"
	give := func(why string) ([]result.ProcsTry, string, bool) {
		runtime.GOMAXPROCS(cands[0])
		return nil, why, true
	}
	// A cut in a turn names it: the turn's GOMAXPROCS is the one given back.
	cutIn := func(p int) string {
		return fmt.Sprintf("the GOMAXPROCS trial was cut short as the cell ended, in GOMAXPROCS %d's turn: Go's %d kept", p, cands[0])
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
				return give(cutIn(cands[i]))
			}
			g0, t0, c0 := r.live.grants.Load(), time.Now(), cpuTime()
			if sleepUntil(ctx, t0.Add(turn-turn/10)) != nil {
				return give(cutIn(cands[i]))
			}
			g, d, c := r.live.grants.Load()-g0, time.Since(t0), cpuTime()-c0
			planned = planned.Add(turn)
			if now := time.Now(); now.After(latest) {
				return give(fmt.Sprintf("the GOMAXPROCS trial fell %v behind its turns by GOMAXPROCS %d (its timers woke late: lockbench's threads were busy) and kept Go's %d",
					now.Sub(planned).Round(time.Millisecond), cands[i], cands[0]))
			}
			tries[i].Grants += g
			tries[i].RoundsPerS[round] = float64(g) / d.Seconds()
			tries[i].RoundsCPUPerGrantUs[round] = perGrantUs(c, g)
			spent[i] += d
			cpu[i] += c
		}
	}
	for i := range tries {
		tries[i].GrantsPerS = float64(tries[i].Grants) / spent[i].Seconds()
		tries[i].CPUPerGrantUs = perGrantUs(cpu[i], tries[i].Grants)
	}
	keep, why, undecided := pickProcs(tries)
	runtime.GOMAXPROCS(tries[keep].Procs)
	return tries, why, undecided
}

// pickProcs is the trial's verdict. The candidate its clients were
// granted the lock most often under wins when it was TrialMargin faster
// than every other in every round. When none was, the rates are one
// within the noise, and lockbench's own CPU per grant decides instead:
// a candidate TrialCPUMargin cheaper than every other in every round,
// and not TrialMargin slower overall, does the same work for less of the
// cores the servers share — the cost that turns one turn's noise into a
// real difference over a cell (at 4 uncontended Redis clients here, one
// thread cycled 10 % faster over whole cells, and cost 17 µs a grant
// against 21.5 µs, while its turns' rates could not be told apart).
// Otherwise, or with too few grants to tell, the first stays, undecided.
func pickProcs(tries []result.ProcsTry) (keep int, why string, undecided bool) {
	best, cheap, fewest := 0, 0, tries[0].Grants
	for i, t := range tries {
		if t.GrantsPerS > tries[best].GrantsPerS {
			best = i
		}
		if t.CPUPerGrantUs < tries[cheap].CPUPerGrantUs {
			cheap = i
		}
		fewest = min(fewest, t.Grants)
	}
	if fewest < TrialMinGrants {
		return 0, describeTrial(tries, 0) + fmt.Sprintf(": too few grants to tell (%d, under %d)", fewest, TrialMinGrants), true
	}
	leads := func(w int, ahead func(w, i, r int) bool) bool {
		for i, t := range tries {
			for r := range t.RoundsPerS {
				if i != w && !ahead(w, i, r) {
					return false
				}
			}
		}
		return true
	}
	if leads(best, func(w, i, r int) bool { return tries[w].RoundsPerS[r] >= tries[i].RoundsPerS[r]*(1+TrialMargin) }) {
		return best, describeTrial(tries, best), false
	}
	if tries[cheap].GrantsPerS >= tries[best].GrantsPerS*(1-TrialMargin) && tries[cheap].CPUPerGrantUs > 0 &&
		leads(cheap, func(w, i, r int) bool {
			return tries[w].RoundsCPUPerGrantUs[r] > 0 && tries[w].RoundsCPUPerGrantUs[r]*(1+TrialCPUMargin) <= tries[i].RoundsCPUPerGrantUs[r]
		}) {
		return cheap, describeTrial(tries, cheap) + fmt.Sprintf(": as fast within %.0f %%, and %.1f µs of lockbench's CPU a grant against %s",
			100*TrialMargin, tries[cheap].CPUPerGrantUs, otherCPU(tries, cheap)), false
	}
	return 0, describeTrial(tries, 0) + fmt.Sprintf(": none was %.0f %% faster, nor %.0f %% cheaper a grant, than the rest in every round", 100*TrialMargin, 100*TrialCPUMargin), true
}

// otherCPU lists the CPU per grant of the candidates but keep.
func otherCPU(tries []result.ProcsTry, keep int) string {
	var s []string
	for i, t := range tries {
		if i != keep {
			s = append(s, fmt.Sprintf("%.1f µs", t.CPUPerGrantUs))
		}
	}
	return strings.Join(s, ", ")
}

// perGrantUs is CPU time c over g grants, in µs; 0 without grants.
func perGrantUs(c time.Duration, g int64) float64 {
	if g <= 0 {
		return 0
	}
	return float64(c) / float64(g) / 1e3
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
