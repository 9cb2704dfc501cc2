package grafana_test

import (
	"encoding/json"
	"github.com/lockbench/lockbench/engine"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// dashboard is what the test reads of lockbench.json.
type dashboard struct {
	Panels []struct {
		Type    string `json:"type"`
		Title   string `json:"title"`
		Repeat  string `json:"repeat"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("lockbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("lockbench.json: %v", err)
	}
	return d
}

// served is every series name the endpoint serves once a cell has run
// (with every optional figure set): each family's name and, for a
// histogram, its classic series' names.
func served(t *testing.T) map[string]bool {
	t.Helper()
	e := metrics.New(metrics.WithShard("0/2"))
	e.SetRunID("r1")
	e.CellStarted("inproc", "rate", 4)
	e.Progress("inproc", "rate", 4, engine.Progress{Acquires: 3, Errors: 1, Holding: 1, Waiting: 2})
	iv := hlog.Interval{Acquire: result.NewHistogram(), Release: result.NewHistogram()}
	iv.Acquire.RecordValue(120)
	iv.Release.RecordValue(80)
	e.Interval(result.Cell{Impl: "inproc", Scenario: "rate", Clients: 4}, iv)
	e.Result(result.Cell{Impl: "inproc", Scenario: "rate", Clients: 4, Acquires: 3, Errors: 1,
		ErrorsByClass: map[string]int64{"timeout": 1}, Generator: &result.Generator{CPUShare: 0.3},
		Open: &result.OpenLoop{ScheduleLagUs: result.Latency{P50: 10, P99: 90, Max: 200}}})
	srv := httptest.NewServer(e.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for name, f := range fams {
		names[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[name+s] = true
			}
		}
	}
	return names
}

var (
	// What in a PromQL expression is not a series name: label matchers,
	// grouping clauses, ranges, strings, dashboard variables, numbers.
	matchers = regexp.MustCompile(`\{[^}]*\}`)
	grouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	ranges   = regexp.MustCompile(`\[[^\]]*\]`)
	strs     = regexp.MustCompile(`"[^"]*"`)
	vars     = regexp.MustCompile(`\$\w+`)
	ident    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	keywords = []string{"and", "or", "unless", "offset", "bool"}
)

// seriesNames are the series an expression selects: identifiers that are
// not functions (followed by a parenthesis) nor keywords.
func seriesNames(expr string) []string {
	for _, re := range []*regexp.Regexp{matchers, grouping, ranges, strs, vars} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var out []string
	for _, m := range ident.FindAllString(expr, -1) {
		if strings.HasSuffix(m, "(") || slices.Contains(keywords, m) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Every series the dashboard's queries and variables name is one the
// endpoint serves: a renamed metric breaks this test, not a user's
// dashboard.
func TestDashboardQueriesServedSeries(t *testing.T) {
	d := loadDashboard(t)
	have := served(t)
	var exprs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			s, _ := q["query"].(string)
			s = strings.TrimPrefix(s, "label_values(")
			if i := strings.LastIndex(s, ","); i >= 0 {
				s = s[:i] // label_values(SERIES, LABEL)
			}
			exprs = append(exprs, s)
		}
	}
	if len(exprs) < 10 {
		t.Fatalf("found %d queries in lockbench.json", len(exprs))
	}
	used := map[string]bool{}
	for _, e := range exprs {
		names := seriesNames(e)
		if len(names) == 0 {
			t.Errorf("query names no series: %s", e)
		}
		for _, n := range names {
			used[n] = true
			if !have[n] {
				t.Errorf("query uses %s, which the endpoint does not serve: %s", n, e)
			}
		}
	}
	for _, must := range []string{metrics.Acquisitions, metrics.AcquireLatency, metrics.Errors, metrics.Wakeups, "process_cpu_seconds_total"} {
		if !used[must] {
			t.Errorf("the dashboard shows nothing of %s", must)
		}
	}
}

// The layout: a row per implementation, repeated over $impl, and
// a shard selector.
func TestDashboardRowPerImplementationAndShardSelector(t *testing.T) {
	d := loadDashboard(t)
	var repeated, shard bool
	for _, p := range d.Panels {
		repeated = repeated || p.Type == "row" && p.Repeat == "impl"
	}
	for _, v := range d.Templating.List {
		shard = shard || v.Name == "shard"
	}
	if !repeated || !shard {
		t.Errorf("row repeated per impl: %v, shard variable: %v", repeated, shard)
	}
}

func TestSeriesNamesOfAnExpression(t *testing.T) {
	got := seriesNames(`histogram_quantile(0.99, sum by (shard, le) (rate(go_x_bucket{shard=~"$shard"}[$__rate_interval]))) / on (a) b_total > 0`)
	if !slices.Equal(got, []string{"go_x_bucket", "b_total"}) {
		t.Errorf("got %v", got)
	}
}
