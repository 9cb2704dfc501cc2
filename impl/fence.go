package impl

import "context"

// FenceCounter draws fencing tokens from a counter the servers keep beside
// a lock, for locks that hand out none of their own (Caps without
// Fencing): a holder draws one right after its grant. That is a second
// round trip, not part of the grant, so a holder that stalls between the
// two could draw a token above its successor's. A FenceCounter has a
// connection of its own, whose round trips are not the lock's, and is
// safe for concurrent use.
type FenceCounter interface {
	// Next draws the next token: larger than every token drawn before it
	// for the same lock.
	Next(ctx context.Context) (uint64, error)
	// Close closes the counter's connection.
	Close() error
}

// FenceFunc opens a FenceCounter for lock on the servers at addrs (a
// Need's role's addresses), connecting as cfg says.
type FenceFunc func(ctx context.Context, cfg Config, addrs []string, lock string) (FenceCounter, error)
