package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/suite"
)

// yardstickRequests and yardstickClients size one round of the
// yardstick: about a second of redis-benchmark on two cores.
const (
	yardstickRequests = 50000
	yardstickClients  = 4
)

// yardstick measures the machine's speed beside a suite's workloads:
// redis-benchmark's SET rate against a Redis of its own, a round before
// the first workload and one after each, so that two bundles' comparison
// can tell a machine that slowed from a lock that did. Its Redis runs in
// the fast profile whatever the suite's (no snapshots: a production Redis
// forks for one every minute under this load), so that it measures the
// machine, not the servers' settings. It never fails the suite: where it
// cannot run, its note says why.
type yardstick struct {
	fleet  *sandbox.Fleet
	host   string
	port   string
	bench  string
	rounds []float64
	note   string
}

func startYardstick(ctx context.Context) *yardstick {
	y := &yardstick{}
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		y.note = "redis-benchmark is not installed"
		return y
	}
	f, err := sandbox.Start(sandbox.WithProfile(ctx, sandbox.ProfileFast), sandbox.Spec{"redis": 1})
	if err != nil {
		y.note = "its Redis did not start: " + oneLine(err.Error())
		return y
	}
	addrs := f.Addrs("redis")
	if len(addrs) == 0 {
		f.Close()
		y.note = "its Redis has no address"
		return y
	}
	y.fleet, y.bench = f, bench
	y.host, y.port, _ = net.SplitHostPort(addrs[0])
	return y
}

// round measures once; a round that fails ends the yardstick with a note.
func (y *yardstick) round(ctx context.Context) {
	if y.fleet == nil || ctx.Err() != nil {
		return
	}
	out, err := exec.CommandContext(ctx, y.bench, "-h", y.host, "-p", y.port, "-t", "set",
		"-n", strconv.Itoa(yardstickRequests), "-c", strconv.Itoa(yardstickClients), "-r", "100000", "--csv").Output()
	rate, perr := benchRate(out)
	if err = errors.Join(err, perr); err != nil {
		y.note = "redis-benchmark failed: " + oneLine(err.Error())
		y.close()
		return
	}
	y.rounds = append(y.rounds, rate)
}

// benchRate reads redis-benchmark --csv's SET rate: a line
// "SET","123456.79",… (Redis 7 puts a header line first).
func benchRate(out []byte) (float64, error) {
	for _, line := range bytes.Split(out, []byte("\n")) {
		f := strings.Split(string(line), ",")
		if len(f) >= 2 && strings.Trim(f[0], `"`) == "SET" {
			return strconv.ParseFloat(strings.Trim(f[1], `"`), 64)
		}
	}
	return 0, fmt.Errorf("no SET line in %q", out)
}

func (y *yardstick) close() {
	if y.fleet != nil {
		y.fleet.Close()
		y.fleet = nil
	}
}

// figures is the yardstick as a bundle records it.
func (y *yardstick) figures() *suite.Yardstick {
	ys := &suite.Yardstick{What: fmt.Sprintf("redis-benchmark -t set -c %d -n %d against a Redis with nothing synced, SET/s", yardstickClients, yardstickRequests), Note: y.note}
	if len(y.rounds) > 0 {
		e := result.EstimateOf(y.rounds)
		ys.Rate = &e
	}
	return ys
}
