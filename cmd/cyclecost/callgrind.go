package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// profile is one callgrind dump: each function's own instructions (Ir,
// its callees' left out) and how often each function was called.
type profile struct {
	self  map[string]int64
	calls map[string]int64
}

// recursion is callgrind's suffix for a function entered again below
// itself (--separate-recs): runtime.mcall'2 is runtime.mcall.
var recursion = regexp.MustCompile(`'\d+$`)

// readDump reads a callgrind dump whose first event is Ir (callgrind's
// default). Names may be compressed, "fn=(12) name" then "fn=(12)"; the
// cost line after a calls= line is the call's inclusive cost, which is the
// callee's, not the caller's own.
func readDump(r io.Reader) (profile, error) {
	p := profile{self: map[string]int64{}, calls: map[string]int64{}}
	names := map[string]string{} // fn and cfn share one table
	name := func(s string) string {
		if !strings.HasPrefix(s, "(") {
			return recursion.ReplaceAllString(s, "")
		}
		id, rest, _ := strings.Cut(s, ")")
		if rest = strings.TrimSpace(rest); rest != "" {
			names[id] = recursion.ReplaceAllString(rest, "")
		}
		return names[id]
	}
	var fn, callee string
	var inclusive bool // the next cost line is a call's
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "positions:"):
			// A cost line is its positions, then its events: with more
			// than the line (--dump-instr, --dump-bb), Ir is not second.
			if f := strings.Fields(line[len("positions:"):]); len(f) != 1 || f[0] != "line" {
				return p, fmt.Errorf("line %d: %q: want positions by line alone (callgrind's default)", n, line)
			}
		case strings.HasPrefix(line, "events:"):
			if f := strings.Fields(line[len("events:"):]); len(f) == 0 || f[0] != "Ir" {
				return p, fmt.Errorf("line %d: events %q: want Ir first (callgrind's default)", n, line)
			}
		case strings.HasPrefix(line, "fn="):
			fn = name(line[3:])
		case strings.HasPrefix(line, "cfn="):
			callee = name(line[4:])
		case strings.HasPrefix(line, "calls="):
			f := strings.Fields(line[len("calls="):])
			if len(f) == 0 {
				return p, fmt.Errorf("line %d: %q: no count", n, line)
			}
			k, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return p, fmt.Errorf("line %d: %q: %w", n, line, err)
			}
			p.calls[callee] += k
			inclusive = true
		case line != "" && strings.ContainsRune("0123456789+-*", rune(line[0])):
			f := strings.Fields(line)
			if inclusive {
				inclusive = false
				continue
			}
			if len(f) < 2 || fn == "" {
				continue // a position with no cost
			}
			ir, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return p, fmt.Errorf("line %d: %q: %w", n, line, err)
			}
			p.self[fn] += ir
		}
	}
	return p, sc.Err()
}

// add sums q into p.
func (p profile) add(q profile) {
	for k, v := range q.self {
		p.self[k] += v
	}
	for k, v := range q.calls {
		p.calls[k] += v
	}
}
