package lockbench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/lockbench/lockbench/impl"
)

// serverVersions asks every server what it is: Redis through INFO server,
// ZooKeeper through srvr. A server that does not answer is noted as such.
func serverVersions(ctx context.Context, s impl.Servers) map[string]string {
	out := map[string]string{}
	seen := map[string]bool{}
	for _, a := range append([]string{s.Redis}, s.Redlock...) {
		if a == "" || seen[a] {
			continue
		}
		seen[a] = true
		out["redis "+a] = ask(ctx, a, "INFO server\r\n", func(line string) (string, bool) {
			v, ok := strings.CutPrefix(line, "redis_version:")
			return "redis " + strings.TrimSpace(v), ok
		})
	}
	for _, a := range s.ZK {
		out["zookeeper "+a] = ask(ctx, a, "srvr", func(line string) (string, bool) {
			v, ok := strings.CutPrefix(line, "Zookeeper version: ")
			v, _, _ = strings.Cut(v, ",")
			return "zookeeper " + strings.TrimSpace(v), ok
		})
	}
	return out
}

// ask sends cmd and returns the first line pick accepts.
func ask(ctx context.Context, addr, cmd string, pick func(string) (string, bool)) string {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "unreachable: " + err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "no answer: " + err.Error()
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if v, ok := pick(strings.TrimSpace(sc.Text())); ok {
			return v
		}
	}
	return "unknown"
}

// hostFacts describes the machine lockbench ran on.
func hostFacts() map[string]string {
	host, _ := os.Hostname()
	f := map[string]string{
		"hostname": host, "os": runtime.GOOS, "arch": runtime.GOARCH,
		"cpus": fmt.Sprint(runtime.NumCPU()), "gomaxprocs": fmt.Sprint(runtime.GOMAXPROCS(0)),
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		f["kernel"] = strings.TrimSpace(string(b))
	}
	grep := func(path, key string) string {
		fh, err := os.Open(path)
		if err != nil {
			return ""
		}
		defer fh.Close()
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == key {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	if v := grep("/proc/cpuinfo", "model name"); v != "" {
		f["cpu_model"] = v
	}
	if v := grep("/proc/meminfo", "MemTotal"); v != "" {
		f["memory"] = v
	}
	return f
}
