package suite

import (
	"bufio"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Current is the suite version a run uses unless it names another.
const Current = "v1"

// pinned is each version's digest (Digest): the files that define it may
// not change under its name. A changed workload is a new version, with
// its own folder and its own line here.
var pinned = map[string]string{
	"v1": "39c78d0791224413",
}

//go:embed v1/*.workload
var files embed.FS

// ErrSuite is what errors about a suite's definition or its selection
// are (errors.Is): an unknown version, tier or workload, a malformed
// workload file.
var ErrSuite = errors.New("suite")

// Tier is how much of a suite runs: quick (every row, a few minutes of
// measuring), standard (the published table) or full (the standard one,
// the capacity search and the other faults).
type Tier string

// The tiers, from the smallest.
const (
	Quick    Tier = "quick"
	Standard Tier = "standard"
	Full     Tier = "full"
)

// Tiers lists the tiers from the smallest.
func Tiers() []Tier { return []Tier{Quick, Standard, Full} }

// ParseTier reads a tier's name.
func ParseTier(s string) (Tier, error) {
	if t := Tier(s); slices.Contains(Tiers(), t) {
		return t, nil
	}
	return "", fmt.Errorf("%w: unknown tier %q: want quick, standard or full", ErrSuite, s)
}

// Commands a workload may run: lockbench's own.
const (
	CommandRun      = "run"
	CommandCapacity = "capacity"
)

// Workload is one named question, as its file states it.
type Workload struct {
	// Name is the file's base name, e.g. "hot".
	Name string
	// About is the file's opening comment; Question the question the
	// workload answers, for the table's column heads.
	About    string
	Question string
	// Command is the lockbench command it runs, Args the flags every tier
	// shares.
	Command string
	Args    []string
	// tiers are each tier's own flags; a workload runs in the tiers it
	// names. rows are a tier's flags for one row, given only when the row
	// runs (a driver's own options, which a build without the row lacks).
	tiers map[Tier][]string
	rows  map[Tier]map[string][]string
}

// In says whether the workload runs in tier t.
func (w Workload) In(t Tier) bool { _, ok := w.tiers[t]; return ok }

// ArgsFor is the command line the workload runs in tier t: its shared
// flags, then the tier's.
func (w Workload) ArgsFor(t Tier) []string {
	return append(slices.Clone(w.Args), w.tiers[t]...)
}

// RowArgsFor is the flags tier t gives the rows among rows that it names
// a line of their own, in the order of rows.
func (w Workload) RowArgsFor(t Tier, rows []string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, w.rows[t][r]...)
	}
	return out
}

// Suite is one version's workloads, in the order they run.
type Suite struct {
	Version   string
	Digest    string
	Workloads []Workload
}

// Versions lists the versions this lockbench knows.
func Versions() []string {
	out := make([]string, 0, len(pinned))
	for v := range pinned {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// order is the order workloads run and are shown in: the cheap questions
// first, so a part cut short still answers them; a workload not listed
// comes after, by name.
var order = []string{"uncontended", "hot", "zipf-keys", "herd", "wait", "faults", "faults-more", "capacity"}

// Load reads version v's workloads.
func Load(v string) (*Suite, error) {
	if _, ok := pinned[v]; !ok {
		return nil, fmt.Errorf("%w: unknown version %q (this lockbench knows %s)", ErrSuite, v, strings.Join(Versions(), ", "))
	}
	return load(files, v)
}

func load(fsys fs.FS, v string) (*Suite, error) {
	names, err := fs.Glob(fsys, v+"/*.workload")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: version %s has no workloads", ErrSuite, v)
	}
	h := sha256.New()
	s := &Suite{Version: v}
	for _, name := range names { // Glob sorts
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path.Base(name), len(b))
		h.Write(b)
		w, err := parse(strings.TrimSuffix(path.Base(name), ".workload"), string(b))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrSuite, name, err)
		}
		s.Workloads = append(s.Workloads, w)
	}
	s.Digest = hex.EncodeToString(h.Sum(nil))[:16]
	rank := func(n string) int {
		if i := slices.Index(order, n); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(s.Workloads, func(a, b Workload) int { return rank(a.Name) - rank(b.Name) })
	return s, nil
}

// parse reads a workload file: "# comment" lines, then "key: value"
// lines — question, command, args, one line per tier it runs in, and
// "TIER ROW" lines of flags for one row in that tier.
func parse(name, text string) (Workload, error) {
	w := Workload{Name: name, tiers: map[Tier][]string{}, rows: map[Tier]map[string][]string{}}
	var about []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if c, ok := strings.CutPrefix(line, "#"); ok {
			if len(seen) == 0 {
				about = append(about, strings.TrimSpace(c))
			}
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return w, fmt.Errorf("line %d: want key: value", n)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if seen[k] {
			return w, fmt.Errorf("line %d: %s given twice", n, k)
		}
		seen[k] = true
		switch k {
		case "question":
			w.Question = v
		case "command":
			if v != CommandRun && v != CommandCapacity {
				return w, fmt.Errorf("line %d: command %q: want run or capacity", n, v)
			}
			w.Command = v
		case "args":
			w.Args = strings.Fields(v)
		default:
			tier, row, perRow := strings.Cut(k, " ")
			t, err := ParseTier(tier)
			if err != nil {
				return w, fmt.Errorf("line %d: unknown key %q", n, k)
			}
			if !perRow {
				w.tiers[t] = strings.Fields(v)
				continue
			}
			if w.rows[t] == nil {
				w.rows[t] = map[string][]string{}
			}
			w.rows[t][strings.TrimSpace(row)] = strings.Fields(v)
		}
	}
	if err := sc.Err(); err != nil {
		return w, err
	}
	w.About = strings.Join(about, " ")
	switch {
	case w.Question == "":
		return w, errors.New("no question")
	case w.Command == "":
		return w, errors.New("no command")
	case len(w.tiers) == 0:
		return w, errors.New("in no tier")
	}
	all := slices.Concat(w.Args, w.tiers[Quick], w.tiers[Standard], w.tiers[Full])
	for t, rows := range w.rows {
		if _, ok := w.tiers[t]; !ok {
			return w, fmt.Errorf("flags for rows in the %s tier, which the workload does not run in", t)
		}
		for _, a := range rows {
			all = append(all, a...)
		}
	}
	for _, a := range all {
		if reserved(a) {
			return w, fmt.Errorf("%s is the suite's to set, not a workload's", a)
		}
	}
	return w, nil
}

// reserved are the flags the suite sets itself for every workload: which
// rows, where the results go, the servers' profile.
func reserved(arg string) bool {
	flag, _, _ := strings.Cut(arg, "=")
	return slices.Contains([]string{"--impl", "--out", "--servers", "--force", "--format", "--shard"}, flag)
}

// Select is the workloads that run in tier t, narrowed to names when
// any are given.
func (s *Suite) Select(t Tier, names []string) ([]Workload, error) {
	for _, n := range names {
		if !slices.ContainsFunc(s.Workloads, func(w Workload) bool { return w.Name == n }) {
			return nil, fmt.Errorf("%w: %s has no workload %q", ErrSuite, s.Version, n)
		}
	}
	var out []Workload
	for _, w := range s.Workloads {
		if w.In(t) && (len(names) == 0 || slices.Contains(names, w.Name)) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no workload of %s runs in the %s tier", ErrSuite, s.Version, t)
	}
	return out, nil
}
