package redisfair

// InstanceID returns l's Redisson instance id, for tests that compare
// grant order with the server's queue: l's n-th Acquire queues as
// <instance id>:<n>.
func InstanceID(l *Locker) string { return l.id }

// AcquireSrc is the acquire script, for tests that drive it directly.
const AcquireSrc = acquireSrc
