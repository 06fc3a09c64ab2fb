package web

// visitors.go: who a request comes from — a browser at a client address.
// The address is the client's, or a trusted proxy's header when the
// operator opts in; the browser is told apart from others at the same
// address (a class behind one NAT) by a first-party cookie the server sets
// on any page load. Per-visitor limits count by the pair, inside an
// address-wide cap; fairness is two-level, addresses first
// (internal/serve/visitor.go). Also: the per-visitor session count, and a
// listener that caps each address's open TCP connections so one machine
// cannot use up the server's file descriptors.

import (
	"crypto/rand"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web/sched"
)

// visitorCookie names the browser's identity: 16 random bytes, base64url
// (22 characters), HttpOnly and SameSite=Lax, kept for a year. It is no
// secret and proves nothing: it only tells the browsers of one address
// apart. A client that sends none (a script, curl) is the address alone.
const visitorCookie = "inferscope_visitor"

// validVisitorID reports whether v looks like an id the server issues.
func validVisitorID(v string) bool {
	if len(v) != 22 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func visitorID(r *http.Request) string {
	if ck, err := r.Cookie(visitorCookie); err == nil && validVisitorID(ck.Value) {
		return ck.Value
	}
	return ""
}

// issueVisitorCookie gives a browser without a valid visitor cookie one, on
// every route that serves a page or data (not on static files, probes or
// websocket upgrades: a page load comes first and its sockets carry the
// cookie).
func issueVisitorCookie(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		p := r.URL.Path
		if r.Method == http.MethodGet && visitorID(r) == "" && !strings.HasPrefix(p, "/static/") && !strings.HasPrefix(p, "/ws") &&
			p != "/healthz" && p != "/metrics" {
			var b [16]byte
			rand.Read(b[:])
			http.SetCookie(c.Response(), &http.Cookie{Name: visitorCookie, Value: base64.RawURLEncoding.EncodeToString(b[:]), Path: "/",
				MaxAge: int((365 * 24 * time.Hour).Seconds()), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
		}
		return next(c)
	}
}

// addressOf is the client's address: the connection's, or, when
// Options.ClientIPHeader names a header set by a trusted reverse proxy,
// the last address in it (the one that proxy saw).
func (s *Server) addressOf(r *http.Request) string {
	if h := s.opts.ClientIPHeader; h != "" {
		if v := r.Header.Values(h); len(v) > 0 {
			parts := strings.Split(v[len(v)-1], ",")
			if ip := net.ParseIP(strings.TrimSpace(parts[len(parts)-1])); ip != nil {
				return ip.String()
			}
		}
	}
	return sched.HostOnly(r.RemoteAddr)
}

// visitorOf is the key per-visitor limits and fairness count under: the
// address and the browser's visitor cookie (serve.VisitorKey), or the
// address alone when the request has none.
func (s *Server) visitorOf(r *http.Request) string {
	return serve.VisitorKey(s.addressOf(r), visitorID(r))
}
