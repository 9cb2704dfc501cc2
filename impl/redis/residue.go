package redis

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/impl"
)

// CountKeys counts, summed over the servers at addrs, the keys that match
// any of patterns: a driver's Residue for the keys its layout gives.
func CountKeys(ctx context.Context, addrs []string, patterns ...string) (int, error) {
	total := 0
	for _, addr := range addrs {
		var c impl.Counters
		cl := NewClient(addr, impl.Config{}.WithDefaults(), &c)
		for _, p := range patterns {
			n, err := CountMatching(ctx, cl, p)
			if err != nil {
				cl.Close()
				return 0, fmt.Errorf("redis %s: SCAN MATCH %s: %w", addr, p, err)
			}
			total += n
		}
		cl.Close()
	}
	return total, nil
}
