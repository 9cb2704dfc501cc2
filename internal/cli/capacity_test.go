package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

func TestCapacityRefusals(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"sharded":         {"capacity", "--impl", "inproc", "--shard", "0/2"},
		"clients":         {"capacity", "--impl", "inproc", "--clients", "4"},
		"scenario":        {"capacity", "--impl", "inproc", "--scenario", "hot"},
		"precision zero":  {"capacity", "--impl", "inproc", "--precision", "0%"},
		"find nonsense":   {"capacity", "--impl", "inproc", "--find", "peak"},
		"start above max": {"capacity", "--impl", "inproc", "--start-rate", "10", "--max-rate", "5"},
		"csv":             {"capacity", "--impl", "inproc", "--format", "csv"},
	} {
		code, out, errOut := run(args...)
		if code != ExitUsage || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line on stderr", name, code, out, errOut)
		}
	}
	_, _, errOut := run("capacity", "--impl", "inproc", "--shard", "0/2")
	if !strings.Contains(errOut, "across shards") {
		t.Errorf("sharded refusal %q does not say why", errOut)
	}
}

// readCapacity parses DIR/capacity.json back.
func readCapacity(t *testing.T, dir string) result.CapacityReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, result.CapacityFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep result.CapacityReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// checkTrialDir asserts a trial's cell was kept: its summary, with one
// cell, and its histogram log.
func checkTrialDir(t *testing.T, out, rel, scenario string) {
	t.Helper()
	sum, err := result.ReadSummary(filepath.Join(out, rel, result.SummaryFile))
	if err != nil {
		t.Fatalf("trial %s: %v", rel, err)
	}
	if len(sum.Cells) != 1 || sum.Cells[0].Scenario != scenario {
		t.Fatalf("trial %s: cells %+v, want one %s cell", rel, sum.Cells, scenario)
	}
	logs, _ := filepath.Glob(filepath.Join(out, rel, "*.hlog"))
	if len(logs) != 1 {
		t.Errorf("trial %s: %d histogram logs, want 1", rel, len(logs))
	}
}

func TestCapacityWithNoPassingRateExits5(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "cap")
	// No lock serves a billion acquisitions a second: every trial fails,
	// whatever the machine's load.
	code, stdout, errOut := run("capacity", "--impl", "inproc", "--find", "rate", "--out", out,
		"--slo", "p99<=10ms,acq/s>=1000000000", "--start-rate", "4", "--trial", "200ms", "--duration", "200ms", "--warmup", "0s")
	if code != ExitSLO {
		t.Fatalf("exit %d, want 5; stderr:\n%s", code, errOut)
	}
	if !strings.Contains(stdout, "inproc: no ") {
		t.Errorf("stdout %q does not give the verdict", stdout)
	}
	rep := readCapacity(t, out)
	if len(rep.Searches) != 1 || rep.Searches[0].Rate != 0 || len(rep.Searches[0].Trials) == 0 {
		t.Fatalf("searches %+v, want one without a rate", rep.Searches)
	}
	for _, tr := range rep.Searches[0].Trials {
		if tr.Pass || tr.Why == "" {
			t.Errorf("trial %+v passed or says no why", tr)
		}
		checkTrialDir(t, out, tr.Dir, "rate")
	}
	if _, err := os.Stat(filepath.Join(out, "plots", "capacity-rate-inproc.png")); err != nil {
		t.Error(err)
	}
}

func TestCapacityKneeFitsASweep(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "cap")
	code, stdout, errOut := run("capacity", "--impl", "inproc", "--find", "knee", "--max-clients", "4", "--out", out,
		"--trial", "200ms", "--warmup", "0s", "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var printed result.CapacityReport
	if err := json.Unmarshal([]byte(stdout), &printed); err != nil {
		t.Fatalf("stdout is not the report: %v", err)
	}
	rep := readCapacity(t, out)
	if len(rep.Knees) != 1 || len(printed.Knees) != 1 {
		t.Fatalf("knees %+v, want one", rep.Knees)
	}
	k := rep.Knees[0]
	if len(k.Points) < 3 || k.Points[0].Clients != 1 || k.Points[len(k.Points)-1].Clients != 4 {
		t.Fatalf("points %+v, want 1 … 4 clients", k.Points)
	}
	for i, p := range k.Points {
		if i > 0 && p.Clients <= k.Points[i-1].Clients {
			t.Errorf("points not ascending: %+v", k.Points)
		}
		if p.AcquiresPerS <= 0 || p.Little.Expected <= 0 {
			t.Errorf("point %+v: no throughput or no Little's law check", p)
		}
		checkTrialDir(t, out, p.Dir, "hot")
	}
	if k.Fit == nil || k.Fit.Lambda <= 0 {
		t.Errorf("fit %+v, want one over %d points", k.Fit, len(k.Points))
	}
	// The results directory is lockbench's own: --force clears it.
	if code, _, errOut := run("capacity", "--impl", "inproc", "--find", "knee", "--max-clients", "1", "--out", out,
		"--trial", "100ms", "--warmup", "0s", "--force"); code != ExitOK {
		t.Fatalf("again with --force: exit %d; stderr:\n%s", code, errOut)
	}
	if rep := readCapacity(t, out); len(rep.Knees) != 1 || len(rep.Knees[0].Points) != 1 {
		t.Errorf("after --force: knees %+v, want the new run's one point", rep.Knees)
	}
}
