// Package natskv is a lock on NATS JetStream's key-value store, written
// by lockbench over nats.go's KV API (github.com/nats-io/nats.go/jetstream):
// no Go lock library on NATS KV is widely used, so the row is a recipe,
// the one NATS's own docs sketch for KV as a lock, and says so.
//
// The lock is one key in a bucket whose keys may carry a TTL (the bucket's
// LimitMarkerTTL; per-key TTLs need nats-server 2.11). Acquire is KV
// Create with the cell's TTL (whole seconds, at least one): it succeeds
// only when the key is absent or its last revision is a delete marker, and
// the revision it returns is the grant's fencing token. A client that
// finds the key held Watches it and tries again when a delete or purge
// marker arrives — a release (Delete with the holder's revision as the
// expected last one, so that a stale holder cannot delete a successor's
// key) or the TTL's expiry (the server's marker, reason MaxAge). Every
// watcher sees every marker: draining a burst of n costs n(n−1)/2
// wake-ups, as a watch on all.
//
// Each simulated client has its own NATS connection. Its counters:
// RoundTrips is the messages the connection sent (publishes and API
// requests, as nats.go counts them); Notifications the watch entries
// received once a watch had caught up; Wakeups and ReleaseWakeups the
// delete and purge markers among them; WastedWakeups those after which the
// Create still failed.
package natskv
