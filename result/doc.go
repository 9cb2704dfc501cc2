// Package result is lockbench's result data, apart from any rendering:
// the summary.json schema (Summary, Cell, versioned), the run's metadata
// (Meta, meta.json), the per-cell HdrHistogram interval logs (.hlog,
// written as a cell runs and read back), capacity planning against an SLO,
// and what theory predicts of a lock's wake-ups. It imports no driver, so
// reports, comparisons and merges of shards work from the files alone.
package result
