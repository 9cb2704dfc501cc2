package redis

import "time"

// cmdArgs builds the arguments of a Conn's SET NX and EVALSHA in slices it
// keeps, with the strings boxed once: go-redis's SetNX and EvalSha build a
// new slice and box every argument on each call, which made 6 of the 11
// allocations of an uncontended lock cycle. A command built here goes
// out word for word as go-redis's helper would send it. The slices are
// the Conn's, reused by its next command: a command's Args are valid until
// then, and its result (Val, Err) for good.
type cmdArgs struct {
	set  [6]any
	eval []any

	key, sha any           // the last key and script digest, boxed
	ttl      time.Duration // the TTL ttlArgs are for
	ttlArgs  [2]any        // set[3:5] for ttl
}

// setNX is go-redis's SetNX for a ttl > 0: SET key value PX ms NX, or EX s
// for whole seconds.
func (a *cmdArgs) setNX(key string, value any, ttl time.Duration) []any {
	if ttl != a.ttl { // a.ttl starts at 0, never a ttl asked for here
		a.ttl = ttl
		a.ttlArgs = [2]any{"px", max(int64(ttl/time.Millisecond), 1)}
		if ttl >= time.Second && ttl%time.Second == 0 {
			a.ttlArgs = [2]any{"ex", int64(ttl / time.Second)}
		}
	}
	a.set = [6]any{"set", boxed(&a.key, key), value, a.ttlArgs[0], a.ttlArgs[1], "nx"}
	return a.set[:]
}

// evalSha is go-redis's EvalSha: EVALSHA sha numkeys key... arg...
func (a *cmdArgs) evalSha(sha string, keys []string, args []any) []any {
	a.eval = append(a.eval[:0], "evalsha", boxed(&a.sha, sha), len(keys))
	for _, k := range keys {
		a.eval = append(a.eval, boxed(&a.key, k))
	}
	a.eval = append(a.eval, args...)
	return a.eval
}

// boxed returns s as an any: *last when that is s already, else s boxed
// anew and kept in *last.
func boxed(last *any, s string) any {
	if b, ok := (*last).(string); !ok || b != s {
		*last = s
	}
	return *last
}
