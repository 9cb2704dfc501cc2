package plan_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/plan"
	"github.com/lockbench/lockbench/result"
)

// Two shards of two cells; shard 1 stopped in the second, leaving its
// unfinished log, and shard 0 recorded the failure it saw. Without
// --partial, merge refuses, naming shard 1's directory and the cell; with
// it, the first cell is merged, the failure is part of the label rather
// than the error, and summary.json and meta.json name the missing cell and
// why. A shard that finished no cell is refused by name, and a partial
// merge with no cell every shard finished has nothing to merge.
func TestMergePartial(t *testing.T) {
	c4, c8 := hotCell(100), hotCell(200)
	c8.Clients = 8
	dirs := writeShards(t, "", fakeShard{cells: []result.Cell{c4, c8}, failure: "shard 1/2 did not arrive", acquireUs: 50},
		fakeShard{cells: []result.Cell{c4}, acquireUs: 60})
	unfinished, err := result.CreateCellPath(dirs[1], c8, result.HlogExt)
	if err != nil {
		t.Fatal(err)
	}
	unfinished += result.PartialExt
	if err := os.WriteFile(unfinished, []byte("#[lockbench closed log"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = plan.Merge(ctx, filepath.Join(t.TempDir(), "whole"), dirs, plan.MergeOptions{})
	if err == nil || !strings.Contains(err.Error(), dirs[1]) || !strings.Contains(err.Error(), c8.Key()) || !strings.Contains(err.Error(), "--partial") {
		t.Fatalf("merge without --partial: %v; want a refusal naming %s, %s and --partial", err, dirs[1], c8.Key())
	}
	out := filepath.Join(t.TempDir(), "partial")
	sum, err := plan.Merge(ctx, out, dirs, plan.MergeOptions{Partial: true})
	if err != nil {
		t.Fatalf("merge --partial: %v", err)
	}
	if len(sum.Cells) != 1 || sum.Cells[0].Key() != c4.Key() || sum.Cells[0].Acquires != 200 {
		t.Errorf("merged cells %+v; want %s alone, with both shards' 200 acquisitions", sum.Cells, c4.Key())
	}
	meta, err := result.ReadMeta(filepath.Join(out, result.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*result.Partial{"summary": sum.Partial, "meta.json": meta.Partial} {
		if p == nil || !slices.Equal(p.Shards, []int{1}) || len(p.Missing) != 1 || p.Missing[0].Cell != c8.Key() ||
			!strings.Contains(p.Missing[0].Why, "shard 1 stopped mid-cell ("+filepath.Join(result.CellsDir, "redis", "hot_c8.hlog.partial")) {
			t.Errorf("%s: partial = %+v; want shard 1 and %s, stopped mid-cell", name, p, c8.Key())
		}
	}

	if err := os.Remove(filepath.Join(dirs[1], result.SummaryFile)); err != nil {
		t.Fatal(err)
	}
	_, err = plan.Merge(ctx, filepath.Join(t.TempDir(), "none"), dirs, plan.MergeOptions{})
	if err == nil || !strings.Contains(err.Error(), "shard 1/2 ("+dirs[1]+") finished no cell") {
		t.Errorf("merge of a shard with no summary: %v; want it named as having finished no cell", err)
	}
	_, err = plan.Merge(ctx, filepath.Join(t.TempDir(), "none"), dirs, plan.MergeOptions{Partial: true})
	if err == nil || !strings.Contains(err.Error(), "nothing to merge") {
		t.Errorf("merge --partial with no cell every shard finished: %v; want nothing to merge", err)
	}
}
