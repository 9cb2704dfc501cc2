package judge

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/result"
)

// JudgeTrial says whether a cell met slo as a capacity trial must: every
// threshold, no arrival dropped or left unserved, errors within 1%, no
// safety violation, not cut short. why names the first miss.
func JudgeTrial(c result.Cell, slo result.SLO) (pass bool, why string) {
	return judgeTrial(c, slo, true)
}

// JudgeTrialBesidesTail is JudgeTrial without the result.SLO's quantile: what
// failed the trial besides its tail, "" when nothing did. A search pools
// trials whose tail alone is in doubt (see TailOver).
func JudgeTrialBesidesTail(c result.Cell, slo result.SLO) string {
	_, why := judgeTrial(c, slo, false)
	return why
}

func judgeTrial(c result.Cell, slo result.SLO, tail bool) (pass bool, why string) {
	var miss []string
	if c.Acquires == 0 {
		miss = append(miss, "no acquisitions")
	}
	quantile := slo.Thresholds()[0].String()
	for _, b := range result.Breaches([]result.Cell{c}, slo) {
		if !tail && b.Threshold == quantile && c.Acquires > 0 {
			continue
		}
		miss = append(miss, b.Threshold+": "+b.Over)
	}
	if u := CellSafety(c); u.Bad() {
		miss = append(miss, fmt.Sprintf("%d safety violations", u.Violations()))
	}
	if o := c.Open; o != nil && o.Dropped > 0 {
		miss = append(miss, fmt.Sprintf("%d of %d arrivals dropped", o.Dropped, o.Offered))
	}
	if o := c.Open; o != nil && o.Unfinished > 0 {
		miss = append(miss, fmt.Sprintf("%d arrivals unserved", o.Unfinished))
	}
	if !result.Healthy(c) && c.Errors > 0 {
		miss = append(miss, fmt.Sprintf("%d errors", c.Errors))
	}
	if c.Truncated != "" {
		miss = append(miss, "cut short: "+c.Truncated)
	}
	if c.Finding != "" {
		miss = append(miss, c.Finding)
	}
	return len(miss) == 0, strings.Join(miss, "; ")
}

// MachineBusyPrefix begins a TrialLimit that blames other work on the
// machine.
const MachineBusyPrefix = "machine busy: "

// TrialLimit names what other than the lock failed an open-loop trial:
// lockbench's own limit (GeneratorLimit), else other work on the machine
// (MachineBusy); "" when the lock's own latency is to blame.
// others is the share of the cores other processes may keep busy
// (result.OtherCoresTolerance by default; 1 or more never blames the machine).
func TrialLimit(c result.Cell, slo result.SLO, others float64) string {
	if l := GeneratorLimit(c, slo); l != "" {
		return l
	}
	if m := machineBusy(c, others); m != "" {
		return MachineBusyPrefix + m
	}
	return ""
}

// GeneratorLimit names lockbench's own limit when it, rather than the
// lock, failed an open-loop trial: arrivals sent late by a sizeable share
// of the result.SLO's latency budget and of the latency measured (a lock that
// queued arrivals for a second is not excused by 15 ms of lateness), or
// lockbench's CPU near all of what it could use. "" when the lock's own
// latency is to blame.
func GeneratorLimit(c result.Cell, slo result.SLO) string {
	limitUs := float64(slo.Limit) / float64(time.Microsecond)
	if o := c.Open; o != nil {
		lag := o.ScheduleLagUs.P99
		if lag > max(limitUs/4, 1000) && lag >= slo.Of(c.AcquireLatencyUs)/2 {
			return fmt.Sprintf("schedule lag p99 %s: lockbench sent arrivals late", result.Dur(lag))
		}
	}
	if g := c.Generator; g != nil && g.CPUShare > 0.8 {
		return fmt.Sprintf("generator CPU %.0f%% of all cores", 100*g.CPUShare)
	}
	return ""
}

// MachineBusy says, when other processes than lockbench and its sandboxed
// servers kept more than result.OtherCoresTolerance of the machine's cores busy
// during a cell, how much, with how late a sleeping thread woke then;
// "" otherwise, or when unknown.
func MachineBusy(c result.Cell) string { return machineBusy(c, result.OtherCoresTolerance) }

func machineBusy(c result.Cell, tolerance float64) string {
	g := c.Generator
	if g == nil || g.Cores <= 0 || g.OtherCores <= tolerance*float64(g.Cores) {
		return ""
	}
	s := fmt.Sprintf("other processes kept %.1f of the %d cores busy", g.OtherCores, g.Cores)
	if w := g.WakeLateUs; w != nil {
		s += fmt.Sprintf(", and a thread sleeping 1 ms woke up to %s late (p99; max %s)", result.Dur(w.P99), result.Dur(w.Max))
	}
	return s
}
