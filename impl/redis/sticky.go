package redis

import (
	"context"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl"
)

// Conn runs one client's commands on a connection of its own, taken from
// its client's one-connection pool once rather than for every command.
//
// A pooled *goredis.Client checks the connection's health on every pool
// Get, i.e. on every command: a non-blocking read of the socket (one
// syscall, a third of an uncontended lock cycle's) and a few allocations.
// A dedicated connection (go-redis's Conn, a sticky pool) skips that
// check, and does not recover by itself from a broken connection: after a
// connection error every later command fails with "Conn is in a bad
// state". So a Conn gives its connection back to the pool, which checks
// it on the next Get and dials afresh if it is dead,
//   - after any failed command: the client reconnects after a crash, a
//     restart, a failover or a cut as the pooled client does, and the
//     failed command's error is returned as before;
//   - before a command when the connection has been idle for IdleCheck or
//     more: a connection cut while the client slept between polls or held
//     a lock is replaced before use, without an error, as the pooled
//     client's check does. Only commands that follow the previous one
//     within IdleCheck, as in a busy loop, skip the check.
//
// A Conn is used by one goroutine at a time, like the client that owns it.
// It is a goredis.Scripter, so scripts run on it.
type Conn struct {
	cl   *goredis.Client
	cn   *goredis.Conn
	used time.Time // when the last command on cn returned
	args cmdArgs
}

// IdleCheck is how long a connection may sit unused before a Conn has the
// pool check it again (see Conn): well under the default poll interval
// (impl.DefaultRetry), well over the gap between two commands of a busy
// client.
const IdleCheck = time.Millisecond

var _ goredis.Scripter = (*Conn)(nil)

// DialConn is Dial, its commands on a dedicated connection (Conn).
func DialConn(ctx context.Context, addr string, cfg impl.Config, c *impl.Counters) (*Conn, error) {
	cl, err := Dial(ctx, addr, cfg, c)
	if err != nil {
		return nil, err
	}
	return NewConn(cl), nil
}

// NewConn runs cl's commands on a dedicated connection; closing the Conn
// closes cl.
func NewConn(cl *goredis.Client) *Conn { return &Conn{cl: cl} }

// Client is the client whose pool the connection comes from.
func (c *Conn) Client() *goredis.Client { return c.cl }

// conn returns the dedicated connection, taking one from the pool when
// there is none or it has been idle for IdleCheck. go-redis's Conn copies
// the client's hooks, so its commands are counted as the client's are.
func (c *Conn) conn() *goredis.Conn {
	if c.cn != nil && time.Since(c.used) >= IdleCheck {
		c.cn.Close() // back to the pool, which checks it on the next Get
		c.cn = nil
	}
	if c.cn == nil {
		c.cn = c.cl.Conn()
	}
	return c.cn
}

// done drops the dedicated connection after a failed command (a nil
// reply, redis.Nil, is no failure). Some server errors leave the
// connection usable, but go-redis gives up a connection after others
// (READONLY from a demoted master): dropping it after every error is the
// one rule that never leaves a broken connection in use, and errors are
// rare enough that the extra pool Get costs nothing.
func (c *Conn) done(err error) {
	c.used = time.Now()
	if err == nil || errors.Is(err, goredis.Nil) || c.cn == nil {
		return
	}
	c.cn.Close() // returns it to the pool, or removes it when it is broken
	c.cn = nil
}

// SetNX is SET key value NX PX ttl.
// It sends what go-redis's SetNX sends, built as cmdArgs says.
func (c *Conn) SetNX(ctx context.Context, key string, value any, ttl time.Duration) *goredis.BoolCmd {
	var cmd *goredis.BoolCmd
	if ttl > 0 {
		cmd = goredis.NewBoolCmd(ctx, c.args.setNX(key, value, ttl)...)
		c.conn().Process(ctx, cmd)
	} else {
		cmd = c.conn().SetNX(ctx, key, value, ttl)
	}
	c.done(cmd.Err())
	return cmd
}

// Del is DEL keys.
func (c *Conn) Del(ctx context.Context, keys ...string) *goredis.IntCmd {
	cmd := c.conn().Del(ctx, keys...)
	c.done(cmd.Err())
	return cmd
}

func (c *Conn) Eval(ctx context.Context, script string, keys []string, args ...any) *goredis.Cmd {
	cmd := c.conn().Eval(ctx, script, keys, args...)
	c.done(cmd.Err())
	return cmd
}

// EvalSha sends what go-redis's EvalSha sends, built as cmdArgs says; a
// NOSCRIPT error is the server's, which goredis.Script.Run takes as
// go-redis's own.
func (c *Conn) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *goredis.Cmd {
	cmd := goredis.NewCmd(ctx, c.args.evalSha(sha1, keys, args)...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	c.conn().Process(ctx, cmd)
	c.done(cmd.Err())
	return cmd
}

func (c *Conn) EvalRO(ctx context.Context, script string, keys []string, args ...any) *goredis.Cmd {
	cmd := c.conn().EvalRO(ctx, script, keys, args...)
	c.done(cmd.Err())
	return cmd
}

func (c *Conn) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *goredis.Cmd {
	cmd := c.conn().EvalShaRO(ctx, sha1, keys, args...)
	c.done(cmd.Err())
	return cmd
}

func (c *Conn) ScriptExists(ctx context.Context, hashes ...string) *goredis.BoolSliceCmd {
	cmd := c.conn().ScriptExists(ctx, hashes...)
	c.done(cmd.Err())
	return cmd
}

func (c *Conn) ScriptLoad(ctx context.Context, script string) *goredis.StringCmd {
	cmd := c.conn().ScriptLoad(ctx, script)
	c.done(cmd.Err())
	return cmd
}

// Close gives the dedicated connection back and closes the client.
func (c *Conn) Close() error {
	if c.cn != nil {
		c.cn.Close()
		c.cn = nil
	}
	return c.cl.Close()
}
