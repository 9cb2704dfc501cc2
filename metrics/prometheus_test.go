package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lockbench/lockbench/metrics"
)

// prometheusBin is the Prometheus server the test starts: $LOCKBENCH_PROMETHEUS
// or prometheus on PATH (scripts/install-servers installs Debian's). With
// CI set a missing one fails the test: there it must have been installed.
func prometheusBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("LOCKBENCH_PROMETHEUS"); p != "" {
		return p
	}
	p, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no prometheus binary (run scripts/install-servers): %v", err)
		}
		t.Skip("no prometheus binary; scripts/install-servers installs it")
	}
	return p
}

// freePort is a loopback port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// promServer is a Prometheus started for one test, scraping one target.
type promServer struct {
	addr string
	cmd  *exec.Cmd
}

// startPrometheus starts Prometheus, native histograms on, in a temporary
// directory, scraping target every 200ms; it is stopped when the test
// ends, and the test fails if it is not ready within a minute.
func startPrometheus(t *testing.T, target string) *promServer {
	t.Helper()
	bin := prometheusBin(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 200ms
  scrape_timeout: 200ms
scrape_configs:
  - job_name: lockbench
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &promServer{addr: freePort(t)}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+p.addr,
		"--enable-feature=native-histograms", "--log.level=warn")
	p.cmd.Stdout, p.cmd.Stderr = log, log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	p.await(t, time.Minute, func() (bool, error) {
		resp, err := http.Get("http://" + p.addr + "/-/ready")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	return p
}

// await polls cond every 200ms until it holds, failing the test after
// limit: a bound, not a timing assertion.
func (p *promServer) await(t *testing.T, limit time.Duration, cond func() (bool, error)) {
	t.Helper()
	end := time.Now().Add(limit)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("not so after %v", limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// query evaluates an instant PromQL query and returns its one sample's
// value, or ok false when it returned no sample.
func (p *promServer) query(q string) (v float64, ok bool, err error) {
	resp, err := http.Get("http://" + p.addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, false, fmt.Errorf("%s: %w", q, err)
	}
	if body.Status != "success" {
		return 0, false, fmt.Errorf("%s: %s", q, body.Error)
	}
	switch len(body.Data.Result) {
	case 0:
		return 0, false, nil
	case 1:
		s, _ := body.Data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil, err
	}
	return 0, false, errors.New(q + ": more than one series")
}

// After a short run scraped by a real Prometheus, PromQL over the scraped
// series gives the acquisitions and errors summary.json gives, and the
// native histogram counts every acquisition.
func TestPrometheusAgreesWithSummary(t *testing.T) {
	e, err := metrics.Listen("127.0.0.1:0", metrics.WithLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	prom := startPrometheus(t, e.Addr())
	prom.await(t, time.Minute, func() (bool, error) {
		_, ok, err := prom.query(`up{job="lockbench"} == 1`)
		return ok, err
	})
	p := shortPlan(t)
	p.Impls = []string{flakyImpl}
	sum := runPlan(t, e, p)
	c := sum.Cells[0]
	if c.Errors == 0 || c.SafetyViolations == 0 {
		t.Fatalf("errors %d, violations %d: the flaky lock should have both", c.Errors, c.SafetyViolations)
	}
	runID := labelOf(t, e, "run_id")
	match := fmt.Sprintf(`run_id=%q,impl=%q,scenario="hot",clients="4"`, runID, flakyImpl)
	sel := "{" + match + "}"
	want := map[string]float64{
		"sum(" + metrics.Acquisitions + sel + ")":                             float64(c.Acquires),
		"sum(" + metrics.Errors + sel + ")":                                   float64(c.Errors),
		"sum(" + metrics.ErrorsByClass + `{class="no_quorum",` + match + "})": float64(c.ErrorsByClass["no_quorum"]),
		"sum(" + metrics.Violations + sel + ")":                               float64(c.SafetyViolations),
		"histogram_count(sum(" + metrics.AcquireLatency + sel + "))":          float64(c.Acquires),
		"histogram_count(sum(" + metrics.ReleaseLatency + sel + "))":          float64(c.Acquires),
	}
	got := map[string]float64{}
	prom.await(t, 2*time.Minute, func() (bool, error) {
		for q, w := range want {
			v, ok, err := prom.query(q)
			if err != nil || !ok || v != w {
				return false, err
			}
			got[q] = v
		}
		return true, nil
	})
	for q, v := range got {
		t.Logf("%s = %v (summary.json: %v)", q, v, want[q])
	}
	// increase() extrapolates to the window's edges by up to a scrape
	// interval: with 50 samples of the series it agrees within a few %.
	prom.await(t, 2*time.Minute, func() (bool, error) {
		n, ok, err := prom.query("sum(count_over_time(" + metrics.Acquisitions + sel + "[10m]))")
		return ok && n >= 50, err
	})
	inc := "sum(increase(" + metrics.Acquisitions + sel + "[10m]))"
	v, ok, err := prom.query(inc)
	if err != nil || !ok || v < 0.9*float64(c.Acquires) || v > 1.1*float64(c.Acquires) {
		t.Errorf("%s = %v (%v, %v); summary.json says %d", inc, v, ok, err, c.Acquires)
	}
	t.Logf("%s = %.0f (summary.json acquires: %d, errors: %d)", inc, v, c.Acquires, c.Errors)
	// A quantile of the native histogram and the HdrHistogram's may
	// differ where the tail is sparse (they round the rank differently),
	// but by construction it lies between the neighbouring quantiles,
	// give or take a native bucket (9%).
	p99 := "histogram_quantile(0.99, sum(" + metrics.AcquireLatency + sel + "))"
	v, ok, err = prom.query(p99)
	if lo, hi := c.AcquireLatencyUs.P95/1e6/1.1, c.AcquireLatencyUs.Max/1e6*1.1; err != nil || !ok || v < lo || v > hi {
		t.Errorf("%s = %v (%v, %v); summary.json's p95 and max bound it to [%v, %v]", p99, v, ok, err, lo, hi)
	}
	t.Logf("%s = %.6fs (summary.json p99: %.6fs)", p99, v, c.AcquireLatencyUs.P99/1e6)
}

// labelOf reads a label of the acquisitions series from e's exposition.
func labelOf(t *testing.T, e *metrics.Exporter, name string) string {
	t.Helper()
	for _, l := range value(t, scrape(t, e), metrics.Acquisitions).Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	t.Fatalf("no label %s", name)
	return ""
}
