package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// RenderOptions tune Render. The zero value renders everything without
// capacity planning (unless meta.json names an SLO).
type RenderOptions struct {
	// SLO, like "p99=10ms", adds capacity planning to summary.md and
	// report.html; it overrides meta.json's "slo". Empty: meta.json's, if
	// any, else none.
	SLO string
	// OnWrite, if set, is called with the path of every file written.
	OnWrite func(path string)
}

// results is a results directory as read back from disk.
type loaded struct {
	dir     string
	meta    result.Meta
	summary *Summary
	// logs holds each cell's acquire intervals by Cell.Key(), read as a
	// stream (hlog.Digest); cells without an .hlog have none.
	logs map[string]*CellDigest
	// partial is what the results lack, when they are not a whole run: a
	// merge given --partial says so, a run that ended early is read so.
	partial *result.Partial
}

// load reads a results directory: meta.json and summary.json must be
// there; .hlog files are used where present.
func load(dir string) (*loaded, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("report: %s is not a directory", dir)
	}
	meta, err := result.ReadMeta(filepath.Join(dir, result.MetaFile))
	if err != nil {
		return nil, err
	}
	sum, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
	if err != nil {
		return nil, err
	}
	r := &loaded{dir: dir, meta: meta, summary: sum, logs: map[string]*CellDigest{},
		partial: result.MissingFromRun(dir, meta, sum)}
	for _, c := range sum.Cells {
		l, err := hlog.ReadDigest(dir, c, result.TagAcquire)
		if err != nil {
			return nil, err
		}
		if l != nil {
			r.logs[c.Key()] = l
		}
	}
	return r, nil
}

// Render renders everything a results directory's data files support —
// summary.csv, bench.txt, one .hgrm per cell with an .hlog, summary.md,
// plots/*.png and *.svg, and report.html — from meta.json, summary.json
// and the .hlog files alone, so a report can be redone or restyled
// without running anything. Every file is written atomically; rendering
// the same directory twice gives the same files.
func Render(dir string, opts RenderOptions) error {
	r, err := load(dir)
	if err != nil {
		return err
	}
	var slo *SLO
	if s := opts.SLO; s != "" || r.meta.SLO != "" {
		if s == "" {
			s = r.meta.SLO
		}
		v, err := result.ParseSLO(s)
		if err != nil {
			return err
		}
		slo = &v
	}
	write := func(path string, data []byte) error {
		if err := result.WriteFileAtomic(path, data); err != nil {
			return err
		}
		if opts.OnWrite != nil {
			opts.OnWrite(path)
		}
		return nil
	}
	cells := r.summary.Cells

	csvData, err := summaryCSV(cells)
	if err != nil {
		return err
	}
	if err := write(filepath.Join(dir, CSVFile), csvData); err != nil {
		return err
	}
	if err := write(filepath.Join(dir, BenchFile), benchTxt(r.meta, cells, r.logs, r.partial)); err != nil {
		return err
	}
	for _, c := range cells {
		h := r.logs[c.Key()].Merged(result.TagAcquire)
		if h == nil {
			continue
		}
		var b bytes.Buffer
		// The histograms hold microseconds; a valueScale of 1000 prints
		// milliseconds, the unit .hgrm readers (HdrHistogram's plotter)
		// expect.
		if _, err := h.PercentilesPrint(&b, 5, 1000); err != nil {
			return fmt.Errorf("report: %s: %w", c.Key(), err)
		}
		p, err := result.CreateCellPath(dir, c, result.HgrmExt)
		if err != nil {
			return err
		}
		if err := write(p, b.Bytes()); err != nil {
			return err
		}
	}
	if err := write(filepath.Join(dir, MarkdownFile), markdown(r.meta, cells, slo, r.partial)); err != nil {
		return err
	}
	if err := write(filepath.Join(dir, SafetyFile), safetyTable(cells)); err != nil {
		return err
	}

	figs, err := figures(cells, r.logs, r.meta.Ramp != "")
	if err != nil {
		return err
	}
	if r.partial != nil {
		labelPartial(figs)
	}
	if len(figs) > 0 {
		if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	pngs := make([][]byte, len(figs))
	for i, f := range figs {
		for _, format := range []string{"png", "svg"} {
			b, err := f.encode(format)
			if err != nil {
				return err
			}
			if format == "png" {
				pngs[i] = b
			}
			if err := write(filepath.Join(dir, PlotsDir, f.Name+"."+format), b); err != nil {
				return err
			}
		}
	}
	page, err := htmlReport(r, slo, figs, pngs)
	if err != nil {
		return err
	}
	return write(filepath.Join(dir, HTMLFile), page)
}

// PartialMark opens the title of every table and plot that shows figures
// of a partial result.
const PartialMark = "PARTIAL — "

// labelPartial marks every plot of a partial result, on the image and in
// the page, so that a plot shown on its own still says so.
func labelPartial(figs []*figure) {
	for _, f := range figs {
		f.Title = PartialMark + f.Title
		for _, p := range f.panels {
			p.Title.Text = PartialMark + p.Title.Text
		}
	}
}
