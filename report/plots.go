package report

import (
	"github.com/lockbench/lockbench/result"

	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// figure is one image under plots/: one or more panels stacked, sharing a
// legend drawn to their right, where it cannot hide data.
type figure struct {
	Name    string // file name without extension
	Title   string // for the HTML page
	Caption string
	panels  []*plot.Plot
	legend  plot.Legend
}

// Image geometry: wide enough for a legend beside the plot, at a
// resolution that stays sharp in a browser without bloating report.html.
const (
	figWidth    = 10 * vg.Inch
	panelHeight = 5 * vg.Inch
	stackHeight = 3.6 * vg.Inch // per panel when panels are stacked
	pngDPI      = 110
)

// palette is Tableau 10, then ten darker colours that none of it
// resembles: a run of up to twenty implementations gives each its own
// colour, readable on white.
var palette = []color.Color{
	rgb(0x4e79a7), rgb(0xf28e2b), rgb(0xe15759), rgb(0x59a14f), rgb(0xb07aa1),
	rgb(0x76b7b2), rgb(0xedc948), rgb(0xff9da7), rgb(0x9c755f), rgb(0xbab0ac),
	rgb(0x800000), rgb(0x000075), rgb(0x808000), rgb(0x911eb4), rgb(0x00a5c8),
	rgb(0xf032e6), rgb(0x1b7837), rgb(0x5a3d1f), rgb(0x202020), rgb(0xc9a800),
}

func rgb(v uint32) color.Color { return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff} }

var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

// implGlyphs are the implementations' markers, in the order their colours
// go: no two implementations share both colour and marker, and two whose
// colours a reader confuses still differ in marker.
var implGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{}}

// styler gives every implementation one colour and one marker, and every
// scenario one dash, the same in every figure of a report.
type styler struct {
	impls, scenarios []string
}

func newStyler(cells []Cell) styler {
	var s styler
	for _, c := range cells {
		if !slices.Contains(s.impls, c.Impl) {
			s.impls = append(s.impls, c.Impl)
		}
		if !slices.Contains(s.scenarios, c.Scenario) {
			s.scenarios = append(s.scenarios, c.Scenario)
		}
	}
	return s
}

// implStyle is an implementation's colour and marker.
func (st styler) implStyle(impl string) (color.Color, draw.GlyphDrawer) {
	i := max(slices.Index(st.impls, impl), 0)
	return palette[i%len(palette)], implGlyphs[i%len(implGlyphs)]
}

func (st styler) line(s series) (draw.LineStyle, draw.GlyphStyle) {
	if s.Theory {
		return draw.LineStyle{Color: color.Gray{0x30}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}},
			draw.GlyphStyle{}
	}
	j := max(slices.Index(st.scenarios, s.Scenario), 0)
	c, shape := st.implStyle(s.Impl)
	ls := draw.LineStyle{Color: c, Width: vg.Points(2), Dashes: dashes[j%len(dashes)]}
	gs := draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: shape}
	if s.Alt {
		ls.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	}
	if s.Mark > 0 {
		// A figure of one scenario: solid lines, dashes left to theory;
		// markers nest by size where points coincide.
		ls.Dashes = nil
		gs.Shape = nestingGlyphs[(s.Mark-1)%len(nestingGlyphs)]
		gs.Radius = vg.Points(max(2.5, 8-0.6*float64(s.Mark-1)))
		ls.Width = vg.Points(1.5)
	}
	return ls, gs
}

// nestingGlyphs are hollow or open markers: drawn one inside another
// where points coincide, each stays visible.
var nestingGlyphs = []draw.GlyphDrawer{draw.RingGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{}, draw.CrossGlyph{}}

// newPlot returns a plot with the report's fonts and a light grid.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = vg.Points(12)
		a.Tick.Label.Font.Size = vg.Points(10.5)
	}
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{0xe0}
	g.Horizontal.Color = color.Gray{0xe0}
	p.Add(g)
	return p
}

// add draws series onto p and lists each in legend. Theory lines go last:
// thin and dashed, they stay visible on top of data that follows them.
func (st styler) add(p *plot.Plot, legend *plot.Legend, ss ...series) error {
	ordered := slices.Clone(ss)
	slices.SortStableFunc(ordered, func(a, b series) int {
		switch {
		case a.Theory && !b.Theory:
			return 1
		case b.Theory && !a.Theory:
			return -1
		}
		return 0
	})
	for n, s := range ordered {
		ls, gs := st.line(s)
		l, err := plotter.NewLine(s.XYs)
		if err != nil {
			return fmt.Errorf("report: plot %q: %w", s.Label, err)
		}
		l.LineStyle = ls
		p.Add(l)
		thumbs := []plot.Thumbnailer{l}
		if !s.Theory {
			sc, err := plotter.NewScatter(s.XYs)
			if err != nil {
				return fmt.Errorf("report: plot %q: %w", s.Label, err)
			}
			sc.GlyphStyle = gs
			p.Add(sc)
			thumbs = append(thumbs, sc)
		}
		if len(s.Errs) == len(s.XYs) && len(s.XYs) > 0 {
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{s.XYs, positiveErrs(s.XYs, s.Errs)})
			if err != nil {
				return fmt.Errorf("report: plot %q: %w", s.Label, err)
			}
			eb.LineStyle.Color, eb.LineStyle.Width = ls.Color, vg.Points(1)
			p.Add(eb)
		}
		if len(s.PointLabels) == len(s.XYs) && len(s.XYs) > 0 {
			lb, err := plotter.NewLabels(plotter.XYLabels{XYs: s.XYs, Labels: s.PointLabels})
			if err != nil {
				return fmt.Errorf("report: plot %q: %w", s.Label, err)
			}
			for i := range lb.TextStyle {
				lb.TextStyle[i].Font.Size = vg.Points(8.5)
				lb.TextStyle[i].Color = ls.Color
			}
			// Alternate sides, so that labels of neighbouring series
			// at similar points do not print over each other.
			lb.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(2)}
			if n%2 == 1 {
				for i := range lb.TextStyle {
					lb.TextStyle[i].XAlign = draw.XRight
					lb.TextStyle[i].YAlign = draw.YTop
				}
				lb.Offset = vg.Point{X: vg.Points(-6), Y: vg.Points(-2)}
			}
			p.Add(lb)
		}
		if legend != nil {
			legend.Add(s.Label, thumbs...)
		}
	}
	return nil
}

// positiveErrs is errs with every bar's low end kept above zero: the
// figures plotted are rates and latencies, and a t interval on a few noisy
// rounds can reach below zero, which a log axis cannot draw (gonum's
// LogScale panics on it). The bar then runs off the axis's bottom.
func positiveErrs(xys plotter.XYs, errs plotter.YErrors) plotter.YErrors {
	out := slices.Clone(errs)
	for i := range out {
		if y := xys[i].Y; y > 0 && y-out[i].Low <= 0 {
			out[i].Low = y * (1 - 1e-6)
		}
	}
	return out
}

// bounds is the range of xs and ys over series.
func bounds(ss []series) (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.XYs {
			xmin, xmax = min(xmin, p.X), max(xmax, p.X)
			ymin, ymax = min(ymin, p.Y), max(ymax, p.Y)
		}
	}
	return
}

// logAxis puts a on a log scale over [lo, hi], padded a little so that
// points do not sit on the frame, with 1-2-5 ticks (or powers of ten over
// many decades).
func logAxis(a *plot.Axis, lo, hi float64) {
	if lo <= 0 || hi <= 0 || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return
	}
	if hi/lo < 2 {
		lo, hi = lo/1.5, hi*1.5
	}
	a.Scale = plot.LogScale{}
	a.Min, a.Max = lo/1.2, hi*1.2
	a.Tick.Marker = logTicks{}
}

// clientCounts is the client counts (the x values) measured in ss, sorted.
func clientCounts(ss []series) []float64 {
	var ns []float64
	for _, s := range ss {
		for _, p := range s.XYs {
			if !slices.Contains(ns, p.X) {
				ns = append(ns, p.X)
			}
		}
	}
	slices.Sort(ns)
	return ns
}

// overClients is ss when it spans two client counts or more, else nil: a
// figure against clients drawn at one count is a column of dots on an
// axis with one tick, and the report's tables already give those figures.
func overClients(ss []series) []series {
	if len(clientCounts(ss)) < 2 {
		return nil
	}
	return ss
}

// clientAxis is a log axis whose ticks are the client counts measured.
func clientAxis(a *plot.Axis, ss []series) {
	ns := clientCounts(ss)
	if len(ns) == 0 {
		return
	}
	logAxis(a, ns[0], ns[len(ns)-1])
	var ticks plot.ConstantTicks
	for _, n := range ns {
		ticks = append(ticks, plot.Tick{Value: n, Label: strconv.FormatFloat(n, 'f', -1, 64)})
	}
	a.Tick.Marker = ticks
}

// logTicks labels a log axis at 1, 2 and 5 times powers of ten; at 1,
// 1.5, 2, 3, 5 and 7 when the range is about a decade or less, so there
// are enough labels to read a value off; only at powers of ten beyond four
// decades.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	decades := math.Log10(hi / lo)
	labelled := []float64{1, 2, 5}
	switch {
	case decades < 1.3:
		labelled = []float64{1, 1.5, 2, 3, 5, 7}
	case decades > 4:
		labelled = []float64{1}
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for _, m := range []float64{1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9} {
			v := base * m
			if v < lo || v > hi || (m == 1.5 && decades >= 1.3) {
				continue
			}
			t := plot.Tick{Value: v}
			if slices.Contains(labelled, m) {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel writes a tick value plainly: 0.05, 2, 20,000.
func tickLabel(v float64) string {
	if v >= 1 {
		return commas(round(v))
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// commaTicks is gonum's default ticker labelled plainly: thousands
// separators, no trailing zeros ("750", not "750.00").
type commaTicks struct{}

func (commaTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label == "" {
			continue
		}
		if t.Value == math.Trunc(t.Value) && math.Abs(t.Value) < 1e15 {
			ticks[i].Label = commas(int64(t.Value))
		} else {
			ticks[i].Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
	}
	return ticks
}

func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(10.5)
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(26)
	return l
}

// encode draws the figure as "png" or "svg".
func (f *figure) encode(format string) ([]byte, error) {
	h := panelHeight
	if len(f.panels) > 1 {
		h = stackHeight * vg.Length(len(f.panels))
	}
	var cw vg.CanvasWriterTo
	switch format {
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(figWidth, h), vgimg.UseDPI(pngDPI))}
	case "svg":
		cw = vgsvg.New(figWidth, h)
	default:
		return nil, fmt.Errorf("report: unknown image format %q", format)
	}
	const margin, pad = 8, 10
	dc := draw.New(cw)
	dc = draw.Crop(dc, vg.Points(margin), -vg.Points(margin), vg.Points(margin), -vg.Points(margin))
	width := dc.Max.X - dc.Min.X
	legendW := vg.Length(0)
	if r := f.legend.Rectangle(dc); r.Max.X > r.Min.X {
		legendW = r.Max.X - r.Min.X + 2*vg.Points(pad)
	}
	area := draw.Crop(dc, 0, -legendW, 0, 0)
	panelH := (area.Max.Y - area.Min.Y) / vg.Length(len(f.panels))
	for i, p := range f.panels {
		top := area.Max.Y - panelH*vg.Length(i)
		drawPanel(p, draw.Crop(area, 0, 0, top-panelH-area.Min.Y, top-area.Max.Y))
	}
	if legendW > 0 {
		f.legend.Draw(draw.Crop(dc, width-legendW+vg.Points(pad), -vg.Points(pad), 0, -vg.Points(30)))
	}
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("report: %s.%s: %w", f.Name, format, err)
	}
	return buf.Bytes(), nil
}

// drawPanel draws p with its axis labels centred on the data area. Gonum
// places a label by the arithmetic middle of its axis range, which on a
// log axis is near the end, and then shrinks the plot to make room for a
// label that is not really there; so the labels are drawn here instead.
func drawPanel(p *plot.Plot, c draw.Canvas) {
	xl, yl := p.X.Label.Text, p.Y.Label.Text
	p.X.Label.Text, p.Y.Label.Text = "", ""
	defer func() { p.X.Label.Text, p.Y.Label.Text = xl, yl }()
	gap := vg.Points(6)
	left, bottom := vg.Length(0), vg.Length(0)
	if yl != "" {
		left = p.Y.Label.TextStyle.Height(yl) + gap
	}
	if xl != "" {
		bottom = p.X.Label.TextStyle.Height(xl) + gap
	}
	inner := draw.Crop(c, left, 0, bottom, 0)
	p.Draw(inner)
	data := p.DataCanvas(inner)
	if yl != "" {
		sty := p.Y.Label.TextStyle
		sty.Rotation += math.Pi / 2
		descent := sty.FontExtents().Descent
		c.FillText(sty, vg.Point{X: c.Min.X + p.Y.Label.TextStyle.Height(yl) - descent, Y: data.Center().Y}, yl)
	}
	if xl != "" {
		sty := p.X.Label.TextStyle
		c.FillText(sty, vg.Point{X: data.Center().X, Y: c.Min.Y + sty.FontExtents().Descent}, xl)
	}
}

// figures builds every figure there is data for, in the order the report
// shows them; a plot without data is left out rather than drawn empty.
// Fault scenarios appear on the timeline only: on the other plots their
// numbers would describe the fault, not the lock.
func figures(cells []Cell, logs map[string]*CellDigest, ramp bool) ([]*figure, error) {
	st := newStyler(cells)
	timelineFigures := func(st styler, cells []Cell, logs map[string]*CellDigest) ([]*figure, error) {
		return timelineFigures(st, cells, logs, ramp)
	}
	load := result.WithoutFaults(cells)
	builders := []struct {
		build  func(styler, []Cell, map[string]*CellDigest) ([]*figure, error)
		faults bool
	}{
		{latencyFigures, false}, {throughputFigure, false}, {p99Figure, false},
		{p99ThroughputFigure, false}, {perAcquireFigure, false}, {burstFigure, false},
		{openLoopFigure, false}, {timelineFigures, true}, {fairnessFigures, false},
	}
	var figs []*figure
	for _, b := range builders {
		in := load
		if b.faults {
			in = cells
		}
		fs, err := b.build(st, in, logs)
		if err != nil {
			return nil, err
		}
		figs = append(figs, fs...)
	}
	return figs, nil
}

func one(f *figure, err error) ([]*figure, error) {
	if f == nil || err != nil {
		return nil, err
	}
	return []*figure{f}, nil
}

// simpleFigure draws series on one panel.
func simpleFigure(st styler, name, title, x, y, caption string, ss []series, axes func(*plot.Plot)) (*figure, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	f := &figure{Name: name, Title: title, Caption: caption, legend: newLegend()}
	p := newPlot(title, x, y)
	if err := st.add(p, &f.legend, ss...); err != nil {
		return nil, err
	}
	axes(p)
	f.panels = []*plot.Plot{p}
	return f, nil
}

func latencyFigures(st styler, cells []Cell, logs map[string]*CellDigest) ([]*figure, error) {
	bySc := latencySeries(cells, logs)
	var figs []*figure
	for _, sc := range st.scenarios {
		ss := bySc[sc]
		f, err := simpleFigure(st, "latency-"+result.FileSafe(sc), "Acquire latency spectrum — "+sc,
			"percentile (log scale of 1/(1−q))", "acquire latency (ms, log)",
			"Acquire latency by percentile at each implementation's largest client count, from the whole cell's histogram.",
			ss, func(p *plot.Plot) {
				_, xmax, ymin, ymax := bounds(ss)
				p.X.Scale = plot.LogScale{}
				p.X.Min, p.X.Max = 1, ninesMax(xmax)
				p.X.Tick.Marker = plot.ConstantTicks(ninesTicks(xmax))
				logAxis(&p.Y, ymin, ymax)
			})
		if err != nil {
			return nil, err
		}
		if f != nil {
			figs = append(figs, f)
		}
	}
	return figs, nil
}

func throughputFigure(st styler, cells []Cell, _ map[string]*CellDigest) ([]*figure, error) {
	ss := overClients(throughputSeries(closedLoops(cells)))
	return one(simpleFigure(st, "throughput", "Throughput vs clients", "clients (log)", "acquisitions per second",
		"Acquisitions per second, all clients together, in closed loops.", ss, func(p *plot.Plot) {
			clientAxis(&p.X, ss)
			p.Y.Min = 0
			p.Y.Tick.Marker = commaTicks{}
		}))
}

func p99Figure(st styler, cells []Cell, _ map[string]*CellDigest) ([]*figure, error) {
	ss := overClients(p99Series(cells))
	return one(simpleFigure(st, "p99", "p99 acquire latency vs clients", "clients (log)", "p99 acquire latency (ms, log)",
		"99th percentile of the time from asking for the lock to holding it.", ss, func(p *plot.Plot) {
			clientAxis(&p.X, ss)
			_, _, ymin, ymax := bounds(ss)
			logAxis(&p.Y, ymin, ymax)
		}))
}

func p99ThroughputFigure(st styler, cells []Cell, _ map[string]*CellDigest) ([]*figure, error) {
	ss := p99ThroughputSeries(closedLoops(cells))
	return one(simpleFigure(st, "p99-vs-throughput", "p99 latency vs achieved throughput", "acquisitions per second",
		"p99 acquire latency (ms, log)", "Closed loops; each point is one client count (n). Up and to the left is worse.",
		ss, func(p *plot.Plot) {
			_, xmax, ymin, ymax := bounds(ss)
			p.X.Min, p.X.Max = 0, xmax*1.12
			p.X.Tick.Marker = commaTicks{}
			logAxis(&p.Y, ymin, ymax)
		}))
}

func perAcquireFigure(st styler, cells []Cell, _ map[string]*CellDigest) ([]*figure, error) {
	measured, theory := perAcquireSeries(cells)
	if overClients(measured) == nil {
		return nil, nil
	}
	all := append(slices.Clone(measured), theory...)
	return one(simpleFigure(st, "per-acquire", "Notifications and retries per acquisition", "clients (log)",
		"per acquisition (log)",
		"Closed loops, for each lock acquired: release wake-ups where the implementation counts them (else every notification received), or polling retries. Dashed grey: theory's release wake-ups per hand-off for one contended lock.",
		all, func(p *plot.Plot) {
			clientAxis(&p.X, measured)
			_, _, ymin, ymax := bounds(all)
			logAxis(&p.Y, ymin, ymax)
		}))
}

func openLoopFigure(st styler, cells []Cell, _ map[string]*CellDigest) ([]*figure, error) {
	achieved, offered := openLoopSeries(cells)
	all := append(slices.Clone(achieved), offered...)
	return one(simpleFigure(st, "open-loop", "Open loop: achieved vs offered rate", "clients (log)", "acquisitions per second",
		"Arrivals at a set rate: what each implementation served at each client count. Dashed grey: the rate offered; a point below it saturated, the label says how many arrivals it dropped.",
		all, func(p *plot.Plot) {
			clientAxis(&p.X, achieved)
			_, _, _, ymax := bounds(all)
			p.Y.Min, p.Y.Max = 0, ymax*1.1
			p.Y.Tick.Marker = commaTicks{}
		}))
}

// burstFigure is the herd's cost per hand-off against clients, one
// panel per cost — wake-ups (theory dashed), the servers' CPU, the
// hand-off gap — on log–log axes, a line with markers per lock so that
// lines lying on one another stay visible.
func burstFigure(st styler, cells []Cell, _ map[string]*CellDigest) ([]*figure, error) {
	wakes, cpu, gap, theory := burstCostSeries(cells)
	if len(wakes)+len(cpu)+len(gap) == 0 {
		return nil, nil
	}
	every := slices.Concat(wakes, cpu, gap)
	f := &figure{Name: "burst-costs", Title: "Burst: what a hand-off costs", legend: newLegend(),
		Caption: "All clients queue at once and the lock passes down the queue once; each point is a cell's total over its n−1 hand-offs. " +
			"Dashed grey: theory, n(n−1)/2 wake-ups over n−1 hand-offs (n/2 each) when every waiter watches every change, 1 each with a predecessor watch. " +
			"Server CPU is the sandboxed servers' time on a CPU (per thread, nanoseconds), queueing included; a lock at 0 wake-ups has no point on the log axis."}
	panels := []struct {
		title, y string
		ss       []series
	}{
		{"Wake-ups per hand-off", "wake-ups (log)", append(slices.Clone(wakes), theory...)},
		{"Server CPU per hand-off", "µs (log)", cpu},
		{"Hand-off gap p50 (release → next grant)", "µs (log)", gap},
	}
	var inLegend []string
	for _, pn := range panels {
		if len(pn.ss) == 0 {
			continue
		}
		p := newPlot(pn.title, "clients n (log)", pn.y)
		// One legend for every panel: each lock listed once, from the
		// first panel it appears on.
		var fresh, listed []series
		for _, s := range pn.ss {
			if slices.Contains(inLegend, s.Label) {
				listed = append(listed, s)
			} else {
				fresh = append(fresh, s)
				inLegend = append(inLegend, s.Label)
			}
		}
		if err := st.add(p, &f.legend, fresh...); err != nil {
			return nil, err
		}
		if err := st.add(p, nil, listed...); err != nil {
			return nil, err
		}
		clientAxis(&p.X, every)
		_, _, ymin, ymax := bounds(pn.ss)
		logAxis(&p.Y, ymin, ymax)
		p.Y.Tick.Marker = logTicks{}
		f.panels = append(f.panels, p)
	}
	return []*figure{f}, nil
}

func timelineFigures(st styler, cells []Cell, logs map[string]*CellDigest, ramp bool) ([]*figure, error) {
	perS, p99, stairs := timelineSeries(cells, logs, ramp)
	var figs []*figure
	for _, sc := range st.scenarios {
		if len(perS[sc]) == 0 {
			continue
		}
		f := &figure{Name: "timeline-" + result.FileSafe(sc), Title: "Timeline — " + sc, legend: newLegend(),
			Caption: "Per second of the measurement, from the interval log, at each implementation's largest client count."}
		if len(stairs[sc]) > 0 {
			f.Caption = "Per second of the ramp, from the interval logs: every stair, one after another; dotted lines mark where each stair began and its client count."
		}
		top := newPlot("Acquisitions per second over time — "+sc, "", "acquisitions per second")
		if err := st.add(top, &f.legend, perS[sc]...); err != nil {
			return nil, err
		}
		_, _, _, ymax := bounds(perS[sc])
		top.Y.Min, top.Y.Max = 0, ymax*1.15
		top.Y.Tick.Marker = commaTicks{}
		if err := markStairs(top, stairs[sc], 0, ymax*1.15, true); err != nil {
			return nil, err
		}
		f.panels = append(f.panels, top)
		if ss := p99[sc]; len(ss) > 0 {
			bottom := newPlot("p99 acquire latency over time — "+sc, "seconds since measurement start", "p99 (ms, log)")
			if err := st.add(bottom, nil, ss...); err != nil {
				return nil, err
			}
			_, _, ymin, ymax := bounds(ss)
			logAxis(&bottom.Y, ymin, ymax)
			if err := markStairs(bottom, stairs[sc], bottom.Y.Min, bottom.Y.Max, false); err != nil {
				return nil, err
			}
			f.panels = append(f.panels, bottom)
		} else {
			top.X.Label.Text = "seconds since measurement start"
		}
		xmin, xmax, _, _ := bounds(perS[sc])
		for _, p := range f.panels {
			p.X.Min, p.X.Max = min(0, xmin), xmax+0.5
			p.X.Tick.Marker = commaTicks{}
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// markStairs draws a dotted vertical line where each stair of a ramp
// began, from lo to hi, and with labels its client count at the top.
func markStairs(p *plot.Plot, marks []stairMark, lo, hi float64, labels bool) error {
	if len(marks) == 0 {
		return nil
	}
	var xys plotter.XYs
	var texts []string
	for _, m := range marks {
		l, err := plotter.NewLine(plotter.XYs{{X: m.X, Y: lo}, {X: m.X, Y: hi}})
		if err != nil {
			return fmt.Errorf("report: stair marks: %w", err)
		}
		l.LineStyle = draw.LineStyle{Color: color.Gray{0x90}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
		p.Add(l)
		xys = append(xys, plotter.XY{X: m.X, Y: hi})
		texts = append(texts, fmt.Sprintf("n=%d", m.Clients))
	}
	if !labels {
		return nil
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
	if err != nil {
		return fmt.Errorf("report: stair labels: %w", err)
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(9)
		lb.TextStyle[i].Color = color.Gray{0x40}
		lb.TextStyle[i].YAlign = draw.YTop
	}
	lb.Offset = vg.Point{X: vg.Points(3), Y: -vg.Points(2)}
	p.Add(lb)
	return nil
}

func fairnessFigures(st styler, cells []Cell, _ map[string]*CellDigest) ([]*figure, error) {
	// In a burst every client acquires once: fair by construction.
	bySc := fairnessSeriesOf(closedLoops(cells))
	var figs []*figure
	for _, sc := range st.scenarios {
		ss := bySc[sc]
		if len(ss) == 0 {
			continue
		}
		diag := series{Label: "perfect fairness", Theory: true, XYs: plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}}}
		f, err := simpleFigure(st, "fairness-"+result.FileSafe(sc), "Fairness — "+sc, "fraction of clients, least served first",
			"fraction of acquisitions", "Lorenz curve of acquisitions over clients; the further below the diagonal, the less fair.",
			append(ss, diag), func(p *plot.Plot) {
				p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
			})
		if err != nil {
			return nil, err
		}
		if f != nil {
			figs = append(figs, f)
		}
	}
	return figs, nil
}
