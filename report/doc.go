// Package report owns lockbench's result format — summary.json and the
// tables printed from it — so that results are data first and can be
// re-rendered or compared without re-running anything.
//
// Render turns a results directory's data files (meta.json, summary.json,
// the .hlog interval logs) into everything meant for people and tools:
// summary.csv, bench.txt for benchstat, .hgrm percentile spectra,
// summary.md, plots and a self-contained report.html. Compare sets two
// runs side by side, telling real changes from run-to-run noise.
package report
