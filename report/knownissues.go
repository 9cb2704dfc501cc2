package report

import (
	"fmt"
	"path"
	"strings"

	"github.com/lockbench/lockbench/result"
)

// KnownIssue is a failure users have filed against lock libraries, in
// public trackers, and the scenario of lockbench that measures it, with
// the command that reproduces it. The report lists the ones a run
// measured, each with this run's figure for every lock it ran on;
// docs/known-issues.md lists them all.
type KnownIssue struct {
	Title    string
	Scenario string
	// Question is what the reports ask, in a user's words.
	Question string
	Reports  []IssueReport
	Command  string
}

// IssueReport is one public report: a tracker's issue or pull request
// ("redisson/redisson#1353") and where to read it.
type IssueReport struct{ Name, URL string }

// KnownIssues are the failures lockbench measures that users have filed.
var KnownIssues = []KnownIssue{
	{
		Title: "A dead waiter stalls a fair queue", Scenario: "deadwait",
		Question: "If a process dies while queued for the lock, how long do the waiters behind it wait?",
		Reports: []IssueReport{
			gh("redisson/redisson", 1353), gh("redisson/redisson", 2099), gh("redisson/redisson", 3004),
			gh("redisson/redisson", 3730), gh("redisson/redisson", 6150),
		},
		Command: "lockbench run --scenario deadwait --impl redis,redsync,zk-pred,zk-lock,etcd,redis-fair,pg-advisory " +
			"--clients 3 --ttl 1s --zk-session-timeout 1s --fair-wait 500ms",
	},
	{
		Title: "Waiting is not free", Scenario: "wait",
		Question: "What does a client waiting for a held lock cost its own machine and the server, per second?",
		Reports:  []IssueReport{gh("redis/rueidis", 602), gh("go-redsync/redsync", 102)},
		Command:  "lockbench run --scenario wait --impl inproc,redis,redsync,rueidislock,zk-pred,etcd,nats-kv --clients 8,32 --duration 5s",
	},
	{
		Title: "A crashed holder blocks everyone until its TTL or session ends", Scenario: "crash",
		Question: "How long after a holder dies does the next waiter get the lock?",
		Command:  "lockbench run --scenario crash --clients 2 --ttl 2s --zk-session-timeout 2s",
	},
	{
		Title: "A paused holder writes after its lease is gone", Scenario: "pause",
		Question: "When a holder stalls past its lease (a GC, a stalled VM) and another takes the lock, does the stale write land, and does a fencing token stop it?",
		Reports: []IssueReport{
			{Name: "Kleppmann, \"How to do distributed locking\", 2016", URL: "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html"},
		},
		Command: "lockbench run --scenario pause --clients 2 --guard --ttl 2s --zk-session-timeout 2s",
	},
	{
		Title: "A server's clock jumps", Scenario: "clockjump",
		Question: "If one server's wall clock jumps forward past the lease, does a second client get the lock while the first still holds it?",
		Reports: []IssueReport{
			gh("redis/redis-doc", 2106),
			{Name: "Kleppmann, \"How to do distributed locking\", 2016", URL: "https://martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html"},
		},
		Command: "lockbench run --scenario clockjump --impl redis,redlock,zk-pred,etcd --clients 2 --ttl 2s --zk-session-timeout 2s --repeat 3",
	},
	{
		Title: "etcd's lock loses updates while its servers pause (Jepsen)", Scenario: "pauses",
		Question: "With the lock's servers stopped now and then, what share of the updates its holders made is lost, and does the lock's token save them?",
		Reports: []IssueReport{
			{Name: "Jepsen, etcd 3.4.3 (2020)", URL: "https://jepsen.io/analyses/etcd-3.4.3"}, gh("etcd-io/etcd", 11456),
		},
		Command: "bash scripts/jepsen-etcd (lockbench run --scenario pauses --impl etcd-lock,etcd --etcd-cluster 3 --clients 5 " +
			"--hold uniform:0s-2s --ttl 2s --freeze-for 5s --pause-every 10s --pauses-for 60s --repeat 3)",
	},
}

// gh is issue n of a GitHub repository, named as the trackers' users
// write it: "redisson#1353".
func gh(repo string, n int) IssueReport {
	return IssueReport{Name: fmt.Sprintf("%s#%d", path.Base(repo), n), URL: fmt.Sprintf("https://github.com/%s/issues/%d", repo, n)}
}

// issueFinding is one lock's figure for a known issue in this run.
type issueFinding struct{ Impl, Clients, Figure string }

// knownIssueView is a known issue a run measured, with its figures.
type knownIssueView struct {
	KnownIssue
	Findings []issueFinding
}

// knownIssuesOf lists the known issues cells measured, in KnownIssues'
// order, each with every cell of its scenario.
func knownIssuesOf(cells []Cell) []knownIssueView {
	var out []knownIssueView
	for _, k := range KnownIssues {
		v := knownIssueView{KnownIssue: k}
		for _, c := range cells {
			if c.Scenario != k.Scenario {
				continue
			}
			fig := issueFigure(c)
			if fig == "" {
				continue
			}
			v.Findings = append(v.Findings, issueFinding{Impl: c.Impl, Clients: fmt.Sprint(c.Clients), Figure: fig})
		}
		if len(v.Findings) > 0 {
			out = append(out, v)
		}
	}
	return out
}

// issueFigure is a cell's figure for the known issue its scenario
// measures: a fault's sentence, or what a waiter cost.
func issueFigure(c Cell) string {
	if w, ok := result.WaitCostOf(c); ok {
		return waitWords(w)
	}
	return FaultSentence(c)
}

// waitWords say what one waiting client cost per second of waiting.
func waitWords(w result.WaitCost) string {
	parts := []string{fmt.Sprintf("per waiter and second of waiting (%d waiters): lockbench's CPU %s", w.Waiters, result.Dur(w.LockbenchCPUUs))}
	if w.ServerCPUUs != nil {
		parts = append(parts, "the servers' CPU above rest "+result.Dur(*w.ServerCPUUs))
	}
	parts = append(parts, fmt.Sprintf("%.2f requests", w.Requests), fmt.Sprintf("%.2f notifications", w.Notifications))
	return strings.Join(parts, ", ")
}

// mdKnownIssues writes the known issues the run measured.
func mdKnownIssues(b *strings.Builder, cells []Cell, mark string) {
	ks := knownIssuesOf(cells)
	if len(ks) == 0 {
		return
	}
	b.WriteString("\n### " + mark + "Known issues, measured\n")
	for _, k := range ks {
		var reports []string
		for _, r := range k.Reports {
			reports = append(reports, fmt.Sprintf("[%s](%s)", mdEscape(r.Name), r.URL))
		}
		reported := ""
		if len(reports) > 0 {
			reported = "; reported in " + strings.Join(reports, ", ")
		}
		fmt.Fprintf(b, "\n**%s** (scenario %s%s). %s Reproduce: `%s`\n\n", mdEscape(k.Title), k.Scenario,
			reported, mdEscape(k.Question), k.Command)
		for _, f := range k.Findings {
			fmt.Fprintf(b, "- %s, %s clients: %s\n", mdEscape(f.Impl), f.Clients, mdEscape(f.Figure))
		}
	}
}
