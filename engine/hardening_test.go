package engine

import (
	"context"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
)

// panicky is a lock whose client panics on its tenth acquisition.
type panicky struct {
	impl.Locker
	n int
}

func (p *panicky) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	if p.n++; p.n == 10 {
		panic("boom")
	}
	return p.Locker.Acquire(ctx, name)
}

func init() {
	impl.Register(impl.Driver{Name: "test-panic", Description: "inproc whose clients panic",
		New: func(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
			l, err := inproc.New(ctx, cfg)
			return &panicky{Locker: l}, err
		}})
}
