package result_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/result"
	"github.com/lockbench/lockbench/result/hlog"
)

// readerFiles are the files lockbench reads back, each written by its own
// writer, that FuzzReaders cuts short or alters.
var readerFiles = []string{result.SummaryFile, result.MetaFile, "cells/x/hot_c4" + result.HlogExt, "cells/x/hot_c4" + result.GrantsExt}

// fuzzCell is the cell whose .hlog and .grants FuzzReaders damages.
var fuzzCell = result.Cell{Impl: "x", Scenario: "hot", Clients: 4, Acquires: 3000, DurationS: 2.5}

// writeReaderFiles writes one file of each kind into dir.
func writeReaderFiles(tb testing.TB, dir string) {
	tb.Helper()
	sum := result.Summary{Schema: result.SchemaVersion, Cells: []result.Cell{fuzzCell, {Impl: "y", Scenario: "burst", Clients: 8, Acquires: 8}}}
	meta := result.Meta{PlanHash: "0123abcd", Shard: &result.ShardMeta{Index: 1, Count: 2, RunID: "r1",
		Skew: &result.Skew{OffsetUs: -12.5, BoundUs: 40, Against: "redis", Samples: 9}}}
	for name, v := range map[string]any{result.SummaryFile: sum, result.MetaFile: meta} {
		if err := result.WriteJSON(filepath.Join(dir, name), v); err != nil {
			tb.Fatal(err)
		}
	}
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var ivs []hlog.Interval
	for i := range 3 {
		a, r := result.NewHistogram(), result.NewHistogram()
		a.RecordValues(int64(100+i), 1000)
		r.RecordValue(40)
		ivs = append(ivs, hlog.Interval{Start: start.Add(time.Duration(i) * time.Second), Acquire: a, Release: r})
	}
	if err := hlog.WriteCell(dir, fuzzCell, start, ivs, "test"); err != nil {
		tb.Fatal(err)
	}
	g, err := result.CreateGrants(dir, fuzzCell)
	if err != nil {
		tb.Fatal(err)
	}
	g.Write([]result.Grant{{Enter: 1, Exit: 2, Token: 7, Lock: 0, Client: 1, Fenced: true}, {Enter: 3, Exit: 4, Lock: 1, Client: 2}})
	if err := g.Close(); err != nil {
		tb.Fatal(err)
	}
}

// readBack reads the file of kind k in dir and reduces what it read to a
// comparable text; the error is the reader's.
func readBack(k int, dir string) (string, error) {
	path := filepath.Join(dir, readerFiles[k])
	switch k {
	case 0:
		s, err := result.ReadSummary(path)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(s)
		return string(b), err
	case 1:
		m, err := result.ReadMeta(path)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(m)
		return string(b), err
	case 2:
		l, err := hlog.Read(path)
		if err != nil {
			return "", err
		}
		var out []string
		for _, h := range l.Intervals {
			out = append(out, fmt.Sprintf("%s %d-%d ms: %d values, max %d", h.Tag(), h.StartTimeMs(), h.EndTimeMs(), h.TotalCount(), h.Max()))
		}
		return strings.Join(out, "\n"), nil
	}
	var out []string
	err := result.ReadGrants(dir, fuzzCell, func(g result.Grant) { b, _ := json.Marshal(g); out = append(out, string(b)) })
	return strings.Join(out, "\n"), err
}

// FuzzReaders cuts a file lockbench reads back short (cut below its
// length) or flips bits of one byte, and checks the reader: it never
// panics; an error names the file; a file cut short reads as an error or
// as everything it held — never fewer cells, intervals or grants without a
// word. The interval log's end record is what makes a cut at a line
// boundary visible; the grants file's end record does the same for a cut
// at a record.
func FuzzReaders(f *testing.F) {
	for k := range readerFiles {
		for _, cut := range []uint16{0, 1, 10, 33, 37, 70, 200, 400, 0xFFFF} {
			f.Add(uint8(k), cut, uint16(20), byte(0))
			f.Add(uint8(k), uint16(0xFFFF), cut, byte(0x20))
		}
	}
	dir := f.TempDir()
	writeReaderFiles(f, dir)
	var orig [4][]byte
	var want [4]string
	for k := range readerFiles {
		var err error
		if orig[k], err = os.ReadFile(filepath.Join(dir, readerFiles[k])); err != nil {
			f.Fatal(err)
		}
		if want[k], err = readBack(k, dir); err != nil {
			f.Fatalf("%s does not read back whole: %v", readerFiles[k], err)
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, cut, at uint16, flip byte) {
		k := int(kind) % len(readerFiles)
		b := bytes.Clone(orig[k])
		truncated := int(cut) < len(b)
		if truncated {
			b = b[:cut]
		} else {
			b[int(at)%len(b)] ^= flip
		}
		d := t.TempDir()
		os.MkdirAll(filepath.Dir(filepath.Join(d, readerFiles[k])), 0o755)
		if err := os.WriteFile(filepath.Join(d, readerFiles[k]), b, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readBack(k, d)
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), filepath.Join(d, readerFiles[k])) {
				t.Fatalf("%s (%d bytes) read with an error not naming it: %v", readerFiles[k], len(b), err)
			}
		case truncated && got != want[k]:
			t.Fatalf("%s cut at %d of %d bytes read without an error as\n%s\nnot\n%s", readerFiles[k], cut, len(orig[k]), got, want[k])
		}
	})
}
