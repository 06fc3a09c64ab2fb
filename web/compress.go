package web

// compress.go: transport for pages — gzip for every HTML and JSON
// response (static files are compressed once at start-up, static.go), and
// HEAD answered wherever GET is.

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// useTransport registers gzip and HEAD handling on e.
func useTransport(e *echo.Echo) {
	e.Pre(headAsGet)
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{
		// the websocket hijacks its connection; static files carry their
		// own precompressed bodies; metrics negotiate compression themselves
		Skipper: func(c echo.Context) bool {
			p := c.Request().URL.Path
			return p == "/ws" || p == "/metrics" || strings.HasPrefix(p, "/static/")
		},
		MinLength: 512,
	}))
}

// headAsGet routes a HEAD request as the GET it describes and drops the
// body the handler writes, so every page answers HEAD with GET's headers.
func headAsGet(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method != http.MethodHead {
			return next(c)
		}
		r.Method = http.MethodGet
		w := c.Response().Writer
		c.Response().Writer = headWriter{w}
		defer func() { r.Method = http.MethodHead; c.Response().Writer = w }()
		return next(c)
	}
}

// headWriter keeps the headers and status of a response and discards its body.
type headWriter struct{ http.ResponseWriter }

func (h headWriter) Write(b []byte) (int, error) { return len(b), nil }

// Flush implements http.Flusher (the gzip middleware flushes).
func (h headWriter) Flush() {}
