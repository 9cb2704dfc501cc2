package faults

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/engine"
)

func TestOverlaps(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name      string
		spans     [][3]int // client, from, to (ms; to −1: still open)
		want      int
		overlapUs float64 // of the first violation
	}{
		{"one after another", [][3]int{{0, 0, 10}, {1, 10, 20}}, 0, 0},
		{"second inside first", [][3]int{{0, 0, 10}, {1, 4, 6}}, 1, 2000},
		{"second starts before first ends", [][3]int{{0, 0, 10}, {1, 7, 20}}, 1, 3000},
		{"same client twice", [][3]int{{0, 0, 10}, {0, 5, 20}}, 0, 0},
		{"open span ends at the end", [][3]int{{0, 0, -1}, {1, 30, 35}}, 1, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTally(engine.CellSpec{})
			tl.start = t0
			h := &holds{lock: "l"}
			for _, s := range tc.spans {
				k := h.enter(s[0], at(s[1]))
				if s[2] >= 0 {
					h.exit(k, at(s[2]))
				}
			}
			vs := h.overlaps(tl, at(40))
			if len(vs) != tc.want {
				t.Fatalf("%d violations, want %d: %+v", len(vs), tc.want, vs)
			}
			if tc.want > 0 && (vs[0].OverlapUs != tc.overlapUs || vs[0].Kind != "overlap") {
				t.Errorf("got %+v, want an overlap of %.0fµs", vs[0], tc.overlapUs)
			}
		})
	}
}

func TestSpread(t *testing.T) {
	t.Parallel()
	s := spread([]float64{30, 10, 20, 50, 40})
	if s.Count != 5 || s.Min != 10 || s.P50 != 30 || s.Max != 50 || s.P99 != 50 || s.P1 != 10 {
		t.Errorf("spread %+v", s)
	}
}

func TestFencedResourceRejectsLowerTokens(t *testing.T) {
	t.Parallel()
	plain, fenced := &resource{}, &resource{fenced: true}
	for _, w := range []struct {
		token  uint64
		fenced bool
	}{{2, true}, {2, true}, {1, false}, {3, true}} {
		if !plain.Write(0, w.token) {
			t.Errorf("unfenced resource refused token %d", w.token)
		}
		if got := fenced.Write(0, w.token); got != w.fenced {
			t.Errorf("fenced resource took token %d: %v, want %v", w.token, got, w.fenced)
		}
	}
}
