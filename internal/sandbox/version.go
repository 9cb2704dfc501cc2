package sandbox

import (
	"bufio"
	"context"
	"net"
	"strings"
	"time"
)

// redisVersion asks a Redis server for its version through INFO server.
func redisVersion(ctx context.Context, addr string) string {
	return ask(ctx, addr, "INFO server\r\n", func(line string) (string, bool) {
		v, ok := strings.CutPrefix(line, "redis_version:")
		return "redis " + strings.TrimSpace(v), ok
	})
}

// zkVersion asks a ZooKeeper server for its version through srvr.
func zkVersion(ctx context.Context, addr string) string {
	return ask(ctx, addr, "srvr", func(line string) (string, bool) {
		v, ok := strings.CutPrefix(line, "Zookeeper version: ")
		v, _, _ = strings.Cut(v, ",")
		return "zookeeper " + strings.TrimSpace(v), ok
	})
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
