package site

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/suite"
)

// meanings says, per figure, what it means and what it does not: the
// published table's legend.
var meanings = []struct{ figure, means, not string }{
	{"p50", "the median time to acquire the lock with nobody else asking: the lock's round trips and the server's work, on this machine's loopback",
		"a network's latency: add your round trip per request the lock makes"},
	{"p99", "the time 99 % of acquisitions took, from asking to holding, with the workload's contention",
		"a bound: the slowest 1 % took longer (the workload's report has p99.9 and max)"},
	{"acq/s", "grants per second of one lock (or of the keys) shared by the clients, each holding 1 ms",
		"the server's capacity: one lock serialises its holders; `lockbench capacity` answers how much load meets an SLO"},
	{"fairness (Jain)", "how evenly the grants went to the clients: 1 is even, 1/n one client took all",
		"a defect: an unfair lock can be the faster one, as its holder re-acquires without a hand-off"},
	{"wake-ups / hand-off", "clients woken by one release in a burst of queued waiters: 1 for a queue, about n/2 for a herd, 0 for pollers",
		"the cost of polling, which wakes nobody but asks the server every retry (the server CPU column counts it)"},
	{"server CPU / hand-off, marginal", "the servers' CPU time one more hand-off costs: the slope of each burst's server CPU (above the servers' rate at rest) against its hand-offs, over every burst size and repeat, each lock's path warmed by a discarded burst",
		"what a burst costs in all: the intercept (set-up, a JVM's first compile) is left out; and where a lock's wake-ups grow with the queue (a herd), the slope is their average over the sizes — the workload's report has each burst's own figure"},
	{"gap p50", "the median time from a holder's release call to the next holder's grant",
		"the acquire latency: a waiter's whole wait includes every holder before it"},
	{"lockbench CPU / waiter-s", "the CPU lockbench used per waiting client and second of waiting, while one client held the lock: what a waiter costs its own machine (inproc's row is the harness's own floor)",
		"the library's cost alone: the harness's own threads are in it, as inproc's row shows"},
	{"server CPU / waiter-s", "the servers' CPU above their rate at rest, per waiting client and second",
		"exact on a busy machine: a JVM's collector and compiler run when they will"},
	{"requests / waiter-s", "requests a waiting client sent per second: a watcher's pings, a poller's retries",
		"the server's messages: a watch's notifications come back unasked"},
	{"recovery p50", "the time from the fault (a holder crashed or paused) until the next client held the lock",
		"a bug when it is near the bound: that is the lease doing its job"},
	{"recovery / bound", "recovery over the lock's own bound (its TTL, session timeout or lease)",
		"comparable across locks whose bounds differ in kind"},
	{"lost updates", "increments of a guarded read-then-write counter that a later write overwrote, where the lock's users would write (fenced where the lock gives tokens)",
		"zero means safe only for this run's schedule of faults"},
	{"violations", "grants that overlapped another client's, or fencing tokens out of order",
		"every violation is a lost update: a fenced resource can refuse the stale write"},
}

// WriteMarkdown writes the bundle's table as the guide publishes it: the
// date, the machine's fingerprint and yardstick, how to reproduce it, the
// table with intervals, and what each column means and does not.
func WriteMarkdown(w io.Writer, dir string, b *suite.Bundle) error {
	ws := suite.ReadResults(dir, b)
	figs := suite.FiguresOf(ws)
	judgeFigures(ws, figs)
	cols := suite.Columns(b, figs)
	by := map[string]suite.Figure{}
	var rows []string
	for _, f := range figs {
		by[f.Impl+"\x00"+f.Key()] = f
		if !slices.Contains(rows, f.Impl) {
			rows = append(rows, f.Impl)
		}
	}
	slices.Sort(rows)
	fmt.Fprintf(w, "# The lockbench table: suite %s, %s tier\n\n", b.Suite, b.Tier)
	fmt.Fprintf(w, "Measured %s by lockbench %s (suite digest `%s`, part %s), %d locks.\n\n",
		b.Started.Format("2006-01-02"), b.Lockbench, b.Digest, b.Part, len(rows))
	if cur, err := suite.Load(b.Suite); err == nil && cur.Digest != b.Digest {
		fmt.Fprintf(w, "**This bundle was made by another definition of suite %s (digest `%s`) than this lockbench's (`%s`): its workloads differ, and so may its figures.**\n\n", b.Suite, b.Digest, cur.Digest)
	}
	fmt.Fprintf(w, "Reproduce it with one command: `lockbench suite --suite %s --tier %s` (this guide is written by `lockbench suite render BUNDLE --publish docs/results.md`, not by hand).\n\n", b.Suite, b.Tier)
	fmt.Fprintln(w, "## The machine")
	fmt.Fprintln(w)
	for _, l := range fingerprintLines(b.Machine) {
		fmt.Fprintf(w, "- %s\n", l)
	}
	if y := b.Yardstick; y != nil && y.Rate != nil {
		fmt.Fprintf(w, "- yardstick, %s: %s [%s, %s] over %d rounds between the workloads\n", y.What, num(y.Rate.Point), num(y.Rate.Low), num(y.Rate.High), len(y.Rate.Rounds))
	}
	fmt.Fprintln(w, "\nFigures from one machine: compare them with another machine's only with `lockbench suite compare`, which sets the two fingerprints and yardsticks side by side.")
	if !b.Ended.IsZero() {
		fmt.Fprintf(w, "The run took %s.\n", b.Ended.Sub(b.Started).Round(time.Second))
	}
	for _, wl := range b.Workloads {
		var mine []suite.Column
		for _, c := range cols {
			if c.Workload == wl.Name {
				mine = append(mine, c)
			}
		}
		fmt.Fprintf(w, "\n## %s\n\n%s\n\n`lockbench %s %s`\n\n", wl.Name, wl.Question, wl.Command, strings.Join(wl.Args, " "))
		if wl.Error != "" {
			fmt.Fprintf(w, "It failed: %s\n", wl.Error)
		}
		if len(mine) == 0 {
			continue
		}
		head := []string{"lock"}
		for _, c := range mine {
			h := c.Name
			if c.Clients > 0 {
				h += fmt.Sprintf(" (%d)", c.Clients)
			}
			head = append(head, h)
		}
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
		for _, r := range rows {
			cells := []string{r}
			any := false
			for _, c := range mine {
				f, ok := by[r+"\x00"+c.Key()]
				if !ok {
					cells = append(cells, "—")
					continue
				}
				any = true
				v := cellOf(f, "")
				s := v.Text
				if v.Interval != "" {
					s += " " + v.Interval
				}
				if v.Bad {
					s = "**" + s + "** ✗"
				}
				cells = append(cells, s)
			}
			if any {
				fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
			}
		}
	}
	fmt.Fprintln(w, "\n## What the columns mean, and what they do not")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "An interval in brackets is the figure's 95 % interval over the workload's rounds (each round on fresh connections, the rows interleaved); a figure without one was measured once. (n) is the number of clients.")
	fmt.Fprintln(w)
	for _, m := range meanings {
		fmt.Fprintf(w, "- **%s**: %s. Not: %s.\n", m.figure, m.means, m.not)
	}
	return nil
}
