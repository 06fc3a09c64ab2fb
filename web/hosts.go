package web

// hosts.go: the Host allowlist (the DNS-rebinding defence) and the origin
// checks for the websocket and for requests that change server state.
//
// A web page on another site can make a student's browser send requests to
// this server by pointing its own DNS name at 127.0.0.1 or at the server's
// LAN address ("DNS rebinding"): the browser then treats our answers as
// that site's, and sends its Host header. Requests are therefore served
// only for Host names the operator chose: loopback names, IP literals
// (a page can only be at an IP literal if it was loaded from it), the
// --addr host and each --allow-host.

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"
)

// hostPolicy says which Host header values the server answers.
type hostPolicy struct {
	names map[string]bool // lower-case, no port, no trailing dot
}

func newHostPolicy(names []string) *hostPolicy {
	p := &hostPolicy{names: map[string]bool{}}
	for _, n := range names {
		if h := normHost(n); h != "" {
			p.names[h] = true
		}
	}
	return p
}

// normHost lower-cases a host or host:port and drops the port, brackets
// and a trailing dot.
func normHost(hostport string) string {
	h := strings.TrimSpace(strings.ToLower(hostport))
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ".")
	return h
}

// allowed reports whether a request for hostport may be served.
func (p *hostPolicy) allowed(hostport string) bool {
	h := normHost(hostport)
	if h == "" {
		return false
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || net.ParseIP(h) != nil {
		return true
	}
	return p.names[h]
}

// checkHost refuses requests whose Host is not on the allowlist, on every
// route, the websocket included.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.hosts.allowed(c.Request().Host) {
			s.metrics.HostRefused.Add(1)
			return echo.NewHTTPError(http.StatusForbidden, "host "+strings.ToValidUTF8(c.Request().Host, "?")+
				" is not served here: this server answers localhost, IP addresses and the names given with serve --allow-host")
		}
		return next(c)
	}
}

// checkOrigin accepts requests without an Origin (not a browser), and
// browser requests from a page on this server (Origin's host equals the
// allowed Host) or from an --allow-origin.
func (s *Server) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) && s.hosts.allowed(u.Host) {
		return true
	}
	for _, allowed := range s.opts.AllowedOrigins {
		if strings.EqualFold(strings.TrimRight(allowed, "/"), origin) {
			return true
		}
	}
	return false
}

// stateChange guards requests that change server state (starting or
// cancelling a download): the body must be JSON (a cross-site form cannot
// send that without a CORS preflight, which this server never approves),
// the Origin, when sent, must be allowed, and a browser must not label the
// request cross-site.
func (s *Server) stateChange(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !s.checkOrigin(r) {
			return echo.NewHTTPError(http.StatusForbidden, "origin "+strings.ToValidUTF8(r.Header.Get("Origin"), "?")+" may not change this server's state")
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			return echo.NewHTTPError(http.StatusForbidden, "cross-site requests may not change this server's state")
		}
		if r.Method == http.MethodPost {
			ct := r.Header.Get(echo.HeaderContentType)
			if mt, _, _ := strings.Cut(ct, ";"); !strings.EqualFold(strings.TrimSpace(mt), echo.MIMEApplicationJSON) {
				return echo.NewHTTPError(http.StatusUnsupportedMediaType, "send the request body as application/json")
			}
		}
		return next(c)
	}
}
