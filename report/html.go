package report

import (
	"github.com/lockbench/lockbench/result"

	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"path/filepath"
)

// htmlPage is what report.html is rendered from.
type htmlPage struct {
	Title       string
	Run         string
	Unsafe      []string
	Headlines   []string
	Rows        []summaryRow
	Wakeups     bool
	SLO         string
	Capacity    []capacityView
	Figures     []figureView
	Notes       []string
	Config      []result.Field
	Files       []string
	HaveHgrm    bool
	ExampleHgrm string
}

type figureView struct {
	Title, Caption, File string
	Src                  template.URL
}

type capacityView struct{ Impl, Scenario, Text string }

// htmlReport renders report.html: one self-contained file, its images
// embedded as data URIs, nothing fetched from anywhere.
func htmlReport(r *loaded, slo *SLO, figs []*figure, pngs [][]byte) ([]byte, error) {
	cells := r.summary.Cells
	p := htmlPage{
		Title:     "lockbench report — " + filepath.Base(filepath.Clean(r.dir)),
		Run:       r.meta.Describe(),
		Headlines: Headlines(cells),
		Config:    r.meta.Fields,
		Files:     []string{result.MetaFile, result.SummaryFile, CSVFile, BenchFile, MarkdownFile},
	}
	p.Rows, p.Wakeups = summaryRows(cells)
	for _, c := range cells {
		if c.SafetyViolations > 0 {
			s := fmt.Sprintf("%s: %s", c.Key(), plural(c.SafetyViolations, "violation"))
			if len(c.Violations) > 0 {
				v := c.Violations[0]
				s += fmt.Sprintf(" — first: %s on %s at %.3fs (holder client %d, intruder client %d)", v.Kind, v.Lock, v.AtS, v.Holder, v.Intruder)
			}
			p.Unsafe = append(p.Unsafe, s)
		}
		if _, ok := r.logs[c.Key()]; ok {
			if !p.HaveHgrm {
				p.HaveHgrm, p.ExampleHgrm = true, result.CellFile(c)+result.HgrmExt
			}
		} else {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no interval log (%s), so no timeline and a spectrum from the summary's percentiles only.", c.Key(), result.CellFile(c)+result.HlogExt))
		}
		if c.ServerNote != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no server counters: %s", c.Key(), oneLine(c.ServerNote)))
		}
	}
	if slo != nil {
		p.SLO = fmt.Sprintf("%s ≤ %v", slo.Label(), slo.Limit)
		for _, row := range result.Capacity(cells, *slo) {
			p.Capacity = append(p.Capacity, capacityView{row.Impl, row.Scenario, DescribeCapacity(row, *slo)})
		}
	}
	for i, f := range figs {
		p.Figures = append(p.Figures, figureView{
			Title: f.Title, Caption: f.Caption, File: PlotsDir + "/" + f.Name + ".svg",
			Src: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(pngs[i])),
		})
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("report: report.html: %w", err)
	}
	return b.Bytes(), nil
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222; max-width: 1120px; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.7em; margin-bottom: 0.1em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.run { color: #666; margin-top: 0; }
.unsafe { background: #fde8e8; border: 2px solid #c62828; color: #8e0000; padding: 0.8em 1em; border-radius: 4px; }
.unsafe strong { font-size: 1.15em; }
ul.headlines li { margin-bottom: 0.4em; }
table { border-collapse: collapse; font-size: 13.5px; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e4e4e4; }
th { background: #f5f5f5; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.bad td { background: #fde8e8; color: #8e0000; font-weight: bold; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.92em; }
.notes li, .files li { color: #555; font-size: 0.92em; }
td.k { color: #555; white-space: nowrap; }
td.v { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; word-break: break-all; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="run">{{.Run}}</p>
{{if .Unsafe}}<div class="unsafe"><strong>Mutual exclusion was violated.</strong> These cells saw two holders at once, a fencing token go backwards, or (pause) a stale holder's write accepted by a resource without fencing — see each verdict for what fencing did.
<ul>{{range .Unsafe}}<li>{{.}}</li>{{end}}</ul></div>{{end}}

<h2>Findings</h2>
<ul class="headlines">{{range .Headlines}}<li>{{.}}</li>{{end}}</ul>

<h2>Results</h2>
<table>
<tr><th>impl</th><th>scenario</th><th>clients</th><th>acq/s</th><th>p50</th><th>p99</th><th>p99.9</th><th>errors</th><th>retries/acq</th><th>notif/acq</th>{{if .Wakeups}}<th>wake-ups / theory</th>{{end}}<th>violations</th></tr>
{{range .Rows}}<tr{{if .Unsafe}} class="bad"{{end}}><td>{{.Impl}}{{if .Unsafe}} ⚠ UNSAFE{{end}}</td><td>{{.Scenario}}</td><td class="n">{{.Clients}}</td><td class="n">{{.PerS}}</td><td class="n">{{.P50}}</td><td class="n">{{.P99}}</td><td class="n">{{.P999}}</td><td class="n">{{.Errors}}</td><td class="n">{{.Retries}}</td><td class="n">{{.Notif}}</td>{{if $.Wakeups}}<td class="n">{{.Wakeups}}</td>{{end}}<td class="n">{{.Violations}}</td></tr>
{{end}}</table>
{{if .Wakeups}}<p class="run">Wake-ups are release wake-ups where counted; theory is n(n−1)/2 when every waiter watches every change, n−1 with a predecessor watch.</p>{{end}}

{{if .SLO}}<h2>Capacity at {{.SLO}}</h2>
<p>For each implementation and scenario, the largest client count whose acquire latency met the objective.</p>
<table>
<tr><th>impl</th><th>scenario</th><th>capacity</th></tr>
{{range .Capacity}}<tr><td>{{.Impl}}</td><td>{{.Scenario}}</td><td>{{.Text}}</td></tr>
{{end}}</table>{{end}}

{{if .Figures}}<h2>Plots</h2>
{{range .Figures}}<figure>
<img src="{{.Src}}" alt="{{.Title}}">
<figcaption>{{.Caption}} (Vector version: {{.File}}.)</figcaption>
</figure>
{{end}}{{end}}

{{if .Notes}}<h2>Notes</h2>
<ul class="notes">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}

<h2>Configuration and environment</h2>
<table>
{{range .Config}}<tr><td class="k">{{.Key}}</td><td class="v">{{.Value}}</td></tr>
{{end}}</table>

<h2>Files</h2>
<ul class="files">{{range .Files}}<li>{{.}}</li>{{end}}
{{if .HaveHgrm}}<li>*.hlog — interval histograms per cell (µs); *.hgrm — each cell's acquire latency percentiles (ms), e.g. {{.ExampleHgrm}}</li>{{end}}
<li>bench.txt compares two runs with <code>benchstat old/bench.txt new/bench.txt</code>; <code>lockbench compare OLD NEW</code> does too, noise-aware.</li>
</ul>
</body>
</html>
`))
