package zookeeper

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/sandbox"
)

// zkMode asks a ZooKeeper server for its part with the srvr four-letter
// word: "leader", "follower" or "standalone".
func zkMode(ctx context.Context, addr string) (string, error) {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("sandbox: zookeeper %s: %w", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "srvr"); err != nil {
		return "", fmt.Errorf("sandbox: zookeeper %s: %w", addr, err)
	}
	b, err := io.ReadAll(c) // the server closes after answering
	if err != nil {
		return "", fmt.Errorf("sandbox: zookeeper %s: %w", addr, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	return "", fmt.Errorf("sandbox: zookeeper %s: no mode in %q", addr, strings.TrimSpace(string(b)))
}

// zkVersion asks a ZooKeeper server for its version through srvr.
func zkVersion(ctx context.Context, addr string) string {
	return sandbox.Ask(ctx, addr, "srvr", func(line string) (string, bool) {
		v, ok := strings.CutPrefix(line, "Zookeeper version: ")
		v, _, _ = strings.Cut(v, ",")
		return "zookeeper " + strings.TrimSpace(v), ok
	})
}
