package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Spec says what to start.
type Spec struct {
	// Redis is the number of independent redis-server processes.
	Redis int
	// ZK is the ZooKeeper size: 0 none, 1 standalone, 3 (any n ≥ 3) an
	// ensemble of n members on loopback.
	ZK int
	// StartTimeout bounds the wait for each server to answer. Default 30s.
	StartTimeout time.Duration
}

// DefaultStartTimeout bounds the wait for a server to answer.
const DefaultStartTimeout = 30 * time.Second

// Fleet is a set of running servers. Close stops them.
type Fleet struct {
	Redis []*Server
	ZK    []*Server

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

// Start launches what spec asks for and waits until every server answers.
// On error, whatever had started is stopped again.
func Start(ctx context.Context, spec Spec) (f *Fleet, err error) {
	if spec.StartTimeout <= 0 {
		spec.StartTimeout = DefaultStartTimeout
	}
	dir, err := os.MkdirTemp("", "lockbench-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	f = &Fleet{dir: dir}
	defer func() {
		if err != nil {
			f.Close()
			f = nil
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, spec.StartTimeout)
	defer cancel()
	if spec.Redis > 0 {
		bin, err := findRedis()
		if err != nil {
			return f, err
		}
		for i := range spec.Redis {
			var s *Server
			err := retryPorts(ctx, func(attempt int) error {
				var err error
				s, err = startRedis(ctx, bin, filepath.Join(dir, fmt.Sprintf("redis-%d-%d", i, attempt)))
				if s != nil && err != nil {
					s.Kill() // exited or not ready: either way, not ours to leave
				}
				return err
			})
			if err != nil {
				return f, err
			}
			f.Redis = append(f.Redis, s)
		}
	}
	if spec.ZK > 0 {
		err := retryPorts(ctx, func(attempt int) error {
			zs, err := startZK(ctx, filepath.Join(dir, fmt.Sprintf("zk-%d", attempt)), spec.ZK)
			if err != nil {
				for _, s := range zs {
					s.Kill()
				}
				return err
			}
			f.ZK = zs
			return nil
		})
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// RedisAddrs returns the Redis addresses in start order.
func (f *Fleet) RedisAddrs() []string { return addrs(f.Redis) }

// ZKAddrs returns the ZooKeeper client addresses.
func (f *Fleet) ZKAddrs() []string { return addrs(f.ZK) }

func addrs(ss []*Server) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Addr
	}
	return out
}

// Env returns LOCKBENCH_REDIS=…, LOCKBENCH_REDLOCK=…, LOCKBENCH_ZK=… lines
// for the servers that are up, for a shell or a test to pick up.
func (f *Fleet) Env() []string {
	var lines []string
	if len(f.Redis) > 0 {
		lines = append(lines, "LOCKBENCH_REDIS="+f.Redis[0].Addr)
		lines = append(lines, "LOCKBENCH_REDLOCK="+strings.Join(f.RedisAddrs(), ","))
	}
	if len(f.ZK) > 0 {
		lines = append(lines, "LOCKBENCH_ZK="+strings.Join(f.ZKAddrs(), ","))
	}
	return lines
}

// Close stops every server and removes the temporary directory. It is safe
// to call more than once and from several goroutines.
func (f *Fleet) Close() error {
	f.closeOnce.Do(func() {
		var errs []error
		for _, s := range append(append([]*Server{}, f.Redis...), f.ZK...) {
			if err := s.Stop(); err != nil {
				errs = append(errs, err)
			}
		}
		if err := os.RemoveAll(f.dir); err != nil {
			errs = append(errs, err)
		}
		f.closeErr = errors.Join(errs...)
	})
	return f.closeErr
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
