package report

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/result"
)

// serversText says how the run's sandboxed servers were configured and
// what they stood on: the profile and each kind's settings, the disk's
// synced-write latency (what a ZooKeeper with forceSync and an etcd wait
// for on each write), and each kind's warm-up. Empty for a run that
// recorded none of it (one from before profiles, or on servers it was
// given).
func serversText(m result.Meta) string {
	var parts []string
	if m.ServerProfile != "" {
		s := m.ServerProfile + " server profile"
		var kinds []string
		for _, k := range m.ServerSettings {
			kinds = append(kinds, k.Kind+": "+k.Settings)
		}
		if len(kinds) > 0 {
			s += " (" + strings.Join(kinds, "; ") + ")"
		}
		parts = append(parts, s)
	}
	if d := m.DiskSync; d != nil {
		parts = append(parts, diskText(*d))
	}
	for _, w := range m.ServerWarmup {
		parts = append(parts, warmupText(w))
	}
	return strings.Join(parts, "; ")
}

// diskText is the disk's synced-write latency beside etcd's own bar.
func diskText(d result.DiskSync) string {
	s := fmt.Sprintf("disk under the servers: fdatasync of %d B p50 %s, p99 %s over %d writes",
		d.Bytes, result.Dur(d.P50Ms*1e3), result.Dur(d.P99Ms*1e3), d.Count)
	if d.P99Ms > 10 {
		s += " — slower than the 10 ms p99 etcd's guide asks for"
	}
	return s
}

// warmupText says how long a kind was warmed and whether it settled.
func warmupText(w result.ServerWarmup) string {
	s := fmt.Sprintf("%s warmed %.0f s through %s ×%d", w.Kind, w.Seconds, w.Impl, w.Clients)
	switch {
	case w.Error != "":
		s += ", cut short by an error"
	case w.Steady:
		s += " until its rate was steady"
		if n := len(w.RatesPerS); n > 0 {
			s += fmt.Sprintf(" (%s acq/s)", commas(round(w.RatesPerS[n-1])))
		}
	default:
		s += fmt.Sprintf(", the %.0f s bound: its rate was still moving, and the first cells may be warming it", w.BoundS)
	}
	return s
}

// profileClause names the run's server profile for the Limit line: the
// limit found is that of servers configured so.
func profileClause(m result.Meta) string {
	if m.ServerProfile == "" {
		return ""
	}
	s := "; servers in the " + m.ServerProfile + " profile"
	if d := m.DiskSync; d != nil {
		s += fmt.Sprintf(", disk fdatasync p99 %s", result.Dur(d.P99Ms*1e3))
	}
	return s
}

// withServers adds the run's server profile to its Limit line.
func withServers(vs []VerdictLine, m result.Meta) []VerdictLine {
	for i := range vs {
		if vs[i].Question == "Limit" {
			vs[i].Answer += profileClause(m)
		}
	}
	return vs
}

// snapshotText names the cells during which a Redis server forked for a
// snapshot (its save rules, in the production profile): a pause its
// clients felt, which the cell's figures carry.
func snapshotText(cells []Cell) string {
	var in []string
	for _, c := range cells {
		if n := c.ServerCounts; n != nil && n.Forks > 0 {
			in = append(in, fmt.Sprintf("%s (%s)", c.Key(), plural(n.Forks, "fork")))
		}
	}
	if len(in) == 0 {
		return ""
	}
	return "Redis snapshotted during " + strings.Join(in, ", ")
}
