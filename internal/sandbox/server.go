package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Server is one running server process.
type Server struct {
	Kind string // "redis" or "zookeeper"
	Addr string // host:port clients connect to

	dir     string
	logPath string
	args    []string
	bin     string
	ready   func(ctx context.Context, addr string) error
	// user, if set, is the system account the server runs as when
	// lockbench runs as root (PostgreSQL refuses to run as root).
	user string
	// stopSig is the signal Stop sends first; SIGTERM when zero.
	stopSig syscall.Signal
	// prestart, if set, runs before every start: waiting out what a
	// killed predecessor left behind, say.
	prestart func(ctx context.Context) error
	// env is what WithEnv added to its environment when it first started.
	env []string
	// backing are servers started for this one alone, which it runs on
	// (a kube-apiserver's etcd): their CPU is this server's (Serving), and
	// the fleet stops them after it (StopAll). Stop, Kill and Restart
	// touch this server alone, so that a fault on it leaves its store be.
	backing []*Server

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	// cpu reads CPUTime, keeping the time of threads that ended in it.
	cpu cpuMemo
}

// Process is how a kind runs one of its servers: what NewServer makes a
// Server of and Launch starts.
type Process struct {
	Kind string // the kind's name (serverkind)
	Addr string // host:port clients will connect to
	// Dir is the server's working directory; Log the file its output
	// goes to.
	Dir, Log string
	Bin      string
	Args     []string
	// Ready answers nil once the server on addr serves clients.
	Ready func(ctx context.Context, addr string) error
	// User, if set, is the system account the server runs as when
	// lockbench runs as root (PostgreSQL refuses to run as root).
	User string
	// StopSignal is the signal Stop sends first; SIGTERM when zero.
	StopSignal syscall.Signal
	// Prestart, if set, runs before every start: waiting out what a
	// killed predecessor left behind, say.
	Prestart func(ctx context.Context) error
	// Backing are servers started for this one alone, which it runs on
	// (a kube-apiserver's etcd): their CPU is this server's, and the
	// fleet stops them after it.
	Backing []*Server
}

// NewServer is the server p describes, not yet started (Launch starts it).
func NewServer(p Process) *Server {
	return &Server{Kind: p.Kind, Addr: p.Addr, dir: p.Dir, logPath: p.Log, args: p.Args, bin: p.Bin, ready: p.Ready,
		user: p.User, stopSig: p.StopSignal, prestart: p.Prestart, backing: p.Backing}
}

// Launch starts the server and returns once it answers (its Ready) or
// ctx ends; a server that failed to answer is still the caller's to stop.
func (s *Server) Launch(ctx context.Context) error { return s.start(ctx) }

// Launch starts the server p describes: NewServer, then its Launch.
func Launch(ctx context.Context, p Process) (*Server, error) {
	s := NewServer(p)
	return s, s.start(ctx)
}

// Pid is the server's process, while it runs.
func (s *Server) Pid() (int, bool) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || !s.Running() {
		return 0, false
	}
	return cmd.Process.Pid, true
}

// Bin is the server's executable.
func (s *Server) Bin() string { return s.bin }

// Backing is what the server runs on (see Process.Backing).
func (s *Server) Backing() []*Server { return s.backing }

// Dir is the directory the server runs in (its working directory).
func (s *Server) Dir() string { return s.dir }

// Running reports whether the process is up.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

func (s *Server) start(ctx context.Context) error {
	if s.prestart != nil {
		if err := s.prestart(ctx); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.dir
	if env := envOf(ctx); len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
		s.env = env // a restart starts it as it was
	} else if len(s.env) > 0 {
		cmd.Env = append(os.Environ(), s.env...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := RunAs(cmd, s.user); err != nil {
		logf.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("sandbox: start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	s.cmd, s.done = cmd, done
	running.Store(s.Addr, s)

	s.mu.Unlock()
	err = s.waitReady(ctx)
	s.mu.Lock()
	return err
}

func (s *Server) waitReady(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-s.done:
			return fmt.Errorf("sandbox: %s on %s %w: %s", s.Kind, s.Addr, errExitedAtStart, logTail(s.logPath, 600))
		default:
		}
		if last = s.ready(ctx, s.Addr); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sandbox: %s on %s did not answer: %w (last: %v) %s", s.Kind, s.Addr, ctx.Err(), last, logTail(s.logPath, 600))
		case <-tick.C:
		}
	}
}

// Stop terminates the server's process group and waits for it to exit. A
// stopped server may be started again with Restart.
func (s *Server) Stop() error {
	if s.stopSig != 0 {
		return s.signal(s.stopSig)
	}
	return s.signal(syscall.SIGTERM)
}

// StopAll stops the server, then the servers it runs on.
func (s *Server) StopAll() error {
	errs := []error{s.Stop()}
	for _, b := range s.backing {
		errs = append(errs, b.Stop())
	}
	return errors.Join(errs...)
}

// KillAll kills the server and the servers it runs on.
func (s *Server) KillAll() {
	s.Kill()
	for _, b := range s.backing {
		b.Kill()
	}
}

// Kill stops the server with SIGKILL: no shutdown work at all, as in a crash.
func (s *Server) Kill() error { return s.signal(syscall.SIGKILL) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	signalAll(cmd.Process.Pid, sig)
	signalAll(cmd.Process.Pid, syscall.SIGCONT) // a frozen server must run to hear it
	select {
	case <-done:
		return nil
	case <-time.After(3 * time.Second):
	}
	signalAll(cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("sandbox: %s pid %d did not exit", s.Kind, cmd.Process.Pid)
	}
}

// Restart starts a stopped server again on the same address, empty (nothing
// was persisted).
func (s *Server) Restart(ctx context.Context) error {
	if s.Running() {
		return errors.New("sandbox: restart of a running server")
	}
	return s.start(ctx)
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1. The listeners
// are held until all are chosen so that the kernel cannot hand one out twice.
func FreePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("sandbox: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Probe sends a command over a fresh TCP connection and returns the
// reply: a kind's readiness probe (Process.Ready), say.
func Probe(ctx context.Context, addr, cmd string) (string, error) {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	var buf []byte
	tmp := make([]byte, 4096)
	for {
		n, err := c.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil || (cmd == "PING\r\n" && len(buf) > 0 && buf[len(buf)-1] == '\n') {
			break
		}
	}
	return string(buf), nil
}

// Freeze stops every process that serves the server (Serving) with
// SIGSTOP: it keeps its sockets and answers nothing, as a server in a long
// GC pause or a stopped VM. Thaw lets it go on.
func (s *Server) Freeze() error { return s.send(syscall.SIGSTOP) }

// Thaw resumes a frozen server with SIGCONT.
func (s *Server) Thaw() error { return s.send(syscall.SIGCONT) }

func (s *Server) send(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || !s.Running() {
		return fmt.Errorf("sandbox: %s on %s is not running", s.Kind, s.Addr)
	}
	signalAll(cmd.Process.Pid, sig)
	return nil
}

// running holds the servers this process started, by address, so that a
// cell can read their CPU time (CPUTime) knowing only addresses.
var running sync.Map // addr → *Server

// outside holds the readings of servers on this machine that lockbench did
// not start, found by their sockets: addr → *cpuMemo.
var outside sync.Map

// CPUTime is the CPU time (user and system) every process serving addr
// (Serving) has used, and whether it could be read: false for a server
// whose processes this machine does not show lockbench, or off Linux.
func CPUTime(addr string) (time.Duration, bool) {
	pids, ok := Serving(addr)
	if !ok {
		return 0, false
	}
	if v, ok := running.Load(addr); ok {
		return v.(*Server).cpu.cpuOf(pids)
	}
	m, _ := outside.LoadOrStore(addr, new(cpuMemo))
	return m.(*cpuMemo).cpuOf(pids)
}

// pidOf is the process of the running server this process started on
// addr.
func pidOf(addr string) (int, bool) {
	v, ok := running.Load(addr)
	if !ok {
		return 0, false
	}
	return v.(*Server).Pid()
}
