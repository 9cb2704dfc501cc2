// Package result is lockbench's result data, apart from any rendering:
// the summary.json schema (Summary, Cell, versioned) and its accumulation
// (Accumulator: clients', repeats' and shards' figures joined), the run's
// metadata (Meta, meta.json), where a results directory keeps each cell's
// files (CellPath: cells/IMPL/SCENARIO_cN.EXT, and the flat names of
// directories written before), what the servers counted, typed
// (ServerCounts), and what theory predicts of a lock's wake-ups. Files
// written by older schemas are read in legacy.go, the one reader of their
// names. The per-cell HdrHistogram interval logs are package hlog's; the
// judgement of these figures is package judge's. It imports no driver, so
// reports, comparisons and merges of shards work from the files alone.
package result
