package redis

import (
	"context"
	"reflect"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/internal/allocs"
)

// captureHook keeps each command's arguments and sends nothing.
type captureHook struct{ got *[]any }

func (h captureHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h captureHook) ProcessHook(goredis.ProcessHook) goredis.ProcessHook {
	return func(_ context.Context, cmd goredis.Cmder) error {
		*h.got = append([]any(nil), cmd.Args()...)
		return nil
	}
}
func (h captureHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// The commands a Conn builds are, word for word and type for type, what
// go-redis's own helpers build, and building them again allocates nothing.
func TestCmdArgsAreGoRedisOwn(t *testing.T) {
	ctx := context.Background()
	var want []any
	cl := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer cl.Close()
	cl.AddHook(captureHook{&want})
	var a cmdArgs
	for _, ttl := range []time.Duration{30 * time.Second, 1500 * time.Millisecond, 2 * time.Second,
		999 * time.Millisecond, 300 * time.Microsecond, time.Hour} {
		for _, key := range []string{"k1", "k2"} {
			cl.SetNX(ctx, key, "tok", ttl)
			if got := a.setNX(key, "tok", ttl); !reflect.DeepEqual(got, want) {
				t.Errorf("SET NX, ttl %v: %#v, go-redis sends %#v", ttl, got, want)
			}
		}
	}
	for _, keys := range [][]string{{"k1"}, {"k1", "k2"}, nil} {
		cl.EvalSha(ctx, "abc123", keys, "tok", 7)
		if got := a.evalSha("abc123", keys, []any{"tok", 7}); !reflect.DeepEqual(got, want) {
			t.Errorf("EVALSHA, keys %q: %#v, go-redis sends %#v", keys, got, want)
		}
	}
	keys, args := []string{"k1"}, []any{any("tok")}
	if n := allocs.Total(100, func() {
		a.setNX("k1", args[0], 30*time.Second)
		a.evalSha("abc123", keys, args)
	}); n != 0 {
		t.Errorf("100 pairs of commands built on the same key allocated %d times, want 0", n)
	}
}
