package suite

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/result"
)

// PartsDir is where a joined bundle keeps its parts, one folder each
// (parts/0, parts/1 …), as each part wrote it.
const PartsDir = "parts"

// Join makes one bundle of the bundles of a tier's parts, each kept under
// PartsDir/i: its workloads read every part's results. The parts must have
// run the same suite version and tier as distinct parts of one split,
// with rows that do not overlap, on machines whose fingerprints agree —
// else their figures are not one table, and Join says which fact differs.
// Two wholes of one tier narrowed to other rows (--impl) join too: a
// fresh machine's demo measures the rows whose servers are built, then
// adds a row whose server was still building.
func Join(parts []*Bundle) (*Bundle, error) {
	if len(parts) < 2 {
		return nil, fmt.Errorf("%w: join needs two parts or more", ErrSuite)
	}
	first := parts[0]
	seen := map[string]int{}
	rows := map[string]int{}
	for i, p := range parts {
		switch {
		case p.Suite != first.Suite || p.Digest != first.Digest:
			return nil, fmt.Errorf("%w: part %d ran suite %s (%s), part 0 %s (%s)", ErrSuite, i, p.Suite, p.Digest, first.Suite, first.Digest)
		case p.Tier != first.Tier:
			return nil, fmt.Errorf("%w: part %d ran the %s tier, part 0 the %s", ErrSuite, i, p.Tier, first.Tier)
		}
		if d := first.Machine.Differences(p.Machine); len(d) > 0 {
			return nil, fmt.Errorf("%w: part %d ran on another machine than part 0: %s", ErrSuite, i, strings.Join(d, "; "))
		}
		if j, dup := seen[p.Part]; dup && p.Part != Whole.String() {
			return nil, fmt.Errorf("%w: parts %d and %d are both part %s", ErrSuite, j, i, p.Part)
		}
		seen[p.Part] = i
		for _, r := range p.Rows {
			if j, dup := rows[r]; dup {
				return nil, fmt.Errorf("%w: row %s is in parts %d and %d", ErrSuite, r, j, i)
			}
			rows[r] = i
		}
	}
	out := &Bundle{Schema: BundleSchema, Suite: first.Suite, Digest: first.Digest, Tier: first.Tier,
		Lockbench: first.Lockbench, Machine: first.Machine, Started: first.Started}
	var names []string
	out.Machine.Servers = nil // every part's servers, in a map of its own
	for _, p := range parts {
		if !slices.Contains(names, p.Part) {
			names = append(names, p.Part)
		}
		for k, v := range p.Machine.Servers {
			if out.Machine.Servers == nil {
				out.Machine.Servers = map[string]string{}
			}
			out.Machine.Servers[k] = v
		}
		if p.Started.Before(out.Started) {
			out.Started = p.Started
		}
		if p.Ended.After(out.Ended) {
			out.Ended = p.Ended
		}
	}
	out.Part = strings.Join(names, "+")
	for r := range rows {
		out.Rows = append(out.Rows, r)
	}
	slices.Sort(out.Rows)
	var yard []float64
	for i, p := range parts {
		if y := p.Yardstick; y != nil && y.Rate != nil {
			yard = append(yard, y.Rate.Rounds...)
			if out.Yardstick == nil {
				out.Yardstick = &Yardstick{What: y.What}
			}
		}
		for _, r := range p.Workloads {
			k := slices.IndexFunc(out.Workloads, func(o Run) bool { return o.Name == r.Name })
			if k < 0 {
				out.Workloads = append(out.Workloads, Run{Name: r.Name, Question: r.Question, Command: r.Command, Args: r.Args})
				k = len(out.Workloads) - 1
			}
			o := &out.Workloads[k]
			for _, src := range r.Sources() {
				o.Dirs = append(o.Dirs, path.Join(PartsDir, fmt.Sprint(i), src))
			}
			o.Seconds = max(o.Seconds, r.Seconds)
			if worse(r.Exit, o.Exit) {
				o.Exit = r.Exit
			}
			if r.Error != "" {
				o.Error = strings.TrimPrefix(o.Error+"; part "+p.Part+": "+r.Error, "; ")
			}
		}
	}
	if out.Yardstick != nil {
		e := result.EstimateOf(yard)
		out.Yardstick.Rate = &e
	}
	return out, nil
}

// worse says exit status a outranks b: a failure (1) before an unsafe
// finding (3) before a missed SLO (5) before success.
func worse(a, b int) bool {
	rank := func(x int) int {
		switch x {
		case 0:
			return 0
		case 5:
			return 1
		case 3:
			return 2
		}
		return 3
	}
	return rank(a) > rank(b)
}
