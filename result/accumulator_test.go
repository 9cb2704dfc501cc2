package result

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A cell split over shards and merged is the cell measured whole: every
// bucket of every histogram, and so every percentile, every count, the
// fairness over all clients and the derived rates equal the single
// accumulator's, whatever the split.
func TestMergedShardsEqualOneAccumulator(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 11))
	const clients, values = 12, 50_000
	id := Cell{Impl: "x", Scenario: "hot", Clients: clients, Locks: 1}
	for _, shards := range []int{1, 2, 3, 5} {
		t.Run(string(rune('0'+shards))+" shards", func(t *testing.T) {
			one := NewAccumulator(id)
			one.Measured(5 * time.Second)
			per := make([]*hdrhistogram.Histogram, shards)
			cells := make([]Cell, shards)
			for s := range shards {
				per[s] = NewHistogram()
				lo, hi := s*clients/shards, (s+1)*clients/shards
				cells[s] = Cell{Impl: "x", Scenario: "hot", Clients: clients, Locks: 1, DurationS: 5,
					Shard: &CellShard{Index: s, Count: shards, First: lo, Clients: hi - lo}, ErrorsByClass: map[string]int64{}}
				cells[s].Fairness = &Fairness{PerClient: make([]int64, hi-lo)}
			}
			for range values {
				client := rng.IntN(clients)
				s := 0
				for cells[s].Shard.First+cells[s].Shard.Clients <= client {
					s++
				}
				us := int64(rng.ExpFloat64()*800) + 1
				d := time.Duration(us) * time.Microsecond
				RecordMicros(per[s], d)
				one.AddClient(client, 1, nil, Counts{RoundTrips: 2, Retries: int64(us % 3)})
				RecordMicros(one.hist(TagAcquire), d)
				c := &cells[s]
				c.Acquires++
				c.RoundTrips += 2
				c.Retries += us % 3
				c.Fairness.PerClient[client-c.Shard.First]++
			}
			merged := ShardAccumulator(cells[0], map[string]*hdrhistogram.Histogram{TagAcquire: per[0]})
			for s := 1; s < shards; s++ {
				merged.Merge(ShardAccumulator(cells[s], map[string]*hdrhistogram.Histogram{TagAcquire: per[s]}))
			}
			got, want := merged.Cell(), one.Cell()
			a, b := merged.Histogram(TagAcquire), one.Histogram(TagAcquire)
			if a.TotalCount() != values || !a.Equals(b) {
				t.Fatalf("merged histogram differs: %d values, want %d equal buckets", a.TotalCount(), b.TotalCount())
			}
			if got.AcquireLatencyUs != want.AcquireLatencyUs || got.Acquires != want.Acquires || got.Counts != want.Counts ||
				got.AcquiresPerS != want.AcquiresPerS || got.RetriesPerAcquire != want.RetriesPerAcquire ||
				got.RoundTripsPerAcquire != want.RoundTripsPerAcquire {
				t.Errorf("merged %+v\nwhole %+v", got, want)
			}
			if got.Fairness.Jain != want.Fairness.Jain || len(got.Fairness.PerClient) != clients {
				t.Errorf("fairness %+v, want %+v", got.Fairness, want.Fairness)
			}
			if got.Merge == nil || got.Merge.Shards != shards {
				t.Errorf("merge note %+v, want %d shards", got.Merge, shards)
			}
		})
	}
}

// Derived figures come from one function: a renewal's rate per second
// held, an abandonment's round trips each, per-acquire ratios.
func TestCellDerivesEveryFigure(t *testing.T) {
	t.Parallel()
	a := NewAccumulator(Cell{Impl: "x", Clients: 2})
	a.Measured(2 * time.Second)
	a.AddClient(0, 30, map[string]int64{"timeout": 2}, Counts{Notifications: 45, RoundTrips: 90})
	a.AddClient(1, 10, nil, Counts{Notifications: 15, RoundTrips: 30})
	a.AddAbandon(&Abandon{TimeoutMs: 5, Count: 4, RoundTrips: 10})
	a.AddRenew(&Renew{Count: 12, HeldS: 3})
	b := NewAccumulator(Cell{Impl: "x", Clients: 2})
	b.AddRenew(&Renew{Count: 6, PerHolderPerS: 2}) // written before held_s: 3 s held
	a.Merge(b)
	c := a.Cell()
	if c.Acquires != 40 || c.Errors != 2 || c.ErrorsByClass["timeout"] != 2 || c.AcquiresPerS != 20 ||
		c.NotificationsPerAcquire != 1.5 || c.RoundTripsPerAcquire != 3 {
		t.Errorf("counts %+v", c)
	}
	if c.Abandon.RoundTripsPer != 2.5 || c.Renew.Count != 18 || c.Renew.PerHolderPerS != 3 {
		t.Errorf("abandon %+v renew %+v", c.Abandon, c.Renew)
	}
	if c.Fairness == nil || c.Fairness.MaxShare != 0.75 {
		t.Errorf("fairness %+v", c.Fairness)
	}
}

// TestAccumulatorAddMeasured: repeats measured one after another add
// their times, and the rate is over the sum.
func TestAccumulatorAddMeasured(t *testing.T) {
	a := NewAccumulator(Cell{Impl: "x"})
	for range 3 {
		a.AddMeasured(2 * time.Second)
		a.AddClient(-1, 10, nil, Counts{})
	}
	c := a.Cell()
	if c.DurationS != 6 || c.Acquires != 30 || c.AcquiresPerS != 5 {
		t.Errorf("duration %v s, acquisitions %d, acq/s %v: want 6, 30, 5", c.DurationS, c.Acquires, c.AcquiresPerS)
	}
}

// Merged shards add their safety figures without loss — the guarded
// register's writes, stale writes and lost updates, the history's
// operations and checking cost — keep the worse verdict, and take
// overlaps and token regressions from the check across every shard's
// grants, which sees what no shard's own checker could.
func TestShardsMergeSafety(t *testing.T) {
	t.Parallel()
	shard := func(i int, s Safety) Cell {
		return Cell{Impl: "redis", Scenario: "hot", Clients: 4, Locks: 1, Acquires: 10,
			Shard: &CellShard{Index: i, Count: 2}, Safety: &s}
	}
	a := shard(0, Safety{Guarded: true, Tokens: TokensNone, Ops: 40, Windows: 2, CheckMs: 5, Linearizable: Linearizable, GuardCounts: GuardCounts{GuardedWrites: 10, StaleWritesUnfenced: 1, LostUpdates: 2, StaleWritesRefused: 3, GuardErrors: 1}})
	b := shard(1, Safety{Guarded: true, Tokens: TokensNone, Ops: 30, Windows: 1, CheckMs: 4, Linearizable: VerdictUnknown, Overlaps: 9, GuardCounts: GuardCounts{GuardedWrites: 7, StaleWritesUnfenced: 2, LostUpdates: 3, LostUpdatesFenced: 1}})
	acc := ShardAccumulator(a, nil)
	acc.Merge(ShardAccumulator(b, nil))
	// Shard 0's client 0 and shard 1's client 2 held lock 0 at once.
	// (The checker that finds it: package exclusion's tests.)
	acc.AddCheckedAcross(Checked{Violations: 1, Overlaps: 1,
		Kept: []Violation{{Lock: "lock-0", Kind: "overlap", Holder: 0, Intruder: 2}}}, 3, "wall clock")
	c := acc.Cell()
	s := c.Safety
	if s == nil {
		t.Fatal("merged cell has no safety figures")
	}
	want := Safety{Guarded: true, Tokens: TokensNone, Ops: 70, Windows: 3, CheckMs: 9, Linearizable: VerdictUnknown, Overlaps: 1, GuardCounts: GuardCounts{GuardedWrites: 17, StaleWritesUnfenced: 3, LostUpdates: 5, LostUpdatesFenced: 1, StaleWritesRefused: 3, GuardErrors: 1}}
	if !reflect.DeepEqual(*s, want) {
		t.Errorf("merged safety\n got %+v\nwant %+v", *s, want)
	}
	if c.SafetyViolations != 1 {
		t.Errorf("%d violations across shards, want 1", c.SafetyViolations)
	}
	if a.Safety.GuardedWrites != 10 {
		t.Errorf("merging changed a shard's own figures: %+v", a.Safety)
	}
}

// A merge of shards counts the servers from the earliest reading before
// to the latest after, typed as their kinds read them, with the clients'
// notifications summed over the shards; shards written before schema 4,
// which kept the readings by name only, merge to the same counts.
func TestMergedServerCountsSpanTheShards(t *testing.T) {
	reading := func(packets, watches int64) map[string]int64 {
		return map[string]int64{"packets_received": packets, "packets_sent": packets, "watch_triggered": watches}
	}
	typed := func(r map[string]int64) *ServerCounts {
		w := r["watch_triggered"]
		return &ServerCounts{Messages: r["packets_received"] + r["packets_sent"], Unit: "packets", Watches: &w}
	}
	shard := func(i int, before, after map[string]int64, notified int64, legacy bool) Cell {
		c := Cell{Impl: "zk-pred", Scenario: "burst", Clients: 4, Acquires: 2, Shard: &CellShard{Index: i, Count: 2, First: 2 * i, Clients: 2},
			ServerCounts: &ServerCounts{ClientNotifications: notified}, ServerRaw: &ServerReadings{Before: before, After: after}}
		if !legacy {
			c.ServerRaw.CountsBefore, c.ServerRaw.CountsAfter = typed(before), typed(after)
		} else {
			c.ServerCounts = nil
			c.Server = map[string]int64{"client_notifications": notified}
			upgradeServerCounts(&c)
		}
		return c
	}
	for _, legacy := range []bool{false, true} {
		a := ShardAccumulator(shard(0, reading(100, 10), reading(150, 12), 1, legacy), nil)
		a.Merge(ShardAccumulator(shard(1, reading(90, 9), reading(140, 11), 2, legacy), nil))
		got := a.Cell().ServerCounts
		if n, unit, ok := got.Handled(); !ok || n != 120 || unit != "packets" || got.ClientNotifications != 3 {
			t.Errorf("legacy %v: %d %q (%v), clients %d; want 120 packets (90 → 150, both ways), 3", legacy, n, unit, ok, got.Received())
		}
		if w, ok := got.Fired(); !ok || w != 3 {
			t.Errorf("legacy %v: %d watches fired (%v), want 3 (9 → 12)", legacy, w, ok)
		}
	}
}
