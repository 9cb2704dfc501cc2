package cli

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/capacity"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// A capacity search whose trials have a tail: a 2 ms hold on one lock
// against a p90 of 1 ms, at Poisson arrivals, makes some arrivals wait
// past the limit at every rate. Every trial's tail in capacity.json is
// read back from the trial's own interval log, second by second: its
// count over the limit and of arrivals, its dispersion, and, pooled, the
// sum of its pool's and their dispersion; the answer is sampled exactly
// when the search says its ends were too close to call.
func TestCapacityTailsReadBackFromTheTrials(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "cap")
	code, stdout, errOut := run("capacity", "--impl", "inproc", "--find", "rate", "--out", out, "--slo", "p90<=1ms",
		"--hold", "2ms", "--start-rate", "50", "--max-rate", "200", "--trial", "1s", "--duration", "1s",
		"--warmup", "0s", "--others-share", "100%", "--max-time", "40s")
	rep := readCapacity(t, out)
	if len(rep.Searches) != 1 || len(rep.Searches[0].Trials) == 0 {
		t.Fatalf("no trials: %+v\n%s", rep, errOut)
	}
	if want := searchExit(rep.Searches[0]); code != want {
		t.Fatalf("exit %d, the report calls for %d (answer %g, note %q); stderr:\n%s",
			code, want, rep.Searches[0].Rate, rep.Searches[0].Note, errOut)
	}
	s := rep.Searches[0]
	slo, err := result.ParseSLO("p90<=1ms")
	if err != nil {
		t.Fatal(err)
	}
	over := int64(0)
	var pool []capacity.Tail
	for i, tr := range s.Trials {
		tail := readTail(t, out, tr, slo.Limit)
		over += tail.Over
		if tr.Over != tail.Over || tr.Arrivals != tail.Arrivals || len(tail.Seconds) < 1 {
			t.Errorf("trial %d at %g/s: %d of %d over in capacity.json, %d of %d in its log over %d seconds",
				i, tr.Rate, tr.Over, tr.Arrivals, tail.Over, tail.Arrivals, len(tail.Seconds))
		}
		if want := dispersionField(tail); !near(tr.Dispersion, want) {
			t.Errorf("trial %d at %g/s: dispersion %g, its seconds give %g", i, tr.Rate, tr.Dispersion, want)
		}
		if tr.Unknown != "" && (tr.Pass || tr.Pool != 0 || tr.PooledArrivals != 0) {
			t.Errorf("trial %d at %g/s, unknown (%s): pass %v, pool %d of %d arrivals; want it counted in none",
				i, tr.Rate, tr.Unknown, tr.Pass, tr.Pool, tr.PooledArrivals)
		}
		if tr.Pool == 0 { // not pooled (lockbench fell behind, or the machine was busy): it neither joins a pool nor ends one
			continue
		}
		if tr.Pool == 1 {
			pool = nil
		}
		pool = append(pool, tail)
		var pooled capacity.Tail
		for _, p := range pool {
			pooled = pooled.Add(p)
		}
		if len(pool) != tr.Pool || tr.PooledOver != pooled.Over || tr.PooledArrivals != pooled.Arrivals ||
			!near(tr.PooledDispersion, dispersionField(pooled)) {
			t.Errorf("trial %d at %g/s, pool %d: pooled %d of %d (dispersion %g); its pool's logs give %d of %d (%g)",
				i, tr.Rate, tr.Pool, tr.PooledOver, tr.PooledArrivals, tr.PooledDispersion, pooled.Over, pooled.Arrivals, dispersionField(pooled))
		}
	}
	t.Logf("%d trials, %d arrivals over 1 ms in all; answer %g [%g, %g], sampled %v", len(s.Trials), over, s.Rate, s.Low, s.High, s.Sampled)
	for _, tr := range s.Trials {
		t.Logf("  %g/s: %d of %d over, dispersion %g, pool %d (%d of %d, %g), pass %v: %s %s", tr.Rate, tr.Over, tr.Arrivals, tr.Dispersion, tr.Pool, tr.PooledOver, tr.PooledArrivals, tr.PooledDispersion, tr.Pass, tr.Why, tr.Limit)
	}
	if over == 0 {
		t.Errorf("no arrival of %d trials waited past 1 ms behind a 2 ms hold: the tail was not counted", len(s.Trials))
	}
	if s.Sampled != strings.Contains(s.Note, "too close to call") {
		t.Errorf("sampled %v, note %q: a sampled answer says why, and only it", s.Sampled, s.Note)
	}
	checkAnswerIntervals(t, out, s, slo, stdout)
}

// checkAnswerIntervals reads a search's intervals back: the capacity's
// range from its answer, Low/High and Missed, and the SLO's quantile at
// the answer recomputed from the interval logs of the trials its verdict
// rests on (the last passing pool at the answer, less the trials the
// machine limited), pooled; and the line stdout gives them in.
func checkAnswerIntervals(t *testing.T, out string, s result.CapacitySearch, slo result.SLO, stdout string) {
	t.Helper()
	if s.Rate == 0 {
		if s.Interval != nil || s.LatencyInterval != nil {
			t.Errorf("no answer, but intervals %+v, %+v", s.Interval, s.LatencyInterval)
		}
		return
	}
	iv := s.Interval
	wantLow, wantHigh := s.Rate, s.Missed
	if s.Low > 0 {
		wantLow = s.Low
	}
	if s.High > 0 {
		wantHigh = s.High
	}
	if iv == nil || iv.Low != wantLow || iv.High != wantHigh || iv.Low > s.Rate || (iv.High != 0 && iv.High <= s.Rate) {
		t.Fatalf("answer %g (missed %g, range [%g, %g]): interval %+v, want [%g, %g] around it", s.Rate, s.Missed, s.Low, s.High, iv, wantLow, wantHigh)
	}
	j := len(s.Trials) - 1
	for ; j >= 0; j-- {
		if tr := s.Trials[j]; tr.Rate == s.Rate && tr.Pass && tr.Unknown == "" && tr.Limit == "" {
			break
		}
	}
	pooled := result.NewHistogram()
	trials := 0
	for i := j; i >= 0 && s.Trials[i].Rate == s.Rate; i-- {
		tr := s.Trials[i]
		if tr.Pool > 0 && tr.Unknown == "" && tr.Limit == "" {
			dir := filepath.Join(out, tr.Dir)
			sum, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			l, err := hlog.ReadCell(dir, sum.Cells[0])
			if err != nil {
				t.Fatal(err)
			}
			pooled.Merge(l.Merged(result.TagAcquire))
			trials++
		}
		if tr.Pool == 1 { // the pool's first; one it did not count (Pool 0, the machine busy) lies inside it
			break
		}
	}
	q := 1 - slo.TailShare()
	n := pooled.TotalCount()
	lo, hi := capacity.QuantileRanks(n, q)
	rank := func(k int64) float64 { return float64(pooled.ValueAtQuantile(100 * float64(k) / float64(n))) }
	want := result.QuantileInterval{Quantile: slo.Quantile, PointUs: float64(pooled.ValueAtQuantile(100 * q)),
		LowUs: rank(lo), HighUs: rank(hi), Arrivals: n, Trials: trials}
	if li := s.LatencyInterval; li == nil || *li != want {
		t.Errorf("latency at the answer %+v; its trials' logs give %+v", li, want)
	} else if li.LowUs > li.PointUs || li.HighUs < li.PointUs || li.Trials < 1 {
		t.Errorf("latency interval %+v does not hold its point", li)
	}
	if line := report.AnswerLine(s); !strings.HasPrefix(line, "answer ") || !strings.Contains(stdout, "\n  "+line+"\n") {
		t.Errorf("stdout does not give the answer with its interval:\n%s", stdout)
	}
	t.Logf("answer %g [%g (%s), %g (%s)]; %s %+v", s.Rate, iv.Low, iv.LowFrom, iv.High, iv.HighFrom, slo.Label(), s.LatencyInterval)
}

// readTail counts a trial's arrivals and those over limit, second by
// second, from its interval log.
func readTail(t *testing.T, out string, tr result.SearchTrial, limit time.Duration) capacity.Tail {
	t.Helper()
	dir := filepath.Join(out, tr.Dir)
	sum, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil || len(sum.Cells) != 1 {
		t.Fatalf("%s: %v", dir, err)
	}
	l, err := hlog.ReadCell(dir, sum.Cells[0])
	if err != nil {
		t.Fatal(err)
	}
	var tail capacity.Tail
	for _, h := range l.Tagged(result.TagAcquire) {
		c := capacity.Count{Over: result.TailOver(h, limit), Arrivals: h.TotalCount()}
		tail.Seconds = append(tail.Seconds, c)
		tail.Over, tail.Arrivals = tail.Over+c.Over, tail.Arrivals+c.Arrivals
	}
	return tail
}

// dispersionField is a tail's dispersion as capacity.json writes it: 0
// where it is 1 (no more than chance).
func dispersionField(t capacity.Tail) float64 {
	if d := t.Dispersion(); d > 1 {
		return d
	}
	return 0
}

func near(a, b float64) bool { return a == b || (a-b)*(a-b) < 1e-12*max(a*a, b*b) }
