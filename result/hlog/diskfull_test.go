package hlog

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
)

// fullDisk is a file on a disk with room bytes left: past them, writes
// fail as a full disk's do.
type fullDisk struct {
	*os.File
	room int
}

func (d *fullDisk) Write(b []byte) (int, error) {
	n := min(len(b), d.room)
	d.room -= n
	if _, err := d.File.Write(b[:n]); err != nil {
		return 0, err
	}
	if n < len(b) {
		return n, &os.PathError{Op: "write", Path: d.Name(), Err: syscall.ENOSPC}
	}
	return n, nil
}

// A log whose disk fills up mid-cell: Close reports the full disk (an
// error wrapping ENOSPC), the log never takes the cell's own name, and
// what was written of it reads as cut short, never as a shorter cell.
func TestLogWriterOnAFullDisk(t *testing.T) {
	for _, room := range []int{0, 40, 300, 700} {
		dir := t.TempDir()
		c := result.Cell{Impl: "x", Scenario: "hot", Clients: 2}
		path, err := result.CreateCellPath(dir, c, result.HlogExt)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path + result.PartialExt)
		if err != nil {
			t.Fatal(err)
		}
		l := newLogWriter(&fullDisk{File: f, room: room}, path, c.Key(), "test")
		start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
		for i := range 4 {
			h := result.NewHistogram()
			h.RecordValues(int64(100+i), 500)
			l.Write(start, Interval{Start: start.Add(time.Duration(i) * time.Second), Acquire: h})
		}
		err = l.Close(start)
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("room %d: Close = %v, want an error wrapping ENOSPC", room, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("room %d: %s exists (%v): a log cut by a full disk took the cell's own name", room, path, err)
		}
		if l, err := Read(path + result.PartialExt); !errors.Is(err, ErrCorrupt) {
			t.Errorf("room %d: the unfinished log reads as %v, %v; want ErrCorrupt", room, l, err)
		}
		if got := result.Unfinished(dir, c); got != result.CellRel(dir, c, result.HlogExt)+result.PartialExt {
			t.Errorf("room %d: result.Unfinished = %q", room, got)
		}
	}
}
