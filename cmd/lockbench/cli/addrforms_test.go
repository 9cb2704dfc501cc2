package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/sandboxtest"
)

// addrForm is one way of naming a role's servers: a flag or its
// LOCKBENCH_… variable, holding host:port or a connection string.
type addrForm struct {
	name string
	addr func(hostport string) string
	// roles that take the form; the others refuse it, exit 2.
	roles []string
}

// Every address form the README and --help name, for every role, through
// the command as a user types it — a flag and its environment variable —
// against real servers: the ones a role takes measure a cell (exit 0, its
// acquisitions in summary.json, no password in any file or message), the
// others are refused with one line, exit 2. -v prints the matrix.
func TestAddressFormsThroughTheCommand(t *testing.T) {
	rows := map[string]string{"redis": "redis", "redlock": "redlock", "zk": "zk-pred", "etcd": "etcd-recipe",
		"postgres": "pg-advisory", "mysql": "mysql-getlock", "nats": "nats-kv", "kube": "k8s-lease",
		// A row that runs on the role with a setting, and the setting.
		"redis-cluster": "redis-pubsub --redis-topology cluster"}
	var needs []impl.Need
	for _, n := range impl.Roles() {
		if rows[n.Role] == "" {
			t.Fatalf("no row for role %s: add one", n.Role)
		}
		needs = append(needs, n)
		t.Setenv(impl.EnvName(n.Role), "") // only what a case sets
	}
	servers := sandboxtest.Start(t, needs...)
	all := []string{"redis", "redlock", "zk", "etcd", "postgres", "mysql", "nats", "kube", "redis-cluster"}
	forms := []addrForm{
		{"host:port", func(hp string) string { return hp }, all},
		// Trusted on loopback, the sandbox's PostgreSQL ignores the
		// password: it is here to be kept out of the results.
		{"postgres URL", func(hp string) string { return "postgres://postgres:s3cret@" + hp + "/postgres" }, []string{"postgres"}},
		{"postgres key=value", func(hp string) string {
			h, p, _ := strings.Cut(hp, ":")
			return fmt.Sprintf("host=%s port=%s user=postgres password=s3cret dbname=postgres sslmode=disable", h, p)
		}, []string{"postgres"}},
		{"mysql DSN", func(hp string) string { return "root@tcp(" + hp + ")/mysql" }, []string{"mysql"}},
	}
	for _, role := range all {
		for _, f := range forms {
			for _, via := range []string{"flag", "env"} {
				want := "refused"
				if slices.Contains(f.roles, role) {
					want = "accepted"
				}
				name := fmt.Sprintf("%s/%s/%s", role, f.name, via)
				t.Run(name, func(t *testing.T) {
					addrs := make([]string, len(servers[role]))
					for i, a := range servers[role] {
						addrs[i] = f.addr(a)
					}
					got := runAddrForm(t, rows[role], role, strings.Join(addrs, ","), via, want == "accepted")
					t.Logf("matrix: --%s %-19s via %-4s → %s", role, f.name, via, got)
					if got != want {
						t.Errorf("%s, want %s", got, want)
					}
				})
			}
		}
	}
}

// runAddrForm runs row with role's servers named as addrs, through the
// flag or the environment, and says whether the command accepted them.
func runAddrForm(t *testing.T, row, role, addrs, via string, expectOK bool) string {
	dir := t.TempDir()
	row, settings, _ := strings.Cut(row, " ")
	args := []string{"run", "--impl", row, "--clients", "2", "--acquires", "10", "--warmup", "0s", "-q", "--out", dir}
	args = append(args, strings.Fields(settings)...)
	if via == "flag" {
		args = append(args, "--"+role, addrs)
	} else {
		t.Setenv(impl.EnvName(role), addrs)
	}
	code, _, errOut := run(args...)
	if strings.Contains(errOut, "s3cret") {
		t.Errorf("stderr shows the password: %q", errOut)
	}
	switch code {
	case ExitOK:
		sum, err := result.ReadSummary(filepath.Join(dir, result.SummaryFile))
		if err != nil || len(sum.Cells) != 1 || sum.Cells[0].Acquires < 10 {
			t.Errorf("exit 0 but summary.json %v: %+v", err, sum)
		}
		for _, f := range []string{result.MetaFile, result.SummaryFile} {
			if b, _ := os.ReadFile(filepath.Join(dir, f)); strings.Contains(string(b), "s3cret") {
				t.Errorf("%s holds the password", f)
			}
		}
		return "accepted"
	case ExitUsage:
		if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "--"+role) {
			t.Errorf("refusal is not one line naming --%s: %q", role, errOut)
		}
		return "refused"
	default:
		if expectOK {
			t.Errorf("exit %d: %s", code, errOut)
		}
		return fmt.Sprintf("exit %d", code)
	}
}
