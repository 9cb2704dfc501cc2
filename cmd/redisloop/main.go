// Command redisloop runs the cycle of lockbench's redis lock — SET key
// token NX PX 30000, then EVALSHA of the compare-and-delete script — in a
// plain loop, a connection per client, with nothing else: no lock
// interface, histogram, history or counters. scripts/redis-baseline sets
// lockbench beside it and beside redis-benchmark, so that a gap between
// lockbench and redis-benchmark can be put where it lies: in lockbench's
// harness (lockbench against the row's client alone, --row), in the
// client library (the go-redis loop against the bare one) or in a
// goroutine per connection (the bare loop against redis-benchmark's one
// epoll thread).
//
//	redisloop --addr 127.0.0.1:6379 --clients 64 --cycles 50000 [--bare | --row]
//	31264 29.1
//
// It prints cycles per second and its own CPU µs per cycle (user and
// system, from getrusage over the timed span). Every connection is made
// and answers before the clock starts. --bare speaks RESP over the socket
// itself, with one write and one read of a bufio.Reader per command;
// --row runs the cycle on the client lockbench's redis row runs it on
// (impl/redis's DialConn: go-redis with the row's connection, which sends
// each request from inside the read of its reply, and the row's command
// building), so that lockbench against it is the harness alone. Without
// either, each client is a go-redis client with one connection, called as
// a user calls it, on go-redis's own dialer.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/impl"
	"github.com/lockbench/lockbench/impl/redis"
)

type config struct {
	addr           string
	clients        int
	cycles         int64
	bare, row      bool
	timeout        time.Duration
	keyPrefix, tok string
}

// errUsage marks a bad command line (exit 2).
var errUsage = errors.New("usage")

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "redisloop:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "redisloop:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, w io.Writer) error {
	var cfg config
	fs := pflag.NewFlagSet("redisloop", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.addr, "addr", "", "Redis address (host:port)")
	fs.IntVar(&cfg.clients, "clients", 1, "clients, each with its own connection")
	fs.Int64Var(&cfg.cycles, "cycles", 50000, "lock cycles in all, shared by the clients")
	fs.BoolVar(&cfg.bare, "bare", false, "speak RESP over the socket instead of through go-redis")
	fs.BoolVar(&cfg.row, "row", false, "run the cycle on the client lockbench's redis row runs it on")
	fs.DurationVar(&cfg.timeout, "timeout", time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	switch {
	case cfg.addr == "":
		return fmt.Errorf("%w: --addr is required", errUsage)
	case cfg.bare && cfg.row:
		return fmt.Errorf("%w: --bare and --row are two different loops: give one", errUsage)
	case cfg.clients < 1 || cfg.clients > 10000:
		return fmt.Errorf("%w: --clients %d: want 1 to 10000", errUsage, cfg.clients)
	case cfg.cycles < 1:
		return fmt.Errorf("%w: --cycles %d: want 1 or more", errUsage, cfg.cycles)
	case cfg.timeout <= 0:
		return fmt.Errorf("%w: --timeout %v: want a positive duration", errUsage, cfg.timeout)
	}
	cfg.keyPrefix, cfg.tok = fmt.Sprintf("redisloop:%d:", os.Getpid()), strconv.FormatInt(time.Now().UnixNano(), 36)
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	rate, cpu, err := loop(ctx, cfg)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%.0f %.1f\n", rate, cpu)
	return err
}

// cycler is one client: cycle runs one lock cycle on its connection.
type cycler interface {
	cycle(ctx context.Context) error
	close()
}

// loop connects every client, then times cfg.cycles cycles shared among
// them, returning cycles/s and CPU µs per cycle.
func loop(ctx context.Context, cfg config) (rate, cpuPerCycle float64, err error) {
	admin := goredis.NewClient(&goredis.Options{Addr: cfg.addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer admin.Close()
	sha, err := redis.ReleaseScript.Load(ctx, admin).Result()
	if err != nil {
		return 0, 0, fmt.Errorf("redis %s: load the release script: %w", cfg.addr, err)
	}
	cs := make([]cycler, cfg.clients)
	defer func() {
		for _, c := range cs {
			if c != nil {
				c.close()
			}
		}
	}()
	for i := range cs {
		key, tok := cfg.keyPrefix+strconv.Itoa(i), cfg.tok+strconv.Itoa(i)
		switch {
		case cfg.bare:
			cs[i], err = dialBare(ctx, cfg.addr, key, tok, sha)
		case cfg.row:
			cs[i], err = dialRow(ctx, cfg.addr, key, tok, sha)
		default:
			cs[i], err = dialGoRedis(ctx, cfg.addr, key, tok, sha)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	left := atomic.Int64{}
	left.Store(cfg.cycles)
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	before, start := cpuTime(), time.Now()
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if errs[i] = c.cycle(ctx); errs[i] != nil {
					left.Store(0)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), cpuTime()-before
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	n := float64(cfg.cycles)
	return n / elapsed.Seconds(), float64(cpu.Microseconds()) / n, nil
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// goRedis runs the cycle through go-redis: on a client with one
// connection, called as a user calls it, or on the redis row's own
// client (dialRow).
type goRedis struct {
	cl            redisClient
	key, tok, sha string
	keys          []string
}

// redisClient is what the cycle calls: a *goredis.Client, or the redis
// row's *redis.Conn, which sends what go-redis's helpers send.
type redisClient interface {
	SetNX(ctx context.Context, key string, value any, ttl time.Duration) *goredis.BoolCmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *goredis.Cmd
	Close() error
}

func dialGoRedis(ctx context.Context, addr, key, tok, sha string) (*goRedis, error) {
	cl := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, PoolSize: 1, MaxActiveConns: 1,
		MaxRetries: -1, ContextTimeoutEnabled: true, DisableIdentity: true})
	if err := cl.Ping(ctx).Err(); err != nil {
		cl.Close()
		return nil, fmt.Errorf("redis %s: %w", addr, err)
	}
	return &goRedis{cl: cl, key: key, tok: tok, sha: sha, keys: []string{key}}, nil
}

// dialRow is the client lockbench's redis row runs its cycle on, with
// nothing of the harness around it.
func dialRow(ctx context.Context, addr, key, tok, sha string) (*goRedis, error) {
	c, err := redis.DialConn(ctx, addr, impl.Config{}.WithDefaults(), new(impl.Counters))
	if err != nil {
		return nil, err
	}
	return &goRedis{cl: c, key: key, tok: tok, sha: sha, keys: []string{key}}, nil
}

func (g *goRedis) cycle(ctx context.Context) error {
	switch ok, err := g.cl.SetNX(ctx, g.key, g.tok, 30*time.Second).Result(); {
	case err != nil:
		return fmt.Errorf("SET %s NX: %w", g.key, err)
	case !ok:
		return fmt.Errorf("SET %s NX: the key is held", g.key)
	}
	switch n, err := g.cl.EvalSha(ctx, g.sha, g.keys, g.tok).Int(); {
	case err != nil:
		return fmt.Errorf("EVALSHA release %s: %w", g.key, err)
	case n != 1:
		return fmt.Errorf("EVALSHA release %s: deleted %d keys, want 1", g.key, n)
	}
	return nil
}

func (g *goRedis) close() { g.cl.Close() }

// bare is a connection spoken to in RESP directly: the two requests are
// encoded once, and each reply is one line.
type bare struct {
	conn     net.Conn
	rd       *bufio.Reader
	set, rel []byte
	key      string
}

func dialBare(ctx context.Context, addr, key, tok, sha string) (*bare, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("redis %s: %w", addr, err)
	}
	b := &bare{conn: conn, rd: bufio.NewReader(conn), key: key,
		set: command("SET", key, tok, "NX", "PX", "30000"),
		rel: command("EVALSHA", sha, "1", key, tok)}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	return b, nil
}

// command encodes args as a RESP array of bulk strings.
func command(args ...string) []byte {
	b := append([]byte{'*'}, strconv.Itoa(len(args))...)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(append(b, '$'), strconv.Itoa(len(a))...)
		b = append(append(append(b, "\r\n"...), a...), "\r\n"...)
	}
	return b
}

func (b *bare) cycle(context.Context) error {
	if err := b.call(b.set, "+OK\r\n"); err != nil {
		return fmt.Errorf("SET %s NX: %w", b.key, err)
	}
	if err := b.call(b.rel, ":1\r\n"); err != nil {
		return fmt.Errorf("EVALSHA release %s: %w", b.key, err)
	}
	return nil
}

// call sends req and reads a one-line reply, which must be want.
func (b *bare) call(req []byte, want string) error {
	if _, err := b.conn.Write(req); err != nil {
		return err
	}
	line, err := b.rd.ReadSlice('\n')
	if err != nil {
		return err
	}
	if string(line) != want {
		return fmt.Errorf("reply %q, want %q", line, want)
	}
	return nil
}

func (b *bare) close() { b.conn.Close() }
