// Package rueidislock runs github.com/redis/rueidis/rueidislock, the lock
// that ships with rueidis, Redis's own Go client, as its users call it:
// one rueidislock.Locker (one rueidis client, its own connection) per
// simulated client, the library's defaults (KeyMajority 2, so 3 keys;
// KeyValidity 5 s, extended every 2.5 s; TryNextAfter 20 ms; tracking
// without NOLOOP) unless the --rueidislock-* options say otherwise.
//
// A lock is 2×KeyMajority−1 keys on the one server, each taken by a script
// that runs SET NX PXAT and then GET, so that the key is tracked by the
// client's RESP3 CLIENT TRACKING (client-side caching). A waiter does not
// poll: it tries the first key, and on failure sleeps until an
// invalidation for one of the lock's keys arrives. Redis sends one to
// every client that read a key when the key changes, so a release tells
// every waiter at once and every waiter tries again: draining a burst of n
// costs n(n−1)/2 wake-ups, as a watch on all. The holder keeps its keys
// alive itself, so a lease ends with the client, KeyValidity after it fell
// silent; there is no fencing token.
//
// The adapter only watches the library. Its rueidis client is wrapped
// (through LockerOption.ClientBuilder) to count every command sent
// (RoundTrips), every key an invalidation names (Notifications), and each
// run of the acquire script on the lock's first key: the first in an
// Acquire is its try, each later one a wake-up (Wakeups and
// ReleaseWakeups), and each that did not end the Acquire a wasted one.
// WithContext's lock lives as long as the context it was given: Acquire
// hands it one that outlives the call and is cancelled only while the
// Acquire is still waiting, so that the caller's deadline bounds the wait
// and not the hold.
package rueidislock
