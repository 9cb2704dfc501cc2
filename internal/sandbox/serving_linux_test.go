package sandbox

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A server lockbench did not start is found by its listening socket: this
// test's own process, listening on loopback, is what serves the address,
// and its CPU time is the server's.
func TestServingFindsTheListener(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pids, ok := Serving(ln.Addr().String())
	if !ok || len(pids) == 0 || pids[0] != os.Getpid() {
		t.Fatalf("Serving(%s) = %v, %v; want this process %d first", ln.Addr(), pids, ok, os.Getpid())
	}
	if cpu, ok := CPUTime(ln.Addr().String()); !ok || cpu <= 0 {
		t.Errorf("CPUTime of a local server = %v, %v; want this process's", cpu, ok)
	}
	ln.Close()
	listeners.Delete(ln.Addr().String())
	if pids, ok := Serving(ln.Addr().String()); ok {
		t.Errorf("a closed port is served by %v", pids)
	}
	if _, ok := Serving("192.0.2.1:80"); ok {
		t.Error("an address off this machine is served here")
	}
}

// /proc/net/tcp lists sockets by hex address:port; only the listening
// ones (state 0A) on the port count.
func TestParseListen(t *testing.T) {
	t.Parallel()
	text := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 100 0 0 10 0
`
	got := parseListen(bufio.NewScanner(strings.NewReader(text)), 8080)
	if !slices.Equal(got, []string{"4242"}) {
		t.Errorf("parseListen(8080) = %v, want [4242]", got)
	}
}

// A process that leaves its server's process group and session, as a
// PostgreSQL backend does, still serves it: Serving finds it below the
// server, and a freeze stops it too.
func TestServingFollowsChildrenOutOfTheGroup(t *testing.T) {
	sh := exec.Command("sh", "-c", "setsid sleep 30 & wait")
	sh.SysProcAttr = sysProcAttr()
	if err := sh.Start(); err != nil {
		t.Skip("no sh:", err)
	}
	defer func() { signalAll(sh.Process.Pid, 9); sh.Wait() }()
	var child int
	for end := time.Now().Add(10 * time.Second); child == 0 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if d := descendants(sh.Process.Pid); len(d) > 0 {
			child = d[0]
		}
	}
	if child == 0 {
		t.Fatal("the shell's child never appeared")
	}
	if p, _ := readStat("/proc/" + itoa(child) + "/stat"); p.pgrp == sh.Process.Pid {
		t.Fatalf("the child %d stayed in the group: setsid did not run", child)
	}
	signalAll(sh.Process.Pid, 19) // SIGSTOP
	defer signalAll(sh.Process.Pid, 18)
	for end := time.Now().Add(5 * time.Second); state(child) != "T" && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
	}
	if s := state(child); s != "T" {
		t.Errorf("the child out of the group is in state %q after a freeze, want T (stopped)", s)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// state is a process's state letter from /proc/PID/stat.
func state(pid int) string {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	s, _, _ := strings.Cut(rest, " ")
	return s
}
