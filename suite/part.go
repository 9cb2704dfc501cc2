package suite

import (
	"fmt"
	"strconv"
	"strings"
)

// Part is one of a tier's parts when its rows are split over several
// machines or processes (a Kubernetes Indexed Job runs one per node):
// part Index of Count, 0-based. The parts' bundles are joined into one
// table only when their fingerprints agree. The zero Part is the whole.
type Part struct{ Index, Count int }

// Whole is the part that is every row.
var Whole = Part{0, 1}

// ParsePart reads "I/N".
func ParsePart(s string) (Part, error) {
	i, n, ok := strings.Cut(s, "/")
	p := Part{}
	var err1, err2 error
	p.Index, err1 = strconv.Atoi(i)
	p.Count, err2 = strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || p.Count < 1 || p.Index < 0 || p.Index >= p.Count {
		return Part{}, fmt.Errorf("%w: part %q: want I/N with 0 ≤ I < N", ErrSuite, s)
	}
	return p, nil
}

func (p Part) String() string {
	if p.Count == 0 {
		return Whole.String()
	}
	return fmt.Sprintf("%d/%d", p.Index, p.Count)
}

// Rows is this part's share of rows: every Count-th, from the Index-th,
// so that the parts are disjoint, cover every row, and differ in size by
// at most one. rows are taken in the order given (sorted, as the
// registry lists them).
func (p Part) Rows(rows []string) []string {
	if p.Count <= 1 {
		return rows
	}
	var out []string
	for i, r := range rows {
		if i%p.Count == p.Index {
			out = append(out, r)
		}
	}
	return out
}
