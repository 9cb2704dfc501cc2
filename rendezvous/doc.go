// Package rendezvous lines up the shards of a run that is split over several
// processes or machines: each shard runs a slice of every cell's clients,
// and they meet through the lock service itself — a board of keys on one
// of the plan's servers (Board) — to start each cell together, to hand a
// burst's lock on only when every shard's waiters are queued, and to
// finish each cell together. It also estimates each shard's clock offset
// from the server, which the merge uses to order grants across shards.
package rendezvous
