package docs

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Shortened settings: every command runs, against real servers, in a
// fraction of a second per cell. The figures are not the point; that the
// command still parses, runs and ends as the guide says is.
const (
	shortCell   = "200ms" // --duration, --trial
	maxClients  = 16      // --clients, --max-clients, --ramp's top
	maxAcquires = 200     // --acquires
	capacityCap = "3s"    // capacity's --max-time
)

// boolFlags take no value; every other long flag of lockbench does.
var boolFlags = map[string]bool{"--renew": true, "--force": true, "--partial": true,
	"--quiet": true, "-q": true, "--check": true, "--help": true, "-h": true}

// addressFlags name servers; one off loopback is another machine's, and
// the test's sandbox serves its role instead (through LOCKBENCH_…).
var addressFlags = map[string]bool{"--redis": true, "--redlock": true, "--zk": true,
	"--etcd": true, "--postgres": true, "--mysql": true}

// flag is one --name value pair of a command line, or a positional word
// (name empty).
type flag struct{ name, value string }

func parseFlags(args []string) []flag {
	var fs []flag
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !strings.HasPrefix(a, "-"):
			fs = append(fs, flag{value: a})
		case strings.Contains(a, "="):
			n, v, _ := strings.Cut(a, "=")
			fs = append(fs, flag{n, v})
		case boolFlags[a] || i+1 == len(args):
			fs = append(fs, flag{name: a})
		default:
			fs = append(fs, flag{a, args[i+1]})
			i++
		}
	}
	return fs
}

func joinFlags(fs []flag) []string {
	var out []string
	for _, f := range fs {
		switch {
		case f.name == "":
			out = append(out, f.value)
		case boolFlags[f.name] || f.value == "":
			out = append(out, f.name)
		default:
			out = append(out, f.name, f.value)
		}
	}
	return out
}

// shorten rewrites a run or capacity command's arguments so that it ends
// in seconds on this machine: cells of shortCell, no warm-up, one repeat,
// at most maxClients clients, a bounded capacity search, no other
// machine's address and results under the working directory.
func shorten(sub string, args []string) []string {
	fs := parseFlags(args)
	out := fs[:0]
	for _, f := range fs {
		if v, drop := shortValue(f); !drop {
			out = append(out, flag{f.name, v})
		}
	}
	ensure := map[string]string{"--warmup": "0s", "--duration": shortCell}
	if slices.ContainsFunc(out, func(f flag) bool { return f.name == "--ramp" || f.name == "--acquires" }) {
		delete(ensure, "--duration") // they set a cell's length themselves
	}
	if sub == "capacity" {
		ensure["--trial"], ensure["--max-time"] = shortCell, capacityCap
	}
	for name, v := range ensure {
		if !slices.ContainsFunc(out, func(f flag) bool { return f.name == name }) {
			out = append(out, flag{name, v})
		}
	}
	return joinFlags(out)
}

// shortenSuite rewrites a suite run's arguments so that it ends in
// seconds: the quick tier's first workload (one cell a row), whatever
// tier and workloads the guide names, and results under the working
// directory.
func shortenSuite(args []string) []string {
	fs := parseFlags(args)
	out := fs[:0]
	for _, f := range fs {
		switch f.name {
		case "--tier", "--workload":
			continue
		case "--out":
			f.value = strings.TrimPrefix(f.value, "/")
		}
		out = append(out, f)
	}
	out = append(out, flag{"--tier", "quick"}, flag{"--workload", "uncontended"})
	return joinFlags(out)
}

// shortValue is one flag's shortened value, or drop for an address off
// loopback.
func shortValue(f flag) (v string, drop bool) {
	switch f.name {
	case "--duration", "--trial":
		return shortCell, false
	case "--warmup":
		return "0s", false
	case "--repeat":
		return "1", false
	case "--max-time":
		return capacityCap, false
	case "--clients":
		return capList(f.value), false
	case "--max-clients":
		return capCount(f.value, maxClients), false
	case "--acquires":
		return capCount(f.value, maxAcquires), false
	case "--ramp":
		parts := strings.Split(f.value, ":")
		if len(parts) != 3 {
			return f.value, false // lockbench judges it
		}
		return parts[0] + ":" + parts[1] + ":" + shortCell, false
	case "--metrics-addr":
		return "127.0.0.1:0", false
	case "--out":
		return strings.TrimPrefix(f.value, "/"), false
	}
	return f.value, addressFlags[f.name] && !onLoopback(f.value)
}

func capCount(s string, most int) string {
	n, err := strconv.Atoi(s)
	if err != nil {
		return s // lockbench judges it
	}
	return strconv.Itoa(min(n, most))
}

// capList caps a client list at maxClients, keeping its order and
// dropping the counts that became repeats.
func capList(s string) string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		if v := capCount(c, maxClients); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return strings.Join(out, ",")
}

func onLoopback(addrs string) bool {
	for _, a := range strings.Split(addrs, ",") {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			return false
		}
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
	}
	return true
}

// shardsOf returns the shard index and count of a --shard I/N command,
// or n 0 when it is not sharded with a fixed index.
func shardsOf(args []string) (i, n int) {
	for _, f := range parseFlags(args) {
		if f.name != "--shard" {
			continue
		}
		a, b, ok := strings.Cut(f.value, "/")
		i, err1 := strconv.Atoi(a)
		n, err2 := strconv.Atoi(b)
		if ok && err1 == nil && err2 == nil {
			return i, n
		}
	}
	return 0, 0
}

// asShard rewrites a shard I/N command into shard j of the same run: its
// --shard and the shard-I in its words become j's.
func asShard(args []string, i, j int) []string {
	from, to := fmt.Sprintf("shard-%d", i), fmt.Sprintf("shard-%d", j)
	out := make([]string, len(args))
	for k, a := range args {
		out[k] = strings.ReplaceAll(a, from, to)
		if k > 0 && args[k-1] == "--shard" {
			out[k] = fmt.Sprintf("%d/%s", j, strings.SplitN(a, "/", 2)[1])
		}
	}
	return out
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		name, sub string
		in, want  []string
	}{
		{"run", "run", []string{"--impl", "redis", "--clients", "1,8,32,64", "--duration", "5s", "--repeat=3"},
			[]string{"--impl", "redis", "--clients", "1,8,16", "--duration", shortCell, "--repeat", "1", "--warmup", "0s"}},
		{"remote", "run", []string{"--shard", "0/4", "--zk", "10.0.0.5:2181", "--renew", "--out", "/results/x"},
			[]string{"--shard", "0/4", "--renew", "--out", "results/x", "--duration", shortCell, "--warmup", "0s"}},
		{"ramp", "run", []string{"--ramp", "8:8:5s", "--clients", "64"},
			[]string{"--ramp", "8:8:" + shortCell, "--clients", "16", "--warmup", "0s"}},
		{"capacity", "capacity", []string{"--impl", "redis", "--max-clients", "128"},
			[]string{"--impl", "redis", "--max-clients", "16", "--duration", shortCell, "--max-time", capacityCap, "--trial", shortCell, "--warmup", "0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shorten(tc.sub, tc.in); !sameSet(got, tc.want) { // appended flags come in map order
				t.Errorf("shorten = %q, want %q", got, tc.want)
			}
		})
	}
	if got := asShard([]string{"run", "--shard", "0/4", "--out", "shard-0"}, 0, 2); !slices.Equal(got, []string{"run", "--shard", "2/4", "--out", "shard-2"}) {
		t.Errorf("asShard = %q", got)
	}
}

// sameSet compares flag lines whose appended flags may come in any order.
func sameSet(a, b []string) bool {
	pa, pb := parseFlags(a), parseFlags(b)
	if len(pa) != len(pb) {
		return false
	}
	for _, f := range pa {
		if !slices.Contains(pb, f) {
			return false
		}
	}
	return true
}
