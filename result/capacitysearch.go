package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// CapacityFile is the name of a capacity search's results in its
// directory; each trial's cell has a directory of its own under TrialsDir.
const (
	CapacityFile = "capacity.json"
	TrialsDir    = "trials"
)

// CapacityReport is the content of capacity.json: what `lockbench
// capacity` found per implementation.
type CapacityReport struct {
	Schema  int       `json:"schema"`
	Version string    `json:"lockbench_version"`
	Started time.Time `json:"started"`
	SLO     string    `json:"slo"`
	// Precision is the search's stated precision, a fraction (0.05).
	Precision float64          `json:"precision"`
	Searches  []CapacitySearch `json:"searches,omitempty"`
	Knees     []Knee           `json:"knees,omitempty"`
	Failure   string           `json:"failure,omitempty"`
}

// ReadCapacity reads DIR/capacity.json, refusing a schema newer than
// SchemaVersion (ErrSchema); a directory without one is os.ErrNotExist.
func ReadCapacity(dir string) (*CapacityReport, error) {
	path := filepath.Join(dir, CapacityFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	var r CapacityReport
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("result: %s: %w", path, err)
	}
	if r.Schema > SchemaVersion {
		return nil, fmt.Errorf("%w: %s has schema %d; this lockbench reads up to %d (upgrade lockbench)", ErrSchema, path, r.Schema, SchemaVersion)
	}
	return &r, nil
}

// IsCapacityDir says whether dir holds a capacity search's results (a
// capacity.json and no summary.json of a run of its own).
func IsCapacityDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); !errors.Is(err, os.ErrNotExist) {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, CapacityFile))
	return err == nil
}

// CapacitySearch is one implementation's highest arrival rate (the rate
// scenario, latency from the intended start) that met the SLO.
type CapacitySearch struct {
	Impl     string `json:"impl"`
	Scenario string `json:"scenario"`
	// Rate is the answer, 0 when no rate passed; LatencyUs the SLO's
	// quantile at it (its last passing trial).
	Rate      float64 `json:"rate"`
	LatencyUs float64 `json:"latency_us"`
	// Confirmed: a full-length trial (or pool of them) at Rate passed
	// and one at Missed, a step above, failed.
	Confirmed bool    `json:"confirmed"`
	Missed    float64 `json:"missed,omitempty"`
	// Limit names what other than the lock stopped the search (see
	// TrialLimit).
	Limit string `json:"limit,omitempty"`
	// Note says why the search ended where it did, when not confirmed.
	Note string `json:"note,omitempty"`
	// Wait says what an arrival that finds the lock held waits for, when
	// the implementation declares it a step of its own (a poll interval,
	// a server's resync): where the tail jumps once more arrivals than
	// the SLO's quantile allows find the lock held.
	Wait string `json:"wait,omitempty"`
	// Sampled: the bracket's both ends were too close to call with the
	// arrivals pooled there, so the search stopped unconfirmed and the
	// answer is as precise as Low and High.
	Sampled bool `json:"sampled,omitempty"`
	// Low and High bound the lock's capacity at a nominal 95 % by the
	// trials' tails (see capacity.Answer): no rate tried between them was
	// decided with the arrivals pooled there (up to MaxArrivals, or four
	// trials). 0 when no trial decided that side, both 0 when they would
	// not hold Rate.
	Low  float64 `json:"low,omitempty"`
	High float64 `json:"high,omitempty"`
	// Spread is what the repeats after the answer showed, and
	// Unstable says they disagreed with it: the server's capacity moved
	// between trials across the rates the search told apart, and
	// Interval spans the rates it moved across.
	Spread   *CapacitySpread `json:"spread,omitempty"`
	Unstable bool            `json:"unstable,omitempty"`
	// Interval is the range the capacity lies in as the search narrowed
	// it, absent without an answer (see capacity.Answer.Interval).
	Interval *RateInterval `json:"interval,omitempty"`
	// LatencyInterval is the SLO's quantile at the answer from the tail
	// of the trials its verdict rests on, pooled, with its interval;
	// absent when the SLO's quantile is not a share (max, mean).
	LatencyInterval *QuantileInterval `json:"latency_interval,omitempty"`
	MaxArrivals     int64             `json:"max_arrivals,omitempty"`
	Trials          []SearchTrial     `json:"trials"`
	WallS           float64           `json:"wall_s"`
}

// RateInterval is the range a capacity lies in: each end the trials'
// tails decided at a nominal 95 % ("tails": CapacitySearch.Low, High)
// where they did, else the bisection's bracket ("bracket": the answer,
// the highest rate that passed, and the lowest that failed above it).
// High is 0, and HighFrom empty, when nothing failed above the answer.
// CapacitySpread is capacity.Spread as capacity.json holds it: PassedAt
// of TrialsAt full trials at Rate passed, PassedMissed of TrialsMissed at
// Missed, the confirmation's counted.
type CapacitySpread struct {
	Rate         float64 `json:"rate"`
	Missed       float64 `json:"missed"`
	PassedAt     int     `json:"passed_at"`
	TrialsAt     int     `json:"trials_at"`
	PassedMissed int     `json:"passed_missed"`
	TrialsMissed int     `json:"trials_missed"`
	// Low and High are the nearest rates below Rate and above Missed at
	// which every one of the repeats' trials agreed (passed, failed),
	// looked for only on a side where a repeat disagreed; 0 none.
	Low  float64 `json:"low,omitempty"`
	High float64 `json:"high,omitempty"`
}

// RateInterval is the range a capacity lies in; an end from "spread" may
// be open (0): no rate on that side agreed within the trial budget.
type RateInterval struct {
	Low      float64 `json:"low"`
	High     float64 `json:"high"`
	LowFrom  string  `json:"low_from"`
	HighFrom string  `json:"high_from,omitempty"`
}

// QuantileInterval is a quantile of latency (µs) from the arrivals of
// Trials trials pooled, with its 95 % interval by order statistics (no
// assumption on the distribution; capacity.QuantileRanks). With few
// arrivals above the quantile the interval's upper end is the largest
// arrival.
type QuantileInterval struct {
	Quantile string  `json:"quantile"`
	PointUs  float64 `json:"point_us"`
	LowUs    float64 `json:"low_us"`
	HighUs   float64 `json:"high_us"`
	Arrivals int64   `json:"arrivals"`
	Trials   int     `json:"trials"`
}

// LimitKind names what other than the lock limited a trial.
type LimitKind string

// Limit kinds: lockbench sent arrivals late, lockbench's CPU took near
// all it could use, or other processes kept the machine's cores busy.
const (
	LimitLate         LimitKind = "generator late"
	LimitGeneratorCPU LimitKind = "generator cpu"
	LimitMachineBusy  LimitKind = "machine busy"
)

// TrialLimit is what other than the lock limited a trial, as package
// judge found it, with the figures behind it; the zero value blames the
// lock. ScheduleLagP99Us is lockbench's lateness (LimitLate),
// GeneratorCPUShare its CPU's share of all cores (LimitGeneratorCPU),
// OtherCores of Cores the cores other processes kept busy and
// WakeLate… how late a thread sleeping 1 ms woke (LimitMachineBusy).
type TrialLimit struct {
	Kind              LimitKind `json:"kind"`
	ScheduleLagP99Us  float64   `json:"schedule_lag_p99_us,omitempty"`
	GeneratorCPUShare float64   `json:"generator_cpu_share,omitempty"`
	OtherCores        float64   `json:"other_cores,omitempty"`
	Cores             int       `json:"cores,omitempty"`
	WakeLateP99Us     float64   `json:"wake_late_p99_us,omitempty"`
	WakeLateMaxUs     float64   `json:"wake_late_max_us,omitempty"`
}

// SearchTrial is one cell of a search, kept in Dir (relative to the
// results directory) with its own summary and histogram log.
type SearchTrial struct {
	Rate      float64 `json:"rate"`
	Phase     string  `json:"phase"` // bracket, bisect, confirm, narrow, repeat
	Full      bool    `json:"full"`
	DurationS float64 `json:"duration_s"`
	LatencyUs float64 `json:"latency_us"` // the SLO's quantile, from the intended start
	// AcquiresPerS is what was served; Dropped and Errors what was not.
	AcquiresPerS float64 `json:"acquires_per_s"`
	Dropped      int64   `json:"dropped"`
	Errors       int64   `json:"errors"`
	// ScheduleLagP99Us is lockbench's own lateness in sending arrivals.
	ScheduleLagP99Us float64 `json:"schedule_lag_p99_us"`
	// OtherCores and WakeLateP99Us are the machine's state during the
	// trial (see Generator): the cores other processes kept busy, and how
	// late a thread sleeping 1 ms woke, p99.
	OtherCores    float64 `json:"other_cores"`
	WakeLateP99Us float64 `json:"wake_late_p99_us,omitempty"`
	// Over of Arrivals served took longer than the SLO's limit. Pool
	// numbers the trials counted at one rate for one verdict (1 the
	// first; absent for one the pool did not count, see Unknown);
	// PooledOver of PooledArrivals is their tail so far, and Decided says
	// whether that tail decides the verdict at 95 %. Dispersion and
	// PooledDispersion say how much more the arrivals over the limit
	// varied from second to second than independent ones would (absent:
	// no more than chance): a sample that came in bursts is worth
	// Arrivals/Dispersion independent arrivals (capacity.Tail).
	Over             int64   `json:"over"`
	Arrivals         int64   `json:"arrivals"`
	Dispersion       float64 `json:"dispersion,omitempty"`
	Pool             int     `json:"pool,omitempty"`
	PooledOver       int64   `json:"pooled_over,omitempty"`
	PooledArrivals   int64   `json:"pooled_arrivals,omitempty"`
	PooledDispersion float64 `json:"pooled_dispersion,omitempty"`
	Decided          bool    `json:"decided,omitempty"`

	// SafetyViolations is the trial's count of mutual-exclusion
	// violations; Unsafe is package judge's verdict on the trial's
	// mutual exclusion (violations, lost updates, a history that is not
	// linearizable), absent from files written before it.
	SafetyViolations int64 `json:"safety_violations,omitempty"`
	Unsafe           bool  `json:"unsafe,omitempty"`

	// Pass is the verdict of the trial's pool, when it was pooled; Why
	// says what failed the trial on its own. PoolShare, when the verdict
	// is its pool's rather than the trial's own, is the pooled tail it
	// rests on. (Files written before PoolShare hold the pool's reason in
	// Why.)
	Pass      bool         `json:"pass"`
	Why       string       `json:"why,omitempty"`
	PoolShare *PooledShare `json:"pool_share,omitempty"`
	// PoolTrials is how many trials' tails the verdict rests on, when
	// more than one: the trial's verdict is its pool's, not its own.
	PoolTrials int `json:"pool_trials,omitempty"`
	// LimitedBy is what other than the lock failed the trial, when
	// something did.
	LimitedBy *TrialLimit `json:"limited_by,omitempty"`
	// Limit is LimitedBy as the sentence files written before it hold.
	//
	// Deprecated: only read from files written before LimitedBy.
	Limit string `json:"limit,omitempty"`
	// Unknown names what other than the lock limited a trial that
	// passed (the machine busy, lockbench late): its pool counted it
	// neither as a pass nor as a failure, as a failure there is set
	// aside (Limit), and its verdict is not a pass.
	Unknown string `json:"unknown,omitempty"`
	Dir     string `json:"dir"`
}

// PooledShare is the share of a pool's arrivals over the SLO's limit, the
// 95 % interval of the lock's own share given them (widened when they
// came in bursts; capacity.Tail.Interval), and the share the SLO's
// quantile allows: a verdict the interval decides.
type PooledShare struct {
	Share   float64 `json:"share"`
	Low     float64 `json:"low"`
	High    float64 `json:"high"`
	Allowed float64 `json:"allowed"`
}

// Knee is one implementation's closed loop swept over client counts with
// the Universal Scalability Law fitted to it.
type Knee struct {
	Impl     string      `json:"impl"`
	Scenario string      `json:"scenario"`
	Points   []KneePoint `json:"points"`
	// Fit is absent when it could not be made (fewer than three points).
	Fit  *USLFit `json:"fit,omitempty"`
	Note string  `json:"note,omitempty"`
}

// KneePoint is one closed-loop cell of a sweep.
type KneePoint struct {
	Clients      int     `json:"clients"`
	AcquiresPerS float64 `json:"acquires_per_s"`
	P99Us        float64 `json:"p99_us"`
	Little       Little  `json:"little"`
	Dir          string  `json:"dir"`
}

// USLFit is X(N) = λN / (1 + σ(N−1) + κN(N−1)) fitted to a sweep; NStar
// = √((1−σ)/κ) is the best client count (0 when κ is 0: no peak), Peak
// the fitted throughput there.
type USLFit struct {
	Lambda float64 `json:"lambda"`
	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
	NStar  float64 `json:"n_star"`
	Peak   float64 `json:"peak"`
	R2     float64 `json:"r2"`
}

// Little is Little's law checked on a closed-loop cell: each client is
// always acquiring, holding, releasing or thinking, so clients ≈
// throughput × (acquire + hold + release + think). A cell far off it lost
// time where nothing measures it (connection stalls, the harness).
type Little struct {
	Expected float64 `json:"expected_clients"` // throughput × cycle
	Off      float64 `json:"off"`              // Expected/clients − 1
	// Clients is the clients the cell counted (a shard's own); Note says
	// in words a cell package judge finds off Little's law.
	Clients int    `json:"clients,omitempty"`
	Note    string `json:"note,omitempty"`
}

// TailShare is the share of arrivals the SLO's quantile lets take longer
// than its limit: 0.01 for a p99. It is 0 for max and mean, which no
// count of slow arrivals decides alone.
func (s SLO) TailShare() float64 {
	switch s.Quantile {
	case "p50":
		return 0.5
	case "p90":
		return 0.1
	case "p95":
		return 0.05
	case "p99":
		return 0.01
	case "p999":
		return 0.001
	case "p9999":
		return 0.0001
	}
	return 0
}

// TailOver counts the values of h (µs) over limit as its quantiles see
// them: a value is over when the highest value its bucket stands for is,
// so that a p99 above limit always has more than 1 % over it.
func TailOver(h *hdrhistogram.Histogram, limit time.Duration) int64 {
	if h == nil {
		return 0
	}
	limitUs := limit.Microseconds()
	var over int64
	for _, b := range h.Distribution() {
		if b.Count > 0 && b.To > limitUs {
			over += b.Count
		}
	}
	return over
}
