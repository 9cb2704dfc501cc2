package site

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/lockbench/lockbench/judge"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/suite"
)

// WriteComparison prints two bundles' comparison: the suites and the
// machines side by side, the yardstick, then a line per figure with its
// ratio and call ("~" where no difference is shown).
func WriteComparison(w io.Writer, old, new *suite.Bundle, c judge.BundleComparison) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\told\tnew\n")
	fmt.Fprintf(tw, "suite\t%s %s (%s)\t%s %s (%s)\n", old.Suite, old.Tier, old.Digest, new.Suite, new.Tier, new.Digest)
	fmt.Fprintf(tw, "started\t%s\t%s\n", old.Started.Format("2006-01-02 15:04"), new.Started.Format("2006-01-02 15:04"))
	fmt.Fprintf(tw, "machine\t%s\t%s\n", machine(old.Machine), machine(new.Machine))
	fmt.Fprintf(tw, "yardstick\t%s\t%s\n", yard(old.Yardstick), yard(new.Yardstick))
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.Suite {
		fmt.Fprintln(w, "note: the bundles ran different suite versions or tiers: a workload of one name may not mean the same")
	}
	for _, d := range c.Machine {
		fmt.Fprintf(w, "differs: %s\n", d)
	}
	switch {
	case c.Yardstick == nil:
		fmt.Fprintln(w, "yardstick: not in both bundles; a machine that drifted between them cannot be told from a lock that did")
	case c.MachineMoved:
		fmt.Fprintf(w, "yardstick: new/old %s (p=%.3g): the machine itself moved; every timed figure below is judged after scaling by it\n", ratio(*c.Yardstick), c.YardstickP)
	default:
		fmt.Fprintf(w, "yardstick: new/old %s (p=%.3g): no difference shown in the machine's speed\n", ratio(*c.Yardstick), c.YardstickP)
	}
	if c.Band[1] > 0 {
		fmt.Fprintf(w, "a timed figure is called different only beyond the machine's drift: a rate outside %.2f-%.2f× or a time outside %.2f-%.2f×\n",
			c.Band[0], c.Band[1], 1/c.Band[1], 1/c.Band[0])
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tfigure\tclients\tlock\told\tnew\tnew/old\t")
	for _, d := range c.Figures {
		f := d.New
		if f == nil {
			f = d.Old
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", f.Workload, f.Name, f.Clients, f.Impl,
			point(d.Old), point(d.New), ratioOf(d), callWord(d))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d figures: %d worse, %d better, %d ~ (no difference shown), %d ~ within the machine's drift, %d untested (too few rounds), %d only in old, %d only in new\n",
		len(c.Figures), c.Count(judge.Worse), c.Count(judge.Better), c.Count(judge.Same), c.Count(judge.Drift), c.Count(judge.Untested), c.Count(judge.OnlyOld), c.Count(judge.OnlyNew))
	return nil
}

func machine(f suite.Fingerprint) string {
	s := fmt.Sprintf("%s, %d cores, %s", f.CPUModel, f.Cores, f.Profile)
	if f.Disk != nil {
		s += fmt.Sprintf(", fdatasync p50 %.2f ms", f.Disk.P50Ms)
	}
	return s
}

func yard(y *suite.Yardstick) string {
	switch {
	case y == nil:
		return "none"
	case y.Rate == nil:
		return "none: " + y.Note
	}
	return fmt.Sprintf("%s/s [%s, %s] (%d rounds)", num(y.Rate.Point), num(y.Rate.Low), num(y.Rate.High), len(y.Rate.Rounds))
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

func point(f *suite.Figure) string {
	if f == nil {
		return "—"
	}
	return format(f.Point, f.Unit)
}

func ratio(e result.Estimate) string {
	if !e.HasInterval() {
		return strconv.FormatFloat(e.Point, 'f', 2, 64)
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f]", e.Point, e.Low, e.High)
}

func ratioOf(d judge.FigureDelta) string {
	if d.Old == nil || d.New == nil || d.Ratio.Point == 0 {
		return "—"
	}
	s := ratio(d.Ratio)
	if d.Adjusted {
		s += " scaled"
	}
	return s
}

func callWord(d judge.FigureDelta) string {
	switch d.Call {
	case judge.Better:
		return fmt.Sprintf("better (p=%.2g)", d.Test.P)
	case judge.Worse:
		return fmt.Sprintf("worse (p=%.2g)", d.Test.P)
	case judge.Drift:
		return fmt.Sprintf("~ drift (p=%.2g)", d.Test.P)
	case judge.Untested:
		return "? one draw"
	case judge.OnlyOld:
		return "only in old"
	case judge.OnlyNew:
		return "only in new"
	}
	return "~"
}
