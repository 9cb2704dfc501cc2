package sandbox

import (
	"bufio"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Serving finds every process that serves the server on addr, and is the
// one place that does: the CPU readings (CPUTime) and every signal a fault
// or Stop sends go through it, so that what is charged to a server and
// what is frozen or killed with it are the same processes.
//
// For a server this lockbench started, they are its process, every process
// below it (PostgreSQL serves each connection from a backend that calls
// setsid and so leaves the postmaster's process group) and every process
// of its group (a child its parent left behind). For a server on this
// machine lockbench did not start, they are the process holding the
// listening socket of addr's port (/proc/net/tcp and tcp6, socket inode →
// /proc/PID/fd) and those below it. False when none can be seen: not on
// this machine, in another container, or another user's (not readable).
func Serving(addr string) ([]int, bool) {
	if pid, ok := pidOf(addr); ok {
		pids, ok := family(pid)
		if v, started := running.Load(addr); ok && started {
			for _, b := range v.(*Server).backing {
				if bpid, ok := pidOf(b.Addr); ok {
					more, _ := family(bpid)
					pids = append(pids, more...)
				}
			}
		}
		return pids, ok
	}
	pid, ok := listener(addr)
	if !ok {
		return nil, false
	}
	return family(pid)
}

// family is pid with every process below it or in its process group.
func family(pid int) ([]int, bool) {
	all := allProcs()
	if _, ok := all[pid]; !ok {
		return nil, false
	}
	out := []int{pid}
	for _, p := range all {
		if p.pid == pid {
			continue
		}
		if p.pgrp == pid || below(all, p.pid, pid) {
			out = append(out, p.pid)
		}
	}
	slices.Sort(out[1:])
	return out, true
}

// below reports whether q descends from root.
func below(all map[int]proc, q, root int) bool {
	for q > 1 {
		p, known := all[q]
		if !known {
			return false
		}
		if p.ppid == root {
			return true
		}
		q = p.ppid
	}
	return false
}

func allProcs() map[int]proc {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	all := make(map[int]proc, len(stats))
	for _, path := range stats {
		if p, ok := readStat(path); ok {
			all[p.pid] = p
		}
	}
	return all
}

// listeners caches, by address, the process found listening on it: a scan
// of every process's descriptors costs milliseconds, and a cell reads a
// server's CPU twice. An entry is used while that process still lives.
var listeners sync.Map // addr → pid

// listener is the process listening on addr's port on this machine.
func listener(addr string) (int, bool) {
	if v, ok := listeners.Load(addr); ok && alive(v.(int)) {
		return v.(int), true
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, false
	}
	port, err := strconv.Atoi(portText)
	if err != nil || !local(host) {
		return 0, false
	}
	inodes := listenInodes(port)
	if len(inodes) == 0 {
		return 0, false
	}
	pid, ok := holder(inodes)
	if ok && forwarder(pid) {
		return 0, false
	}
	if ok {
		listeners.Store(addr, pid)
	}
	return pid, ok
}

// forwarder reports whether pid only forwards the port to a server
// elsewhere (Docker's userland proxy, for a container's published port):
// its CPU is not the server's, which this machine does not show.
func forwarder(pid int) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b)) == "docker-proxy"
}

// local reports whether host names this machine: loopback, or an address
// of one of its interfaces.
func local(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// listenInodes are the inodes of the sockets listening on port, over IPv4
// and IPv6 and any local address.
func listenInodes(port int) map[string]bool {
	out := map[string]bool{}
	for _, path := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(path)
		if err != nil {
			continue
		}
		for _, ino := range parseListen(bufio.NewScanner(fh), port) {
			out[ino] = true
		}
		fh.Close()
	}
	return out
}

// parseListen reads /proc/net/tcp's lines: "sl local rem st … inode",
// local as HEXADDR:HEXPORT.
func parseListen(sc *bufio.Scanner, port int) []string {
	var out []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		_, p, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		b, err := hex.DecodeString(p)
		if err != nil || len(b) != 2 || int(b[0])<<8|int(b[1]) != port {
			continue
		}
		if f[9] != "0" {
			out = append(out, f[9])
		}
	}
	return out
}

// holder is the process with one of inodes among its descriptors; of
// several (a server that forks with the socket open), the one the others
// descend from.
func holder(inodes map[string]bool) (int, bool) {
	fds, _ := filepath.Glob("/proc/[0-9]*/fd")
	var found []int
	for _, dir := range fds {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		if err != nil {
			continue
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // another user's: not ours to see
		}
		for _, e := range ents {
			l, err := os.Readlink(filepath.Join(dir, e.Name()))
			if err == nil && strings.HasPrefix(l, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] {
				found = append(found, pid)
				break
			}
		}
	}
	if len(found) == 0 {
		return 0, false
	}
	all := allProcs()
	for _, pid := range found {
		if !slices.Contains(found, all[pid].ppid) {
			return pid, true
		}
	}
	return found[0], true
}

// signalAll sends sig to pid's process group and to every other process
// of family(pid). The family is listed before the group is signalled and
// again after: listing reads every process's stat, which on a loaded
// machine takes long enough for PostgreSQL's backends to grant a lock
// many times over, so the first list lets them be stopped at once after
// the postmaster, and the second catches a backend it forked in between.
// A process that ended in between is no error.
func signalAll(pid int, sig syscall.Signal) {
	first, _ := family(pid)
	killGroup(pid, sig)
	for _, p := range first[min(1, len(first)):] {
		syscall.Kill(p, sig)
	}
	again, ok := family(pid)
	if !ok {
		return
	}
	for _, p := range again[1:] {
		if !slices.Contains(first, p) {
			syscall.Kill(p, sig)
		}
	}
}
