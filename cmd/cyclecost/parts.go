package main

import (
	"regexp"
	"strings"
)

// A part is where a function's instructions are counted: lockbench's own
// parts first, then the client's, then Go's runtime by what it does. The
// first that matches counts (allocation before collection: mallocgc's
// names say "scan" too).
var parts = []struct {
	name string
	re   *regexp.Regexp
}{
	{"histograms and interval logs", regexp.MustCompile(`^github\.com/HdrHistogram/|^compress/|^encoding/base64\.|^hash/adler32\.|^github\.com/lockbench/lockbench/(impl|result)\.RecordMicros$`)},
	{"history", regexp.MustCompile(`^github\.com/lockbench/lockbench/(engine\.\(\*Client\)\.recordOp$|result\.|linear\.)|^github\.com/anishathalye/porcupine\.`)},
	{"engine (loop, scenarios, draws)", regexp.MustCompile(`^github\.com/lockbench/lockbench/(engine|scenarios|dist|impl)\.`)},
	{"exclusion checker", regexp.MustCompile(`^github\.com/lockbench/lockbench/exclusion\.`)},
	{"clock reads and time arithmetic", regexp.MustCompile(`^time\.|^runtime\.(nanotime|walltime)`)},
	{"lock driver (impl/redis)", regexp.MustCompile(`^github\.com/lockbench/lockbench/impl/`)},
	{"go-redis", regexp.MustCompile(`^github\.com/redis/go-redis/`)},
	{"buffers, sockets, formatting", regexp.MustCompile(`^(bufio|net|syscall|internal/poll|internal/runtime/syscall|internal/syscall|strconv|internal/strconv|errors|context|bytes|internal/bytealg)[./]|^indexbytebody$`)},
	{"runtime: allocation", regexp.MustCompile(`^runtime\..*(malloc|memclr|nextFree|refill|newobject|growslice|makeslice|mcache|mspan|mheap|allocSpan|makemap|newarray|HeapBits|pageAlloc|pallocBits)`)},
	{"runtime: garbage collection", regexp.MustCompile(`^runtime\..*(gc|GC|[mM]ark|[sS]can|[sS]weep|wbBuf|findObject|typePointers|greyobject|shade|tryDeferToSpanScan|bulkBarrier|spanOf)|^gcWriteBarrier`)},
	{"runtime: scheduler, timers, netpoll", regexp.MustCompile(`^runtime\..*(netpoll|findRunnable|schedule|park|ready|stealWork|casgstatus|runq|execute|lock2|unlock2|futex|stopm|startm|note|wakep|[tT]imer|syscall|spinning|sema|injectglist|handoff|acquirep|releasep|pidle|usleep|osyield|mcall|gogo|goexit|chan|select|pollDesc)|^gogo$`)},
	{"runtime: other", regexp.MustCompile(`^runtime\.|^internal/runtime/`)},
	{"the plain loop (cmd/redisloop)", regexp.MustCompile(`^main\.`)},
}

// partOf names the part fn is counted in; "other" when none matches.
func partOf(fn string) string {
	for _, p := range parts {
		if p.re.MatchString(fn) {
			return p.name
		}
	}
	return "other"
}

// shortName trims the module path off lockbench's own functions.
func shortName(fn string) string {
	return strings.TrimPrefix(fn, "github.com/lockbench/lockbench/")
}
