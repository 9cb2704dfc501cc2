package report

import (
	"github.com/lockbench/lockbench/result"

	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// fixtureStart is when the fixture run started: fixed, so output is too.
var fixtureStart = time.Date(2026, 11, 22, 5, 1, 46, 0, time.UTC)

func i64(v int64) *int64 { return &v }

// fixtureCells is a small, plausible run: three implementations under a
// closed loop and a burst.
func fixtureCells() []Cell {
	lat := func(p50, p99 float64) Latency {
		return Latency{P50: p50, P90: p50 * 2, P95: (p50*2 + p99) / 2, P99: p99, P999: p99 * 1.5, P9999: p99 * 2, Max: p99 * 3, Mean: p50 * 1.2}
	}
	hot := func(name string, n int, perS, p50, p99, retries, notif float64) Cell {
		acq := int64(perS * 3)
		c := Cell{Impl: name, Scenario: "hot", Clients: n, Locks: 1, DurationS: 3, Acquires: acq,
			ErrorsByClass: map[string]int64{}, AcquiresPerS: perS, AcquireLatencyUs: lat(p50, p99),
			ReleaseLatencyUs: lat(p50/2, p99/2), RetriesPerAcquire: retries, NotificationsPerAcquire: notif,
			RoundTripsPerAcquire: 2 + retries}
		c.Retries = int64(retries * float64(acq))
		c.Notifications = int64(notif * float64(acq))
		c.RoundTrips = int64((2 + retries) * float64(acq))
		return c
	}
	burst := func(name string, n int, th *result.Theory, wakeups int64, p99 float64) Cell {
		c := Cell{Impl: name, Scenario: "burst", Clients: n, Locks: 1, DurationS: 0.05 * float64(n), Acquires: int64(n),
			AcquiresPerS: 20, AcquireLatencyUs: lat(p99/2, p99), ReleaseLatencyUs: lat(300, 900), Settle: "exact"}
		if th != nil {
			c.Theory = th
			c.TheoryWakeups = i64(th.BurstWakeups(n))
			c.Wakeups, c.ReleaseWakeups = wakeups+int64(n), wakeups
			c.Notifications = wakeups + int64(n)
			c.NotificationsPerAcquire = float64(c.Notifications) / float64(n)
			c.Server = map[string]int64{"watch_triggered": c.Notifications}
			fired := c.Notifications
			c.ServerCounts = &result.ServerCounts{Watches: &fired, ClientNotifications: c.Notifications}
		} else {
			c.Retries = int64(n) * 12
			c.RetriesPerAcquire = 12
		}
		return c
	}
	cells := []Cell{
		hot("redis", 1, 9000, 105, 410, 0, 0),
		hot("redis", 4, 12000, 310, 1500, 1.5, 0),
		hot("redis", 16, 11500, 1250, 8200, 6.25, 0),
		burst("redis", 4, nil, 0, 4000),
		burst("redis", 16, nil, 0, 21000),
		hot("zk-naive", 1, 2500, 390, 1010, 0, 0),
		hot("zk-naive", 4, 2100, 1800, 5200, 0, 3.1),
		hot("zk-naive", 16, 900, 17000, 41000, 0, 15.2),
		burst("zk-naive", 4, &result.WatchAll, 6, 5000),
		burst("zk-naive", 16, &result.WatchAll, 120, 60000),
		hot("zk-pred", 1, 2400, 400, 950, 0, 0),
		hot("zk-pred", 4, 2300, 1700, 3600, 0, 1),
		hot("zk-pred", 16, 2250, 7000, 12500, 0, 1),
		burst("zk-pred", 4, &result.WatchPredecessor, 3, 4500),
		burst("zk-pred", 16, &result.WatchPredecessor, 15, 19000),
	}
	for _, i := range []int{2, 7, 12} { // the closed loops at 16 clients
		per := make([]int64, 16)
		for j := range per {
			per[j] = cells[i].Acquires / 16 * int64(8+j) / 16 // skewed: some clients get twice others' share
		}
		cells[i].Fairness = result.FairnessOf(per, 0)
	}
	cells[6].Errors = 2
	cells[6].ErrorsByClass = map[string]int64{"timeout": 2}
	cells[2].Server = map[string]int64{"packets_sent": 1234}
	cells[2].ServerCounts = &result.ServerCounts{Messages: 1234, Unit: "packets"}
	return cells
}

func fixtureSummary() *Summary {
	return &Summary{Version: "0.1.0-test", Started: fixtureStart, Cells: fixtureCells()}
}

// fixtureMeta is meta.json as lockbench.Meta writes it.
func fixtureMeta() map[string]any {
	return map[string]any{
		"lockbench_version": "0.1.0-test", "go_version": "go1.26.8", "started": fixtureStart,
		"host": map[string]string{"hostname": "vm", "os": "linux", "arch": "amd64", "cpus": "2"},
		"seed": 1, "impls": []string{"redis", "zk-naive", "zk-pred"}, "scenarios": []string{"hot", "burst"},
		"clients": []int{1, 4, 16}, "locks": 1, "duration_s": 3, "warmup_s": 0.5, "hold_s": 0.001,
		"think_s": 0, "ttl_s": 10, "retry_s": 0.01,
		"servers":     map[string]any{"Redis": "127.0.0.1:6379", "Redlock": nil, "ZK": []string{"127.0.0.1:2181"}},
		"zk_ensemble": 1,
	}
}

// writeFixtureDir writes a results directory as `lockbench run` does:
// meta.json, summary.json and, with logs, an .hlog per cell.
func writeFixtureDir(t *testing.T, dir string, sum *Summary, logs bool) {
	t.Helper()
	if err := result.WriteJSON(filepath.Join(dir, result.MetaFile), fixtureMeta()); err != nil {
		t.Fatal(err)
	}
	if err := result.WriteJSON(filepath.Join(dir, result.SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	if !logs {
		return
	}
	for i, c := range sum.Cells {
		writeHlog(t, filepath.Join(dir, result.CellFile(c)+result.HlogExt), fixtureStart.UnixMilli(), fixtureIntervals(c, uint64(i)), false)
	}
}

// interval is one interval histogram to write: its tag, its length and
// its values in microseconds.
type interval struct {
	tag    string
	ms     int64
	values []int64
}

// fixtureIntervals draws a cell's latencies, log-normal about its p50,
// in 1 s intervals (the last one shorter, as at the end of a real cell).
func fixtureIntervals(c Cell, seed uint64) []interval {
	r := rand.New(rand.NewPCG(seed, 42))
	draw := func(n int, p50 float64) []int64 {
		vs := make([]int64, n)
		for i := range vs {
			vs[i] = max(1, int64(p50*math.Exp(0.8*r.NormFloat64())))
		}
		return vs
	}
	var out []interval
	secs := max(1, int(math.Ceil(c.DurationS)))
	for s := range secs {
		ms := int64(1000)
		if s == secs-1 {
			ms = int64(c.DurationS*1000) - int64(s)*1000
		}
		n := int(c.AcquiresPerS * float64(ms) / 1000 / 10) // a tenth: the tests need shape, not volume
		if c.Scenario == "burst" {
			n = int(c.Acquires)
		}
		n = max(n, 1)
		out = append(out,
			interval{result.TagAcquire, ms, draw(n, c.AcquireLatencyUs.P50)},
			interval{result.TagRelease, ms, draw(n, c.ReleaseLatencyUs.P50)})
	}
	return out
}

// writeHlog writes an interval log the way `lockbench run` does: format
// version, start and base time (the measurement start), legend, then the
// interval histograms stamped with absolute milliseconds. relative also
// sets the writer's base time, so interval stamps are relative.
func writeHlog(t *testing.T, path string, startMs int64, ivs []interval, relative bool) {
	t.Helper()
	var b bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&b)
	if relative {
		w.SetBaseTime(startMs)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.OutputLogFormatVersion())
	must(w.OutputStartTime(startMs))
	must(w.OutputBaseTime(startMs))
	must(w.OutputLegend())
	at := startMs
	for i, iv := range ivs {
		h := result.NewHistogram()
		for _, v := range iv.values {
			must(h.RecordValue(v))
		}
		h.SetTag(iv.tag)
		h.SetStartTimeMs(at)
		h.SetEndTimeMs(at + iv.ms)
		must(w.OutputIntervalHistogram(h))
		// Tags of one second share its time span; the next second starts
		// after the last tag of this one.
		if i+1 < len(ivs) && ivs[i+1].tag == result.TagAcquire {
			at += iv.ms
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// derived is cells with their derived figures computed, as a run records
// them and ReadSummary reads them: tests build cells by hand.
func derived(cells []Cell) []Cell {
	out := make([]Cell, len(cells))
	for i, c := range cells {
		c.Derive()
		out[i] = c
	}
	return out
}
