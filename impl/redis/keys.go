package redis

import (
	"context"
	"fmt"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
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

// Residue counts the keys a cell left under its namespace on the server
// of Need's role.
func Residue(ctx context.Context, s impl.Servers, namespace string) (int, error) {
	addrs := s[Need.Role]
	if len(addrs) == 0 {
		return 0, nil
	}
	var c impl.Counters
	cl := NewClient(addrs[0], impl.Config{}.WithDefaults(), &c)
	defer cl.Close()
	return CountMatching(ctx, cl, Key(GlobEscape(namespace), "*"))
}

// CountMatching counts the keys matching pattern.
func CountMatching(ctx context.Context, cl *goredis.Client, pattern string) (int, error) {
	n := 0
	it := cl.Scan(ctx, 0, pattern, 1000).Iterator()
	for it.Next(ctx) {
		n++
	}
	if err := it.Err(); err != nil {
		return 0, fmt.Errorf("redis: SCAN MATCH %s: %w", pattern, err)
	}
	return n, nil
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
