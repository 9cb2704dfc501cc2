// Package compose holds a Docker Compose setup for lockbench; its tests check
// that the compose file, the Dockerfile and the CLI agree, without Docker.
package compose

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/cmd/lockbench/cli"
	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	_ "github.com/lockbench/lockbench/impl/all"
	_ "github.com/lockbench/lockbench/scenarios" // the load scenarios
)

const (
	composePath = "docker-compose.yml"

	redisPort = "6379"
	zkPort    = "2181"
)

// The variables `lockbench run` reads; the CLI exports no names for them,
// so TestCLIReadsEnv checks its source instead.
const (
	envRedis   = "LOCKBENCH_REDIS"
	envRedlock = "LOCKBENCH_REDLOCK"
	envZK      = "LOCKBENCH_ZK"
	envEtcd    = "LOCKBENCH_ETCD"
	envPG      = "LOCKBENCH_POSTGRES"
	envMySQL   = "LOCKBENCH_MYSQL"
)

type composeFile struct {
	Services map[string]service `yaml:"services"`
}

type service struct {
	Image       string               `yaml:"image"`
	Build       *build               `yaml:"build"`
	Command     []string             `yaml:"command"`
	Environment map[string]string    `yaml:"environment"`
	DependsOn   map[string]dependsOn `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	Volumes []string `yaml:"volumes"`
	Ports   []string `yaml:"ports"`
}

type build struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

type dependsOn struct {
	Condition string `yaml:"condition"`
}

// project is the parsed compose file with its services sorted by role.
type project struct {
	services  map[string]service
	redis, zk []string // service names, sorted
	lockbench service
}

func loadProject(t *testing.T) project {
	t.Helper()
	b, err := os.ReadFile(composePath)
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", composePath, err)
	}
	p := project{services: f.Services}
	for name, s := range f.Services {
		switch {
		case strings.HasPrefix(s.Image, "redis:"):
			p.redis = append(p.redis, name)
		case strings.HasPrefix(s.Image, "zookeeper:"):
			p.zk = append(p.zk, name)
		}
	}
	slices.Sort(p.redis)
	slices.Sort(p.zk)
	var ok bool
	if p.lockbench, ok = f.Services["lockbench"]; !ok {
		t.Fatalf("%s: no lockbench service", composePath)
	}
	return p
}

func TestServers(t *testing.T) {
	p := loadProject(t)
	for _, tc := range []struct {
		name  string
		got   []string
		n     int
		image string
	}{
		{"redis", p.redis, 5, "redis:7.0"},
		{"zookeeper", p.zk, 3, "zookeeper:3.8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.got) != tc.n {
				t.Fatalf("%d %s services %v, want %d", len(tc.got), tc.name, tc.got, tc.n)
			}
			for _, name := range tc.got {
				s := p.services[name]
				if s.Image != tc.image {
					t.Errorf("%s: image %q, want %q", name, s.Image, tc.image)
				}
				if s.Healthcheck == nil || len(s.Healthcheck.Test) == 0 {
					t.Errorf("%s: no healthcheck", name)
				}
			}
		})
	}
	for _, name := range p.redis {
		cmd := strings.Join(quoteEmpty(p.services[name].Command), " ")
		for _, want := range []string{`--save ""`, "--appendonly no"} {
			if !strings.Contains(cmd, want) {
				t.Errorf("%s: command %q lacks %s", name, cmd, want)
			}
		}
	}
}

// quoteEmpty shows empty arguments as "" so that `--save ""` can be matched.
func quoteEmpty(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" {
			a = `""`
		}
		out[i] = a
	}
	return out
}

// TestNoPublicPorts keeps the servers off the host's network: a published
// port, if any, binds loopback only.
func TestNoPublicPorts(t *testing.T) {
	p := loadProject(t)
	for name, s := range p.services {
		for _, port := range s.Ports {
			if !strings.HasPrefix(port, "127.0.0.1:") {
				t.Errorf("%s publishes %q beyond 127.0.0.1", name, port)
			}
		}
	}
}

func TestZooKeeperEnsemble(t *testing.T) {
	p := loadProject(t)
	ids := map[string]string{} // ZOO_MY_ID → service
	for _, name := range p.zk {
		env := p.services[name].Environment
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct{ key, want string }{
				{"ZOO_MAX_CLIENT_CNXNS", "0"},
				{"ZOO_ADMINSERVER_ENABLED", "false"},
				{"ZOO_STANDALONE_ENABLED", "false"},
				{"ZOO_TICK_TIME", "500"},
			} {
				if got := env[tc.key]; got != tc.want {
					t.Errorf("%s = %q, want %q", tc.key, got, tc.want)
				}
			}
			wl := strings.Split(env["ZOO_4LW_COMMANDS_WHITELIST"], ",")
			for _, cmd := range []string{"mntr", "ruok", "srvr"} {
				if !slices.Contains(wl, cmd) {
					t.Errorf("ZOO_4LW_COMMANDS_WHITELIST %q lacks %s", env["ZOO_4LW_COMMANDS_WHITELIST"], cmd)
				}
			}
		})
		id := env["ZOO_MY_ID"]
		if prev, dup := ids[id]; dup {
			t.Errorf("ZOO_MY_ID %q on both %s and %s", id, prev, name)
		}
		ids[id] = name
	}
	if got := slices.Sorted(maps.Keys(ids)); !slices.Equal(got, []string{"1", "2", "3"}) {
		t.Errorf("ZOO_MY_ID values %v, want 1, 2, 3", got)
	}

	// server.N=host:2888:3888;2181, where host is the service whose ZOO_MY_ID is N.
	re := regexp.MustCompile(`^server\.(\d+)=([\w.-]+):(\d+):(\d+);(\d+)$`)
	for _, name := range p.zk {
		servers := strings.Fields(p.services[name].Environment["ZOO_SERVERS"])
		hosts := map[string]string{}
		for _, s := range servers {
			m := re.FindStringSubmatch(s)
			if m == nil {
				t.Errorf("%s: ZOO_SERVERS entry %q is not server.N=host:peer:election;%s", name, s, zkPort)
				continue
			}
			id, host, clientPort := m[1], m[2], m[5]
			if clientPort != zkPort {
				t.Errorf("%s: %q: client port %s, want %s", name, s, clientPort, zkPort)
			}
			if ids[id] != host {
				t.Errorf("%s: %q: server.%s is %s, but ZOO_MY_ID %s is on %q", name, s, id, host, id, ids[id])
			}
			hosts[host] = id
		}
		if got := slices.Sorted(maps.Keys(hosts)); !slices.Equal(got, p.zk) || len(servers) != len(p.zk) {
			t.Errorf("%s: ZOO_SERVERS names %v, want each of %v once", name, servers, p.zk)
		}
	}
}

func TestLockbenchEnv(t *testing.T) {
	p := loadProject(t)
	checkServerEnv(t, p, p.lockbench.Environment)
}

// checkServerEnv checks the LOCKBENCH_… variables of a service that runs
// lockbench against p's servers.
func checkServerEnv(t *testing.T, p project, env map[string]string) {
	t.Helper()
	for _, tc := range []struct {
		name  string
		hosts []string // every host the variable must name, once each
		port  string
		one   bool // a single address, any of hosts
	}{
		{envRedis, p.redis, redisPort, true},
		{envRedlock, p.redis, redisPort, false},
		{envZK, p.zk, zkPort, false},
		{envEtcd, []string{"etcd"}, "2379", false},
		{envPG, []string{"postgres"}, "5432", true},
		{envMySQL, []string{"mysql"}, "3306", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			val, ok := env[tc.name]
			if !ok {
				t.Fatalf("lockbench service does not set %s", tc.name)
			}
			var hosts []string
			for _, addr := range strings.Split(val, ",") {
				host, port, ok := strings.Cut(strings.TrimSpace(addr), ":")
				if !ok || port != tc.port {
					t.Errorf("%s: %q, want host:%s", tc.name, addr, tc.port)
				}
				if _, ok := p.services[host]; !ok {
					t.Errorf("%s: %q names no service in %s", tc.name, host, composePath)
				}
				hosts = append(hosts, host)
			}
			slices.Sort(hosts)
			switch {
			case tc.one && (len(hosts) != 1 || !slices.Contains(tc.hosts, hosts[0])):
				t.Errorf("%s = %q, want one of %v", tc.name, val, tc.hosts)
			case !tc.one && !slices.Equal(hosts, tc.hosts):
				t.Errorf("%s = %q, want exactly %v", tc.name, val, tc.hosts)
			}
		})
	}
}

// TestCLIReadsEnv fails if `lockbench run` stops reading a variable the
// compose file sets: each must become its flag's default.
func TestCLIReadsEnv(t *testing.T) {
	for flag, name := range map[string]string{"redis": envRedis, "redlock": envRedlock, "zk": envZK, "etcd": envEtcd, "postgres": envPG, "mysql": envMySQL} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, "from-env:1")
			f := cli.RunFlags().Lookup(flag)
			if f == nil || f.DefValue != "from-env:1" {
				t.Errorf("--%s does not default to $%s: %+v", flag, name, f)
			}
		})
	}
}

func TestDependsOnHealthyServers(t *testing.T) {
	p := loadProject(t)
	checkDependsOnServers(t, p, "lockbench", p.lockbench.DependsOn)
}

// checkDependsOnServers checks that service who waits for every one of
// p's servers to be healthy, and for nothing else.
func checkDependsOnServers(t *testing.T, p project, who string, deps map[string]dependsOn) {
	t.Helper()
	for _, name := range slices.Concat(p.redis, p.zk, []string{"etcd", "postgres", "mysql"}) {
		d, ok := deps[name]
		switch {
		case !ok:
			t.Errorf("%s does not depend on %s", who, name)
		case d.Condition != "service_healthy":
			t.Errorf("%s depends on %s with condition %q, want service_healthy", who, name, d.Condition)
		}
	}
	for name := range deps {
		if s, ok := p.services[name]; !ok || s.Healthcheck == nil {
			t.Errorf("%s depends on %s, which is not a service with a healthcheck", who, name)
		}
	}
}

func TestDockerfile(t *testing.T) {
	p := loadProject(t)
	b := p.lockbench.Build
	if b == nil || b.Context != ".." || b.Dockerfile == "" {
		t.Fatalf("lockbench build = %+v, want context .. (the repository root) and a dockerfile", b)
	}
	dockerfile := filepath.Join(b.Context, filepath.FromSlash(b.Dockerfile))
	lines := instructions(readFile(t, dockerfile))

	from := firstArgs(lines, "FROM")
	if len(from) == 0 || !strings.HasPrefix(from[0], "golang:1.26") {
		t.Errorf("%s: first stage FROM %v, want golang:1.26", dockerfile, from)
	}
	build := regexp.MustCompile(`\bCGO_ENABLED=0 go build\b.*\s\./cmd/lockbench$`)
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "RUN ") && build.MatchString(l) }) {
		t.Errorf("%s: no RUN … CGO_ENABLED=0 go build … ./cmd/lockbench", dockerfile)
	}

	var entry []string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "ENTRYPOINT "); ok {
			entry = nil
			if err := json.Unmarshal([]byte(rest), &entry); err != nil {
				t.Errorf("%s: ENTRYPOINT %s is not the exec form: %v", dockerfile, rest, err)
			}
		}
	}
	if len(entry) == 0 || path.Base(entry[0]) != "lockbench" {
		t.Fatalf("%s: ENTRYPOINT %q does not run lockbench", dockerfile, entry)
	}
	copied := false
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 4 && f[0] == "COPY" && strings.HasPrefix(f[1], "--from=") && f[len(f)-1] == entry[0] {
			copied = true
		}
	}
	if !copied {
		t.Errorf("%s: no COPY --from=… puts the binary at %s", dockerfile, entry[0])
	}

	// The results volume must stay out of the build context.
	ignore := readFile(t, dockerfile+".dockerignore")
	for _, v := range p.lockbench.Volumes {
		host, _, _ := strings.Cut(v, ":")
		rel := path.Join(path.Dir(b.Dockerfile), host) // relative to the context
		if !slices.Contains(strings.Fields(ignore), rel) {
			t.Errorf("%s.dockerignore does not exclude %s (volume %s)", dockerfile, rel, v)
		}
	}
}

// instructions returns the Dockerfile's instructions, one per line, with
// continuation lines joined and comments dropped.
func instructions(src string) []string {
	var out []string
	var cur strings.Builder
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if s, ok := strings.CutSuffix(l, `\`); ok {
			cur.WriteString(strings.TrimSpace(s) + " ")
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
	}
	return out
}

func firstArgs(lines []string, instr string) []string {
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && strings.EqualFold(f[0], instr) {
			return f[1:]
		}
	}
	return nil
}

// parseRunArgs parses args with `lockbench run`'s own flags and returns
// each flag set to its value.
func parseRunArgs(args []string) (map[string]string, error) {
	fs := cli.RunFlags()
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	out := map[string]string{}
	fs.Visit(func(f *pflag.Flag) { out[f.Name] = f.Value.String() })
	return out, nil
}

func TestDefaultCommand(t *testing.T) {
	p := loadProject(t)
	cmd := p.lockbench.Command
	if len(cmd) == 0 || cmd[0] != "run" {
		t.Fatalf("lockbench command %q, want run …", cmd)
	}
	args, err := parseRunArgs(cmd[1:])
	if err != nil {
		t.Fatalf("lockbench command %q: %v", cmd, err)
	}

	for _, tc := range []struct {
		flag  string
		known func(string) bool
	}{
		{"impl", func(n string) bool { _, ok := impl.Lookup(n); return ok }},
		{"scenario", func(n string) bool { _, ok := engine.LookupScenario(n); return ok }},
		{"clients", func(n string) bool { c, err := strconv.Atoi(n); return err == nil && c > 0 }},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			val, ok := args[tc.flag]
			if !ok {
				t.Fatalf("command sets no --%s", tc.flag)
			}
			for _, v := range strings.Split(val, ",") {
				if !tc.known(v) {
					t.Errorf("--%s %s: %q is not valid", tc.flag, val, v)
				}
			}
		})
	}

	// Results must land in the mounted volume, or they vanish with the container.
	out := args["out"]
	if !inVolume(out, p.lockbench.Volumes) {
		t.Errorf("--out %q is not inside a volume of %v", out, p.lockbench.Volumes)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDatabases: PostgreSQL and MariaDB run as the sandbox runs them —
// nothing fsynced, room for the clients, MariaDB's held locks listable —
// and report healthy only when they take queries.
func TestDatabases(t *testing.T) {
	p := loadProject(t)
	for _, tc := range []struct {
		name, image string
		args        []string
	}{
		{"postgres", "postgres:15", []string{"fsync=off", "max_connections=2000"}},
		{"mysql", "mariadb:10.11", []string{"--innodb-flush-log-at-trx-commit=0", "--max-connections=2000", "--plugin-load-add=metadata_lock_info"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := p.services[tc.name]
			if !ok {
				t.Fatalf("no %s service", tc.name)
			}
			if s.Image != tc.image {
				t.Errorf("image %q, want %q", s.Image, tc.image)
			}
			for _, a := range tc.args {
				if !slices.Contains(s.Command, a) {
					t.Errorf("command %q lacks %s", s.Command, a)
				}
			}
			if s.Healthcheck == nil || len(s.Healthcheck.Test) == 0 {
				t.Errorf("no healthcheck")
			}
		})
	}
}
