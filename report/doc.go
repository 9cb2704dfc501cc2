// Package report owns lockbench's result format — summary.json and the
// tables printed from it — so that results are data first and can be
// re-rendered or compared without re-running anything.
package report
