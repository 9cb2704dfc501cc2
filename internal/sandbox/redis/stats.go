package redis

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// Stats reads INFO commandstats from every server in addrs and sums
// each command's calls, as "cmdstat_<command>_calls" (cmdstat_publish_calls
// counts PUBLISH run inside scripts too): the server's own count of what
// the clients sent, beside their round trips.
func Stats(ctx context.Context, addrs []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, addr := range addrs {
		info, err := Info(ctx, addr, "commandstats")
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(info, "\r\n") {
			name, fields, ok := strings.Cut(line, ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			for _, f := range strings.Split(fields, ",") {
				if k, v, ok := strings.Cut(f, "="); ok && k == "calls" {
					if n, err := strconv.ParseInt(v, 10, 64); err == nil {
						out[name+"_calls"] += n
					}
				}
			}
		}
		// A snapshot (the save rules of the production profile) forks
		// the server: a fork inside a cell is a pause its clients felt.
		stats, err := Info(ctx, addr, "stats")
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(stats, "\r\n") {
			if v, ok := strings.CutPrefix(line, "total_forks:"); ok {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					out[Forks] += n
				}
			}
		}
	}
	return out, nil
}

// RedisForks is the Stats key of the forks a Redis server made: one per
// snapshot (BGSAVE) or log rewrite.
const Forks = "total_forks"

// redisCounts: a Redis's messages are the commands it ran (INFO itself
// aside) and the messages it pushed to subscribers, which it does not
// count: the clients' notifications stand for them.
func redisCounts(d map[string]int64) serverkind.Counts {
	c := serverkind.Counts{Unit: "commands + pushes", Pushes: true, Forks: d[Forks]}
	for k, v := range d {
		if strings.HasPrefix(k, "cmdstat_") && strings.HasSuffix(k, "_calls") && k != "cmdstat_info_calls" {
			c.Messages += v
		}
	}
	return c
}

// Info sends INFO section and reads the one bulk reply, by its length,
// on a connection of its own.
func Info(ctx context.Context, addr, section string) (string, error) {
	return Bulk(ctx, addr, "INFO "+section)
}

// Bulk sends an inline command whose reply is one bulk string (INFO,
// CLUSTER INFO) and reads it, by its length, on a connection of its own.
func Bulk(ctx context.Context, addr, cmd string) (string, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("redis %s %s: unreachable: %w", cmd, addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\r\n", cmd); err != nil {
		return "", fmt.Errorf("redis %s %s: %w", cmd, addr, err)
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("redis %s %s: %w", cmd, addr, err)
	}
	head = strings.TrimSpace(head)
	if !strings.HasPrefix(head, "$") {
		return "", fmt.Errorf("redis %s %s: %w: %q", cmd, addr, sandbox.ErrStatsRefused, head)
	}
	n, err := strconv.Atoi(head[1:])
	if err != nil || n < 0 {
		return "", fmt.Errorf("redis %s %s: bad reply %q", cmd, addr, head)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return "", fmt.Errorf("redis %s %s: %w", cmd, addr, err)
	}
	return string(buf), nil
}
