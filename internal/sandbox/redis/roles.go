package redis

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/internal/sandbox"
)

// promote turns a Redis replica into a master, as Sentinel would.
func promote(ctx context.Context, addr string) error {
	if _, err := command(ctx, addr, "REPLICAOF", "NO", "ONE"); err != nil {
		return fmt.Errorf("sandbox: promote %s: %w", addr, err)
	}
	return nil
}

// Version asks a Redis server for its version through INFO server.
func Version(ctx context.Context, addr string) string {
	return sandbox.Ask(ctx, addr, "INFO server\r\n", func(line string) (string, bool) {
		v, ok := strings.CutPrefix(line, "redis_version:")
		return "redis " + strings.TrimSpace(v), ok
	})
}
