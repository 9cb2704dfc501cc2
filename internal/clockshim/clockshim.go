// Package clockshim moves the wall clock of a server lockbench starts:
// a small library of lockbench's own (shim.c.in), preloaded into the server,
// adds the offset written in its directory's clock-offset file to every
// wall-clock reading, so that one server's clock can jump while it runs
// and no other process's (the machine's clock is shared with everything
// else here and is never set). It works for servers that read the clock
// through the C library (Redis, the JVM); Go binaries (etcd, NATS, a
// kube-apiserver) read it without the library and cannot be moved.
package clockshim

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

//go:embed shim.c.in
var source []byte

// OffsetFile is the file, in the directory a preloaded server starts in,
// whose eight bytes (little-endian nanoseconds) move its wall clock.
const OffsetFile = "clock-offset"

// ErrNoCompiler is what Build's error wraps when no C compiler is
// installed to build the shim with.
var ErrNoCompiler = errors.New("clockshim: no C compiler (apt-get install -y gcc)")

// Build compiles the shim once into lockbench's cache and returns its
// path, for LD_PRELOAD.
func Build(ctx context.Context) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(source)
	dir := filepath.Join(cache, "lockbench", "clockshim")
	lib := filepath.Join(dir, "clockshim-"+hex.EncodeToString(sum[:6])+".so")
	if _, err := os.Stat(lib); err == nil {
		return lib, nil
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", ErrNoCompiler
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("clockshim: %w", err)
	}
	src := filepath.Join(dir, "shim.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", fmt.Errorf("clockshim: %w", err)
	}
	tmp := lib + ".tmp"
	if out, err := exec.CommandContext(ctx, cc, "-shared", "-fPIC", "-O2", "-o", tmp, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("clockshim: cc: %w: %s", err, out)
	}
	if err := os.Rename(tmp, lib); err != nil {
		return "", fmt.Errorf("clockshim: %w", err)
	}
	return lib, nil
}

// Env is the environment that preloads the shim at lib.
func Env(lib string) []string { return []string{"LD_PRELOAD=" + lib} }

// Set moves the wall clock of the preloaded server that started in dir
// to the machine's plus d (0 puts it back).
func Set(dir string, d time.Duration) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(d.Nanoseconds()))
	f, err := os.OpenFile(filepath.Join(dir, OffsetFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("clockshim: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("clockshim: %w", err)
	}
	return nil
}
