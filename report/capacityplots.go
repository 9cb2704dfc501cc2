package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/result"
)

// Colours of a search's plot: passing trials, failing ones, trials whose
// verdict is their pool's (several trials at one rate), trials a busy
// machine left unknown, the SLO and the answer.
var (
	passColour       = rgb(0x59a14f)
	failColour       = rgb(0xe15759)
	pooledPassColour = rgb(0x1e6b2e)
	pooledFailColour = rgb(0x8b1a1a)
	unknownColour    = rgb(0xb07aa1)
	sloColour        = rgb(0x4e79a7)
	answerColour     = rgb(0x000000)
)

// trialKind is how a search's plot draws a trial: by its verdict, and
// whether that verdict is its own or its pool's.
type trialKind int

const (
	passedAlone trialKind = iota
	passedPooled
	failedAlone
	failedPooled
	unknownBusy
	trialKinds
)

// kindOf is a trial's kind. Its verdict is its pool's when the pool
// counted more than one trial (PoolTrials; Pool for files written before
// it).
func kindOf(t result.SearchTrial) trialKind {
	pooled := t.PoolTrials > 1 || t.Pool > 1
	switch {
	case t.Unknown != "":
		return unknownBusy
	case t.Pass && pooled:
		return passedPooled
	case t.Pass:
		return passedAlone
	case pooled:
		return failedPooled
	}
	return failedAlone
}

// trialStyles are each kind's legend line, colour and glyph: a pooled
// verdict is a square in a darker shade of its verdict's colour, so that
// it reads in grey print too; an unknown trial is not grey, which the
// grid is.
var trialStyles = [trialKinds]struct {
	name   string
	colour color.Color
	glyph  draw.GlyphDrawer
}{
	passedAlone:  {"passed, one trial (large: full length)", passColour, draw.CircleGlyph{}},
	passedPooled: {"passed, pooled with trials at its rate", pooledPassColour, draw.BoxGlyph{}},
	failedAlone:  {"failed, one trial (large: full length)", failColour, draw.CrossGlyph{}},
	failedPooled: {"failed, pooled with trials at its rate", pooledFailColour, draw.BoxGlyph{}},
	unknownBusy:  {"unknown: the machine was busy, counted neither way", unknownColour, draw.PyramidGlyph{}},
}

// RenderCapacity draws, under DIR/plots, each search's latency against
// offered rate (the SLO line and the answer marked) and each sweep's
// throughput against clients with its fitted USL curve, as PNG. It
// returns the files written.
func RenderCapacity(dir string, rep *result.CapacityReport) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return nil, err
	}
	slo, _ := result.ParseSLO(rep.SLO)
	var files []string
	save := func(p *plot.Plot, name string) error {
		path := filepath.Join(dir, PlotsDir, name+".png")
		if err := p.Save(figWidth, panelHeight, path); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		files = append(files, path)
		return nil
	}
	for _, s := range rep.Searches {
		if len(s.Trials) == 0 {
			continue
		}
		p, err := searchPlot(s, slo, rep.Precision)
		if err == nil {
			err = save(p, "capacity-rate-"+s.Impl)
		}
		if err != nil {
			return files, err
		}
	}
	for _, k := range rep.Knees {
		if len(k.Points) == 0 {
			continue
		}
		p, err := kneePlot(k)
		if err == nil {
			err = save(p, "capacity-knee-"+k.Impl)
		}
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

// searchPlot is latency (the SLO's quantile, from the intended start)
// against offered rate: each trial a point, passing or failing, the SLO a
// horizontal line and the answer a vertical one.
func searchPlot(s result.CapacitySearch, slo result.SLO, precision float64) (*plot.Plot, error) {
	title := SearchVerdict(s, slo, precision)
	if s.Unstable && s.Interval != nil { // the verdict's whole note is too long for a title
		title = fmt.Sprintf("%s: %s acq/s at %s ≤ %s, unstable: the capacity moved within %s",
			s.Impl, sig3(s.Rate), slo.Label(), limitText(slo.Limit), spanText(s.Interval))
	}
	p := newPlot(title, "offered rate (arrivals/s)", slo.Label()+" latency from the intended start (ms)")
	var xys [trialKinds]plotter.XYs
	var fulls [trialKinds][]bool
	lo, hi := math.Inf(1), 0.0
	ylo, yhi := float64(slo.Limit)/1e6, float64(slo.Limit)/1e6
	for _, t := range s.Trials {
		ms := math.Max(t.LatencyUs/1000, 0.001)
		k := kindOf(t)
		xys[k], fulls[k] = append(xys[k], plotter.XY{X: t.Rate, Y: ms}), append(fulls[k], t.Full)
		lo, hi = math.Min(lo, t.Rate), math.Max(hi, t.Rate)
		ylo, yhi = math.Min(ylo, ms), math.Max(yhi, ms)
	}
	for k, g := range trialStyles {
		if len(xys[k]) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(xys[k])
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: g.colour, Radius: vg.Points(4), Shape: g.glyph}
		full, style := fulls[k], sc.GlyphStyle
		sc.GlyphStyleFunc = func(i int) draw.GlyphStyle {
			st := style
			if full[i] { // a confirmation: the trial the answer stands on
				st.Radius = vg.Points(7)
			}
			return st
		}
		p.Add(sc)
		p.Legend.Add(g.name, sc)
	}
	logAxis(&p.X, lo, hi)
	logAxis(&p.Y, ylo, yhi)
	limit := plotter.NewFunction(func(float64) float64 { return float64(slo.Limit) / 1e6 })
	limit.Color, limit.Dashes, limit.Width = sloColour, []vg.Length{vg.Points(6), vg.Points(3)}, vg.Points(1.5)
	p.Add(limit)
	p.Legend.Add(fmt.Sprintf("SLO %s ≤ %s", slo.Label(), limitText(slo.Limit)), limit)
	if s.Rate > 0 {
		ans, err := plotter.NewLine(plotter.XYs{{X: s.Rate, Y: p.Y.Min}, {X: s.Rate, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		ans.Color, ans.Width = answerColour, vg.Points(1.5)
		p.Add(ans)
		p.Legend.Add(fmt.Sprintf("answer %s/s", sig3(s.Rate)), ans)
	}
	if rangeText(s) != "" { // the tails decided no closer than this
		for i, x := range []float64{s.Low, s.High} {
			if x <= 0 {
				continue
			}
			l, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
			if err != nil {
				return nil, err
			}
			l.Color, l.Width, l.Dashes = answerColour, vg.Points(1), []vg.Length{vg.Points(2), vg.Points(2)}
			p.Add(l)
			if i == 0 || s.Low <= 0 {
				p.Legend.Add("95 % range the trials' tails decided", l)
			}
		}
	}
	if err := spreadLines(p, s); err != nil {
		return nil, err
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p, nil
}

// spreadLines marks an unstable answer's interval: the nearest rates on
// each side where every repeat agreed (an open end is not drawn).
func spreadLines(p *plot.Plot, s result.CapacitySearch) error {
	iv := s.Interval
	if !s.Unstable || iv == nil {
		return nil
	}
	named := false
	for _, x := range []float64{iv.Low, iv.High} {
		if x <= 0 {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		l.Color, l.Width, l.Dashes = answerColour, vg.Points(1), []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}
		p.Add(l)
		if !named {
			p.Legend.Add("unstable: the range the server's capacity moved within (repeats)", l)
			named = true
		}
	}
	return nil
}

// kneePlot is throughput against clients, measured, with the fitted USL
// curve and its peak.
func kneePlot(k result.Knee) (*plot.Plot, error) {
	p := newPlot(KneeVerdict(k), "clients", "throughput (acquisitions/s)")
	var pts plotter.XYs
	maxN, maxX := 1.0, 0.0
	for _, pt := range k.Points {
		pts = append(pts, plotter.XY{X: float64(pt.Clients), Y: pt.AcquiresPerS})
		maxN, maxX = math.Max(maxN, float64(pt.Clients)), math.Max(maxX, pt.AcquiresPerS)
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: sloColour, Radius: vg.Points(4), Shape: draw.CircleGlyph{}}
	p.Add(sc)
	p.Legend.Add("measured ("+k.Scenario+")", sc)
	if k.Fit != nil {
		f := *k.Fit
		curve := plotter.NewFunction(func(n float64) float64 { return uslX(f, n) })
		curve.XMin, curve.XMax, curve.Samples = 1, maxN, 400
		curve.Color, curve.Width = failColour, vg.Points(1.5)
		p.Add(curve)
		p.Legend.Add(fmt.Sprintf("USL fit (λ %s, σ %s, κ %s, R² %.2f)", sig3(f.Lambda), param(f.Sigma), param(f.Kappa), f.R2), curve)
		if f.NStar >= 1 && f.NStar <= maxN {
			peak, err := plotter.NewScatter(plotter.XYs{{X: f.NStar, Y: f.Peak}})
			if err != nil {
				return nil, err
			}
			peak.GlyphStyle = draw.GlyphStyle{Color: answerColour, Radius: vg.Points(6), Shape: draw.RingGlyph{}}
			p.Add(peak)
			p.Legend.Add(fmt.Sprintf("peak: %.0f clients, %s acq/s", f.NStar, sig3(f.Peak)), peak)
		}
		maxX = math.Max(maxX, f.Peak)
	}
	logAxis(&p.X, 1, maxN)
	p.Y.Min, p.Y.Max = 0, maxX*1.1
	p.Y.Tick.Marker = commaTicks{}
	p.Legend.Top = true
	return p, nil
}
