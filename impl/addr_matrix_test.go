package impl_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
)

// Every address form the README and --help name, judged for every role:
// host:port everywhere, PostgreSQL's URL and key=value forms for
// --postgres only, go-sql-driver's DSN for --mysql only. A refusal names
// the address without its password.
func TestAddressFormsPerRole(t *testing.T) {
	t.Parallel()
	forms := []struct{ name, addr string }{
		{"host:port", "127.0.0.1:5432"},
		{"postgres URL", "postgres://u:s3cret@127.0.0.1:5432/db"},
		{"postgres key=value", "host=127.0.0.1 port=5432 user=u password=s3cret dbname=db"},
		{"mysql DSN", "u:s3cret@tcp(127.0.0.1:3306)/db"},
		{"no port", "127.0.0.1"},
		{"port not a number", "127.0.0.1:x"},
	}
	accepts := map[string][]string{
		"postgres": {"host:port", "postgres URL", "postgres key=value"},
		"mysql":    {"host:port", "mysql DSN"},
	}
	roles := map[string]bool{}
	for _, n := range impl.Roles() {
		roles[n.Role] = true
		want := accepts[n.Role]
		if want == nil {
			want = []string{"host:port"}
		}
		for _, f := range forms {
			err := n.CheckAddr(f.addr)
			ok := slices.Contains(want, f.name)
			if ok != (err == nil) {
				t.Errorf("--%s %s (%q): error %v, want accepted %v", n.Role, f.name, f.addr, err, ok)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("--%s %s: the refusal shows the password: %v", n.Role, f.name, err)
			}
		}
	}
	for _, r := range []string{"redis", "redlock", "zk", "etcd", "postgres", "mysql"} {
		if !roles[r] {
			t.Errorf("no role %s registered", r)
		}
	}
}
