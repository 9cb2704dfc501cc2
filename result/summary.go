package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SchemaVersion is the version of summary.json's form this package writes
// and reads. Version 1 had no "schema" key; it reads as 1. Version 3 keeps
// fault figures typed (Faults.Crash …) and no sentence: versions 1 and 2
// had a cell's verdict and its fault figures by name, which ReadSummary
// still reads (see upgradeLegacy). Version 4 keeps what the servers
// counted typed (Cell.ServerCounts); before it, a cell had only their
// counters by name (see legacyServerCounts).
const SchemaVersion = 4

// Summary is the content of summary.json.
type Summary struct {
	Schema  int       `json:"schema"`
	Version string    `json:"lockbench_version"`
	Started time.Time `json:"started"`
	Cells   []Cell    `json:"cells"`
	// SLO and Capacity: with --slo, the largest client count per
	// implementation and scenario that met it.
	SLO      string        `json:"slo,omitempty"`
	Capacity []CapacityRow `json:"capacity,omitempty"`
	// SLOMet says whether every load cell met every threshold of the SLO;
	// SLOBreaches lists each cell and threshold that did not, and by how
	// much. Both are absent without --slo.
	SLOMet      *bool    `json:"slo_met,omitempty"`
	SLOBreaches []Breach `json:"slo_breaches,omitempty"`
	// Failure says why the run ended early or failed (a server that died,
	// an interrupt, a report that could not be rendered); empty when it
	// ran as asked.
	Failure string `json:"failure,omitempty"`
	// Partial, set by a merge given --partial, says which shards and cells
	// the results lack; every rendering shows it.
	Partial *Partial `json:"partial,omitempty"`
}

// Latency is a latency distribution in microseconds. P95 and P9999 came
// later: in a summary written before, they read as 0 (not measured).
type Latency struct {
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	P9999 float64 `json:"p9999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	// P985 and P995 bracket the p99: far apart, the p99 sits in the gap
	// of a bimodal distribution (a retry that costs 50 ms beside a grant
	// that costs 1), and a run with a few more slow acquisitions moves it
	// across the gap (judge.UnstableP99). 0 in summaries from before.
	P985 float64 `json:"p98_5,omitempty"`
	P995 float64 `json:"p99_5,omitempty"`
}

// Spread summarises a distribution; P1 is there because for some (validity
// left) the low tail is the one that matters.
type Spread struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	P1    float64 `json:"p1"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// Cell is the result of one implementation × scenario × clients cell.
type Cell struct {
	Impl     string `json:"impl"`
	Scenario string `json:"scenario"`
	Clients  int    `json:"clients"`
	Locks    int    `json:"locks"`
	// Kind is how the scenario drove the clients (KindClosed, …).
	Kind      Kind    `json:"kind,omitempty"`
	DurationS float64 `json:"duration_s"`
	Acquires  int64   `json:"acquires"`
	Errors    int64   `json:"errors"`
	// ErrorsByClass counts errors by class (no_quorum, timeout, …).
	ErrorsByClass map[string]int64 `json:"errors_by_class"`

	AcquiresPerS            float64 `json:"acquires_per_s"`
	AcquireLatencyUs        Latency `json:"acquire_latency_us"`
	ReleaseLatencyUs        Latency `json:"release_latency_us"`
	RetriesPerAcquire       float64 `json:"retries_per_acquire"`
	NotificationsPerAcquire float64 `json:"notifications_per_acquire"`
	RoundTripsPerAcquire    float64 `json:"round_trips_per_acquire"`

	// Counters summed over clients: round_trips, retries, notifications,
	// lost, wakeups, release_wakeups, … (see Counts).
	Counts

	// TheoryWakeups is what theory predicts for wake-ups in this cell, when
	// the implementation and scenario make a prediction (burst; over every
	// repeat).
	TheoryWakeups *int64 `json:"theory_wakeups,omitempty"`
	// Repeats is how many bursts a repeated burst cell (--repeat) is made
	// of: its counts are their sums, its latencies their merged histograms.
	Repeats int `json:"repeats,omitempty"`
	// Rounds holds the timed figures over the cell's rounds (--repeat),
	// each with its interval and every round's value; nil for one round.
	Rounds *RoundFigures `json:"rounds,omitempty"`
	// RepeatServerCPUUs is, for a repeated burst, each repeat's server CPU
	// time per hand-off (µs): the spread the repeats bought.
	RepeatServerCPUUs []float64 `json:"repeat_server_cpu_us_per_handoff,omitempty"`
	// Theory is what the implementation's way of waking waiters predicts
	// at this cell's client count, when it makes a prediction.
	Theory *Theory `json:"theory,omitempty"`
	// Server holds counters read from the servers themselves (deltas over
	// the cell) by their kinds' own names, for a person to read;
	// ServerCounts is what they mean, typed (the figures every reader
	// uses), with the clients' notifications over the same span.
	Server       map[string]int64 `json:"server,omitempty"`
	ServerCounts *ServerCounts    `json:"server_counts,omitempty"`
	// ServerNote says why server counters are missing, when they are.
	ServerNote string `json:"server_note,omitempty"`

	// CPU, Wake and Handoff are derived from the figures above by Derive,
	// the one place they are computed: CPU shares, wake-ups per
	// acquisition against theory, a burst's cost per hand-off.
	CPU     *CPUShares   `json:"cpu,omitempty"`
	Wake    *WakeFigures `json:"wake,omitempty"`
	Handoff *HandoffCost `json:"handoff_cost,omitempty"`
	// Wait is the wait scenario's shape: how many waited, how long.
	Wait *WaitFigures `json:"wait,omitempty"`

	// Fairness is how the acquisitions were shared among clients.
	Fairness *Fairness `json:"fairness,omitempty"`
	// HandoffGapUs is the time from a holder's release call to the next
	// holder's acquire returning, for holders that were waiting.
	HandoffGapUs *Latency `json:"handoff_gap_us,omitempty"`
	// Open is what the open loop (scenario rate) measured.
	Open *OpenLoop `json:"open_loop,omitempty"`
	// Generator is lockbench's own health during the cell.
	Generator *Generator `json:"generator,omitempty"`

	// Distributions are an implementation's own histograms, in the unit
	// their name ends in (validity_ms: validity left at each Redlock grant).
	Distributions map[string]Spread `json:"distributions,omitempty"`
	// Vectors are an implementation's own count vectors (masters_granted[k]:
	// Redlock attempts in which exactly k masters said yes).
	Vectors map[string][]int64 `json:"vectors,omitempty"`

	// SafetyViolations counts overlaps of two holders and fencing-token
	// regressions seen by the mutual-exclusion checker.
	SafetyViolations int64       `json:"safety_violations"`
	Violations       []Violation `json:"violations,omitempty"`
	// Safety is what every safety check found (see Safety); History is
	// the operations its linearizability check read, written to a file
	// of the cell's own rather than into summary.json.
	Safety  *Safety  `json:"safety,omitempty"`
	History *History `json:"-"`

	// Truncated says why the cell stopped before it was done (the cell
	// time limit); empty when it ran as asked.
	Truncated string `json:"truncated,omitempty"`
	// Verdict is the sentence a fault scenario or a livelock wrote on the
	// cell in results written before schema 3.
	//
	// Deprecated: only read from results written before schema 3, which
	// renderers show as written; new runs do not fill it: their figures
	// are typed (Faults, Livelock) and package report phrases them. It
	// goes in the release after the next.
	Verdict string `json:"verdict,omitempty"`
	// Faults holds what a fault scenario measured.
	Faults *Faults `json:"faults,omitempty"`

	// Abandon is what giving up on acquisitions cost (--acquire-timeout,
	// the abandon scenario); nil when no client gave up.
	Abandon *Abandon `json:"abandon,omitempty"`
	// Renew is what renewing held leases cost (--renew).
	Renew *Renew `json:"renew,omitempty"`
	// Finding names what ended the cell before its time when that is a
	// result, not a failure (FindingLivelock); Livelock holds its figures.
	Finding  string    `json:"finding,omitempty"`
	Livelock *Livelock `json:"livelock,omitempty"`

	// Settle reports how the burst hand-off barrier went: "exact" when every
	// hand-off waited for all waiters to settle, "timeout" when one gave up,
	// "none" when the implementation cannot say.
	Settle string `json:"settle,omitempty"`

	// Shard, in a shard's results, says which of the cell's clients it
	// ran; ServerRaw holds its raw server readings for the merge. A
	// merged cell has neither; Merge says how its shards were joined.
	Shard     *CellShard      `json:"shard,omitempty"`
	ServerRaw *ServerReadings `json:"server_raw,omitempty"`
	Merge     *MergeNote      `json:"merge,omitempty"`
}

// MergeNote is what a merged cell says of its shards.
type MergeNote struct {
	Shards int `json:"shards"`
	// PossibleOverlaps are pairs of grants of one lock, from different
	// shards, whose intervals overlap by no more than the clocks' skew
	// bounds: not proof of a violation, not proof of safety.
	PossibleOverlaps int64 `json:"possible_overlaps"`
	// Grants is how many grants the safety check ordered; By says how
	// ("fencing token" or "wall clock").
	Grants int64  `json:"grants"`
	By     string `json:"ordered_by,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Abandon is what the acquisitions clients gave up on cost: how long they
// had waited, and the requests they sent while waiting and withdrawing.
// The servers' side is in the cell's Server counters.
type Abandon struct {
	// TimeoutMs is --acquire-timeout; 0 when the scenario decided.
	TimeoutMs float64 `json:"timeout_ms,omitempty"`
	Count     int64   `json:"count"`
	// WaitUs is the time from asking to giving up.
	WaitUs Latency `json:"wait_us"`
	// RoundTrips is requests sent by the abandoned acquisitions, from the
	// first try to the withdrawal; RoundTripsPer is per abandonment.
	RoundTrips    int64   `json:"round_trips"`
	RoundTripsPer float64 `json:"round_trips_per"`
	// Queue figures of the abandon scenario: who got the lock, in grant
	// order, grants out of queue order, and what the servers still held
	// under the cell's namespace once every client was done (nodes, keys;
	// -1 when the driver cannot count them).
	Granted    []int `json:"granted,omitempty"`
	OutOfOrder int64 `json:"out_of_order"`
	Leftover   int64 `json:"leftover"`
}

// Renew is what renewing held leases cost (--renew): a renewal every
// TTL/3 while a holder works.
type Renew struct {
	Count int64 `json:"count"`
	// PerHolderPerS is renewals per second of holding: the extra requests
	// one holder sends (times the servers each renewal asks).
	PerHolderPerS float64 `json:"per_holder_per_s"`
	LatencyUs     Latency `json:"latency_us"`
	// Lost counts renewals that found the lock no longer ours: the holder
	// learnt it had lost the lock and stopped working.
	Lost   int64 `json:"lost"`
	Errors int64 `json:"errors"`
	// HeldS is the time holders held over which renewals were sent.
	HeldS float64 `json:"held_s,omitempty"`
}

// FindingLivelock is the finding of a cell in which clients kept trying
// and nobody was granted the lock for Livelock.LimitS.
const FindingLivelock = "livelock"

// Livelock is what a cell ended for livelock showed: attempts went on,
// grants did not.
type Livelock struct {
	// LimitS is how long without a grant (nobody holding, no error) the
	// cell waited before calling it livelock; AtS is when it did, after
	// the cell started.
	LimitS float64 `json:"limit_s"`
	AtS    float64 `json:"at_s"`
	// Attempts are acquisition attempts that did not get the lock while
	// it lasted; SplitVotes those with some but not a majority of votes
	// (Redlock).
	Attempts   int64 `json:"attempts"`
	SplitVotes int64 `json:"split_votes"`
	// Errors are the cell's acquisition errors (timeouts, no quorum):
	// none found a server unreachable, or it would not be a livelock.
	Errors int64 `json:"errors"`
	// LimitRetries and LimitLeases are how LimitS was chosen: that many
	// retry delays, and at least that many leases (the TTL or session
	// timeout). 0 in results written before schema 3.
	LimitRetries int `json:"limit_retries,omitempty"`
	LimitLeases  int `json:"limit_leases,omitempty"`
	// Shard, in a merged cell, is the shard whose clients found the
	// livelock.
	Shard *int `json:"shard,omitempty"`
}

// Fairness describes the share of acquisitions per client.
type Fairness struct {
	Jain      float64 `json:"jain"` // (Σx)²/(n·Σx²): 1 fair, 1/n one client took all
	MaxShare  float64 `json:"max_share"`
	MinShare  float64 `json:"min_share"`
	Starved   int     `json:"starved"` // clients with no acquisition
	MaxWaitUs float64 `json:"max_wait_us"`
	PerClient []int64 `json:"per_client"`
}

// OpenLoop is the open loop's own accounting. AcquireLatencyUs of its cell
// counts from each arrival's intended time; ServiceLatencyUs from the moment
// a client actually started.
type OpenLoop struct {
	Rate        float64 `json:"rate"`
	Arrival     string  `json:"arrival"`
	MaxInflight int     `json:"max_inflight"`
	Offered     int64   `json:"offered"`
	Dropped     int64   `json:"dropped"`
	// Unfinished arrivals were let in but not served by the end of the
	// cell's time limit (MaxTime after the last arrival).
	Unfinished       int64   `json:"unfinished"`
	ServiceLatencyUs Latency `json:"service_latency_us"`
	ScheduleLagUs    Latency `json:"schedule_lag_us"`
}

// PerCycle sets the allocations per cycle: Allocs and AllocBytes over
// acquires, the acquisitions of the same span (every repeat's, every
// shard's, when they were added up).
func (g *Generator) PerCycle(acquires int64) {
	g.AllocsPerCycle, g.AllocBytesPerCycle = 0, 0
	if acquires > 0 {
		g.AllocsPerCycle = float64(g.Allocs) / float64(acquires)
		g.AllocBytesPerCycle = float64(g.AllocBytes) / float64(acquires)
	}
}

// Generator is the load generator's health: when it says the generator was
// the bottleneck, the cell measured lockbench, not the lock.
type Generator struct {
	GCPauseMs float64 `json:"gc_pause_ms"`
	GCCount   int64   `json:"gc_count"`
	// Allocs and AllocBytes are what lockbench allocated on its heap over
	// the measured span (after the warm-up), every part of it — drivers,
	// the engine, the live metrics — and AllocsPerCycle and
	// AllocBytesPerCycle the same over the cell's acquisitions: the
	// garbage behind GCCount.
	Allocs             int64   `json:"allocs,omitempty"`
	AllocBytes         int64   `json:"alloc_bytes,omitempty"`
	AllocsPerCycle     float64 `json:"allocs_per_cycle,omitempty"`
	AllocBytesPerCycle float64 `json:"alloc_bytes_per_cycle,omitempty"`
	Goroutines         int     `json:"goroutines"`
	CPUSeconds         float64 `json:"cpu_s"`     // user+system CPU lockbench used, its wake probe's too
	CPUShare           float64 `json:"cpu_share"` // of all cores over the cell
	// ServerCPUSeconds is the CPU time each server of the cell used over it,
	// by address, beside lockbench's own (CPUSeconds): whichever side ran at a
	// core's worth was the limit. A server counts when its processes can
	// be seen (sandbox.Serving): lockbench's own, or one on this machine.
	ServerCPUSeconds map[string]float64 `json:"server_cpu_s,omitempty"`
	// ServerSpanS is the wall time ServerCPUSeconds covers: the cell with its
	// warm-up, from before the first client acted.
	ServerSpanS float64 `json:"server_span_s,omitempty"`
	// ServerIdleCores is the CPU the servers in ServerCPUSeconds used per
	// second at rest, read just before the cell (bursts): their
	// background — a JVM's compiler and collector, a raft tick — which a
	// cost per hand-off leaves out. Nil when not read.
	ServerIdleCores *float64 `json:"server_idle_cores,omitempty"`
	// Cores is how many CPUs lockbench and the sandboxed servers shared:
	// when together they kept nearly all of them busy, the machine was the
	// limit rather than either side.
	Cores int `json:"cores,omitempty"`
	// Procs is GOMAXPROCS: how many cores lockbench's Go code could use at
	// once, so that its CPU is judged against min(Procs, Cores) of them.
	Procs int `json:"procs,omitempty"`
	// ProcsWhy says how lockbench chose Procs, when it did: its servers
	// share the machine, and the cell tried its candidates in the
	// warm-up (ProcsTrial).
	ProcsWhy string `json:"procs_why,omitempty"`
	// ProcsTrial is what each GOMAXPROCS tried in the warm-up gave, and
	// ProcsUndecided says the trial could not tell them apart (or was cut
	// short), so that Procs is Go's choice kept by default.
	ProcsTrial     []ProcsTry `json:"procs_trial,omitempty"`
	ProcsUndecided bool       `json:"procs_undecided,omitempty"`
	// OtherCores is how many cores, on average over the cell, processes
	// other than lockbench and its servers (those in ServerCPUSeconds) kept
	// busy (Linux; -1 when unknown, 0 in results from before it was
	// measured): a
	// benchmark shares its machine with them, so that what it measured
	// is partly theirs.
	OtherCores float64 `json:"other_cores"`
	// WakeLateUs is how late a process of lockbench's that sleeps 1 ms
	// at a time woke during the cell: the machine's scheduling noise, in
	// which every client and server on it ran (Linux). Its CPU is in
	// CPUSeconds.
	WakeLateUs *Latency `json:"wake_late_us,omitempty"`
	Warning    string   `json:"warning,omitempty"`
}

// ProcsTry is one GOMAXPROCS a cell tried while it warmed up, and how
// often its clients were granted the lock under it.
type ProcsTry struct {
	Procs      int     `json:"procs"`
	Grants     int64   `json:"grants"`
	GrantsPerS float64 `json:"grants_per_s"`
	// RoundsPerS is the rate in each round of turns (A B, then B A).
	RoundsPerS []float64 `json:"rounds_per_s"`
	// CPUPerGrantUs is lockbench's CPU time per grant under it, in µs,
	// over all its turns and in each round.
	CPUPerGrantUs       float64   `json:"cpu_per_grant_us"`
	RoundsCPUPerGrantUs []float64 `json:"rounds_cpu_per_grant_us"`
}

// Violation is one breach of mutual exclusion or of fencing order.
type Violation struct {
	Lock      string  `json:"lock"`
	Kind      string  `json:"kind"` // "overlap" or "token_regression"
	Holder    int     `json:"holder"`
	Intruder  int     `json:"intruder"`
	AtS       float64 `json:"at_s"`       // seconds after the cell started
	OverlapUs float64 `json:"overlap_us"` // how long both were inside
	Token     uint64  `json:"token"`
	PrevToken uint64  `json:"prev_token"`
}

// MaxViolationsKept caps the violations listed per cell; the count is full.
const MaxViolationsKept = 100

// Key identifies a cell across runs.
func (c Cell) Key() string {
	return fmt.Sprintf("impl=%s/scenario=%s/clients=%d", c.Impl, c.Scenario, c.Clients)
}

// WriteFileAtomic writes data to path through a temporary file and a rename,
// so a reader never sees half a file and a crash leaves the old one.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("result: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("result: write %s: %w", path, err)
	}
	// CreateTemp makes the file private; results are for everyone to read.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("result: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("result: %w", err)
	}
	return nil
}

// WriteJSON writes v as indented JSON to path, atomically.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// ErrSchema is wrapped by ReadSummary's error for a summary of a schema
// this lockbench does not know.
var ErrSchema = errors.New("result: unknown summary schema")

// ReadSummary reads a summary.json, refusing a schema newer than
// SchemaVersion.
func ReadSummary(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("result: %s: %w", path, err)
	}
	if s.Schema == 0 {
		s.Schema = 1
	}
	if s.Schema > SchemaVersion {
		return nil, fmt.Errorf("%w: %s has schema %d; this lockbench reads up to %d (upgrade lockbench)", ErrSchema, path, s.Schema, SchemaVersion)
	}
	for i := range s.Cells {
		if s.Schema < 3 {
			upgradeLegacy(&s.Cells[i])
		}
		if s.Schema < 4 {
			upgradeServerCounts(&s.Cells[i])
		}
	}
	for i := range s.Cells {
		s.Cells[i].Derive()
	}
	return &s, nil
}
