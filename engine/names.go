package engine

import "strconv"

// cachedNames is how many lock names a cell keeps made; names beyond are
// made when used, so a cell of a million locks costs kilobytes, not a
// string per lock.
const cachedNames = 4096

// lockNames are a cell's lock names, "lock-0" to "lock-(n−1)".
type lockNames struct {
	n      int
	cached []string
}

func newLockNames(n int) lockNames {
	ns := lockNames{n: n, cached: make([]string, min(n, cachedNames))}
	for i := range ns.cached {
		ns.cached[i] = "lock-" + strconv.Itoa(i)
	}
	return ns
}

// len is the number of names.
func (ns lockNames) len() int { return ns.n }

// at returns name i; beyond the cached ones it allocates the string.
func (ns lockNames) at(i int) string {
	if i < len(ns.cached) {
		return ns.cached[i]
	}
	return "lock-" + strconv.Itoa(i)
}

// all makes every name, for drivers that prepare each lock on the server
// before the clock starts (and so cost as much on the server anyway).
func (ns lockNames) all() []string {
	out := make([]string, ns.n)
	for i := range out {
		out[i] = ns.at(i)
	}
	return out
}
