package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// promote turns a Redis replica into a master, as Sentinel would.
func promote(ctx context.Context, addr string) error {
	if _, err := command(ctx, addr, "REPLICAOF", "NO", "ONE"); err != nil {
		return fmt.Errorf("sandbox: promote %s: %w", addr, err)
	}
	return nil
}

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
