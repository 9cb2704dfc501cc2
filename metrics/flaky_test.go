package metrics_test

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/inproc"
)

// flakyImpl is the in-process lock with faults, so that errors and
// safety violations have figures to agree on: every fourth acquisition
// of a client fails (class no_quorum), and the lock excludes nobody.
const flakyImpl = "test-metrics-flaky"

func init() {
	impl.Register(impl.Driver{Name: flakyImpl, New: func(ctx context.Context, cfg impl.Config) (impl.Locker, error) {
		opts := map[string]string{inproc.OptUnsafe: "true"}
		cfg.Options = opts
		l, err := inproc.New(ctx, cfg)
		return &flaky{Locker: l}, err
	}})
}

type flaky struct {
	impl.Locker
	n int
}

func (f *flaky) Acquire(ctx context.Context, name string) (impl.Lease, error) {
	if f.n++; f.n%4 == 0 {
		return nil, fmt.Errorf("flaky: %w", impl.ErrNoQuorum)
	}
	return f.Locker.Acquire(ctx, name)
}
