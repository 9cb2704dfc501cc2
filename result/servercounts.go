package result

import "github.com/lockbench/lockbench/internal/serverkind"

// ServerCounts is what a cell's servers counted themselves, typed (see
// serverkind.Counts, where each kind's meaning of its counters is
// declared against it).
type ServerCounts = serverkind.Counts
