package web

// visitors.go: who a request comes from (its client address, or a trusted
// proxy's header when the operator opts in), the per-visitor session
// count, and a listener that caps each address's open TCP connections so
// one machine cannot use up the server's file descriptors.

import (
	"net"
	"net/http"
	"strings"
	"sync"
)

// visitorOf is the key per-visitor limits count under: the client's IP
// address, or, when Options.ClientIPHeader names a header set by a trusted
// reverse proxy, the last address in it (the one that proxy saw).
func (s *Server) visitorOf(r *http.Request) string {
	if h := s.opts.ClientIPHeader; h != "" {
		if v := r.Header.Values(h); len(v) > 0 {
			parts := strings.Split(v[len(v)-1], ",")
			if ip := net.ParseIP(strings.TrimSpace(parts[len(parts)-1])); ip != nil {
				return ip.String()
			}
		}
	}
	return hostOnly(r.RemoteAddr)
}

func hostOnly(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// visitorCount counts something per visitor, under a limit.
type visitorCount struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire adds one for v unless v already has limit; it reports whether it did.
func (vc *visitorCount) acquire(v string, limit int) (int, bool) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if vc.n == nil {
		vc.n = map[string]int{}
	}
	if vc.n[v] >= limit {
		return vc.n[v], false
	}
	vc.n[v]++
	return vc.n[v], true
}

func (vc *visitorCount) release(v string) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if vc.n[v]--; vc.n[v] <= 0 {
		delete(vc.n, v)
	}
}

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
