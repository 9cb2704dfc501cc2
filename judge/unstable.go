package judge

import "github.com/lockbench/lockbench/result"

// UnstableSpan is how many times p99.5 may exceed p98.5 before the p99
// between them counts as unstable: it sits in the gap of a bimodal
// distribution, and a few more slow acquisitions would move it across.
const UnstableSpan = 4.0

// UnstableP99 says whether l's p99 sits in such a gap.
func UnstableP99(l result.Latency) bool {
	return l.P985 > 0 && l.P995 >= UnstableSpan*l.P985
}
