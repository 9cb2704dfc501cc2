package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/lockbench/lockbench/capacity"
	"github.com/lockbench/lockbench/result"
)

// WriteCapacitySearch prints what `lockbench capacity` found, answer
// first: a verdict line per search and per knee, then each search's trials
// and each sweep's points.
func WriteCapacitySearch(w io.Writer, rep *result.CapacityReport) {
	slo, _ := result.ParseSLO(rep.SLO)
	for _, s := range rep.Searches {
		fmt.Fprintln(w, SearchVerdict(s, slo, rep.Precision))
		if a := AnswerLine(s); a != "" {
			fmt.Fprintln(w, "  "+a)
		}
		if why := TailWhy(s, slo); why != "" {
			fmt.Fprintln(w, "  "+why)
		}
	}
	for _, k := range rep.Knees {
		fmt.Fprintln(w, KneeVerdict(k))
	}
	for _, s := range rep.Searches {
		fmt.Fprintf(w, "\n%s: %d trials in %s (rate, %s, verdict)%s\n", s.Impl, len(s.Trials),
			time.Duration(s.WallS*float64(time.Second)).Round(time.Second), slo.Label(), machineText(s.Trials))
		for _, t := range s.Trials {
			fmt.Fprintf(w, "  %-7s %s\n", t.Phase, DescribeTrial(t, slo))
		}
	}
	for _, k := range rep.Knees {
		fmt.Fprintf(w, "\n%s: closed loop (%s) by clients\n", k.Impl, k.Scenario)
		for _, p := range k.Points {
			fit := ""
			if k.Fit != nil {
				fit = fmt.Sprintf("  fit %s", commas(round(uslX(*k.Fit, float64(p.Clients)))))
			}
			fmt.Fprintf(w, "  %4d clients  %8s acq/s%s  p99 %s", p.Clients, commas(round(p.AcquiresPerS)), fit, result.Dur(p.P99Us))
			if p.Little.Note != "" {
				fmt.Fprintf(w, "  — Little's law %+.0f%% off", 100*p.Little.Off)
			}
			fmt.Fprintln(w)
		}
	}
	if rep.Failure != "" {
		fmt.Fprintf(w, "\nended early: %s\n", rep.Failure)
	}
}

// DescribeTrial is a trial in one line: rate, the SLO's quantile, verdict
// and why.
func DescribeTrial(t result.SearchTrial, slo result.SLO) string {
	v := "pass"
	switch {
	case t.Unknown != "":
		v = "unknown, counted neither way — not the lock's limit: " + t.Unknown
	case !t.Pass:
		v = "FAIL: " + failText(t, slo)
	}
	if l := trialLimitText(t); l != "" {
		v += " — not the lock's limit: " + l
	}
	full := "short"
	if t.Full {
		full = "full"
	}
	return fmt.Sprintf("%9s/s %-5s %s %-8s %s%s", sig3(t.Rate), full, slo.Label(), result.Dur(t.LatencyUs), v, tailText(t))
}

// failText is what failed a trial: the share its pool's arrivals took
// over the SLO's limit when the pool decided the verdict, else the
// trial's own reason.
func failText(t result.SearchTrial, slo result.SLO) string {
	p := t.PoolShare
	if p == nil {
		return t.Why
	}
	return fmt.Sprintf("%.2f%% of arrivals over %s (95%%: %.2f–%.2f%%) against %g%%",
		100*p.Share, slo.Limit, 100*p.Low, 100*p.High, 100*p.Allowed)
}

// tailText is a trial's arrivals over the SLO's limit, pooled with those
// before it at the same rate, and whether they decided its verdict.
func tailText(t result.SearchTrial) string {
	if t.Arrivals == 0 || trialLimitText(t) != "" || t.Unknown != "" {
		return ""
	}
	over, n, d := t.Over, t.Arrivals, t.Dispersion
	if t.Pool > 1 {
		over, n, d = t.PooledOver, t.PooledArrivals, t.PooledDispersion
	}
	s := fmt.Sprintf("  [%s of %s over the limit", commas(over), commas(n))
	if d > 1 {
		s += fmt.Sprintf(" in bursts (worth %s independent)", commas(int64(float64(n)/d)))
	}
	if t.Pool > 1 {
		s += fmt.Sprintf(", %d trials pooled", t.Pool)
	}
	if t.Pool > 0 && !t.Decided {
		s += ": too close to call"
	}
	return s + "]"
}

// rangeText is the range the trials' tails bound the capacity to, when
// it is wider than the search's own precision: "" otherwise.
func rangeText(s result.CapacitySearch) string {
	switch {
	case s.Low == 0 && s.High == 0:
		return ""
	case s.Low == s.Rate && s.High == s.Missed:
		return ""
	case s.High == 0:
		return fmt.Sprintf("; 95 %%: at least %s/s", sig3(s.Low))
	case s.Low == 0:
		return fmt.Sprintf("; 95 %%: below %s/s", sig3(s.High))
	}
	return fmt.Sprintf("; 95 %%: %s–%s/s", sig3(s.Low), sig3(s.High))
}

// spanText is an interval in words, open ends said so.
func spanText(iv *result.RateInterval) string {
	switch {
	case iv.Low > 0 && iv.High > 0:
		return fmt.Sprintf("%s–%s/s", sig3(iv.Low), sig3(iv.High))
	case iv.High > 0:
		return fmt.Sprintf("below %s/s", sig3(iv.High))
	case iv.Low > 0:
		return fmt.Sprintf("%s/s and above", sig3(iv.Low))
	}
	return "every rate tried"
}

// AnswerLine is a search's answer with its intervals: the range the
// capacity lies in and where its ends come from, then the SLO's quantile
// at the answer from the trials its verdict rests on — "answer 1,200/s
// [1,100, 1,300] (95 % by the trials' tails); p99 8.1ms [7.2ms, 9.4ms]
// from 4,000 arrivals in 3 trials". "" without an answer.
func AnswerLine(s result.CapacitySearch) string {
	iv := s.Interval
	if s.Rate == 0 || iv == nil {
		return ""
	}
	high, low := "none failed above", sig3(iv.Low)
	if iv.High > 0 {
		high = sig3(iv.High)
	} else if iv.HighFrom == capacity.FromSpread {
		high = "open: no rate above failed every repeat"
	}
	if iv.Low == 0 && iv.LowFrom == capacity.FromSpread {
		low = "open: no rate below passed every repeat"
	}
	var from string
	switch {
	case iv.LowFrom == capacity.FromSpread || iv.HighFrom == capacity.FromSpread:
		sp := s.Spread
		from = "unstable: the server's capacity moved between trials"
		if sp != nil {
			from = fmt.Sprintf("unstable: %d of %d full trials passed at %s/s, %d of %d at %s/s; the ends are the nearest rates where every repeat agreed",
				sp.PassedAt, sp.TrialsAt, sig3(sp.Rate), sp.PassedMissed, sp.TrialsMissed, sig3(sp.Missed))
		}
	case iv.LowFrom == capacity.FromTails && (iv.HighFrom == capacity.FromTails || iv.HighFrom == ""):
		from = "95 % by the trials' tails"
	case iv.LowFrom == capacity.FromTails:
		from = "low end 95 % by the trials' tails, high end the lowest rate that failed"
	case iv.HighFrom == capacity.FromTails:
		from = "low end the highest rate that passed, high end 95 % by the trials' tails"
	default:
		from = "the highest rate that passed, the lowest that failed"
	}
	line := fmt.Sprintf("answer %s/s [%s, %s] (%s)", sig3(s.Rate), low, high, from)
	if q := s.LatencyInterval; q != nil {
		line += fmt.Sprintf("; %s %s [%s, %s] from %s arrivals in %s", metricText(q.Quantile), result.Dur(q.PointUs),
			result.Dur(q.LowUs), result.Dur(q.HighUs), commas(q.Arrivals), plural(int64(q.Trials), "trial"))
	}
	return line
}

// metricText is a quantile's name as people write it: p99.9 for p999.
func metricText(q string) string {
	if slo, err := result.ParseSLO(q + "<=1s"); err == nil {
		return slo.Label()
	}
	return q
}

// SearchVerdict is a search's answer in one line: "redis: 12,400 acq/s
// at p99 ≤ 10 ms (±5 %, confirmed; 13,000 missed)".
func SearchVerdict(s result.CapacitySearch, slo result.SLO, precision float64) string {
	at := fmt.Sprintf("%s ≤ %s", slo.Label(), limitText(slo.Limit))
	switch {
	case s.Rate == 0 && s.Limit != "":
		return fmt.Sprintf("%s: no capacity claimed: no rate met %s down to %s/s, where the trials stopped measuring the lock (%s): measure on a quieter machine",
			s.Impl, at, sig3(lowest(s.Trials)), s.Limit)
	case s.Rate == 0:
		return fmt.Sprintf("%s: no rate met %s (%s)", s.Impl, at, s.Note)
	case s.Limit != "":
		return fmt.Sprintf("%s: at least %s acq/s at %s — the search stopped where the trials stopped measuring the lock (%s); the lock may carry more",
			s.Impl, sig3(s.Rate), at, s.Limit)
	case !s.Confirmed && rangeText(s) != "":
		return fmt.Sprintf("%s: %s acq/s at %s (%s; not to ±%g %%: %s)", s.Impl, sig3(s.Rate), at, strings.TrimPrefix(rangeText(s), "; "), 100*precision, s.Note)
	case s.Unstable && s.Interval != nil:
		// The note an unstable search writes begins "unstable: …".
		return fmt.Sprintf("%s: %s acq/s at %s (%s; the capacity moved within %s)", s.Impl, sig3(s.Rate), at, s.Note, spanText(s.Interval))
	case s.Confirmed && rangeText(s) != "": // the tails did not decide to ±precision
		return fmt.Sprintf("%s: %s acq/s at %s (confirmed; %s missed%s)", s.Impl, sig3(s.Rate), at, sig3(s.Missed), rangeText(s))
	case s.Confirmed:
		return fmt.Sprintf("%s: %s acq/s at %s (±%g %%, confirmed; %s missed)", s.Impl, sig3(s.Rate), at, 100*precision, sig3(s.Missed))
	}
	return fmt.Sprintf("%s: %s acq/s at %s (±%g %%, not confirmed: %s%s)", s.Impl, sig3(s.Rate), at, 100*precision, s.Note, rangeText(s))
}

// KneeVerdict is a sweep's answer in one line: "zk-pred: best at 24
// clients, peak 1,130 acq/s (σ 0.03, κ 0.0004, R² 0.98)".
func KneeVerdict(k result.Knee) string {
	if k.Fit == nil {
		best := result.KneePoint{}
		for _, p := range k.Points {
			if p.AcquiresPerS > best.AcquiresPerS {
				best = p
			}
		}
		return fmt.Sprintf("%s: most measured at %d clients, %s acq/s (no USL fit: %s)", k.Impl, best.Clients, sig3(best.AcquiresPerS), k.Note)
	}
	f := *k.Fit
	params := fmt.Sprintf("σ %s, κ %s, R² %.2f", param(f.Sigma), param(f.Kappa), f.R2)
	if f.Kappa == 0 {
		return fmt.Sprintf("%s: no peak: throughput levels off toward %s acq/s (%s)", k.Impl, sig3(f.Peak), params)
	}
	maxN := 0
	for _, p := range k.Points {
		maxN = max(maxN, p.Clients)
	}
	beyond := ""
	if f.NStar > float64(maxN) {
		beyond = fmt.Sprintf(", beyond the %d measured", maxN)
	}
	n, s := math.Max(1, math.Round(f.NStar)), "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("%s: best at %.0f client%s%s, peak %s acq/s (%s)", k.Impl, n, s, beyond, sig3(f.Peak), params)
}

// lowest is the lowest rate a search tried.
func lowest(ts []result.SearchTrial) float64 {
	lo := math.Inf(1)
	for _, t := range ts {
		lo = math.Min(lo, t.Rate)
	}
	return lo
}

// uslX is the fitted throughput at n clients.
func uslX(f result.USLFit, n float64) float64 {
	return f.Lambda * n / (1 + f.Sigma*(n-1) + f.Kappa*n*(n-1))
}

// sig3 writes a rate to three significant figures, with thousands
// separators: 12,437.5 → 12,400. A search is good to its precision only.
func sig3(v float64) string {
	if v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return "0"
	}
	if v < 100 {
		return fmt.Sprintf("%.3g", v)
	}
	mag := math.Pow(10, math.Floor(math.Log10(v))-2)
	return commas(int64(math.Round(math.Round(v/mag) * mag)))
}

// param writes a fitted parameter to two significant figures.
func param(v float64) string {
	if math.Abs(v) < 1e-6 { // the optimiser's zero: 1.7e-17 says nothing
		return "0"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.2g", v), ".")
}

// limitText writes an SLO's limit as people write it: 10 ms, 500 µs.
func limitText(d time.Duration) string {
	switch {
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%d s", d/time.Second)
	case d >= time.Millisecond:
		return fmt.Sprintf("%g ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%g µs", float64(d)/float64(time.Microsecond))
}

// machineText is the machine's state over a search's trials, the
// evidence for how far its figures are the lock's: the most cores other
// processes kept busy and the latest a sleeping thread woke (p99); ""
// when no trial measured it.
func machineText(ts []result.SearchTrial) string {
	others, wake := 0.0, 0.0
	for _, t := range ts {
		others, wake = math.Max(others, t.OtherCores), math.Max(wake, t.WakeLateP99Us)
	}
	if wake == 0 {
		return ""
	}
	return fmt.Sprintf("; the machine: other processes kept up to %.1f cores busy, a thread sleeping 1 ms woke up to %s late (p99)",
		others, result.Dur(wake))
}

// TailWhy says why a search's failing trials failed where the lock
// declares what a waiter waits for (CapacitySearch.Wait) and a trial
// failed on latency: "" otherwise.
func TailWhy(s result.CapacitySearch, slo result.SLO) string {
	if s.Wait == "" {
		return ""
	}
	limitUs := float64(slo.Limit) / float64(time.Microsecond)
	worst := 0.0
	for _, t := range s.Trials {
		if !t.Pass && trialLimitText(t) == "" && t.LatencyUs > limitUs {
			worst = math.Max(worst, t.LatencyUs)
		}
	}
	if worst == 0 {
		return ""
	}
	return fmt.Sprintf("why the %s jumps (to %s in the trials that failed): an arrival that finds the lock held waits for %s; "+
		"above the answer more arrivals than the %s allows find it held",
		slo.Label(), result.Dur(worst), s.Wait, slo.Label())
}

// TrialLimitWords phrase what other than the lock limited a trial, as
// judge found it: "schedule lag p99 20.0ms: lockbench sent arrivals
// late", "generator CPU 95% of all cores", "machine busy: other
// processes kept 1.3 of the 2 cores busy, …"; "" when the lock is to
// blame.
func TrialLimitWords(l result.TrialLimit) string {
	switch l.Kind {
	case result.LimitLate:
		return fmt.Sprintf("schedule lag p99 %s: lockbench sent arrivals late", result.Dur(l.ScheduleLagP99Us))
	case result.LimitGeneratorCPU:
		return fmt.Sprintf("generator CPU %.0f%% of all cores", 100*l.GeneratorCPUShare)
	case result.LimitMachineBusy:
		return "machine busy: " + busyWords(l)
	}
	return ""
}

// busyWords say how busy other processes kept the machine, with how late
// a sleeping thread woke then.
func busyWords(l result.TrialLimit) string {
	s := fmt.Sprintf("other processes kept %.1f of the %d cores busy", l.OtherCores, l.Cores)
	if l.WakeLateP99Us > 0 || l.WakeLateMaxUs > 0 {
		s += fmt.Sprintf(", and a thread sleeping 1 ms woke up to %s late (p99; max %s)", result.Dur(l.WakeLateP99Us), result.Dur(l.WakeLateMaxUs))
	}
	return s
}

// trialLimitText is what other than the lock failed a trial: judge's
// finding phrased, or the sentence a file written before it holds.
func trialLimitText(t result.SearchTrial) string {
	if l := t.LimitedBy; l != nil {
		return TrialLimitWords(*l)
	}
	return t.Limit
}

// LittleNote says in words what a cell judge.LittleOff found: "Little's
// law: 8 clients, but throughput × cycle is 6.0 (-25%): …".
func LittleNote(l result.Little) string {
	s := "s"
	if l.Clients == 1 {
		s = ""
	}
	return fmt.Sprintf("Little's law: %d client%s, but throughput × cycle is %.1f (%+.0f%%): time is lost where nothing measures it",
		l.Clients, s, l.Expected, 100*l.Off)
}
