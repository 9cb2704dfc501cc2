// Package etcdmutex holds two rows of the etcd lock over
// go.etcd.io/etcd/client/v3.
//
// The etcd row (library.go) is the client's own concurrency.Mutex, called
// as its documentation shows: one concurrency.Session per simulated client
// (its TTL the session timeout), concurrency.NewMutex per Acquire, Lock(ctx)
// and Unlock(ctx). Nothing of the lock is done here. Its waiter watches
// the predecessor from the revision of its read, which the server files as
// an unsynced watch and catches up on a 100 ms tick (watchResyncPeriod in
// server/storage/mvcc/watchable_store.go): a release soon after the watch
// began reaches the waiter that much later. That row's counters are read
// off the client's gRPC connection by interceptors, from outside the
// library: RoundTrips are the unary requests it sends (transactions, gets,
// deletes, the lease grant) and the watches it opens; Retries the watches
// opened (waits begun); Notifications the watch events received, and
// Wakeups and ReleaseWakeups the deletions among them (the library's waiter
// returns on the first). Not counted: wasted wake-ups (the library re-reads
// the queue without saying what it found), keep-alives, and settling (the
// row is no impl.Settler, so a burst's counts depend on timing). Release
// cannot tell a lost lease: Unlock deletes the key whether or not it still
// held the lock. Fence is the revision at which the grant was read
// (Mutex.Header), which grows in grant order.
//
// The etcd-recipe row (etcdmutex.go, the rest of this comment) is
// lockbench's own recipe of the same algorithm, with the waiting done here
// so that notifications, wake-ups and settling are seen exactly, and the
// watch started at the server's current revision so that no hand-off waits
// for the resync tick. Both rows exist because they answer different
// questions: what a user of etcd's mutex gets, and what etcd itself can do.
//
// Every simulated client has its own client connection and one
// concurrency.Session: a lease of Config.SessionTimeout rounded up to whole
// seconds (at least 1; a server grants no less than 1.5 election timeouts),
// kept alive by the client while it runs. To queue for lock NAME, a client
// creates the key /lockbench/<namespace>/NAME/<lease id> bound to that
// lease; keys are ordered by their create revision, and the oldest holds
// the lock. A waiter watches only the key with the next lower create
// revision — its predecessor — for deletion (predecessor watch: one
// wake-up per release, n−1 to drain n), and on its deletion reads the
// queue again. A holder whose session ends (the lease expires TTL after
// its keep-alives stop) loses its key, and the next waiter is told.
//
//   - Acquire is one transaction when the lock is free: create the key if
//     absent, and read the two newest keys of the queue in the same
//     revision (the own key and the predecessor, if any). A waiter then
//     watches the predecessor, and after a wake-up reads the queue again in
//     a transaction that also checks that its own key is still there with
//     its create revision (else its session ended: impl.ErrSessionLost).
//   - The watch starts at the server's current revision, not at the one
//     the queue was read at, as concurrency.Mutex's does: a watch that
//     starts in the past is "unsynced", and the server catches those up on
//     a 100 ms tick, so a release soon after it reaches the waiter up to
//     100 ms late (two clients contending through concurrency.Mutex hand
//     the lock on about every 100 ms). A delete between the read and the
//     watch is not lost: the server's reply to the watch's creation gives
//     its revision, and if the queue changed since the read, the waiter
//     reads it again before it waits (one more round trip).
//   - The fencing token is the own key's create revision: grants of one
//     lock go in create-revision order, and revisions only grow.
//   - Release deletes the key if it still has the create revision of the
//     grant; if not, the lease expired (impl.ErrLockLost).
//   - A failed or cancelled Acquire deletes its key on a context of its own
//     (bounded by AbandonAfter), whatever it knows of the creating request:
//     a create whose reply came after the deadline is undone too, so that
//     nothing stays queued. (concurrency.Mutex.Lock leaves such a key
//     behind until its lease ends.)
//   - Close stops the keep-alives and revokes the lease, bounded by
//     AbandonAfter rather than the TTL, so every key of the client goes at
//     once; then it closes the connection.
//
// Counters:
//
//   - RoundTrips: requests this client sends and waits on: lease grants,
//     transactions (queue, re-read, release), deletes, revokes, and each
//     watch opened (its create request and the server's reply). Lease keep-alives (one every third
//     of the TTL on the lease stream), watch cancellations and HTTP/2
//     pings are not counted.
//   - Notifications: watch events received by the client's connection,
//     counted by a gRPC stream interceptor as each watch response arrives,
//     before the client library hands it on — the same events the server
//     counts in etcd_debugging_mvcc_events_total (watch_triggered in the
//     cell's server figures). Waiters watch with WithFilterPut, so the
//     server sends them deletions only.
//   - Wakeups and ReleaseWakeups: deletions of the watched predecessor the
//     waiter acted on (every wake-up is a deletion, by release, abandon or
//     lease expiry); WastedWakeups: those after which the queue still had
//     a key ahead of the waiter (a predecessor that gave up, not a release
//     of the lock). Retries: waits begun.
//   - SessionLost: sessions (leases) that ended under the client.
//
// Settled (impl.Settler) is true while Acquire waits on a watch the server
// has confirmed (WithCreatedNotify) and no watch event has reached the
// connection since the read that chose the predecessor: with the counting
// done in the interceptor, an event in the client library's hands unsettles
// the waiter before its watch channel delivers it, so burst counts are
// exact.
package etcdmutex
