package sched

// connlimit.go: a listener that caps each client address's open TCP
// connections, so one machine cannot use up the server's file
// descriptors; its connections unwrap to the raw one for frame writes.

import (
	"net"
	"sync"
)

// LimitListener closes, right after accepting, a connection from an
// address that already has max open connections.
type LimitListener struct {
	net.Listener
	Max     int
	count   VisitorCount
	Refused func()
}

func (l *LimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := HostOnly(c.RemoteAddr().String())
		if _, ok := l.count.Acquire(ip, l.Max); !ok {
			c.Close()
			if l.Refused != nil {
				l.Refused()
			}
			continue
		}
		return &CountedConn{Conn: c, release: func() { l.count.Release(ip) }}, nil
	}
}

type CountedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *CountedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// HostOnly is addr without its port.
func HostOnly(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
