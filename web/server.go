// Package web is inferscope's HTTP shell and composition root: Echo
// routes, templ pages (views), static assets, /server, /metrics, and the
// wiring of the packages below it, each one job, none importing upward:
//
//	wire     the versioned websocket protocol: messages, payloads, codes
//	metrics  the Prometheus counters every package counts into
//	sched    who goes next: fair queue, byte budget, rates, session counts
//	catalog  the models (EngineCatalog), Runner/Run/ModelCard, batching
//	ws       one lab websocket: admission, pumps, commands, thinning, replay
//	room     the classroom: rooms, views, followers, class requests, Fanout
//	views    templ components
//
// server.go: the Server, its options and routes.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/inferscope/inferscope/lessons"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/metrics"
	"github.com/inferscope/inferscope/web/room"
	"github.com/inferscope/inferscope/web/sched"
	"github.com/inferscope/inferscope/web/views"
	"github.com/inferscope/inferscope/web/ws"
)

// maxBody is the request body limit on every endpoint (the only bodies are
// the small JSON of POST /api/pull).
const maxBody = "16K"

// Options configures a Server. Zero values are usable.
type Options struct {
	// Logger receives request and error logs; nil means slog.Default().
	Logger *slog.Logger
	// ModelName and ModelCard describe the model on the home page.
	ModelName string
	ModelCard string
	// Lessons are listed on the home page.
	Lessons []views.LessonLink
	// Catalog holds the models runs can use; nil serves pages only.
	Catalog catalog.Catalog
	// AllowedOrigins lists extra websocket origins ("https://host:port");
	// the page's own host is always allowed.
	AllowedOrigins []string
	// AllowedHosts are the Host names served besides localhost and IP
	// literals (the --addr host, --allow-host names); see hosts.go.
	AllowedHosts []string
	// Limits bound sessions and messages; zero fields take defaults.
	Limits ws.Limits
	// Puller downloads models from the lab; nil disables downloads.
	Puller Puller
	// ClientIPHeader, when set, names a header a trusted reverse proxy
	// sets to the client's address (X-Forwarded-For, X-Real-IP); per-visitor
	// limits then count by its last address. Empty: the TCP peer address.
	ClientIPHeader string
	// Rooms configures classroom rooms (rooms.go); zero fields take defaults.
	Rooms room.RoomOptions
	// EngineSlots is how many engine steps run at once, shared fairly
	// across visitors (sched.go); 0 means GOMAXPROCS.
	EngineSlots int
}

// Server is the app's HTTP handler.
type Server struct {
	opts    Options
	log     *slog.Logger
	echo    *echo.Echo
	assets  *assetStore
	limits  ws.Limits
	hosts   *hostPolicy
	sched   *sched.FairQueue
	bytes   *sched.ByteBudget // per-visitor bytes sent (bytebudget.go)
	metrics *metrics.Metrics
	lessons []*lessons.Lesson
	rooms   *room.Hub
	ws      *ws.Hub // the lab websocket's connections (hub.go)
	// vocabRate is the per-visitor rate of /api/vocab, vocabDelay how long
	// a refused search waits for its 429 (vocab.go)
	vocabRate  *sched.VisitorRate
	vocabDelay time.Duration
	quant      quantState // the quantization comparison's copies and latest answer (quantview.go)
}

// New builds the routes. It does not listen; use ServeHTTP or ListenAndServe.
func New(opts Options) (*Server, error) {
	lg := opts.Logger
	if lg == nil {
		lg = slog.Default()
	}
	assets, err := embeddedAssets()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: lg, echo: echo.New(), assets: assets, limits: opts.Limits.WithDefaults(),
		hosts: newHostPolicy(opts.AllowedHosts), sched: sched.NewFairQueue(opts.EngineSlots)}
	s.bytes = sched.NewByteBudget(s.limits.VisitorBytesPerSecond, s.limits.VisitorByteBurst)
	s.vocabRate, s.vocabDelay = sched.NewVisitorRate(vocabPerSecond, vocabBurst), vocabRefusalDelay
	s.metrics = metrics.New(func() float64 { return float64(s.ws.KVBytes()) })
	s.ws = ws.NewHub(ws.HubConfig{Log: lg, Catalog: opts.Catalog, Limits: s.limits, Metrics: s.metrics, Queue: s.sched, Bytes: s.bytes,
		Origin: s.checkOrigin, Visitor: s.visitorOf})
	s.rooms = room.NewHub(s.ws, opts.Rooms)
	s.ws.Rooms = s.rooms
	if err := s.loadLessons(); err != nil {
		return nil, fmt.Errorf("lessons: %w", err)
	}
	e := s.echo
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleError
	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{}))
	e.Use(securityHeaders)
	e.Use(s.checkHost)
	e.Use(s.recoverer)
	e.Use(issueVisitorCookie)
	e.Use(middleware.BodyLimit(maxBody))
	useTransport(e)

	e.GET("/", s.home)
	e.GET("/static/*", s.static)
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok\n") })
	e.GET("/ws", s.ws.Handle)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(s.metrics.Reg, promhttp.HandlerOpts{})))
	e.GET("/lab", s.lab)
	e.GET("/compare", s.compare)
	e.GET("/api/models", s.apiModels)
	e.GET("/api/vocab", s.apiVocab)
	e.GET("/api/pull", s.pullStatus)
	e.POST("/api/pull", s.pullStart, s.stateChange)
	e.DELETE("/api/pull", s.pullCancel, s.stateChange)
	e.GET("/lessons", s.lessonIndex)
	e.GET("/lessons/:slug", s.lessonPage)
	e.GET("/models/:name/card", s.modelCardPage)
	e.GET("/models/:name/:file", s.modelCardFile)
	s.roomRoutes(e)
	s.initServerView()
	s.initMachineView() // machineview.go: /api/machine, the serving lesson's measured bandwidth
	s.initQuantView()   // quantview.go: /api/quantization, the quantization section's measurements
	return s, nil
}

// Echo exposes the router so callers can add routes (used by later packages and tests).
func (s *Server) Echo() *echo.Echo { return s.echo }

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

// Shutdown sends every websocket client a closing event, closes them, and
// stops the listener, waiting for requests to finish.
func (s *Server) Shutdown(ctx context.Context) error {
	s.rooms.Close()
	s.ws.Shutdown()
	return s.echo.Shutdown(ctx)
}

// Serve accepts connections on ln until Shutdown, with the HTTP timeouts
// and the per-address connection cap of Limits. It returns nil after a
// clean shutdown.
func (s *Server) Serve(ln net.Listener) error {
	hs := s.echo.Server
	hs.ReadHeaderTimeout, hs.ReadTimeout = s.limits.ReadHeaderTimeout, s.limits.ReadTimeout
	hs.WriteTimeout, hs.IdleTimeout = s.limits.WriteTimeout, s.limits.HTTPIdleTimeout
	hs.MaxHeaderBytes = 64 << 10
	s.echo.Listener = &sched.LimitListener{Listener: ln, Max: s.limits.MaxConnsPerVisitor, Refused: func() { s.metrics.ConnsRefused.Add(1) }}
	err := s.echo.Start("")
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *Server) home(c echo.Context) error {
	return render(c, http.StatusOK, views.Home(views.HomeData{
		ModelName: s.opts.ModelName,
		ModelCard: s.opts.ModelCard,
		Lessons:   s.opts.Lessons,
	}))
}

// render writes a templ component as an HTML response.
func render(c echo.Context, status int, comp templ.Component) error {
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMETextHTMLCharsetUTF8)
	c.Response().WriteHeader(status)
	return comp.Render(c.Request().Context(), c.Response())
}

// handleError is the one place handler errors become responses: an HTML page
// for browsers, JSON for API and websocket paths.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		s.log.Warn("error after response was committed", "path", c.Request().URL.Path, "err", err)
		return
	}
	code := http.StatusInternalServerError
	msg := "internal error"
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code = he.Code
		if m, ok := he.Message.(string); ok {
			msg = m
		} else {
			msg = http.StatusText(code)
		}
	}
	if code >= 500 {
		s.log.Error("request failed", "path", c.Request().URL.Path, "err", err)
	}
	path := c.Request().URL.Path
	if strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/ws") ||
		!strings.Contains(c.Request().Header.Get("Accept"), "text/html") && c.Request().Header.Get("Accept") != "" && code != http.StatusNotFound {
		_ = c.JSON(code, map[string]string{"error": msg})
		return
	}
	if code == http.StatusNotFound {
		_ = render(c, code, views.NotFound(path))
		return
	}
	_ = render(c, code, views.ErrorPage(code, msg))
}

// recoverer turns a panic in a handler into a 500 and a log line instead of a
// crashed server.
func (s *Server) recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic in handler", "path", c.Request().URL.Path, "request_id", c.Response().Header().Get(echo.HeaderXRequestID), "panic", r)
				err = echo.NewHTTPError(http.StatusInternalServerError, "internal error")
			}
		}()
		return next(c)
	}
}

// securityHeaders sets the headers every response carries. The CSP allows
// only our own scripts and styles: no inline script is needed anywhere.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		return next(c)
	}
}
