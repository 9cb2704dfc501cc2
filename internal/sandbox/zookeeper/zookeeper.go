// Package zookeeper is the sandbox's ZooKeeper kind: a standalone server
// or an ensemble on the JVM, its sync settings per profile, its version and
// mode (srvr), its mntr counters and what they mean (packets, watches).
package zookeeper

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

func init() {
	sandbox.RegisterKind(sandbox.Kind{
		Name: serverkind.ZooKeeper, Flag: "zk", Ensemble: true,
		SizeFlag: "zk-ensemble", SizeUsage: "size of the sandboxed ZooKeeper: 1 standalone or 3 (quorum writes)",
		Start:   startZK,
		Find:    findZK,
		Stats:   zkStats,
		Counts:  zkCounts,
		Version: zkVersion,
		Mode:    zkMode,
		Settings: func(p sandbox.Profile) string {
			if p == sandbox.ProfileFast {
				return "java " + strings.Join(zkJVM(p), " ") + "; forceSync=no"
			}
			return "java " + strings.Join(zkJVM(p), " ") + " (the JVM's own compiler and collector: C2, G1 here); forceSync=yes"
		},
	})
}

// zkJVM is the server's JVM flags. Production: the heap upstream's
// zkEnv.sh gives (ZK_SERVER_HEAP=1000 MB; Debian's scripts set none, and
// the JVM would take a quarter of the machine's memory), and the JVM's
// defaults otherwise — its tiered compiler up to C2, and the collector it
// picks (G1 on a 2-core, 24 GiB machine). Fast: the quick compiler alone
// and the serial collector, which start and settle sooner.
func zkJVM(p sandbox.Profile) []string {
	if p == sandbox.ProfileFast {
		return []string{"-Xms64m", "-Xmx1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}
	}
	return []string{"-Xmx1000m"}
}

// findZK finds what startZK needs: the jars and a Java runtime.
func findZK() error {
	if _, err := zkClasspath(); err != nil {
		return err
	}
	_, err := findJava()
	return err
}

// zkClasspath finds ZooKeeper's jars: $ZOOKEEPER_HOME, Debian's
// /usr/share/java, or the lib folder beside zkServer.sh on PATH.
func zkClasspath() (string, error) {
	missing := &sandbox.MissingError{What: "ZooKeeper (zookeeper.jar)", Install: "apt-get install -y zookeeper"}
	var dirs []string
	if h := os.Getenv("ZOOKEEPER_HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, "lib"), h)
	}
	if p, err := exec.LookPath("zkServer.sh"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		dirs = append(dirs, filepath.Join(filepath.Dir(p), "..", "lib"), filepath.Join(filepath.Dir(p), ".."))
	}
	for _, d := range dirs {
		jars, _ := filepath.Glob(filepath.Join(d, "*.jar"))
		for _, j := range jars {
			if strings.HasPrefix(filepath.Base(j), "zookeeper-3") || filepath.Base(j) == "zookeeper.jar" {
				return strings.Join(jars, string(os.PathListSeparator)), nil
			}
		}
	}
	const deb = "/usr/share/java"
	if _, err := os.Stat(filepath.Join(deb, "zookeeper.jar")); err == nil {
		cp := []string{filepath.Join(deb, "zookeeper.jar"), filepath.Join(deb, "slf4j-api.jar")}
		if _, err := os.Stat(filepath.Join(deb, "slf4j-nop.jar")); err == nil {
			cp = append(cp, filepath.Join(deb, "slf4j-nop.jar"))
		}
		return strings.Join(cp, string(os.PathListSeparator)), nil
	}
	return "", missing
}

func findJava() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		if _, err := os.Stat(filepath.Join(h, "bin", "java")); err == nil {
			return filepath.Join(h, "bin", "java"), nil
		}
	}
	if p, err := exec.LookPath("java"); err == nil {
		return p, nil
	}
	return "", &sandbox.MissingError{What: "java", Install: "apt-get install -y default-jre-headless"}
}

// startZK starts a standalone server (n == 1) or an ensemble of n members.
// tickTime=500 lets session timeouts go down to 1 s for fault scenarios.
// In the production profile each write is synced to the transaction log
// before it is acknowledged (forceSync=yes, ZooKeeper's default); in the
// fast one it is not.
func startZK(ctx context.Context, dir string, n int) ([]*sandbox.Server, error) {
	cp, err := zkClasspath()
	if err != nil {
		return nil, err
	}
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	ports, err := sandbox.FreePorts(3 * n)
	if err != nil {
		return nil, err
	}
	var peers strings.Builder
	if n > 1 {
		for i := range n {
			fmt.Fprintf(&peers, "server.%d=127.0.0.1:%d:%d\n", i+1, ports[3*i+1], ports[3*i+2])
		}
	}
	main := "org.apache.zookeeper.server.ZooKeeperServerMain"
	if n > 1 {
		main = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	}
	forceSync, jvm := "yes", zkJVM(sandbox.ProfileOf(ctx))
	if sandbox.Fast(ctx) {
		forceSync = "no"
	}
	servers := make([]*sandbox.Server, n)
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("zk-%d", i))
		if err := os.MkdirAll(filepath.Join(d, "data"), 0o755); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		cfg := fmt.Sprintf(`tickTime=500
initLimit=20
syncLimit=10
minSessionTimeout=1000
maxSessionTimeout=120000
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,mntr,srvr,stat,conf
forceSync=%s
%s`, filepath.Join(d, "data"), ports[3*i], forceSync, peers.String())
		cfgPath := filepath.Join(d, "zoo.cfg")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		if n > 1 {
			if err := os.WriteFile(filepath.Join(d, "data", "myid"), []byte(strconv.Itoa(i+1)), 0o644); err != nil {
				return nil, fmt.Errorf("sandbox: %w", err)
			}
		}
		servers[i] = sandbox.NewServer(sandbox.Process{
			Kind: serverkind.ZooKeeper, Addr: "127.0.0.1:" + strconv.Itoa(ports[3*i]), Dir: d, Bin: java,
			Log:   filepath.Join(d, "zookeeper.log"),
			Args:  append(slices.Clone(jvm), "-Dzookeeper.admin.enableServer=false", "-cp", cp, main, cfgPath),
			Ready: zkReady(n > 1),
		})
	}
	// Ensemble members wait for each other, so launch all before waiting.
	started := make([]*sandbox.Server, 0, n)
	errc := make(chan error, n)
	for _, s := range servers {
		started = append(started, s)
		go func(s *sandbox.Server) { errc <- s.Launch(ctx) }(s)
	}
	var firstErr error
	for range servers {
		if err := <-errc; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return started, firstErr
}

func zkReady(ensemble bool) func(ctx context.Context, addr string) error {
	return func(ctx context.Context, addr string) error {
		r, err := sandbox.Probe(ctx, addr, "srvr")
		if err != nil {
			return err
		}
		if !strings.Contains(r, "Mode:") {
			return fmt.Errorf("srvr answered %q", strings.TrimSpace(r))
		}
		if ensemble && !(strings.Contains(r, "Mode: leader") || strings.Contains(r, "Mode: follower")) {
			return fmt.Errorf("not in quorum yet: %q", strings.TrimSpace(r))
		}
		return nil
	}
}
