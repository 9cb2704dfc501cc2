package metrics_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/inproc"
	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios
)

// shortPlan is a hot cell on the in-process lock, writing its results to
// a temporary directory: two seconds of four clients.
func shortPlan(t *testing.T) plan.Plan {
	t.Helper()
	return plan.Plan{Impls: []string{"inproc"}, Scenarios: []string{"hot"}, Clients: []int{4},
		Cell: engine.CellSpec{Locks: 1, Duration: 2 * time.Second, Warmup: 200 * time.Millisecond, Hold: 100 * time.Microsecond,
			MaxTime: time.Minute, ConnectParallel: 4, Repeat: 1,
			Config: impl.Config{Seed: 1}.WithDefaults()},
		Out: t.TempDir()}
}

// runPlan runs p with e attached and returns summary.json as written.
func runPlan(t *testing.T, e *metrics.Exporter, p plan.Plan) *result.Summary {
	t.Helper()
	e.Attach(&p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := plan.Run(ctx, p); err != nil {
		t.Fatal(err)
	}
	sum, err := result.ReadSummary(filepath.Join(p.Out, result.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Cells) == 0 || sum.Cells[0].Acquires == 0 {
		t.Fatalf("want cells with acquisitions, got %+v", sum.Cells)
	}
	return sum
}

// scrape reads e's exposition in the text format, as an older Prometheus
// would.
func scrape(t *testing.T, e *metrics.Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + e.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value is the one series of name; it fails the test unless there is
// exactly one.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string) *dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil || len(f.Metric) != 1 {
		t.Fatalf("%s: want one series, got %v", name, f)
	}
	return f.Metric[0]
}

func TestCountersEqualSummaryWhenTheCellEnds(t *testing.T) {
	e, err := metrics.Listen("127.0.0.1:0", metrics.WithShard("2/3"), metrics.WithLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	sum := runPlan(t, e, shortPlan(t))
	c := sum.Cells[0]
	fams := scrape(t, e)

	acq := value(t, fams, metrics.Acquisitions)
	want := map[string]string{"impl": "inproc", "scenario": "hot", "clients": "4", "shard": "2/3"}
	for _, l := range acq.Label {
		if w, ok := want[l.GetName()]; ok && w != l.GetValue() {
			t.Errorf("label %s=%q, want %q", l.GetName(), l.GetValue(), w)
		}
		if l.GetName() == "run_id" && l.GetValue() == "" {
			t.Error("run_id label is empty")
		}
	}
	for name, got := range map[string]float64{
		metrics.Acquisitions: acq.Counter.GetValue(),
		metrics.Errors:       value(t, fams, metrics.Errors).Counter.GetValue(),
		metrics.Retries:      value(t, fams, metrics.Retries).Counter.GetValue(),
		metrics.Violations:   value(t, fams, metrics.Violations).Counter.GetValue(),
	} {
		w := map[string]int64{metrics.Acquisitions: c.Acquires, metrics.Errors: c.Errors,
			metrics.Retries: c.Retries, metrics.Violations: c.SafetyViolations}[name]
		if got != float64(w) {
			t.Errorf("%s = %v, summary.json says %d", name, got, w)
		}
	}
	h := value(t, fams, metrics.AcquireLatency).Histogram
	if h.GetSampleCount() != uint64(c.Acquires) {
		t.Errorf("acquire latency histogram counts %d, summary.json %d acquisitions", h.GetSampleCount(), c.Acquires)
	}
	if len(h.Bucket) < 10 {
		t.Errorf("want the classic buckets beside the native ones, got %d", len(h.Bucket))
	}
	if r := value(t, fams, metrics.Running).Gauge.GetValue(); r != 0 {
		t.Errorf("%s = %v after the cell ended", metrics.Running, r)
	}
	if _, ok := fams["process_cpu_seconds_total"]; !ok {
		t.Error("no process_cpu_seconds_total: the generator's CPU is not served")
	}
}

func TestListenRefusesABadAddress(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"nohost:port", "127.0.0.1:99999"} {
		if e, err := metrics.Listen(addr); err == nil {
			e.Close(context.Background())
			t.Errorf("Listen(%q) succeeded", addr)
		} else if !strings.HasPrefix(err.Error(), "lockbench: ") {
			t.Errorf("Listen(%q): %v, want an error that says whose", addr, err)
		}
	}
}

// clientsOf reads a series' clients label.
func clientsOf(m *dto.Metric) int {
	for _, l := range m.Label {
		if l.GetName() == "clients" {
			n, _ := strconv.Atoi(l.GetValue())
			return n
		}
	}
	return -1
}

// A ramp's stairs each get the counters of their own result: their
// progress comes under the ramp's largest client count, so an earlier
// stair's live figures would land on the last stair's series.
func TestRampStairsCountEachTheirOwn(t *testing.T) {
	t.Parallel()
	e, err := metrics.Listen("127.0.0.1:0", metrics.WithLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	p := shortPlan(t)
	p.Ramp = &engine.Ramp{Start: 2, Step: 2, Every: time.Second}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	e.Attach(&p)
	spec := p.Cell
	spec.Impl, spec.Clients = "inproc", 4 // as the plan reports every stair
	spec.Scenario, _ = engine.LookupScenario("hot")
	p.OnCell(0, 1, spec)
	p.OnProgress(0, 1, spec, engine.Progress{Acquires: 100}) // stair 1, of 2 clients
	p.OnResult(result.Cell{Impl: "inproc", Scenario: "hot", Clients: 2, Acquires: 100})
	p.OnProgress(0, 1, spec, engine.Progress{Acquires: 30}) // stair 2, of 4
	p.OnResult(result.Cell{Impl: "inproc", Scenario: "hot", Clients: 4, Acquires: 30})
	got := map[int]float64{}
	for _, m := range scrape(t, e)[metrics.Acquisitions].Metric {
		got[clientsOf(m)] = m.Counter.GetValue()
	}
	if got[2] != 100 || got[4] != 30 {
		t.Errorf("served %v acquisitions by clients, want 2:100 4:30", got)
	}
}
