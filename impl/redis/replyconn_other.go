//go:build !unix

package redis

import "net"

func newReplyConn(c net.Conn) net.Conn { return c }
