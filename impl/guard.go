package impl

import "context"

// Guard is the guarded register (--guard, Jepsen's lock-set workload
// in miniature): a pair of counters per lock on the lock's servers that
// each holder reads when it is granted the lock and writes back, plus
// one, before it releases it. One counter is fenced: it refuses an
// access whose token is below the highest it has seen, checked on the
// server in the same step as the access, as the storage service of
// Kleppmann's fencing scheme does. The other takes every write.
//
// Reads carry the token to the fenced counter too: a fence checked at the
// write alone lets two holders that both read before either wrote lose an
// update with their tokens in order.
//
// Each write says how far its counter had moved since the writer read
// it, taken on the server as it wrote: the increments the write
// overwrote. Summed over a cell that is exactly its lost updates (the
// final value is the acknowledged increments less that sum), and the sum
// adds across shards with no final read.
//
// A Guard holds a connection of its own, opened before the clock
// starts, whose round trips are not the lock's. It is not safe for
// concurrent use: one per client.
type Guard interface {
	// Read reads both counters of lock, showing the fenced one token.
	Read(ctx context.Context, lock string, token uint64) (Reading, error)
	// Write writes both counters of lock from r, each plus one; the fenced
	// one only if token is still not below the highest it has seen (and
	// never after a refused read).
	Write(ctx context.Context, lock string, token uint64, r Reading) (Written, error)
	// Values reads both counters of lock as they stand.
	Values(ctx context.Context, lock string) (fenced, unfenced int64, err error)
	// Close closes the register's connection.
	Close() error
}

// Reading is what a holder read from a Guard.
type Reading struct {
	Fenced, Unfenced int64
	// Refused says the fenced counter had seen a higher token: the holder
	// does not write it.
	Refused bool
}

// Written is what a write to a Guard did.
type Written struct {
	// FencedAccepted says the fenced counter took the write.
	FencedAccepted bool
	// FencedMoved and UnfencedMoved are how far each counter had moved
	// since the read the write was based on (0 for a fenced write refused).
	FencedMoved, UnfencedMoved int64
}

// GuardFunc opens a Guard on the servers at addrs (a Need's role's
// addresses), connecting as cfg says; its counters live under
// cfg.Namespace.
type GuardFunc func(ctx context.Context, cfg Config, addrs []string) (Guard, error)
