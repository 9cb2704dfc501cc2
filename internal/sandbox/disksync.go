package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SyncWriteBytes is the size of each write SyncLatencies times: etcd's
// guide to its disk (`fio --rw=write --ioengine=sync --fdatasync=1
// --bs=2300`) uses it, as about one write-ahead-log entry.
const SyncWriteBytes = 2300

// SyncLatencies times small synced writes in dir, as a write-ahead log
// makes them: each appends SyncWriteBytes to one file and waits for
// fdatasync. It stops after n writes or once bound has passed, whichever
// comes first, and removes its file. ZooKeeper (forceSync) and etcd wait
// for one such sync before they acknowledge a write, so its latency
// bounds their rate of writes per client.
func SyncLatencies(dir string, n int, bound time.Duration) ([]time.Duration, error) {
	fh, err := os.CreateTemp(dir, "fdatasync-*")
	if err != nil {
		return nil, fmt.Errorf("sandbox: disk probe: %w", err)
	}
	defer os.Remove(filepath.Join(dir, filepath.Base(fh.Name())))
	defer fh.Close()
	buf := make([]byte, SyncWriteBytes)
	for i := range buf {
		buf[i] = byte(i)
	}
	out := make([]time.Duration, 0, n)
	end := time.Now().Add(bound)
	for len(out) < n && time.Now().Before(end) {
		t := time.Now()
		if _, err := fh.Write(buf); err != nil {
			return out, fmt.Errorf("sandbox: disk probe: %w", err)
		}
		if err := fdatasync(fh); err != nil {
			return out, fmt.Errorf("sandbox: disk probe: %w", err)
		}
		out = append(out, time.Since(t))
	}
	return out, nil
}

// Dir is the directory the fleet's servers keep their data under.
func (f *Fleet) Dir() string { return f.dir }
