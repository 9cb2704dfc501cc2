// Package site renders a suite bundle as a static site that opens from
// the file system: index.html, one row per lock and a column per
// workload figure, sortable, each figure linking to its evidence; and a
// page per lock with every cell it ran. It reads the bundle's files
// only, as package report reads a results directory.
package site

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/suite"
)

// IndexFile is the site's first page, at the bundle's root; each lock's
// page is LocksDir/<lock>.html.
const (
	IndexFile = "index.html"
	LocksDir  = "locks"
)

// Render writes the site of the bundle at dir: index.html and a page per
// lock. It reads suite.json and each workload's summary.json.
func Render(dir string) error {
	b, err := suite.ReadBundle(dir)
	if err != nil {
		return err
	}
	ws := suite.ReadResults(dir, b)
	figs := suite.FiguresOf(ws)
	judgeFigures(ws, figs)
	cols := suite.Columns(b, figs)
	rows := b.Rows
	byCell := map[string]map[string]suite.Figure{} // impl → column → figure
	for _, f := range figs {
		if byCell[f.Impl] == nil {
			byCell[f.Impl] = map[string]suite.Figure{}
		}
		byCell[f.Impl][f.Key()] = f
		if !slices.Contains(rows, f.Impl) {
			rows = append(rows, f.Impl)
		}
	}
	idx := indexPage{Bundle: b, Fingerprint: fingerprintLines(b.Machine)}
	for _, w := range ws {
		p := workloadView{Run: w.Run, Report: filepath.ToSlash(filepath.Join(w.Run.Sources()[0], "report.html"))}
		if w.Err != nil {
			p.Note = "no results: " + w.Err.Error()
		}
		if w.Run.Error != "" {
			p.Note = "failed: " + w.Run.Error
		}
		idx.Workloads = append(idx.Workloads, p)
	}
	for _, c := range cols {
		idx.Columns = append(idx.Columns, columnView{Workload: c.Workload, Name: c.Name, Clients: c.Clients, Lower: c.Lower})
		if n := len(idx.Groups); n > 0 && idx.Groups[n-1].Workload == c.Workload {
			idx.Groups[n-1].Span++
		} else {
			idx.Groups = append(idx.Groups, groupView{Workload: c.Workload, Span: 1})
		}
	}
	for _, impl := range rows {
		r := rowView{Impl: impl, Page: filepath.ToSlash(filepath.Join(LocksDir, pageName(impl)))}
		for _, c := range cols {
			f, ok := byCell[impl][c.Key()]
			if !ok {
				r.Cells = append(r.Cells, cellView{Text: "—", Sort: "", Missing: true})
				continue
			}
			r.Cells = append(r.Cells, cellOf(f, ""))
		}
		idx.Rows = append(idx.Rows, r)
	}
	if err := writeTemplate(filepath.Join(dir, IndexFile), indexTmpl, idx); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, LocksDir), 0o755); err != nil {
		return err
	}
	for _, impl := range rows {
		lp := lockPage{Impl: impl, Bundle: b}
		for _, w := range ws {
			var mine []string // the results directories this lock's cells are in
			for i, c := range w.Cells {
				if c.Impl == impl && !slices.Contains(mine, w.From[i]) {
					mine = append(mine, w.From[i])
				}
			}
			if len(mine) == 0 {
				continue
			}
			sec := lockSection{Run: w.Run, Report: "../" + filepath.ToSlash(filepath.Join(mine[0], "report.html"))}
			for _, f := range figs {
				if f.Impl == impl && f.Workload == w.Run.Name {
					v := cellOf(f, "../")
					sec.Figures = append(sec.Figures, lockFigure{Name: f.Name, Clients: f.Clients, Cell: v})
				}
			}
			for _, src := range mine {
				for _, plot := range plotsOf(filepath.Join(dir, src)) {
					sec.Plots = append(sec.Plots, "../"+filepath.ToSlash(filepath.Join(src, plot)))
				}
			}
			if len(sec.Figures) > 0 {
				lp.Sections = append(lp.Sections, sec)
			}
		}
		if err := writeTemplate(filepath.Join(dir, LocksDir, pageName(impl)), lockTmpl, lp); err != nil {
			return err
		}
	}
	return nil
}

// judgeFigures marks the safety counts of every cell judge finds unsafe
// (judge.CellSafety, the one judgement the exit status and the report
// use), naming what fired: a history that is not linearizable is a
// finding though no count moved.
func judgeFigures(ws []suite.Results, figs []suite.Figure) {
	unsafe := map[string]string{}
	for _, w := range ws {
		for _, c := range w.Cells {
			if u := judge.CellSafety(c); u.Bad() {
				unsafe[w.Run.Name+"/"+result.CellFile(c)] = report.UnsafetyWords(u)
			}
		}
	}
	for i := range figs {
		if why, bad := unsafe[figs[i].Workload+"/"+figs[i].Cell]; bad && figs[i].Safety {
			figs[i].Bad, figs[i].Why = true, why
		}
	}
}

// pageName is a lock's page's file name.
func pageName(impl string) string { return result.FileSafe(impl) + ".html" }

// plotsOf lists a workload's plots, relative to its results directory:
// each shows every lock of the workload, this one beside the others.
func plotsOf(dir string) []string {
	ents, err := os.ReadDir(filepath.Join(dir, "plots"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".png") {
			out = append(out, filepath.Join("plots", e.Name()))
		}
	}
	return out
}

type indexPage struct {
	Bundle      *suite.Bundle
	Fingerprint []string
	Workloads   []workloadView
	Groups      []groupView
	Columns     []columnView
	Rows        []rowView
}

// groupView is a workload's heading over its columns.
type groupView struct {
	Workload string
	Span     int
}

type workloadView struct {
	Run    suite.Run
	Report string
	Note   string
}

type columnView struct {
	Workload, Name string
	Clients        int
	Lower          bool
}

type rowView struct {
	Impl, Page string
	Cells      []cellView
}

type cellView struct {
	Text, Interval, Sort, Link, Title string
	Bad, Missing                      bool
}

type lockPage struct {
	Impl     string
	Bundle   *suite.Bundle
	Sections []lockSection
}

type lockSection struct {
	Run     suite.Run
	Report  string
	Figures []lockFigure
	Plots   []string
}

type lockFigure struct {
	Name    string
	Clients int
	Cell    cellView
}

// cellOf formats a figure for a table cell, its link relative to up.
func cellOf(f suite.Figure, up string) cellView {
	v := cellView{Text: format(f.Point, f.Unit), Sort: strconv.FormatFloat(f.Point, 'g', -1, 64), Bad: f.Bad,
		Link: up + f.Evidence, Title: f.Cell}
	if f.Why != "" {
		v.Title += ": " + f.Why
	}
	if f.High > f.Low {
		v.Interval = "[" + format(f.Low, f.Unit) + ", " + format(f.High, f.Unit) + "]"
	}
	return v
}

// format prints a figure in its unit.
func format(v float64, unit string) string {
	switch unit {
	case suite.UnitUs:
		return result.Dur(v)
	case suite.UnitMs:
		return result.Dur(v * 1e3)
	case suite.UnitRate:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64) + "/s"
	case suite.UnitRatio:
		return strconv.FormatFloat(v, 'f', 2, 64) + "×"
	case suite.UnitIndex:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func fingerprintLines(f suite.Fingerprint) []string {
	out := []string{fmt.Sprintf("%s, %d cores, %s memory, kernel %s (%s/%s), %s", f.CPUModel, f.Cores, memory(f.Memory), f.Kernel, f.OS, f.Arch, f.Go)}
	if f.Disk != nil {
		out = append(out, fmt.Sprintf("disk fdatasync p50 %.2f ms, p99 %.2f ms", f.Disk.P50Ms, f.Disk.P99Ms))
	}
	if f.Profile != "" {
		out = append(out, "servers in the "+f.Profile+" profile")
	}
	var kinds []string
	for k, v := range f.Servers {
		if !strings.HasPrefix(v, k) { // "redis 7.0.15" names itself
			v = k + " " + v
		}
		kinds = append(kinds, v)
	}
	slices.Sort(kinds)
	if len(kinds) > 0 {
		out = append(out, strings.Join(kinds, " · "))
	}
	return out
}

func writeTemplate(path string, t *template.Template, data any) error {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return result.WriteFileAtomic(path, buf.Bytes())
}

// memory prints /proc/meminfo's "24683792 kB" in GiB.
func memory(s string) string {
	kb, err := strconv.ParseFloat(strings.TrimSuffix(s, " kB"), 64)
	if err != nil || !strings.HasSuffix(s, " kB") {
		return s
	}
	return strconv.FormatFloat(kb/(1<<20), 'f', 1, 64) + " GiB"
}
