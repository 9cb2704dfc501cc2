package engine

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// HeapHeadroom is how far lockbench's heap may grow past what is live
// before the collector runs, while an open-loop cell runs and GOGC is not
// set.
//
// Go's default (GOGC=100) collects whenever the heap has doubled. A load
// generator's live heap is a few MB, and it allocates as fast as its
// drivers do (go-redis: about 5 objects a command), so it collected about
// once a second in a contended open loop, and every collection takes a
// quarter of the cores for its marking and holds up what is due meanwhile.
// Measured here at 32 polling clients, 500 arrivals/s for 60 s, in three
// interleaved pairs: 46–49 collections and a schedule lag p99 of 325,
// 643 and 293 µs under Go's default; 7–8 and 349, 271 and 330 µs with
// the headroom. A fixed headroom rather than a larger GOGC keeps the cost
// bounded: the heap may hold at most HeapHeadroom more than Go's default
// would let it, and a run whose live heap is already that large collects
// exactly as Go's default does.
//
// A closed loop keeps Go's default: what it measures is how fast it
// cycles, and cycling through 64 MiB of fresh heap instead of a few
// cache-warm MB cost more CPU than the collections saved — at 64 Redis
// clients 53–60 µs a cycle against 49–50 in interleaved pairs, at 1
// client 87–90 against 80–85.
const HeapHeadroom = 64 << 20

// gcHeadroom raises the collector's percent so that a collection comes
// HeapHeadroom past the live heap, never below Go's default; open-loop
// cells that run at once share it (and so does any cell beside them), and the percent in force before the first is
// restored when the last stops. A GOGC set in the environment wins: the
// headroom is then never applied.
var gcHeadroom struct {
	mu      sync.Mutex
	cells   int
	prev    int
	percent int // in force while cells > 0; 0 when GOGC was set
}

// userGOGC reports whether the collector was set in the environment.
func userGOGC() bool {
	_, ok := os.LookupEnv("GOGC")
	return ok
}

// raiseGC counts a cell in and raises the percent for it.
func raiseGC() {
	gcHeadroom.mu.Lock()
	defer gcHeadroom.mu.Unlock()
	gcHeadroom.cells++
	if gcHeadroom.cells > 1 || userGOGC() {
		return
	}
	gcHeadroom.prev = debug.SetGCPercent(100)
	gcHeadroom.percent = 100
	adjustGCLocked()
}

// adjustGC sets the percent again for the live heap now.
func adjustGC() {
	gcHeadroom.mu.Lock()
	defer gcHeadroom.mu.Unlock()
	adjustGCLocked()
}

func adjustGCLocked() {
	if gcHeadroom.cells == 0 || gcHeadroom.percent == 0 {
		return
	}
	if p := headroomPercent(liveHeap()); p != gcHeadroom.percent {
		debug.SetGCPercent(p)
		gcHeadroom.percent = p
	}
}

// lowerGC counts a cell out, restoring the percent after the last, and
// returns the percent the cell's collector last ran under (0 when GOGC
// was set).
func lowerGC() int {
	gcHeadroom.mu.Lock()
	defer gcHeadroom.mu.Unlock()
	p := gcHeadroom.percent
	if gcHeadroom.cells--; gcHeadroom.cells == 0 && p != 0 {
		debug.SetGCPercent(gcHeadroom.prev)
		gcHeadroom.percent = 0
	}
	return p
}

// headroomPercent is the GOGC that puts the next collection HeapHeadroom
// past live bytes, and never below Go's default of 100. Go also never
// collects below a minimum heap of 4 MiB × GOGC/100, so a live heap under
// 4 MiB is taken as 4 MiB: the collection then comes at HeapHeadroom,
// not a larger minimum.
func headroomPercent(live uint64) int {
	p := math.Ceil(100 * float64(HeapHeadroom) / float64(max(live, minHeap)))
	return int(max(p, 100))
}

// minHeap is the Go runtime's minimum heap at GOGC=100.
const minHeap = 4 << 20

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
