package faults

import (
	"context"

	"github.com/lockbench/lockbench/engine"
	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/result"
)

// guards are a fault cell's guarded registers (engine.CellSpec.Guard): one
// per client, opened at its first grant — no fault scenario times a
// holder's first grant — and what each holder read at its grant, until it
// writes before its release. Guarded by the tally's mutex; the accesses
// themselves run outside it.
type guards struct {
	open    impl.GuardFunc
	addrs   []string
	note    string
	used    bool
	clients map[impl.Locker]impl.Guard
	pending map[impl.Lease]pendingRead
	fig     result.GuardCounts
}

// pendingRead is a holder's read, which its write is based on.
type pendingRead struct {
	g     impl.Guard
	lock  string
	token uint64
	r     impl.Reading
}

func (t *tally) initGuards() {
	if !t.spec.Guard || t.spec.Driver.New == nil {
		return
	}
	t.g.open, t.g.addrs, t.g.note = engine.GuardOpener(t.spec, t.spec.Driver)
	t.g.clients, t.g.pending = map[impl.Locker]impl.Guard{}, map[impl.Lease]pendingRead{}
}

// guardOf is l's register, opened on first use; nil without one.
func (t *tally) guardOf(ctx context.Context, l impl.Locker) impl.Guard {
	t.mu.Lock()
	g, open := t.g.clients[l], t.g.open
	t.mu.Unlock()
	if g != nil || open == nil {
		return g
	}
	g, err := open(ctx, t.spec.Config, t.g.addrs)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.g.fig.GuardErrors++
		return nil
	}
	t.g.clients[l] = g
	return g
}

// guardRead has l, just granted lease on name, read the register with
// token; a later read for the same lease (the pause fault's post-grant
// token) replaces the first.
func (t *tally) guardRead(ctx context.Context, l impl.Locker, name string, lease impl.Lease, token uint64) {
	g := t.guardOf(ctx, l)
	if g == nil {
		return
	}
	r, err := engine.GuardRead(context.WithoutCancel(ctx), g, name, token)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.g.used = true
	engine.GuardReadCount(&t.g.fig, r, err)
	if err == nil {
		t.g.pending[lease] = pendingRead{g: g, lock: name, token: token, r: r}
	} else {
		delete(t.g.pending, lease)
	}
}

// granted has l, just granted lease on name, read the register with the
// lease's token — unless the script draws tokens after the grant (the
// pause fault, for locks without their own), and shows the register that
// one instead (pauseCast.drawn).
func (t *tally) granted(ctx context.Context, l impl.Locker, name string, lease impl.Lease) {
	if t.tokens != result.TokensCounter {
		t.guardRead(ctx, l, name, lease, engine.GuardToken(lease))
	}
}

// guardWrite has lease's holder write back what it read, if it read; it
// says what the write did and whether it was made and acknowledged.
func (t *tally) guardWrite(ctx context.Context, lease impl.Lease) (impl.Written, bool) {
	t.mu.Lock()
	p, ok := t.g.pending[lease]
	delete(t.g.pending, lease)
	t.mu.Unlock()
	if !ok {
		return impl.Written{}, false
	}
	w, err := engine.GuardWrite(context.WithoutCancel(ctx), p.g, p.lock, p.token, p.r)
	t.mu.Lock()
	defer t.mu.Unlock()
	engine.GuardWrote(&t.g.fig, p.r, w, err)
	return w, err == nil
}

// guardDrop forgets lease's read: its holder was crashed or cut off by the
// script, and a dead process writes nothing.
func (t *tally) guardDrop(lease impl.Lease) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.g.pending, lease)
}

// guarding says whether holders write to a register.
func (t *tally) guarding() bool { return t.g.open != nil }

// closeGuard closes l's register.
func (t *tally) closeGuard(l impl.Locker) {
	t.mu.Lock()
	g := t.g.clients[l]
	delete(t.g.clients, l)
	t.mu.Unlock()
	if g != nil {
		g.Close()
	}
}
