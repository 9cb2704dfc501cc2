package redis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/sandbox"
	"github.com/lockbench/lockbench/internal/serverkind"
)

// StartReplica starts a redis-server that replicates asynchronously from
// the Redis server of, and returns once the replica has finished its
// initial sync (INFO replication says master_link_status:up).
//
// masterAddr is where the replica connects; empty means of.Addr. Passing
// the address of a proxy in front of of lets a caller cut the replication
// link without touching either server.
//
// It sets the master's repl-diskless-sync-delay to 0 so that the sync
// starts at once. The replica's directory lies beside of's, so closing of's Fleet removes
// it; the process itself is the caller's to stop (Stop or Kill), before or
// after closing the Fleet. Like every sandboxed server it dies with
// lockbench. A Restart of the replica waits for its link to come up again.
func StartReplica(ctx context.Context, of *sandbox.Server, masterAddr string) (*sandbox.Server, error) {
	if of == nil || of.Kind != "redis" {
		return nil, errors.New("sandbox: StartReplica needs a Redis server")
	}
	if masterAddr == "" {
		masterAddr = of.Addr
	}
	host, port, err := net.SplitHostPort(masterAddr)
	if err != nil {
		return nil, fmt.Errorf("sandbox: replica of %q: %w", masterAddr, err)
	}
	dir, err := os.MkdirTemp(filepath.Dir(of.Dir()), filepath.Base(of.Dir())+"-replica-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	ports, err := sandbox.FreePorts(1)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, sandbox.DefaultStartTimeout)
	defer cancel()
	// A master waits 5 s by default for more replicas before a diskless
	// sync; with one replica that wait is all there is to it.
	if _, err := command(ctx, of.Addr, "CONFIG", "SET", "repl-diskless-sync-delay", "0"); err != nil {
		return nil, fmt.Errorf("sandbox: replica of %s: %w", of.Addr, err)
	}
	s := sandbox.NewServer(sandbox.Process{
		Kind: serverkind.Redis, Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), Dir: dir, Bin: of.Bin(),
		Log: filepath.Join(dir, "redis.log"),
		Args: []string{
			"--port", strconv.Itoa(ports[0]), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir,
			"--daemonize", "no", "--protected-mode", "no",
			"--maxclients", "10000", "--logfile", "",
			"--replicaof", host, port,
		},
		Ready: replicaReady,
	})
	if err := s.Launch(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// replicaReady holds until the replica has loaded the master's data.
func replicaReady(ctx context.Context, addr string) error {
	info, err := command(ctx, addr, "INFO", "replication")
	if err != nil {
		return err
	}
	if !strings.Contains(info, "master_link_status:up") {
		return fmt.Errorf("replication link not up yet")
	}
	return nil
}

// command sends one Redis command over a fresh connection and returns its
// reply: a status or error line, an integer, or a bulk string's contents.
func command(ctx context.Context, addr string, args ...string) (string, error) {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "-"):
		return "", fmt.Errorf("redis %s: %s", addr, line[1:])
	case strings.HasPrefix(line, "$"):
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("redis %s: bad reply %q", addr, line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case len(line) > 0:
		return line[1:], nil
	}
	return "", fmt.Errorf("redis %s: empty reply", addr)
}
