package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/impl/redis"
	"github.com/lockbench/lockbench/sandboxtest"
)

// calls is the server's count of SET, EVALSHA and SCRIPT commands so far.
func calls(t *testing.T, admin *goredis.Client) (set, evalsha, script int64) {
	t.Helper()
	info, err := admin.InfoMap(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for name, p := range map[string]*int64{"cmdstat_set": &set, "cmdstat_evalsha": &evalsha, "cmdstat_script|load": &script} {
		if v := info["Commandstats"][name]; v != "" {
			if _, err := fmt.Sscanf(v, "calls=%d", &n); err != nil {
				t.Fatalf("%s=%q: %v", name, v, err)
			}
			*p = n
		}
	}
	return set, evalsha, script
}

// Each loop runs exactly the cycles asked for, shared by its clients, as
// one SET and one EVALSHA each that the server counts, and prints a rate
// and a CPU cost it can parse back. The row's loop dials as the row does,
// loading the row's two scripts on every connection; the others load the
// release script once.
func TestLoopsRunTheCyclesAsked(t *testing.T) {
	addr := sandboxtest.Start(t, redis.Need)[redis.Need.Role][0]
	admin := goredis.NewClient(&goredis.Options{Addr: addr})
	defer admin.Close()
	for _, mode := range [][]string{nil, {"--bare"}, {"--row"}} {
		set0, eval0, script0 := calls(t, admin)
		var out bytes.Buffer
		args := append([]string{"--addr", addr, "--clients", "4", "--cycles", "301"}, mode...)
		if err := run(context.Background(), args, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var rate, cpu float64
		if _, err := fmt.Sscanf(out.String(), "%f %f\n", &rate, &cpu); err != nil || rate <= 0 || cpu <= 0 {
			t.Fatalf("%v printed %q (%v), want a positive rate and CPU per cycle", mode, out.String(), err)
		}
		set1, eval1, script1 := calls(t, admin)
		if set1-set0 != 301 || eval1-eval0 != 301 {
			t.Errorf("%v: the server counted %d SET and %d EVALSHA, want 301 each", mode, set1-set0, eval1-eval0)
		}
		wantScripts := int64(1)
		if len(mode) > 0 && mode[0] == "--row" {
			wantScripts += 2 * 4
		}
		if script1-script0 != wantScripts {
			t.Errorf("%v: the server counted %d SCRIPT LOADs, want %d", mode, script1-script0, wantScripts)
		}
	}
	if n, err := admin.Keys(context.Background(), "redisloop:*").Result(); err != nil || len(n) != 0 {
		t.Errorf("keys left behind: %v (%v)", n, err)
	}
}

// A bad command line is a usage error; a server that is not there is not.
func TestErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"--addr", "x:1", "--clients", "0"}, {"--addr", "x:1", "--cycles", "0"}, {"--nope"}, {"--addr", "x:1", "--bare", "--row"}} {
		if err := run(context.Background(), args, new(bytes.Buffer)); !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, mode := range []string{"--bare=false", "--bare", "--row"} {
		err := run(context.Background(), []string{"--addr", addr, mode}, new(bytes.Buffer))
		if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), addr) {
			t.Errorf("%s against a closed port: %v, want a runtime error naming %s", mode, err, addr)
		}
	}
}
