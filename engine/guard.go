package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// guardTimeout bounds one access to the guarded register: a holder cut
// off from its server must not hold the lock for ever.
const guardTimeout = 5 * time.Second

// GuardOpener says how spec's cell opens its guarded register: the
// spec's own opener, or that of the first of d's needs whose servers keep
// one, with that role's addresses; else, for a lock with servers whose
// clients all run in this process (no shard), a register in this
// process's memory (impl.MemoryRegister, as Jepsen keeps its set in the
// test's), fresh for the cell. It returns a nil opener, and why, when
// there is none.
func GuardOpener(spec CellSpec, d impl.Driver) (impl.GuardFunc, []string, string) {
	if spec.GuardFunc != nil {
		return spec.GuardFunc, nil, ""
	}
	for _, n := range d.Needs {
		if n.Guard != nil {
			return n.Guard, spec.Config.Servers[n.Role], ""
		}
	}
	if len(d.Needs) > 0 && spec.Shard == nil {
		return impl.MemoryRegister(), nil, ""
	}
	if spec.Shard != nil {
		return nil, nil, fmt.Sprintf("%s's servers keep no guarded register, and a sharded cell's processes share no memory to keep one in", d.Name)
	}
	return nil, nil, fmt.Sprintf("%s has no servers, and keeps no guarded register", d.Name)
}

// GuardWrote counts in f a write made from r, which answered w or err.
func GuardWrote(f *result.GuardCounts, r impl.Reading, w impl.Written, err error) {
	if err != nil {
		f.GuardErrors++
		return
	}
	f.GuardedWrites++
	if w.UnfencedMoved != 0 {
		f.StaleWritesUnfenced++
		f.LostUpdates += w.UnfencedMoved
	}
	switch {
	case r.Refused:
	case !w.FencedAccepted:
		f.StaleWritesRefused++
	case w.FencedMoved != 0:
		f.StaleWritesFenced++
		f.LostUpdatesFenced += w.FencedMoved
	}
}

// GuardReadCount counts in f a read, which answered r or err.
func GuardReadCount(f *result.GuardCounts, r impl.Reading, err error) {
	switch {
	case err != nil:
		f.GuardErrors++
	case r.Refused:
		f.StaleWritesRefused++
	}
}

// GuardRead reads lock's register through g with token, within
// guardTimeout: a holder cut off from its server must not hold the lock
// for ever. The load cells and the fault scenarios both read this way.
func GuardRead(ctx context.Context, g impl.Guard, lock string, token uint64) (impl.Reading, error) {
	ctx, cancel := context.WithTimeout(ctx, guardTimeout)
	defer cancel()
	return g.Read(ctx, lock, token)
}

// GuardWrite writes back through g what r read of lock with token, within
// guardTimeout.
func GuardWrite(ctx context.Context, g impl.Guard, lock string, token uint64, r impl.Reading) (impl.Written, error) {
	ctx, cancel := context.WithTimeout(ctx, guardTimeout)
	defer cancel()
	return g.Write(ctx, lock, token, r)
}

// GuardToken is the token a holder shows the fenced counter: the lease's
// own, or 0 where it has none (the fenced counter then fences nothing).
func GuardToken(lease impl.Lease) uint64 {
	if tok, ok := lease.Fence(); ok {
		return tok
	}
	return 0
}

// guardClient is one client's register and what it read last; only the
// client's goroutine touches it.
type guardClient struct {
	g       impl.Guard
	lock    string
	token   uint64
	reading impl.Reading
	pending bool
	fig     result.GuardCounts
}

func (c *guardClient) read(ctx context.Context, lock string, token uint64) {
	r, err := GuardRead(ctx, c.g, lock, token)
	GuardReadCount(&c.fig, r, err)
	c.lock, c.token, c.reading, c.pending = lock, token, r, err == nil
}

func (c *guardClient) write(ctx context.Context) {
	if !c.pending {
		return
	}
	c.pending = false
	w, err := GuardWrite(ctx, c.g, c.lock, c.token, c.reading)
	GuardWrote(&c.fig, c.reading, w, err)
}

// openGuards opens every client's register before the clock starts, at
// most ConnectParallel at a time. Without one to open, the cell runs
// unguarded and its safety figures say why.
func (r *Cell) openGuards(ctx context.Context) error {
	if !r.Spec.Guard {
		return nil
	}
	open, addrs, why := GuardOpener(r.Spec, r.Driver)
	if open == nil {
		r.guardNote = why
		return nil
	}
	sem := make(chan struct{}, max(r.Spec.ConnectParallel, 1))
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for _, w := range r.Clients {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			g, err := open(ctx, r.Spec.Config, addrs)
			if err != nil {
				once.Do(func() { firstErr = fmt.Errorf("engine: client %d: %w", w.id, err) })
				return
			}
			w.guard = &guardClient{g: g}
		})
	}
	wg.Wait()
	r.guarded = true
	return firstErr
}

// closeGuards closes the clients' registers.
func (r *Cell) closeGuards() {
	for _, w := range r.Clients {
		if w.guard != nil {
			w.guard.g.Close()
		}
	}
}

// guardSafety puts the clients' guarded accesses into s.
func (r *Cell) guardSafety(s *result.Safety) {
	if !r.guarded {
		s.GuardNote = r.guardNote
		return
	}
	s.Guarded, s.GuardCounts = true, result.GuardCounts{}
	for _, w := range r.Clients {
		if w.guard != nil {
			s.GuardCounts.Add(w.guard.fig)
		}
	}
}
