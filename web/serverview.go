package web

// serverview.go: what the server is doing, for the /server page and
// /api/server: open sessions (numbered, never their prompts or text), what
// each generates per second and holds in KV cache, the scheduler's queue
// and batch sizes, and memory = weights + KV caches + scratch. The same
// figures are exported on /metrics.

import (
	"net/http"
	"sort"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web/views"
	"github.com/inferscope/inferscope/web/ws"
)

// ServerView is the /api/server answer.
type ServerView struct {
	At           time.Time        `json:"at"`
	Sessions     []ws.SessionView `json:"sessions"`
	TokensPerSec float64          `json:"tokens_per_s"` // sum over sessions
	TokensTotal  int64            `json:"tokens_total"`
	Batching     bool             `json:"batching"`
	Schedulers   []serve.Stats    `json:"schedulers"`
	Memory       struct {
		Weights    int64 `json:"weights"`      // every loaded model
		KV         int64 `json:"kv"`           // KV caches allocated, all sessions
		MaxKV      int64 `json:"max_kv"`       // --max-kv-bytes
		Scratch    int64 `json:"scratch"`      // sessions' scratch + batch scratch
		Total      int64 `json:"total"`        // weights + kv + scratch
		MaxSession int   `json:"max_sessions"` // --max-sessions
	} `json:"memory"`
}

// schedulerCatalog is what a Catalog offers when it batches (EngineCatalog).
type schedulerCatalog interface {
	SchedulerStats() []serve.Stats
	Batching() (bool, serve.Options)
}

func (s *Server) serverView() ServerView {
	now := time.Now()
	v := ServerView{At: now, Sessions: []ws.SessionView{}}
	for _, sv := range s.ws.Sessions(now) {
		v.Sessions = append(v.Sessions, sv)
		v.TokensPerSec += sv.TokensPerSec
		v.TokensTotal += sv.Tokens
		v.Memory.Scratch += sv.Scratch
	}
	sort.Slice(v.Sessions, func(i, j int) bool { return v.Sessions[i].Num < v.Sessions[j].Num })
	if sc, ok := s.opts.Catalog.(schedulerCatalog); ok {
		v.Batching, _ = sc.Batching()
		v.Schedulers = sc.SchedulerStats()
		for _, st := range v.Schedulers {
			v.Memory.Scratch += st.ScratchBytes
		}
	}
	if v.Schedulers == nil {
		v.Schedulers = []serve.Stats{}
	}
	if s.opts.Catalog != nil {
		for _, m := range s.opts.Catalog.Models() {
			v.Memory.Weights += m.WeightsBytes
		}
	}
	v.Memory.KV = s.ws.KVBytes()
	v.Memory.MaxKV = s.limits.MaxKVBytes
	v.Memory.MaxSession = s.limits.MaxSessions
	v.Memory.Total = v.Memory.Weights + v.Memory.KV + v.Memory.Scratch
	return v
}

// initServerView adds /server, /api/server and the scheduler's metrics.
func (s *Server) initServerView() {
	s.echo.GET("/server", func(c echo.Context) error { return render(c, http.StatusOK, views.ServerPage()) })
	s.echo.GET("/api/server", func(c echo.Context) error {
		// read by the page's own script: refuse other sites' pages
		if site := c.Request().Header.Get("Sec-Fetch-Site"); site == "cross-site" {
			return echo.NewHTTPError(http.StatusForbidden, "the server view is readable from this site's pages only")
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, s.serverView())
	})
	stats := func(f func(serve.Stats) float64) func() float64 {
		return func() float64 {
			sc, ok := s.opts.Catalog.(schedulerCatalog)
			if !ok {
				return 0
			}
			var t float64
			for _, st := range sc.SchedulerStats() {
				t += f(st)
			}
			return t
		}
	}
	s.metrics.Reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inferscope_decode_queue", Help: "Decode steps waiting for a batched forward pass."},
			stats(func(st serve.Stats) float64 { return float64(st.Queued) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "inferscope_batch_passes_total", Help: "Batched decode forward passes run."},
			stats(func(st serve.Stats) float64 { return float64(st.Passes) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "inferscope_batch_steps_total", Help: "Decode steps run in batched passes (÷ passes = mean batch size)."},
			stats(func(st serve.Stats) float64 { return float64(st.Steps) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inferscope_memory_bytes", Help: "Weights + KV caches + scratch, as /server shows it."},
			func() float64 { return float64(s.serverView().Memory.Total) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "inferscope_tokens_per_second", Help: "Tokens generated per second over the last 5 s, all sessions."},
			func() float64 { return s.serverView().TokensPerSec }),
	)
}
