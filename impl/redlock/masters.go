package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

// CheckMasters returns an error unless addrs is an odd number of masters,
// at least 3: with an even number a majority tolerates no more failures
// than with one master fewer.
func CheckMasters(addrs []string) error {
	if n := len(addrs); n < 3 || n%2 == 0 {
		return fmt.Errorf("redlock: need an odd number of masters, at least 3; got %d", n)
	}
	return nil
}

// DialMasters connects one client per master with redis.Dial, all at once,
// counting every command into c. Redlock exists to survive a minority of
// dead masters, so a master that cannot be reached now still gets a client
// (redis.NewClient) that dials again on every attempt and is used once the
// master is back. Only when fewer than a majority answer does it fail: it
// closes every client and returns the per-master failures as
// *impl.NodeError values joined together, wrapping impl.ErrUnreachable.
func DialMasters(ctx context.Context, addrs []string, cfg impl.Config, c *impl.Counters) ([]*goredis.Client, error) {
	cls := make([]*goredis.Client, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() {
			cl, err := redis.Dial(ctx, addr, cfg, c)
			if err != nil {
				errs[i] = &impl.NodeError{Node: i, Addr: addr, Err: err}
				cl = redis.NewReplyClient(addr, cfg, c)
			}
			cls[i] = cl
		})
	}
	wg.Wait()
	down := 0
	for _, err := range errs {
		if err != nil {
			down++
		}
	}
	if len(addrs)-down < len(addrs)/2+1 {
		for _, cl := range cls {
			cl.Close()
		}
		return nil, fmt.Errorf("redlock: connect: %d of %d masters reachable: %w", len(addrs)-down, len(addrs), errors.Join(errs...))
	}
	return cls, nil
}

// CloseMasters closes one client per master, joining their errors.
func CloseMasters(cls []*goredis.Client) error {
	var errs []error
	for _, cl := range cls {
		errs = append(errs, cl.Close())
	}
	return errors.Join(errs...)
}
