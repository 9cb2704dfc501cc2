package plan

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// hostFacts describes the machine lockbench ran on, and how lockbench
// chooses its GOMAXPROCS when it does (procsWhy).
func hostFacts(procsWhy string) map[string]string {
	host, _ := os.Hostname()
	f := map[string]string{
		"hostname": host, "os": runtime.GOOS, "arch": runtime.GOARCH,
		"cpus": fmt.Sprint(runtime.NumCPU()), "gomaxprocs": fmt.Sprint(runtime.GOMAXPROCS(0)),
	}
	if procsWhy != "" {
		f["gomaxprocs_why"] = procsWhy
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
