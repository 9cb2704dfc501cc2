package faults

import "sync"

// resource is the shared thing a lock protects, kept in process: it
// records every write with the writer's fencing token. A fenced resource
// rejects a write whose token is lower than the highest it has accepted,
// as the storage service in Kleppmann's fencing scheme does; an unfenced
// one takes every write.
type resource struct {
	fenced bool

	mu      sync.Mutex
	highest uint64
	writes  []write
}

type write struct {
	client   int
	token    uint64
	accepted bool
}

// Write offers a write and says whether the resource took it.
func (r *resource) Write(client int, token uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := !r.fenced || token >= r.highest
	if ok {
		r.highest = max(r.highest, token)
	}
	r.writes = append(r.writes, write{client: client, token: token, accepted: ok})
	return ok
}
