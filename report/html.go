package report

import (
	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
	"strings"

	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
)

// htmlPage is what report.html is rendered from.
type htmlPage struct {
	Title string
	// Partial and Missing label a partial result: Partial is "" for a
	// whole run, else PartialMark, opening every title that shows figures.
	Partial    string
	Reason     string
	Missing    []result.MissingCell
	Run        string
	Verdict    []VerdictLine
	Unsafe     []string
	Rows       []htmlRow
	Wakeups    bool
	RoundsNote string
	SLO        string
	Capacity   []capacityView
	Open       []openView
	Faults     []faultView
	Known      []knownIssueView
	Figures    []figureView
	Notes      []string
	Config     []result.Field
	Files      []string
	// SafetyFile is the Safety table's file, when one was written beside
	// the page: the page links to it rather than repeat its columns.
	SafetyFile  string
	HaveHgrm    bool
	ExampleHgrm string
}

type figureView struct {
	ID, Title, Caption, File string
	Src                      template.URL
}

type capacityView struct{ Impl, Scenario, Text string }

// htmlReport renders report.html: one self-contained file, its images
// embedded as data URIs, nothing fetched from anywhere.
func htmlReport(r *loaded, slo *SLO, figs []*figure, pngs [][]byte) ([]byte, error) {
	cells := r.summary.Cells
	p := htmlPage{
		Title:   "lockbench report — " + filepath.Base(filepath.Clean(r.dir)),
		Run:     strings.TrimSuffix(r.meta.Describe()+". "+serversText(r.meta), ". "),
		Verdict: withServers(Verdict(cells, slo), r.meta),
		Config:  r.meta.Fields,
		Files:   []string{result.MetaFile, result.SummaryFile, CSVFile, BenchFile, MarkdownFile},
		Open:    openViews(cells),
		Faults:  faultViews(cells),
		Known:   knownIssuesOf(cells),
	}
	p.Rows, p.Wakeups = htmlRows(cells)
	if anyRounds(cells) {
		p.RoundsNote = bracketsNote
	}
	if _, err := os.Stat(filepath.Join(r.dir, SafetyFile)); err == nil && r.dir != "" {
		p.SafetyFile = SafetyFile
		p.Files = append(p.Files, SafetyFile)
	}
	if pr := r.partial; pr != nil {
		p.Title = PartialMark + p.Title
		p.Partial, p.Reason, p.Missing = PartialMark, pr.Reason, pr.Missing
	}
	for _, c := range cells {
		if u := judge.CellSafety(c); u.Bad() {
			s := fmt.Sprintf("%s: %s", c.Key(), UnsafetyWords(u))
			if len(c.Violations) > 0 {
				v := c.Violations[0]
				s += fmt.Sprintf(" — first: %s on %s at %.3fs (holder client %d, intruder client %d)", v.Kind, v.Lock, v.AtS, v.Holder, v.Intruder)
			}
			p.Unsafe = append(p.Unsafe, s)
		}
		if _, ok := r.logs[c.Key()]; ok {
			if !p.HaveHgrm {
				p.HaveHgrm, p.ExampleHgrm = true, filepath.ToSlash(result.CellRel(r.dir, c, result.HgrmExt))
			}
		} else {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no interval log (%s), so no timeline and a spectrum from the summary's percentiles only.", c.Key(), filepath.ToSlash(result.CellRel(r.dir, c, result.HlogExt))))
		}
		if c.ServerNote != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no server counters: %s", c.Key(), oneLine(c.ServerNote)))
		}
		for _, n := range cpuNotes(c) {
			p.Notes = append(p.Notes, c.Key()+": "+strings.TrimPrefix(n, "! "))
		}
	}
	s, _ := effectiveSLO(slo)
	p.SLO = sloLabel(slo)
	for _, row := range judge.Capacity(capacityCells(cells), s) {
		p.Capacity = append(p.Capacity, capacityView{row.Impl, row.Scenario, DescribeCapacity(row, s)})
	}
	for i, f := range figs {
		p.Figures = append(p.Figures, figureView{
			ID: figureAnchor(f.Name), Title: f.Title, Caption: f.Caption, File: PlotsDir + "/" + f.Name + ".svg",
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

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"interval": intervalHTML}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222; max-width: 1160px; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.7em; margin-bottom: 0.1em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.run { color: #666; margin-top: 0; }
.verdict { border: 1px solid #cfd8dc; background: #f7fafb; border-radius: 4px; padding: 0.6em 1em; margin: 1.2em 0; }
.verdict h2 { margin: 0.2em 0 0.4em; border: none; }
.verdict ul { list-style: none; padding: 0; margin: 0; }
.verdict li { margin: 0.35em 0; }
.verdict .q { font-weight: bold; }
.verdict li.bad { color: #8e0000; }
.verdict a { font-size: 0.9em; white-space: nowrap; }
.verdict table.vt { margin: 0.4em 0 0.2em; font-size: 0.9em; }
.verdict table.vt td:first-child { font-weight: bold; }
.unsafe { background: #fde8e8; border: 2px solid #c62828; color: #8e0000; padding: 0.8em 1em; border-radius: 4px; }
.unsafe strong { font-size: 1.15em; }
.partial { background: #fff4e0; border: 2px solid #e65100; color: #6d2c00; padding: 0.8em 1em; border-radius: 4px; margin: 1em 0; }
.partial strong { font-size: 1.15em; }
ul.headlines li { margin-bottom: 0.4em; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 0.2em 0.45em; border-bottom: 1px solid #e4e4e4; }
th { background: #f5f5f5; text-align: left; }
th.n { text-align: right; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td:first-child { white-space: nowrap; }
tr.bad td { background: #fde8e8; color: #8e0000; font-weight: bold; }
tr.fenced td.safety { color: #2e7d32; }
td.lat { background: #fafafa; }
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
{{if .Partial}}<div class="partial" id="partial"><strong>PARTIAL results: not a whole run.</strong> {{.Reason}}. Every figure below is of a cell that was finished whole; these cells are missing:
<ul>{{range .Missing}}<li>{{.Cell}}: {{.Why}}</li>{{end}}</ul></div>{{end}}
{{if .Verdict}}<div class="verdict" id="verdict"><h2>{{.Partial}}Verdict</h2>
<ul>{{range .Verdict}}<li{{if .Bad}} class="bad"{{end}}><span class="q">{{.Question}}:</span> {{.Answer}} <a href="#{{.Anchor}}">evidence ↓</a>{{with .Table}}
<table class="vt"><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}
<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}</li>
{{end}}</ul></div>{{end}}
{{if .Unsafe}}<div class="unsafe"><strong>Mutual exclusion was violated.</strong> These cells saw two holders at once, a fencing token go backwards, or (pause) a stale holder's write accepted where the lock's users write — without a token when the lock has none, with its token when it has one.
<ul>{{range .Unsafe}}<li>{{.}}</li>{{end}}</ul></div>{{end}}

<h2 id="results">{{.Partial}}Results</h2>
<p class="run">Acquire latency; every column of every cell is in summary.csv.</p>
<table>
<tr><th>impl</th><th>scenario</th><th class="n">clients</th><th class="n">acq/s</th><th class="n">p50</th><th class="n">p90</th><th class="n">p95</th><th class="n">p99</th><th class="n">p99.9</th><th class="n">p99.99</th><th class="n">max</th><th class="n">errors</th><th class="n">hand-off gap p50 / p90</th><th class="n">per acq</th>{{if .Wakeups}}<th class="n">wake-ups / theory</th>{{end}}<th>safety</th></tr>
{{range .Rows}}<tr{{if .Unsafe}} class="bad"{{else if .Fenced}} class="fenced"{{end}}><td>{{.Impl}}{{if .Unsafe}} ⚠ UNSAFE{{end}}</td><td>{{.Scenario}}</td><td class="n">{{.Clients}}</td><td class="n">{{interval .PerS}}</td>{{range .Latency}}<td class="n lat">{{interval .}}</td>{{end}}<td class="n">{{.Errors}}</td><td class="n">{{.Gap}}</td><td class="n">{{.PerAcq}}</td>{{if $.Wakeups}}<td class="n">{{.Wakeups}}</td>{{end}}<td class="safety">{{.Safety}}</td></tr>
{{end}}</table>
{{with .SafetyFile}}<p class="run" id="safety">Safety of every cell, lock × scenario — overlaps, token regressions, the guarded register's stale writes and lost updates, the linearizability verdict and what checking it cost: <a href="{{.}}">{{.}}</a>.</p>{{end}}
<p class="run">The hand-off gap is the time from a holder's release call to the next grant of the same lock, where a cell measured it.</p>
{{if .RoundsNote}}<p class="run">{{.RoundsNote}}</p>{{end}}
{{if .Wakeups}}<p class="run">Wake-ups are release wake-ups where counted; theory is n(n−1)/2 when every waiter watches every change, n−1 with a predecessor watch.</p>{{end}}

{{if .Capacity}}<h2 id="capacity">{{.Partial}}Best client count tried at {{.SLO}} (lockbench capacity finds the capacity)</h2>
<p>For each implementation and load scenario, the largest client count whose acquire latency met the objective.</p>
<table>
<tr><th>impl</th><th>scenario</th><th>capacity</th></tr>
{{range .Capacity}}<tr><td>{{.Impl}}</td><td>{{.Scenario}}</td><td>{{.Text}}</td></tr>
{{end}}</table>{{end}}

{{if .Open}}<h2 id="open-loop">{{.Partial}}Open loop</h2>
<p>Arrivals at a set rate. Latency from each arrival's intended start (what a caller waits) beside service time alone (from when a client took it up); the gap is queueing that a closed loop would hide.</p>
<table>
<tr><th>impl</th><th class="n">clients</th><th class="n">offered</th><th class="n">achieved</th><th class="n">dropped</th><th class="n">unfinished</th><th>latency</th><th class="n">p50</th><th class="n">p90</th><th class="n">p95</th><th class="n">p99</th><th class="n">p99.9</th><th class="n">p99.99</th><th class="n">max</th></tr>
{{range .Open}}<tr{{if .Saturated}} class="bad"{{end}}><td rowspan="2">{{.Impl}}{{if .Saturated}} (saturated){{end}}</td><td class="n" rowspan="2">{{.Clients}}</td><td class="n" rowspan="2">{{.Offered}}</td><td class="n" rowspan="2">{{.Achieved}}</td><td class="n" rowspan="2">{{.Dropped}}</td><td class="n" rowspan="2">{{.Unfinished}}</td><td>from intended start</td>{{range .FromIntended}}<td class="n lat">{{.}}</td>{{end}}</tr>
<tr{{if .Saturated}} class="bad"{{end}}><td>service</td>{{range .Service}}<td class="n lat">{{.}}</td>{{end}}</tr>
{{end}}</table>{{end}}

{{if .Faults}}<h2 id="faults">{{.Partial}}Faults</h2>
<table>
<tr><th>impl</th><th>scenario</th><th>recovery</th><th>bound</th><th>stale writes</th><th>verdict</th></tr>
{{range .Faults}}<tr{{if .Unsafe}} class="bad"{{end}}><td>{{.Impl}}</td><td>{{.Scenario}}</td><td>{{.Recovery}}</td><td class="n">{{.Bound}}</td><td>{{.Stale}}</td><td>{{.Verdict}}</td></tr>
{{end}}</table>{{end}}

{{if .Known}}<h2 id="known-issues">{{.Partial}}Known issues, measured</h2>
<p>Failures users have filed against lock libraries, and what this run measured of each, lock by lock.</p>
{{range .Known}}<h3>{{.Title}}</h3>
<p>{{.Question}}{{if .Reports}} Reported in {{range $i, $r := .Reports}}{{if $i}}, {{end}}<a href="{{$r.URL}}">{{$r.Name}}</a>{{end}}.{{end}} Scenario <code>{{.Scenario}}</code>; reproduce with <code>{{.Command}}</code>.</p>
<table>
<tr><th>impl</th><th class="n">clients</th><th>measured</th></tr>
{{range .Findings}}<tr><td>{{.Impl}}</td><td class="n">{{.Clients}}</td><td>{{.Figure}}</td></tr>
{{end}}</table>
{{end}}{{end}}

{{if .Figures}}<h2>{{.Partial}}Plots</h2>
{{range .Figures}}<figure id="{{.ID}}">
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
{{if .HaveHgrm}}<li>cells/ — a folder per implementation; in it *.hlog, interval histograms per cell (µs), and *.hgrm, each cell's acquire latency percentiles (ms), e.g. {{.ExampleHgrm}}</li>{{end}}
<li>bench.txt compares two runs with <code>benchstat old/bench.txt new/bench.txt</code>; <code>lockbench compare OLD NEW</code> does too, noise-aware.</li>
</ul>
</body>
</html>
`))

// intervalHTML puts a table cell's interval, "979 [664–1,297]", on a line
// of its own under the figure, so that a run in rounds keeps the results
// table within a 1280 px screen.
func intervalHTML(s string) template.HTML {
	fig, iv, ok := strings.Cut(s, " [")
	if !ok {
		return template.HTML(template.HTMLEscapeString(s))
	}
	return template.HTML(template.HTMLEscapeString(fig) + `<br><small>[` + template.HTMLEscapeString(iv) + `</small>`)
}
