package judge

import (
	"time"

	"github.com/lockbench/lockbench/result"
)

// MissKind is what, besides a threshold, failed a capacity trial.
type MissKind int

const (
	MissNoAcquisitions MissKind = iota + 1
	MissThreshold               // Breach says which, by how much
	MissUnsafe                  // N safety violations (CellSafety)
	MissDropped                 // N of Of arrivals dropped
	MissUnserved                // N arrivals left unserved
	MissErrors                  // N errors, past what Healthy allows
	MissCutShort                // Reason: the cell's Truncated
	MissFinding                 // Reason: the cell's Finding
)

// Miss is one reason a capacity trial failed, with its figures.
type Miss struct {
	Kind   MissKind
	Breach result.Breach
	N, Of  int64
	Reason string
}

// TrialVerdict is a capacity trial's judgement: every reason it failed,
// none when it passed.
type TrialVerdict struct{ Misses []Miss }

// Pass says nothing failed the trial.
func (v TrialVerdict) Pass() bool { return len(v.Misses) == 0 }

// Trial judges a cell as a capacity trial must be against slo: every
// threshold met, no arrival dropped or left unserved, errors within 1%,
// no safety violation, not cut short.
func Trial(c result.Cell, slo result.SLO) TrialVerdict { return trial(c, slo, true) }

// TrialBesidesTail is Trial without the SLO's quantile: what failed the
// trial besides its tail. A search pools trials whose tail alone is in
// doubt (see TailOver).
func TrialBesidesTail(c result.Cell, slo result.SLO) TrialVerdict { return trial(c, slo, false) }

func trial(c result.Cell, slo result.SLO, tail bool) TrialVerdict {
	var v TrialVerdict
	miss := func(m Miss) { v.Misses = append(v.Misses, m) }
	if c.Acquires == 0 {
		miss(Miss{Kind: MissNoAcquisitions})
	}
	quantile := slo.Thresholds()[0].String()
	for _, b := range Breaches([]result.Cell{c}, slo) {
		if b.Kind == result.BreachFinding || !tail && b.Threshold == quantile && c.Acquires > 0 {
			continue // a finding is its own miss, below
		}
		miss(Miss{Kind: MissThreshold, Breach: b})
	}
	if u := CellSafety(c); u.Bad() {
		miss(Miss{Kind: MissUnsafe, N: u.Violations()})
	}
	if o := c.Open; o != nil && o.Dropped > 0 {
		miss(Miss{Kind: MissDropped, N: o.Dropped, Of: o.Offered})
	}
	if o := c.Open; o != nil && o.Unfinished > 0 {
		miss(Miss{Kind: MissUnserved, N: o.Unfinished})
	}
	if !Healthy(c) && c.Errors > 0 {
		miss(Miss{Kind: MissErrors, N: c.Errors})
	}
	if c.Truncated != "" {
		miss(Miss{Kind: MissCutShort, Reason: c.Truncated})
	}
	if c.Finding != "" {
		miss(Miss{Kind: MissFinding, Reason: c.Finding})
	}
	return v
}

// Lateness: lockbench sent an open loop's arrivals late, rather than the
// lock served them late, when the schedule lag's p99 passes LateFloorUs
// and LateShareOfLatency of the latency measured and, against an SLO, of
// LateShareOfLimit of its limit as well (a lock that queued arrivals for
// a second is not excused by 15 ms of lateness). GeneratorCPUMax is the
// share of all cores lockbench's own CPU may take before it, not the
// lock, is the bottleneck. OtherCoresTolerance is the share of a
// machine's cores other processes may keep busy before a cell's figures
// are partly theirs: a tenth (on 2 cores, a fifth of one) — what a
// machine's own daemons take, not a second workload.
const (
	LateFloorUs         = 1000
	LateShareOfLatency  = 0.5
	LateShareOfLimit    = 0.25
	GeneratorCPUMax     = 0.8
	OtherCoresTolerance = 0.1
)

// Late says lockbench, not the lock, sent an open loop's arrivals late:
// the one rule for it, which a cell's generator note and a capacity trial
// both ask. slo is what the trial is judged against; nil judges the
// latency measured alone (its p99).
func Late(c result.Cell, slo *result.SLO) bool {
	o := c.Open
	if o == nil {
		return false
	}
	lag, measured := o.ScheduleLagUs.P99, c.AcquireLatencyUs.P99
	floor := float64(LateFloorUs)
	if slo != nil {
		measured = slo.Of(c.AcquireLatencyUs)
		floor = max(floor, LateShareOfLimit*float64(slo.Limit)/float64(time.Microsecond))
	}
	return lag > floor && lag >= LateShareOfLatency*measured
}

// GeneratorBusy says lockbench's own CPU took near all of what it could
// use during the cell.
func GeneratorBusy(g *result.Generator) bool { return g != nil && g.CPUShare > GeneratorCPUMax }

// TrialLimit names what other than the lock failed an open-loop trial,
// with its figures: lockbench's own limit (GeneratorLimit), else other
// work on the machine (result.LimitMachineBusy); the zero value when the
// lock's own latency is to blame. others is the share of the cores other
// processes may keep busy (OtherCoresTolerance by default; 1 or more
// never blames the machine).
func TrialLimit(c result.Cell, slo result.SLO, others float64) result.TrialLimit {
	if l := GeneratorLimit(c, slo); l.Kind != "" {
		return l
	}
	return machineBusy(c, others)
}

// GeneratorLimit names lockbench's own limit when it, rather than the
// lock, failed an open-loop trial: arrivals sent Late, or lockbench's CPU
// near all of what it could use (GeneratorBusy). The zero value when the
// lock's own latency is to blame.
func GeneratorLimit(c result.Cell, slo result.SLO) result.TrialLimit {
	if Late(c, &slo) {
		return result.TrialLimit{Kind: result.LimitLate, ScheduleLagP99Us: c.Open.ScheduleLagUs.P99}
	}
	if g := c.Generator; GeneratorBusy(g) {
		return result.TrialLimit{Kind: result.LimitGeneratorCPU, GeneratorCPUShare: g.CPUShare}
	}
	return result.TrialLimit{}
}

// MachineBusy says, when other processes than lockbench and its sandboxed
// servers kept more than OtherCoresTolerance of the machine's cores busy
// during a cell, how much, with how late a sleeping thread woke then; the
// zero value otherwise, or when unknown.
func MachineBusy(c result.Cell) result.TrialLimit { return machineBusy(c, OtherCoresTolerance) }

func machineBusy(c result.Cell, tolerance float64) result.TrialLimit {
	g := c.Generator
	if g == nil || g.Cores <= 0 || g.OtherCores <= tolerance*float64(g.Cores) {
		return result.TrialLimit{}
	}
	l := result.TrialLimit{Kind: result.LimitMachineBusy, OtherCores: g.OtherCores, Cores: g.Cores}
	if w := g.WakeLateUs; w != nil {
		l.WakeLateP99Us, l.WakeLateMaxUs = w.P99, w.Max
	}
	return l
}
