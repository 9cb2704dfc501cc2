package redis

import "time"

// cmdArgs builds the arguments of a Conn's SET NX and EVALSHA in slices it
// keeps, with the strings boxed once: go-redis's SetNX and EvalSha build a
// new slice and box every argument on each call, which made 9 of the 11
// allocations of an uncontended lock cycle. A command built here goes
// out word for word as go-redis's helper would send it. The slices are
// the Conn's, reused by its next command: a command's Args are valid until
// then, and its result (Val, Err) for good.
type cmdArgs struct {
	set  [6]any
	eval []any

	key, sha string // the last boxed in set[1] and eval[1], eval[3]
	keyArg   any
	shaArg   any
	ttl      time.Duration
	ttlArgs  [2]any // set[3:5] for ttl
}

// setNX is go-redis's SetNX for a ttl > 0: SET key value PX ms NX, or EX s
// for whole seconds.
func (a *cmdArgs) setNX(key string, value any, ttl time.Duration) []any {
	if ttl != a.ttl || a.ttlArgs[0] == nil {
		a.ttl = ttl
		a.ttlArgs = [2]any{"px", max(int64(ttl/time.Millisecond), 1)}
		if ttl >= time.Second && ttl%time.Second == 0 {
			a.ttlArgs = [2]any{"ex", int64(ttl / time.Second)}
		}
	}
	a.set = [6]any{"set", a.boxKey(key), value, a.ttlArgs[0], a.ttlArgs[1], "nx"}
	return a.set[:]
}

// evalSha is go-redis's EvalSha: EVALSHA sha numkeys key... arg...
func (a *cmdArgs) evalSha(sha string, keys []string, args []any) []any {
	if sha != a.sha || a.shaArg == nil {
		a.sha, a.shaArg = sha, sha
	}
	a.eval = append(a.eval[:0], "evalsha", a.shaArg, len(keys))
	for _, k := range keys {
		a.eval = append(a.eval, a.boxKey(k))
	}
	a.eval = append(a.eval, args...)
	return a.eval
}

// boxKey returns key as an any, boxed anew only when it is not the last
// key boxed.
func (a *cmdArgs) boxKey(key string) any {
	if key != a.key || a.keyArg == nil {
		a.key, a.keyArg = key, key
	}
	return a.keyArg
}
