// Package redis implements the single-instance Redis lock: SET key token NX
// PX ttl to acquire, polling with jittered retries while it is held, and a
// Lua compare-and-delete to release. A crashed holder blocks everyone until
// the TTL runs out.
//
// Its connection helpers (Dial, ReleaseScript) are shared with the Redlock
// implementation.
package redis
