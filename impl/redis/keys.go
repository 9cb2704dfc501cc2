package redis

import (
	"context"
	"fmt"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// GlobEscape quotes the characters Redis's glob patterns (SCAN MATCH,
// KEYS) read as syntax, so a namespace matches only itself.
func GlobEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DeleteMatching deletes every key matching each pattern, as a driver's
// Cleanup does with what a cell left under its namespace.
func DeleteMatching(ctx context.Context, cl *goredis.Client, patterns ...string) error {
	for _, pattern := range patterns {
		var keys []string
		it := cl.Scan(ctx, 0, pattern, 1000).Iterator()
		for it.Next(ctx) {
			keys = append(keys, it.Val())
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("redis: SCAN MATCH %s: %w", pattern, err)
		}
		for len(keys) > 0 {
			n := min(len(keys), 1000)
			if err := cl.Del(ctx, keys[:n]...).Err(); err != nil {
				return fmt.Errorf("redis: cleanup %s: %w", pattern, err)
			}
			keys = keys[n:]
		}
	}
	return nil
}
