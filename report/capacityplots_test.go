package report

import (
	"image/color"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/result"
)

// colourPixels counts the pixels of a PNG within a few levels of c.
func colourPixels(t *testing.T, path string, c color.Color) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b uint32) bool { d := int(a>>8) - int(b>>8); return d >= -6 && d <= 6 }
	wr, wg, wb, _ := c.RGBA()
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r, wr) && near(g, wg) && near(bl, wb) {
				n++
			}
		}
	}
	return n
}

// A trial whose verdict is its pool's is drawn apart from one judged
// alone, and one a busy machine left unknown apart from both; the legend
// names each, and only those the plot holds.
func TestSearchPlotTellsPooledFromSingleVerdicts(t *testing.T) {
	t.Parallel()
	share := &result.PooledShare{Share: 0.012, Low: 0.0105, High: 0.0137, Allowed: 0.01}
	trials := []result.SearchTrial{
		{Rate: 50, LatencyUs: 3000, Pass: true, Pool: 1},
		{Rate: 100, LatencyUs: 9000, Pass: true, Pool: 1, PoolTrials: 2},
		{Rate: 100, LatencyUs: 11000, Pass: true, Pool: 2, PoolTrials: 2, PoolShare: share},
		{Rate: 150, LatencyUs: 14000, Pool: 1, PoolTrials: 3, PoolShare: share},
		{Rate: 150, LatencyUs: 9500, Pool: 2, Unknown: "machine busy: other processes kept 1.3 of 2 cores busy"},
		{Rate: 150, LatencyUs: 12000, Pool: 3, PoolTrials: 3, PoolShare: share},
		{Rate: 150, LatencyUs: 13000, Pool: 4, PoolTrials: 3, PoolShare: share},
		{Rate: 400, LatencyUs: 90000, Pool: 1},
	}
	wantKinds := []trialKind{passedAlone, passedPooled, passedPooled, failedPooled, unknownBusy, failedPooled, failedPooled, failedAlone}
	for i, tr := range trials {
		if k := kindOf(tr); k != wantKinds[i] {
			t.Errorf("trial %d: kind %d (%s), want %d (%s)", i, k, trialStyles[k].name, wantKinds[i], trialStyles[wantKinds[i]].name)
		}
	}
	// Files written before pool_trials: the pool's last trial says Pool 2.
	if k := kindOf(result.SearchTrial{Pass: true, Pool: 2}); k != passedPooled {
		t.Errorf("an older file's pooled pass: kind %d", k)
	}

	rep := &result.CapacityReport{SLO: "p99<=10ms", Precision: 0.05,
		Searches: []result.CapacitySearch{
			{Impl: "pooled", Rate: 100, Missed: 150, Trials: trials},
			{Impl: "single", Rate: 50, Missed: 400, Trials: []result.SearchTrial{trials[0], trials[7]}},
		}}
	files, err := RenderCapacity(t.TempDir(), rep)
	if err != nil || len(files) != 2 || !strings.HasSuffix(files[0], "capacity-rate-pooled.png") {
		t.Fatalf("files %v, err %v", files, err)
	}
	for _, c := range []struct {
		name   string
		colour color.Color
	}{{"passed alone", passColour}, {"passed pooled", pooledPassColour}, {"failed pooled", pooledFailColour},
		{"unknown", unknownColour}} { // a cross's thin strokes blend: not counted
		if n := colourPixels(t, files[0], c.colour); n < 20 {
			t.Errorf("%s: %d pixels of its colour in %s, want its glyphs drawn", c.name, n, files[0])
		}
	}
	for _, c := range []color.Color{pooledPassColour, pooledFailColour, unknownColour} {
		if n := colourPixels(t, files[1], c); n != 0 {
			t.Errorf("colour %v: %d pixels in a search that pooled nothing, want none (nor a legend line)", c, n)
		}
	}
	for k := range trialStyles {
		for j := range trialStyles {
			if j != k && colourDistance(trialStyles[k].colour, trialStyles[j].colour) < 60 {
				t.Errorf("%q and %q are drawn in colours too close to tell apart", trialStyles[k].name, trialStyles[j].name)
			}
		}
	}
}

func colourDistance(a, b color.Color) int {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	abs := func(x, y uint32) int {
		if d := int(x>>8) - int(y>>8); d >= 0 {
			return d
		}
		return int(y>>8) - int(x>>8)
	}
	return abs(ar, br) + abs(ag, bg) + abs(ab, bb)
}

// An unstable search's plot is titled with its range, not the verdict's
// whole note, which ran off both sides of the picture.
func TestUnstablePlotTitleFits(t *testing.T) {
	t.Parallel()
	slo, _ := result.ParseSLO("p99<=20ms")
	s := result.CapacitySearch{Impl: "zk-pred", Rate: 781, Missed: 812, Unstable: true,
		Note:     "unstable: 4 of 4 full trials at 781/s passed and 3 of 4 at 812/s: the server's capacity moved between trials, and the interval spans it",
		Interval: &result.RateInterval{Low: 781, High: 894, LowFrom: "tails", HighFrom: "spread"},
		Trials:   []result.SearchTrial{{Rate: 781, Pass: true, LatencyUs: 15000}, {Rate: 894, LatencyUs: 30000}}}
	p, err := searchPlot(s, slo, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if want := "zk-pred: 781 acq/s at p99 ≤ 20 ms, unstable: the capacity moved within 781–894/s"; p.Title.Text != want {
		t.Errorf("title %q, want %q", p.Title.Text, want)
	}
}
