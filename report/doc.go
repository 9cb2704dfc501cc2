// Package report renders results for people and tools from result data
// alone — never from a driver, the engine or a run — so a run can be
// re-rendered, merged or compared without re-running anything. The data
// and its files (summary.json, meta.json, capacity.json, the .hlog
// interval logs) are package result's.
//
// Render turns a results directory into summary.csv, bench.txt for
// benchstat, .hgrm percentile spectra, summary.md, plots and a
// self-contained report.html; WriteTable and WriteCSV print cells;
// Verdict and Headlines say in sentences what the cells show. Compare and
// CompareDirs set two runs side by side, telling real changes from
// run-to-run noise. WriteCapacitySearch, DescribeTrial and RenderCapacity
// print and plot what a capacity search (plan.RunCapacity) found.
package report
