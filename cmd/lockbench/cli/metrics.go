package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/lockbench/lockbench/metrics"
	"github.com/lockbench/lockbench/plan"
)

// serveMetrics starts the --metrics-addr endpoint, if asked for, and
// returns what attaches it to the plan and what stops it: stop waits a
// moment (metrics.DefaultLinger at most) for a scrape of the last cell's
// final figures, unless ctx is done. An address that cannot be listened
// on (a port in use) is a runtime failure; checkMetricsAddr has judged
// its form.
func serveMetrics(ctx context.Context, addr string, s *plan.Sharding, stderr io.Writer) (attach func(*plan.Plan), stop func(), err error) {
	if addr == "" {
		return func(*plan.Plan) {}, func() {}, nil
	}
	shard := "0/1"
	if s != nil {
		shard = fmt.Sprintf("%d/%d", s.Index, s.Count)
	}
	e, err := metrics.Listen(addr, metrics.WithShard(shard))
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(stderr, "metrics: http://%s/metrics\n", e.Addr())
	return e.Attach, func() { e.Close(ctx) }, nil
}

// checkMetricsAddr refuses a --metrics-addr that is not HOST:PORT before
// anything starts: the caller's input, exit 2. An empty host listens on
// every interface, as in a pod.
func checkMetricsAddr(addr string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%w: --metrics-addr %q: want HOST:PORT, e.g. 127.0.0.1:9464 or :9464", errUsage, addr)
	}
	return nil
}
