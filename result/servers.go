package result

import (
	"slices"
	"time"
)

// ServerSetting is how the sandbox configured one kind of server in the
// run's profile, where that changes the figures ("forceSync=yes").
type ServerSetting struct {
	Kind     string `json:"kind"`
	Settings string `json:"settings"`
}

// DiskSync is the latency of small synced writes (append, then
// fdatasync) in the directory the sandbox's servers keep their data in,
// measured before the first cell: what a ZooKeeper with forceSync or an
// etcd waits for on every write it acknowledges. etcd's guide asks for a
// p99 under 10 ms.
type DiskSync struct {
	Dir   string  `json:"dir"`
	Bytes int     `json:"bytes_per_write"`
	Count int     `json:"writes"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

// DiskSyncOf summarises the latencies of synced writes; nil for none.
func DiskSyncOf(dir string, bytes int, lat []time.Duration) *DiskSync {
	if len(lat) == 0 {
		return nil
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(q*float64(len(s))+0.5) - 1
		return ms(s[min(max(i, 0), len(s)-1)])
	}
	return &DiskSync{Dir: dir, Bytes: bytes, Count: len(s), P50Ms: at(0.50), P99Ms: at(0.99), MaxMs: ms(s[len(s)-1])}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ServerWarmup is the warm-up a server kind got before the run's first
// measured cell: a closed loop of Clients on one lock through Impl, until
// its acquisitions per second were steady (Steady) or Bound passed.
type ServerWarmup struct {
	Kind    string  `json:"kind"`
	Impl    string  `json:"impl"`
	Clients int     `json:"clients"`
	Seconds float64 `json:"seconds"`
	BoundS  float64 `json:"bound_s"`
	// Steady says the rate stopped moving before the bound; false, the
	// bound ended the warm-up and the first cells may still be warming.
	Steady bool `json:"steady"`
	// RatesPerS are its acquisitions in each second.
	RatesPerS []float64 `json:"rates_per_s"`
	// Error says why the warm-up stopped early, when it failed.
	Error string `json:"error,omitempty"`
}
