package redis_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/sandboxtest"
)

// cpuTime is the user and system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCycle is the client path alone: uncontended Acquire + Release on
// a real server, each client on its own connection and its own lock, b.N
// cycles shared between them. -benchmem gives allocations per cycle (the
// server allocates nothing in this process, so they are all the client's);
// cpu-us/op is this process's CPU time per cycle, the kernel's share of
// the loopback round trips included; scripts/redis-baseline compares whole
// cells with redis-benchmark.
func BenchmarkCycle(b *testing.B) {
	addr := sandboxtest.Start(b, redis.Need)[redis.Need.Role][0]
	for _, n := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			ctx := context.Background()
			lockers := make([]impl.Locker, n)
			for i := range lockers {
				l, err := redis.New(ctx, impl.Config{Servers: impl.Servers{redis.Need.Role: {addr}},
					Namespace: fmt.Sprintf("bench-%d-%d", n, b.N), Client: i, TTL: 30 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				lockers[i] = l
			}
			ctx, cancel := context.WithTimeout(ctx, time.Minute) // a cell's ctx has a deadline too
			defer cancel()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			var wg sync.WaitGroup
			for i, l := range lockers {
				cycles := b.N / n
				if i < b.N%n {
					cycles++
				}
				name := fmt.Sprint("lock-", i)
				wg.Go(func() {
					for range cycles {
						lease, err := l.Acquire(ctx, name)
						if err != nil {
							b.Error(err)
							return
						}
						if err := lease.Release(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e3, "cpu-us/op")
		})
	}
}
