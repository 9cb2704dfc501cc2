package impl

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Keepalive is the TCP keepalive a server keeps on one client's
// connection: after Idle without traffic it probes every Interval and
// gives the peer up after Count unanswered probes. Source says where the
// values come from ("set on the session", "server-wide", "the system's
// default"), so that a report can state them as they were.
type Keepalive struct {
	Idle, Interval time.Duration
	Count          int
	Source         string
}

// Bound is how long a peer that stopped answering probes keeps its
// connection on the server: Idle + Count × Interval; 0 when unknown.
func (k Keepalive) Bound() time.Duration {
	if k.Idle <= 0 {
		return 0
	}
	return k.Idle + time.Duration(k.Count)*k.Interval
}

// String is the settings as a report states them.
func (k Keepalive) String() string {
	if k.Idle <= 0 {
		return "TCP keepalive unknown"
	}
	s := fmt.Sprintf("TCP keepalive idle %v, interval %v, count %d", k.Idle, k.Interval, k.Count)
	if k.Source != "" {
		s += " (" + k.Source + ")"
	}
	return s
}

// Keepaliver is a Locker of a LeaseConn lock that can say, and where the
// server lets a session choose, set, the TCP keepalive the server keeps on
// its connection. Keepalive asks for want (zero fields: leave as is) and
// returns what is in force.
type Keepaliver interface {
	Keepalive(ctx context.Context, want Keepalive) (Keepalive, error)
}

// SystemKeepalive is this host's default TCP keepalive (Linux's
// net.ipv4.tcp_keepalive_*), what a server uses on a connection it sets
// nothing on, when addr is on this host's loopback; ok is false when it
// cannot be known from here.
func SystemKeepalive(addr string) (k Keepalive, ok bool) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return k, false
	}
	if ip := net.ParseIP(host); (ip == nil && host != "localhost") || (ip != nil && !ip.IsLoopback()) {
		return k, false
	}
	read := func(name string) (int, bool) {
		b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_keepalive_" + name)
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		return n, err == nil
	}
	idle, ok1 := read("time")
	intvl, ok2 := read("intvl")
	probes, ok3 := read("probes")
	if !ok1 || !ok2 || !ok3 {
		return k, false
	}
	return Keepalive{Idle: time.Duration(idle) * time.Second, Interval: time.Duration(intvl) * time.Second,
		Count: probes, Source: "this host's default, net.ipv4.tcp_keepalive_*"}, true
}
