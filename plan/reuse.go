package plan

import (
	"context"

	"github.com/lockbench/lockbench/impl"
)

// Provision starts, once, the servers p's drivers need that p does not
// name, for a caller that runs many plans over the same servers (a
// capacity search, whose every trial is a plan): it puts their addresses
// in the plans it runs, and Run then starts nothing. sandboxed names the
// roles started; stop stops them, and dead names those that died.
func Provision(ctx context.Context, p Plan) (servers impl.Servers, sandboxed []string, stop func(), dead func() []string, err error) {
	f, err := provision(ctx, p)
	if err != nil {
		f.close()
		return nil, nil, func() {}, func() []string { return nil }, err
	}
	return f.servers, f.sandboxed, f.close, f.dead, nil
}
