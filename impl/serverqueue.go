package impl

import "github.com/lockbench/lockbench/result"

// ServerQueue is the theory of a lock whose waiters queue on the server
// inside a blocked request (PostgreSQL's pg_advisory_lock, MySQL's
// GET_LOCK): a release grants the next waiter by answering its request,
// so no client is notified and none wakes in vain — 0 release wake-ups
// for a burst of any size, and grants in arrival order.
var ServerQueue = result.Theory{Waiters: "queued on the server", Formula: "0", PerHandoffFormula: "0"}

// QueuesOnServer reports whether t is a theory of no wake-ups at all.
func QueuesOnServer(t *result.Theory) bool { return t.OnServer() }
