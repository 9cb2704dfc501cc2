package result

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// CellShard says which of a sharded run's clients a shard's cell ran:
// clients First to First+Count−1 of the cell's Clients, by their global
// ids, so seeds and lock names are those of one process running them all.
type CellShard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	First int `json:"first_client"`
	// Clients is how many of the cell's clients this shard ran.
	Clients int `json:"clients"`
}

// ServerReadings are a shard's raw readings of the servers' cumulative
// counters before and after its cell: a merge takes the earliest before
// and the latest after, since every shard read the same servers.
type ServerReadings struct {
	Before map[string]int64 `json:"before"`
	After  map[string]int64 `json:"after"`
	// CountsBefore and CountsAfter are the same readings as their kinds
	// read them (ServerCounts of cumulative counters, no client count);
	// none when the kinds say nothing of their counters. (ReadSummary
	// sets them on shards written before schema 4 from their names.)
	CountsBefore *ServerCounts `json:"counts_before,omitempty"`
	CountsAfter  *ServerCounts `json:"counts_after,omitempty"`
}

// Counts is what the servers counted from before to after, typed; false
// when their kinds say nothing of their counters.
func (r *ServerReadings) Counts() (ServerCounts, bool) {
	if r.CountsBefore == nil || r.CountsAfter == nil {
		return ServerCounts{}, false
	}
	return r.CountsAfter.Sub(*r.CountsBefore), true
}

// Skew is a shard's clock offset from the rendezvous server's clock:
// server time − local time, known within ±BoundUs (half the best round
// trip, plus the server clock's resolution).
type Skew struct {
	OffsetUs float64 `json:"offset_us"`
	BoundUs  float64 `json:"bound_us"`
	Against  string  `json:"against"`
	Samples  int     `json:"samples"`
}

// ShardMeta is what meta.json says of a shard of a sharded run.
type ShardMeta struct {
	Index int    `json:"index"`
	Count int    `json:"count"`
	RunID string `json:"run_id"`
	Skew  *Skew  `json:"skew,omitempty"`
}

// GrantsExt is the extension of a shard's per-cell grants file.
const GrantsExt = ".grants"

// Grant is one holding of a lock: from acquire returning (Enter) to
// release called (Exit), in Unix nanoseconds on the shard's clock.
type Grant struct {
	Enter, Exit int64
	Token       uint64
	Lock        int32
	Client      int32
	Fenced      bool
}

// grantLen is a grant's size on disk: little-endian, fixed width.
const grantLen = 8 + 8 + 8 + 4 + 4 + 1

// A grants file ends with an end record of the same width: grantsEnd in
// the flag byte, the number of grants before it in the token's place. A
// file cut short (a shard killed mid-cell, a full disk) lacks it or
// disagrees with it, and records of a fixed width give no other sign:
// without it a reader would return fewer grants and no error, and merge
// would check mutual exclusion over part of the cell.
const grantsEnd = 0xFF

// GrantWriter streams grants to a cell's grants file.
type GrantWriter struct {
	f *os.File
	// path is the file's own name, taken by Close once the file is whole;
	// until then it is written as path+PartialExt.
	path string
	w    *bufio.Writer
	buf  [grantLen]byte
	n    int64 // grants written
	err  error
}

// CreateGrants creates (or empties) the grants file of cell c in dir.
func CreateGrants(dir string, c Cell) (*GrantWriter, error) {
	path, err := CreateCellPath(dir, c, GrantsExt)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path+PartialExt, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	return &GrantWriter{f: f, path: path, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Write appends grants; an error is kept and returned by Close too.
func (g *GrantWriter) Write(gs []Grant) error {
	for _, x := range gs {
		b := g.buf[:]
		binary.LittleEndian.PutUint64(b[0:], uint64(x.Enter))
		binary.LittleEndian.PutUint64(b[8:], uint64(x.Exit))
		binary.LittleEndian.PutUint64(b[16:], x.Token)
		binary.LittleEndian.PutUint32(b[24:], uint32(x.Lock))
		binary.LittleEndian.PutUint32(b[28:], uint32(x.Client))
		b[32] = 0
		if x.Fenced {
			b[32] = 1
		}
		if _, err := g.w.Write(b); err != nil && g.err == nil {
			g.err = fmt.Errorf("result: grants: %w", err)
		}
		g.n++
	}
	return g.err
}

// Close writes the end record, flushes and closes the file and, when all
// of it is on disk, gives it its own name.
func (g *GrantWriter) Close() error {
	var b [grantLen]byte
	binary.LittleEndian.PutUint64(b[16:], uint64(g.n))
	b[32] = grantsEnd
	if _, err := g.w.Write(b[:]); err != nil && g.err == nil {
		g.err = fmt.Errorf("result: grants: %w", err)
	}
	if err := g.w.Flush(); err != nil && g.err == nil {
		g.err = fmt.Errorf("result: grants: %w", err)
	}
	if err := g.f.Close(); err != nil && g.err == nil {
		g.err = fmt.Errorf("result: grants: %w", err)
	}
	if g.err == nil {
		if err := os.Rename(g.path+PartialExt, g.path); err != nil {
			g.err = fmt.Errorf("result: grants: %w", err)
		}
	}
	return g.err
}

// ErrGrantsCorrupt is wrapped by ReadGrants's error for a grants file cut
// short or altered.
var ErrGrantsCorrupt = errors.New("result: grants file cut short or altered")

// ReadGrants calls fn with every grant of cell c in dir, in file order; a
// missing file is an error wrapping os.ErrNotExist, one cut short or
// altered (no end record, a count that disagrees with it, a flag byte that
// is neither) an error wrapping ErrGrantsCorrupt. Either names the file.
// fn may have been called for some grants before such an error.
func ReadGrants(dir string, c Cell, fn func(Grant)) error {
	f, err := os.Open(CellPath(dir, c, GrantsExt))
	if err != nil {
		return fmt.Errorf("result: %w", err)
	}
	defer f.Close()
	corrupt := func(why string) error { return fmt.Errorf("%w: %s: %s", ErrGrantsCorrupt, f.Name(), why) }
	r := bufio.NewReaderSize(f, 64<<10)
	var b [grantLen]byte
	var n uint64
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return corrupt(fmt.Sprintf("no end record after %d grants", n))
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return corrupt(fmt.Sprintf("a partial record after %d grants", n))
			}
			return fmt.Errorf("result: %s: %w", f.Name(), err)
		}
		switch b[32] {
		case grantsEnd:
			if got := binary.LittleEndian.Uint64(b[16:]); got != n {
				return corrupt(fmt.Sprintf("%d grants, its end record says %d", n, got))
			}
			if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
				return corrupt("data after the end record")
			}
			return nil
		case 0, 1:
		default:
			return corrupt(fmt.Sprintf("record %d has flag byte %#x", n, b[32]))
		}
		n++
		fn(Grant{
			Enter: int64(binary.LittleEndian.Uint64(b[0:])), Exit: int64(binary.LittleEndian.Uint64(b[8:])),
			Token: binary.LittleEndian.Uint64(b[16:]), Lock: int32(binary.LittleEndian.Uint32(b[24:])),
			Client: int32(binary.LittleEndian.Uint32(b[28:])), Fenced: b[32] == 1,
		})
	}
}

// UnixTime is t in Unix nanoseconds, as grants store it.
func UnixTime(ns int64) time.Time { return time.Unix(0, ns) }
