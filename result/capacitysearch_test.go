package result

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLittleCheck(t *testing.T) {
	t.Parallel()
	// 8 clients, each cycle 1 ms acquire + 0.5 ms release + 2 ms hold +
	// 0.5 ms think = 4 ms: 2,000 acq/s fits Little's law exactly.
	c := Cell{Scenario: "hot", Kind: KindClosed, Clients: 8, AcquiresPerS: 2000,
		AcquireLatencyUs: Latency{Mean: 1000}, ReleaseLatencyUs: Latency{Mean: 500}}
	l := LittleCheck(c, 2*time.Millisecond, 500*time.Microsecond)
	if l.Expected < 7.99 || l.Expected > 8.01 || l.Note != "" {
		t.Errorf("exact cell: %+v", l)
	}
	c.AcquiresPerS = 1500 // a quarter of the time unaccounted for
	l = LittleCheck(c, 2*time.Millisecond, 500*time.Microsecond)
	if l.Off > -0.24 || l.Off < -0.26 || !strings.Contains(l.Note, "Little's law") {
		t.Errorf("lossy cell: %+v", l)
	}
	// Shard 1 of 2 ran 4 of the 8 clients, at half the throughput: exact.
	shard := c
	shard.AcquiresPerS, shard.Shard = 1000, &CellShard{Index: 1, Count: 2, First: 4, Clients: 4}
	if l := LittleCheck(shard, 2*time.Millisecond, 500*time.Microsecond); l.Note != "" || l.Off > 0.01 || l.Off < -0.01 {
		t.Errorf("a shard's exact share: %+v", l)
	}
	c.Kind, c.Scenario = KindOpen, "rate"
	if l := LittleCheck(c, 0, 0); l != (Little{}) {
		t.Errorf("open loop checked: %+v", l)
	}
}

func TestReadCapacity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if IsCapacityDir(dir) {
		t.Error("an empty directory taken for a capacity search")
	}
	want := CapacityReport{Schema: SchemaVersion, SLO: "p99<=2ms", Precision: 0.1,
		Searches: []CapacitySearch{{Impl: "redis", Rate: 812.5, Trials: []SearchTrial{{Rate: 812.5, Pass: true}}}}}
	if err := WriteJSON(filepath.Join(dir, CapacityFile), want); err != nil {
		t.Fatal(err)
	}
	if !IsCapacityDir(dir) {
		t.Error("a directory with capacity.json not taken for a capacity search")
	}
	got, err := ReadCapacity(dir)
	if err != nil || got.SLO != want.SLO || got.Precision != want.Precision || len(got.Searches) != 1 || got.Searches[0].Rate != 812.5 {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	// A run's directory that also holds a capacity.json is a run's.
	if err := WriteJSON(filepath.Join(dir, SummaryFile), Summary{}); err != nil {
		t.Fatal(err)
	}
	if IsCapacityDir(dir) {
		t.Error("a run's directory taken for a capacity search")
	}
	want.Schema = SchemaVersion + 1
	if err := WriteJSON(filepath.Join(dir, CapacityFile), want); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCapacity(dir); !errors.Is(err, ErrSchema) {
		t.Errorf("a newer schema: %v, want ErrSchema", err)
	}
	if _, err := ReadCapacity(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no capacity.json: %v, want os.ErrNotExist", err)
	}
}
