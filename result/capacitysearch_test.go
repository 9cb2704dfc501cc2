package result

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

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
