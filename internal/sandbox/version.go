package sandbox

import (
	"bufio"
	"context"
	"net"
	"strings"
	"time"
)

// Ask sends cmd over a fresh connection and returns the first line of the
// reply pick accepts: a kind's Version, say.
func Ask(ctx context.Context, addr, cmd string, pick func(string) (string, bool)) string {
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
