package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Spec says what to start: for each server kind by name, how many
// (independent servers, or the size of one ensemble).
type Spec map[string]int

// DefaultStartTimeout bounds the wait for a server to answer.
const DefaultStartTimeout = 30 * time.Second

// Fleet is a set of running servers. Close stops them.
type Fleet struct {
	// Servers holds the servers of each kind, in start order.
	Servers map[string][]*Server

	dir       string
	closeOnce sync.Once
	closeErr  error
}

// ErrMissing is wrapped by the error Start returns when a server binary or
// jar is not installed.
var ErrMissing = errors.New("sandbox: not installed")

// MissingError names the missing program and how to install it.
type MissingError struct {
	What    string // e.g. "redis-server"
	Install string // e.g. "apt-get install -y redis-server"
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s not found: install it with `%s` (or run `bash scripts/install-servers`)", e.What, e.Install)
}

// Unwrap lets errors.Is(err, ErrMissing) hold.
func (e *MissingError) Unwrap() error { return ErrMissing }

// Start launches what spec asks for, kind by kind in name order, and
// waits until every server answers (each within DefaultStartTimeout). On
// error, whatever had started is stopped again.
func Start(ctx context.Context, spec Spec) (f *Fleet, err error) {
	sweep()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", dirPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	f = &Fleet{dir: dir, Servers: map[string][]*Server{}}
	defer func() {
		if err != nil {
			f.Close()
			f = nil
		}
	}()
	names := make([]string, 0, len(spec))
	for name, n := range spec {
		if n > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		k, ok := LookupKind(name)
		if !ok {
			return f, fmt.Errorf("sandbox: unknown server kind %q", name)
		}
		if err := f.start(ctx, k, spec[name]); err != nil {
			return f, err
		}
	}
	return f, nil
}

func (f *Fleet) start(ctx context.Context, k Kind, n int) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultStartTimeout)
	defer cancel()
	return retryPorts(ctx, func(attempt int) error {
		ss, err := k.Start(ctx, filepath.Join(f.dir, fmt.Sprintf("%s-%d", k.Name, attempt)), n)
		if err != nil {
			for _, s := range ss {
				s.KillAll() // exited or not ready: either way, not ours to leave
			}
			return err
		}
		f.Servers[k.Name] = append(f.Servers[k.Name], ss...)
		return nil
	})
}

// Addrs returns the addresses of the servers of kind, in start order.
func (f *Fleet) Addrs(kind string) []string { return Addrs(f.Servers[kind]) }

func Addrs(ss []*Server) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Addr
	}
	return out
}

// Close stops every server and removes the temporary directory. It is safe
// to call more than once and from several goroutines.
func (f *Fleet) Close() error {
	f.closeOnce.Do(func() {
		var errs []error
		for _, ss := range f.Servers {
			for _, s := range ss {
				if err := s.StopAll(); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if err := os.RemoveAll(f.dir); err != nil {
			errs = append(errs, err)
		}
		f.closeErr = errors.Join(errs...)
	})
	return f.closeErr
}

// dirPrefix starts the name of every sandbox's temporary directory, which
// goes on with the pid of the lockbench that made it.
const dirPrefix = "lockbench-sandbox-"

// sweep removes the directories of sandboxes whose lockbench is gone: one
// killed outright (SIGKILL) takes its servers with it (see sysProcAttr)
// but cannot remove its directory itself.
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*-*"))
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), dirPrefix), "-")
		if pid, err := strconv.Atoi(pidText); err == nil && pid != os.Getpid() && !alive(pid) {
			os.RemoveAll(d)
		}
	}
}

// LogTail returns the last bytes a server wrote, for error messages.
func logTail(path string, n int64) string {
	fh, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return ""
	}
	if st.Size() > n {
		fh.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(fh)
	return strings.TrimSpace(string(b))
}

// errExitedAtStart marks a server that exited while starting: most often
// its port, free when chosen, was taken before it could bind it.
var errExitedAtStart = errors.New("exited at start")

// retryPorts runs start up to three times while the server exits at start,
// each time on fresh ports: the free-port probe and the server's bind are
// not atomic, and another program (or another lockbench) may win the race.
func retryPorts(ctx context.Context, start func(attempt int) error) error {
	var err error
	for attempt := range 3 {
		if err = start(attempt); err == nil || !errors.Is(err, errExitedAtStart) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// StartEach starts n independent servers of one binary, found by find,
// each in a directory of its own (prefix-0, prefix-1, …), and returns
// those started so far with the first error.
func StartEach(ctx context.Context, dir string, n int, prefix string, find func() (string, error),
	start func(ctx context.Context, bin, dir string) (*Server, error)) ([]*Server, error) {
	bin, err := find()
	if err != nil {
		return nil, err
	}
	var out []*Server
	for i := range n {
		s, err := start(ctx, bin, filepath.Join(dir, fmt.Sprintf("%s-%d", prefix, i)))
		if s != nil {
			out = append(out, s)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
