package web

import (
	"net"
	"sync"
)

// connlimit.go: a listener that caps each client address's open TCP
// connections, so one machine cannot use up the server's file
// descriptors; its connections unwrap to the raw one for frame writes.

// limitListener closes, right after accepting, a connection from an
// address that already has max open connections.
type limitListener struct {
	net.Listener
	max     int
	count   visitorCount
	refused func()
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := hostOnly(c.RemoteAddr().String())
		if _, ok := l.count.acquire(ip, l.max); !ok {
			c.Close()
			if l.refused != nil {
				l.refused()
			}
			continue
		}
		return &countedConn{Conn: c, release: func() { l.count.release(ip) }}, nil
	}
}

type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// hostOnly is addr without its port.
func hostOnly(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
