// Package redis implements the single-instance Redis lock: SET key token NX
// PX ttl to acquire, polling with jittered retries while it is held, and a
// Lua compare-and-delete to release. A crashed holder blocks everyone until
// the TTL runs out. An Acquire whose SET NX may have landed without its
// reply reaching the client (its ctx's deadline passed mid-request, say)
// undoes it with the same compare-and-delete before returning, so that no
// grant is left held by nobody.
//
// Its connection helpers (Dial, ReleaseScript) are shared with the Redlock
// implementations, and so are its rules for a request cut short by the
// caller's ctx (Expired, CtxErr, Uncancelled, MayHaveLanded).
package redis
