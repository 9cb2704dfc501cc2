package impl

import (
	"context"
	"sync"
)

// MemoryRegister returns a GuardFunc whose register lives in this
// process's memory, shared by every client that opens it, with the Redis
// scripts' rules under one mutex instead of one script step. Jepsen's
// lock-set workload keeps its set in the test's own memory, so that only
// the lock, not the register's store, is subject to the faults; the
// pauses scenario does the same, and the harness's tests use it for
// locks that have no servers.
func MemoryRegister() GuardFunc {
	m := &memRegister{locks: map[string]*memCounters{}}
	return func(context.Context, Config, []string) (Guard, error) { return memClient{m}, nil }
}

type memRegister struct {
	mu    sync.Mutex
	locks map[string]*memCounters
}

type memCounters struct {
	fenced, unfenced int64
	highest          uint64
}

type memClient struct{ m *memRegister }

func (c memClient) of(lock string) *memCounters {
	k := c.m.locks[lock]
	if k == nil {
		k = &memCounters{}
		c.m.locks[lock] = k
	}
	return k
}

func (c memClient) Read(_ context.Context, lock string, token uint64) (Reading, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	k := c.of(lock)
	r := Reading{Fenced: k.fenced, Unfenced: k.unfenced, Refused: token < k.highest}
	k.highest = max(k.highest, token)
	return r, nil
}

func (c memClient) Write(_ context.Context, lock string, token uint64, r Reading) (Written, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	k := c.of(lock)
	w := Written{UnfencedMoved: k.unfenced - r.Unfenced}
	k.unfenced = r.Unfenced + 1
	if !r.Refused && token >= k.highest {
		w.FencedAccepted, w.FencedMoved = true, k.fenced-r.Fenced
		k.fenced, k.highest = r.Fenced+1, token
	}
	return w, nil
}

func (c memClient) Values(_ context.Context, lock string) (int64, int64, error) {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	k := c.of(lock)
	return k.fenced, k.unfenced, nil
}

func (memClient) Close() error { return nil }
