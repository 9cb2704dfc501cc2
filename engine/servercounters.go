package engine

import (
	"context"
	"errors"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// ServerKinds is what a cell reads from the servers it runs on, by the
// kind a driver's need names (impl.Need.Kind): their own counters and,
// for servers this process started, their CPU time. The sandbox's kinds
// provide it (sandbox.Meter; lockbench.SandboxKinds outside this module);
// the caller hands it over in CellSpec.ServerKinds, so that the engine
// knows no server kind by name. Its methods are called from any goroutine.
type ServerKinds interface {
	// Counters returns how to read the own cumulative counters of the
	// servers of kind, summed over their addresses; nil for a kind that
	// keeps none or is unknown.
	Counters(kind string) func(ctx context.Context, addrs []string) (map[string]int64, error)
	// Counts returns what kind's counters mean, read from their deltas
	// over a cell (Counters's names are the kind's own); nil for a kind
	// that says nothing of them.
	Counts(kind string) func(delta map[string]int64) result.ServerCounts
	// CPUTime is the CPU time every process serving addr has used so
	// far — a server this process started, or one on this machine found
	// by its listening socket — and false when none can be seen.
	CPUTime(addr string) (time.Duration, bool)
}

// noKinds knows no server: cells report the clients' figures alone.
type noKinds struct{}

func (noKinds) Counters(string) func(context.Context, []string) (map[string]int64, error) {
	return nil
}
func (noKinds) Counts(string) func(map[string]int64) result.ServerCounts { return nil }
func (noKinds) CPUTime(string) (time.Duration, bool)                     { return 0, false }

// serverCounters reads the servers' own counters before and after a cell,
// through the server kinds of the driver's needs, so that a cell reports
// what the servers saw beside what the clients counted.
type serverCounters struct {
	kinds ServerKinds
	// cpu is each readable server's CPU time at the cell's start, read
	// at cpuFrom.
	cpu     map[string]time.Duration
	cpuFrom time.Time
	// idle is the CPU the servers used per second at rest just before
	// the cell (cores' worth, summed over them); -1 when not read.
	idle  float64
	reads []func(ctx context.Context) (map[string]int64, error)
	// counts are what the kinds read say their counters mean.
	counts []func(delta map[string]int64) result.ServerCounts
	before map[string]int64
	after  map[string]int64
	err    error
}

// startServerCounters takes the first reading; a driver whose servers'
// kinds keep no counters gives a reader that reports nothing. With idle,
// it first reads the servers' CPU over idleWindow, at rest: a JVM
// compiles and collects, an etcd ticks its raft, whatever the clients do,
// and a cost per hand-off should not carry that background.
func startServerCounters(ctx context.Context, kinds ServerKinds, d impl.Driver, servers impl.Servers, idle bool) *serverCounters {
	if kinds == nil {
		kinds = noKinds{}
	}
	s := &serverCounters{kinds: kinds, cpu: map[string]time.Duration{}, idle: -1}
	for _, n := range d.Needs {
		stats := s.kinds.Counters(n.Kind)
		if stats == nil || len(servers[n.Role]) == 0 {
			continue
		}
		addrs := servers[n.Role]
		s.reads = append(s.reads, func(ctx context.Context) (map[string]int64, error) { return stats(ctx, addrs) })
		if counts := s.kinds.Counts(n.Kind); counts != nil {
			s.counts = append(s.counts, counts)
		}
	}
	if len(s.reads) > 0 {
		s.before, s.err = s.read(ctx)
	}
	// The servers' CPU is read after their counters: answering a read
	// (etcd renders every metric it has) is not the cell's work, and in a
	// burst of a few hand-offs it weighed more than they did.
	read := func() (map[string]time.Duration, time.Time) {
		at, out := time.Now(), map[string]time.Duration{}
		for _, n := range d.Needs {
			for _, a := range servers[n.Role] {
				if t, ok := s.kinds.CPUTime(a); ok {
					out[a] = t
				}
			}
		}
		return out, at
	}
	s.cpu, s.cpuFrom = read()
	if idle && len(s.cpu) > 0 {
		s.idle = s.idleRate(ctx, read)
	}
	return s
}

// idleRate reads the servers' CPU at rest over idleSlices windows of
// idleSlice each and keeps the lowest rate: a JVM's collection or a
// compile landing in one window is background the cell may not see, and
// read as the rest rate it made the cost above it negative. -1 when ctx
// ends first.
func (s *serverCounters) idleRate(ctx context.Context, read func() (map[string]time.Duration, time.Time)) float64 {
	rate := -1.0
	for range idleSlices {
		if sleepCtx(ctx, idleSlice) != nil {
			return -1
		}
		before, from := s.cpu, s.cpuFrom
		s.cpu, s.cpuFrom = read()
		var used time.Duration
		for a, t := range s.cpu {
			used += t - before[a]
		}
		if r := max(used.Seconds(), 0) / s.cpuFrom.Sub(from).Seconds(); rate < 0 || r < rate {
			rate = r
		}
	}
	return rate
}

// idleSlices windows of idleSlice are how the servers' idle CPU is read
// before a cell that asks for it: each long enough for a few of a JVM's or
// etcd's periodic ticks, together short beside a burst's set-up.
const (
	idleSlices = 4
	idleSlice  = 150 * time.Millisecond
)

// sleepCtx sleeps d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *serverCounters) read(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	var errs []error
	for _, read := range s.reads {
		m, err := read(ctx)
		errs = append(errs, err)
		for k, v := range m {
			out[k] += v
		}
	}
	return out, errors.Join(errs...)
}

// cpuUsed is the CPU time each readable server used since the start, in
// seconds, and the wall time that covers.
func (s *serverCounters) cpuUsed() (map[string]float64, float64) {
	if len(s.cpu) == 0 {
		return nil, 0
	}
	out := map[string]float64{}
	for a, t0 := range s.cpu {
		if t, ok := s.kinds.CPUTime(a); ok {
			out[a] = (t - t0).Seconds()
		}
	}
	return out, time.Since(s.cpuFrom).Seconds()
}

// settleReads and settleGap bound the end reading of a server that
// counts watches (see stop).
const (
	settleReads = 4
	settleGap   = 20 * time.Millisecond
)

// stop takes the second reading, after the cell's sessions are closed. A
// server may count a watch a moment after its waiter has acted on it:
// etcd counts an event as its watch stream sends it, and on a starved CI
// machine the last of a burst's 63 was counted after the reading, which
// read 62. Where the servers count watches, the reading is taken again,
// settleGap apart, until the watches it counts stop changing (at most
// settleReads readings).
func (s *serverCounters) stop(ctx context.Context) {
	if len(s.reads) == 0 || s.err != nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	s.after, s.err = s.read(sctx)
	fired, ok := s.fired(s.after)
	for i := 1; i < settleReads && ok && s.err == nil; i++ {
		select {
		case <-sctx.Done():
			return
		case <-time.After(settleGap):
		}
		next, err := s.read(sctx)
		if err != nil {
			return // keep the reading taken
		}
		s.after = next
		again, _ := s.fired(next)
		if again == fired {
			return
		}
		fired = again
	}
}

// fired is the watches the servers say they fired between the first
// reading and after; false when they do not count watches.
func (s *serverCounters) fired(after map[string]int64) (int64, bool) {
	counts := s.typed(s.since(after))
	return counts.Fired()
}

// since is each counter's change from the first reading to after.
func (s *serverCounters) since(after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range after {
		out[k] = v - s.before[k]
	}
	return out
}

// deltas are the servers' counters over the cell, and what their kinds
// say they mean beside client_notifications: the clients' own count over
// the same span, from before the first client acted to after the last
// session closed, so the two compare like with like. note says why there
// are none, when a server would not say.
func (s *serverCounters) deltas(clientNotifications int64) (map[string]int64, *result.ServerCounts, string) {
	if len(s.reads) == 0 {
		return nil, nil, ""
	}
	if s.err != nil {
		return nil, nil, s.err.Error()
	}
	out := s.since(s.after)
	counts := s.typed(out)
	counts.ClientNotifications = clientNotifications
	return out, &counts, ""
}

// typed is what the kinds say counters m mean, together.
func (s *serverCounters) typed(m map[string]int64) result.ServerCounts {
	var counts result.ServerCounts
	for _, f := range s.counts {
		counts = counts.Add(f(m))
	}
	return counts
}
