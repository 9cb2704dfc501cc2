package report

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
)

// FaultSentence phrases what a fault scenario measured on a cell, or the
// livelock a cell ended with, in one sentence about the implementation
// ("redis: after the holder's connection was cut …"); "" for a cell with
// neither. It reads the cell's typed figures only. A cell written before
// schema 3 brought its sentence along (the deprecated Verdict), and
// that sentence is shown as written.
func FaultSentence(c Cell) string {
	if c.Verdict != "" { // only results written before schema 3 have one
		return c.Verdict
	}
	if l := c.Livelock; l != nil && l.LimitRetries > 0 {
		return livelockSentence(l)
	}
	f := c.Faults
	if f == nil {
		return ""
	}
	for _, s := range []struct {
		has    bool
		phrase func(Cell) string
	}{
		{f.Crash != nil, crashSentence},
		{f.ConnCrash != nil, connCrashSentence},
		{f.Pause != nil, pauseSentence},
		{f.ConnPause != nil, connPauseSentence},
		{f.Failover != nil, failoverSentence},
		{f.Restart != nil, restartSentence},
		{f.ConnRestart != nil, connRestartSentence},
		{f.Latency != nil, latencySentence},
		{f.Partition != nil, partitionSentence},
		{f.EnsemblePartition != nil, ensemblePartitionSentence},
		{f.Freeze != nil, freezeSentence},
		{f.DeadWaiters != nil, deadWaitSentence},
		{f.Pauses != nil, pausesSentence},
		{f.ClockJump != nil, clockJumpSentence},
	} {
		if s.has {
			return s.phrase(c)
		}
	}
	return ""
}

// ownServers ends the sentence of a scenario that staged its failure on
// servers it started itself (failover and restart must kill and restart
// them), whatever servers the run was given.
const ownServers = "(Staged on servers of its own, started in a sandbox, not on the servers the run was given.)"

// boundWords name a lease bound as the sentences do.
var boundWords = map[result.Bound]string{
	result.BoundTTL:     "TTL",
	result.BoundSession: "session timeout",
	result.BoundConn:    "connection end (a silent peer: the server's TCP keepalive)",
}

// failoverWords say how a failover was staged.
var failoverWords = map[result.Failover]string{
	result.FailoverReplica:  "master killed after the grant, asynchronous replica promoted without the key",
	result.FailoverMaster:   "one of five masters killed after the grant",
	result.FailoverFollower: "the follower holding the client's session killed",
}

func crashSentence(c Cell) string {
	bound := boundWords[c.Faults.Bound]
	if c.Faults.BoundSetting != "" {
		bound = c.Faults.BoundSetting
	}
	return recoverySentence(c, "after the holder's connection was cut", bound, setting(c.Faults.ConfiguredMs))
}

// recoverySentence is the sentence for scenarios whose figure is the time
// until the next client held the lock.
func recoverySentence(c Cell, after, boundName string, bound time.Duration) string {
	f := c.Faults
	if f.RecoveryMs == nil {
		return fmt.Sprintf("%s: no client got the lock %s in %s; %s",
			c.Impl, after, countOf(int64(f.Repeats), "repeat"), violationsClause(c))
	}
	s := fmt.Sprintf("%s: %s the next client held the lock after %s p50, %s max over %s, against a %s of %s",
		c.Impl, after, faultMs(f.RecoveryMs.P50), faultMs(f.RecoveryMs.Max), countOf(f.RecoveryMs.Count, "repeat"),
		boundName, bound)
	if n := int64(f.Repeats) - f.RecoveryMs.Count; n > 0 {
		s += fmt.Sprintf(" (%d never recovered)", n)
	}
	return s + "; " + violationsClause(c)
}

func violationsClause(c Cell) string {
	u := judge.CellSafety(c)
	switch {
	case !u.Bad():
		return "no violation of mutual exclusion."
	case u.Violations() == u.Other && u.LostUpdates == 0 && !u.NotLinearizable:
		return fmt.Sprintf("%s of mutual exclusion.", countOf(u.Other, "violation"))
	}
	return "mutual exclusion broken: " + UnsafetyWords(u) + "."
}

func connCrashSentence(c Cell) string {
	cc := c.Faults.ConnCrash
	n := int64(c.Faults.Repeats)
	v := fmt.Sprintf("%s, whose lock lasts as long as the holder's connection: ", c.Impl)
	if rec := c.Faults.RecoveryMs; rec != nil {
		v += fmt.Sprintf("a holder whose connection was reset (RST) lost it at once, the next client holding it %s p50, %s max after the reset (%d of %d repeats)",
			faultMs(rec.P50), faultMs(rec.Max), rec.Count, n)
	} else {
		v += fmt.Sprintf("after a reset (RST) no client got the lock in %s", countOf(n, "repeat"))
	}
	v += fmt.Sprintf("; a holder that fell silent (its connection left open, the proxy's kernel answering for it as a NAT or a load balancer would; %s)",
		keepaliveWords(cc.Keepalive))
	for i, fate := range silentFates(cc, n) {
		if i > 0 {
			v += ", and"
		}
		v += " was " + fate.text
		if fate.unfreed {
			v += ": the server saw a live peer, and keepalive frees a silent holder only where nothing answers its probes for it — a finding, not an error"
		}
	}
	return v + "; " + violationsClause(c)
}

// silentFate is what became of silent holders in some repeats.
type silentFate struct {
	text    string
	unfreed bool
}

// silentFates are, for a crash that also silenced the holder's
// connection (a lock of the connection's), how the silent holders fared:
// freed (after how long) and never freed (within how long), each in how
// many of the repeats.
func silentFates(cc *result.ConnCrashFigures, repeats int64) []silentFate {
	var out []silentFate
	if s := cc.Silent; s.Recovered > 0 && s.RecoveryMs != nil {
		out = append(out, silentFate{text: fmt.Sprintf("freed %s p50 after it fell silent in %d of %d repeats",
			faultMs(s.RecoveryMs.P50), s.Recovered, repeats)})
	}
	if s := cc.Silent; s.Unfreed > 0 {
		out = append(out, silentFate{text: fmt.Sprintf("never freed within %s in %d of %d repeats",
			faultMs(cc.SilentWaitMs), s.Unfreed, repeats), unfreed: true})
	}
	return out
}

// keepaliveWords state the TCP keepalive in force on a silent holder's
// connection.
func keepaliveWords(k *result.Keepalive) string {
	switch {
	case k == nil || (k.Reported && k.IdleS <= 0):
		return "TCP keepalive unknown"
	case !k.Reported:
		return "unknown: the driver cannot say"
	}
	s := fmt.Sprintf("TCP keepalive idle %v, interval %v, count %d", seconds(k.IdleS), seconds(k.IntervalS), k.Count)
	if k.Source != "" {
		s += " (" + k.Source + ")"
	}
	return s
}

func pauseSentence(c Cell) string {
	f, p := c.Faults, c.Faults.Pause
	bound := boundWords[f.Bound]
	if f.BoundSetting != "" { // the driver's own: rueidislock's KeyValidity, a Lease's LeaseDuration
		bound = f.BoundSetting
	}
	var v string
	if f.RecoveryMs != nil {
		v = fmt.Sprintf("%s: a holder stalled past its %s lost the lock to another client after %s p50 (%s %s); ",
			c.Impl, bound, faultMs(f.RecoveryMs.P50), bound, setting(f.ConfiguredMs))
	} else {
		v = fmt.Sprintf("%s: no other client got the lock while the holder stalled; ", c.Impl)
	}
	v += fmt.Sprintf("its late write was stale in %d of %d repeats: accepted %d times without fencing, and with fencing accepted %d, rejected %d.",
		p.StaleWrites, f.Repeats, p.UnfencedAccepted, f.StaleWritesAccepted, f.StaleWritesRejected)
	switch unsafe := judge.CellSafety(c).Bad(); {
	case unsafe && !p.LockFences:
		v += " The lock hands out no fencing token, so its users' stale writes were accepted: unsafe."
	case unsafe:
		v += " Its fencing token did not stop the stale write: unsafe."
	case p.StaleWrites > 0:
		v += " Stale grant, fenced: the token turned the late write away."
	}
	return v
}

func connPauseSentence(c Cell) string {
	p := c.Faults.ConnPause
	v := fmt.Sprintf("%s: a holder that stalled %s kept the lock throughout — its lock lasts as long as its connection, which stayed open — ",
		c.Impl, setting(p.PauseMs))
	if rec := c.Faults.RecoveryMs; rec != nil {
		v += fmt.Sprintf("so the waiters stalled as long: the next grant came %s p50, %s max after the pause began (%.2f× the pause), over %s",
			faultMs(rec.P50), faultMs(rec.Max), rec.P50/p.PauseMs, countOf(rec.Count, "repeat"))
	} else {
		v += "and no waiter got it afterwards"
	}
	if n := p.GrantedDuringPause; n > 0 {
		v += fmt.Sprintf("; in %s a waiter was granted it during the pause", countOf(n, "repeat"))
	}
	if n := p.HolderLost; n > 0 {
		v += fmt.Sprintf("; in %s the holder's release found the lock lost", countOf(n, "repeat"))
	}
	return v + "; " + violationsClause(c) + " No lease expired: a stalled holder blocks everyone for as long as it stalls."
}

func failoverSentence(c Cell) string {
	f, fo := c.Faults, c.Faults.Failover
	v := fmt.Sprintf("%s: %s; a second client got the lock while the first held it in %d of %d repeats",
		c.Impl, failoverWords[fo.Staged], fo.OverlappingRepeats, f.Repeats)
	if f.RecoveryMs != nil {
		v += fmt.Sprintf(", %s p50 after the failure (the first held it %s)", faultMs(f.RecoveryMs.P50), faultMs(fo.HoldWindowMs))
	}
	return v + "; " + violationsClause(c) + ownServersClause(f)
}

func ownServersClause(f *result.Faults) string {
	if !f.OwnServers {
		return ""
	}
	return " " + ownServers
}

func restartSentence(c Cell) string {
	f, r := c.Faults, c.Faults.Restart
	v := fmt.Sprintf("%s: a master that granted the lock restarted empty %s; a second client got the lock while the first still held it in %d of %d repeats",
		c.Impl, restartWhen(setting(r.RestartDelayMs), setting(f.ConfiguredMs)), r.OverlappingRepeats, f.Repeats)
	if rec := f.RecoveryMs; rec != nil {
		v += fmt.Sprintf(", %s p50 after the crash", faultMs(rec.P50))
	}
	return v + "; " + violationsClause(c) + ownServersClause(f)
}

func restartWhen(delay, ttl time.Duration) string {
	if delay == 0 {
		return "at once"
	}
	cmp := "≥"
	if delay < ttl {
		cmp = "<"
	}
	return fmt.Sprintf("after %s (%s TTL %s)", delay, cmp, ttl)
}

func connRestartSentence(c Cell) string {
	f, r := c.Faults, c.Faults.ConnRestart
	v := fmt.Sprintf("%s: the server restarted (killed, started again empty) while a client held the lock; a second client got the lock while the first still believed it held it in %d of %d repeats",
		c.Impl, r.OverlappingRepeats, f.Repeats)
	if rec := f.RecoveryMs; rec != nil {
		v += fmt.Sprintf(", %s p50 after the kill", faultMs(rec.P50))
	}
	v += fmt.Sprintf("; the first holder's release then reported the lock lost in %d, succeeded in %d", r.HolderReleaseLost, r.HolderReleaseOK)
	if n := r.HolderReleaseFailed; n > 0 {
		v += fmt.Sprintf(", failed otherwise in %d", n)
	}
	return v + "; " + violationsClause(c) + " A restart frees every lock, and a holder learns it only when it next speaks to the server." + ownServersClause(f)
}

func latencySentence(c Cell) string {
	l := c.Faults.Latency
	var v string
	if l.Proxies == 0 {
		v = fmt.Sprintf("%s has no servers, so no delay applied: ", c.Impl)
	} else {
		delay := setting(l.NetDelayMs)
		v = fmt.Sprintf("%s behind proxies adding %s ± %s each way (at least %s per round trip): ",
			c.Impl, delay, setting(l.NetJitterMs), 2*delay)
	}
	v += fmt.Sprintf("acquire p50 %s, p99 %s, %s by %s at %.0f/s, %s",
		result.Dur(c.AcquireLatencyUs.P50), result.Dur(c.AcquireLatencyUs.P99),
		countOf(c.Acquires, "acquisition"), countOf(int64(c.Clients), "client"), c.AcquiresPerS,
		countOf(c.Errors, "error"))
	if c.Acquires > 0 && c.RoundTripsPerAcquire > 0 {
		v += fmt.Sprintf(", %.1f round trips per acquisition", c.RoundTripsPerAcquire)
	}
	return v + "; " + violationsClause(c)
}

func partitionSentence(c Cell) string {
	p := c.Faults.Partition
	return fmt.Sprintf("%s: with %d of %d masters cut off the clients kept the lock going (%d acquisitions, %d errors in %s × %d); "+
		"with %d of %d cut %d of %d attempts failed with no_quorum, the slowest after %s, %d hung, %d acquired; %s",
		c.Impl, p.MastersCutMinority, p.Masters, p.AcquiresMinorityCut, p.ErrorsMinorityCut, setting(p.PhaseMs), c.Faults.Repeats,
		p.MastersCutMajority, p.Masters, p.NoQuorumMajorityCut, p.AttemptsMajorityCut, faultMs(p.FailMsMaxMajorityCut),
		p.HungMajorityCut, p.AcquiresMajorityCut, violationsClause(c))
}

func ensemblePartitionSentence(c Cell) string {
	f, p := c.Faults, c.Faults.EnsemblePartition
	v := fmt.Sprintf("%s: with the client's server cut off its session moved to another member in %d of %d repeats",
		c.Impl, p.SessionMoved, f.Repeats)
	if rec := f.RecoveryMs; rec != nil {
		v += fmt.Sprintf(" (%s p50, %s max after the cut; session timeout %s)", faultMs(rec.P50), faultMs(rec.Max), setting(f.ConfiguredMs))
	}
	return v + fmt.Sprintf(", %s lost, %d acquisitions during the cut, %s; %s",
		countOf(p.SessionLost, "session"), p.AcquiresDuringCut, countOf(c.Errors, "error"), violationsClause(c))
}

func freezeSentence(c Cell) string {
	f, z := c.Faults, c.Faults.Freeze
	v := fmt.Sprintf("%s: one of its %s stopped for %s (SIGSTOP, then SIGCONT) while %s looped on one lock: ",
		c.Impl, countOf(int64(z.Servers), "server"), setting(z.FreezeForMs), countOf(int64(c.Clients), "client"))
	v += fmt.Sprintf("no grant for %s at the longest, %s while it was stopped (%d before, %d after)",
		faultMs(z.StallMsMax), countOf(z.AcquiresFrozen, "acquisition"), z.AcquiresBefore, z.AcquiresAfter)
	if rec := f.RecoveryMs; rec != nil {
		v += fmt.Sprintf("; the first grant after it resumed came %s p50 later", faultMs(rec.P50))
	}
	if n := z.Unrecovered; n > 0 {
		v += fmt.Sprintf("; in %s no grant came after it resumed", countOf(n, "repeat"))
	}
	return v + fmt.Sprintf("; %s, %s lost; %s", countOf(c.Errors, "error"), countOf(z.SessionLost, "session"), violationsClause(c))
}

func livelockSentence(l *result.Livelock) string {
	s := fmt.Sprintf("LIVELOCK: no grant for %v while clients kept trying (limit max(%d×retry, %d×lease)); the cell ended %.1fs in: %d attempts did not get the lock, %d of them split votes (some but not a majority of votes); %d errors",
		seconds(l.LimitS).Round(time.Millisecond), l.LimitRetries, l.LimitLeases, l.AtS, l.Attempts, l.SplitVotes, l.Errors)
	if l.Shard != nil {
		s = fmt.Sprintf("shard %d: %s", *l.Shard, s)
	}
	return s
}

// faultMs prints a measured duration (ms) as the fault sentences always
// have: 2.04s, 850ms, 12.5ms, 2.43ms.
func faultMs(v float64) string {
	d := time.Duration(v * float64(time.Millisecond))
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= 100*time.Millisecond:
		return fmt.Sprintf("%.0fms", ms)
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.1fms", ms)
	case d > 0:
		return fmt.Sprintf("%.2fms", ms)
	}
	return "0"
}

// setting is a configured duration kept in ms, to print as the flag that
// set it does (2s, 300ms).
func setting(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// seconds is a duration kept in seconds.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// countOf is "1 repeat", "2 repeats": plural without thousands
// separators, as the fault sentences always counted.
func countOf(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// pausesSentence says what a lock's users lost while its servers paused
// on a schedule: the share of acknowledged updates lost per repeat,
// without fencing and with it.
func pausesSentence(c Cell) string {
	z := c.Faults.Pauses
	which := "its server"
	if z.Servers > 1 {
		which = fmt.Sprintf("one of its %d servers, drawn at random,", z.Servers)
	}
	v := fmt.Sprintf("%s: %s stopped for %s every %s over %s (%s in all) while %s looped on one lock: ",
		c.Impl, which, setting(z.FreezeForMs), setting(z.EveryMs), seconds(z.ForS),
		countOf(z.Pauses, "pause"), countOf(int64(c.Clients), "client"))
	if s := c.Safety; s != nil && s.GuardedWrites > 0 {
		v += fmt.Sprintf("of %s acknowledged writes, %s lost without fencing (%s) and %s with the lock's token checked (%s)",
			commas(s.GuardedWrites), commas(s.LostUpdates), shareWords(z.LostShareUnfenced),
			commas(s.LostUpdatesFenced), shareWords(z.LostShareFenced))
	} else {
		v += "no holder wrote the register"
	}
	return v + fmt.Sprintf("; %s, %s lost; %s", countOf(c.Errors, "error"), countOf(z.SessionLost, "session"), violationsClause(c))
}

// shareWords give per-repeat shares as their median and range: "18.2 %"
// for one repeat, "18.2 % [12.0 %, 21.5 %] over 3 repeats" for more.
func shareWords(v []float64) string {
	if len(v) == 0 {
		return "no repeat wrote"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if len(s) == 1 {
		return fmt.Sprintf("%.1f %%", 100*med)
	}
	return fmt.Sprintf("%.1f %% [%.1f %%, %.1f %%] over %d repeats", 100*med, 100*s[0], 100*s[len(s)-1], len(s))
}

// clockJumpSentence says whether a jump of the servers' wall clocks gave
// the lock to a second client while its holder held it: which clock the
// lock's lease really follows.
func clockJumpSentence(c Cell) string {
	f, z := c.Faults, c.Faults.ClockJump
	which := "its server's wall clock"
	if z.Servers > 1 {
		which = fmt.Sprintf("the wall clocks of its %d servers, one after another,", z.Servers)
	}
	v := fmt.Sprintf("%s: with %s jumped %s forward while a holder held the lock, ", c.Impl, which, setting(z.JumpMs))
	if z.Granted == 0 {
		v += fmt.Sprintf("no second client was granted it in %s: its lease does not follow the wall clock", countOf(int64(f.Repeats), "repeat"))
	} else {
		v += fmt.Sprintf("a second client was granted it in %d of %s", z.Granted, countOf(int64(f.Repeats), "repeat"))
		if z.Servers > 1 {
			v += fmt.Sprintf(" (after %s jumped)", jumpsWords(z.JumpsToGrant))
		}
		v += ": its lease follows the wall clock"
	}
	if s := c.Safety; s != nil && s.GuardedWrites > 0 {
		v += fmt.Sprintf("; of %s acknowledged writes, %s lost without fencing, %s with the lock's token checked",
			commas(s.GuardedWrites), commas(s.LostUpdates), commas(s.LostUpdatesFenced))
	}
	return v + "; " + violationsClause(c) + " " + ownServers
}

// jumpsWords say how many servers' clocks had jumped at each grant.
func jumpsWords(n []int64) string {
	if len(n) == 0 {
		return "none"
	}
	lo, hi := slices.Min(n), slices.Max(n)
	if lo == hi {
		return countOf(lo, "clock")
	}
	return fmt.Sprintf("%d to %d clocks", lo, hi)
}
