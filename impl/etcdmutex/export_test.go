package etcdmutex

// WatchesFromPast is how many of the watches l's Locks asked for start at
// a past revision, which the server files as unsynced.
func WatchesFromPast(l *MutexLocker) int64 { return l.watch.past.Load() }

// WatchesAsked is how many watches l's Locks asked for.
func WatchesAsked(l *MutexLocker) int64 { return l.watch.asked.Load() }
