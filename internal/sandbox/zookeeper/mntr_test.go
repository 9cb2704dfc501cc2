package zookeeper

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/lockbench/lockbench/internal/sandbox"
)

func TestMntrRefusedIsSaid(t *testing.T) {
	// A listener that answers like a server whose whitelist lacks mntr.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 4)
		c.Read(buf)
		c.Write([]byte("mntr is not executed because it is not in the whitelist.\n"))
		c.Close()
	}()
	_, err = zkStats(context.Background(), []string{l.Addr().String()})
	if !errors.Is(err, sandbox.ErrStatsRefused) {
		t.Fatalf("want sandbox.ErrStatsRefused, got %v", err)
	}
}
