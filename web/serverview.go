package web

// serverview.go: what the server is doing, for the /server page and
// /api/server: open sessions (numbered, never their prompts or text), what
// each generates per second and holds in KV cache, the scheduler's queue
// and batch sizes, and memory = weights + KV caches + scratch. The same
// figures are exported on /metrics.

import (
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web/views"
)

// rateWindow is the span tokens/s per session is measured over.
const rateWindow = 5 * time.Second

// liveSession is one connection's public figures.
type liveSession struct {
	num int64
	mu  sync.Mutex
	// guarded by mu
	model     string
	stage     string
	tokens    int64
	recent    []time.Time // append events within rateWindow
	batch     int
	queueMs   float64
	modelMs   float64
	kvAlloc   int64
	kvUsed    int64
	scratch   int64
	connected time.Time
}

// liveSet is the server's open sessions.
type liveSet struct {
	mu   sync.Mutex
	m    map[*liveSession]struct{}
	next atomic.Int64
}

func (l *liveSet) add() *liveSession {
	ls := &liveSession{num: l.next.Add(1), connected: time.Now(), stage: "connected"}
	l.mu.Lock()
	if l.m == nil {
		l.m = map[*liveSession]struct{}{}
	}
	l.m[ls] = struct{}{}
	l.mu.Unlock()
	return ls
}

func (l *liveSet) remove(ls *liveSession) {
	l.mu.Lock()
	delete(l.m, ls)
	l.mu.Unlock()
}

// setRun records a newly installed run (nil-safe: tests build bare conns).
func (ls *liveSession) setRun(run Run) {
	if ls == nil {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.model, ls.stage, ls.kvAlloc, ls.kvUsed = run.Model.Name, string(run.Runner.Next()), run.Runner.MemoryBytes(), 0
	ls.recent = ls.recent[:0]
}

// observe records one event of the session's run.
func (ls *liveSession) observe(ev *session.Event) {
	if ls == nil || ev == nil {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.stage = string(ev.Next)
	if a := ev.Append; a != nil {
		now := time.Now()
		ls.tokens++
		ls.recent = append(ls.recent, now)
		ls.kvUsed, ls.scratch = a.BytesUsed, a.Memory.Scratch
		if a.Forwarded {
			ls.batch, ls.queueMs, ls.modelMs = a.BatchSize, a.QueueMs, a.ModelMs
		}
	}
}

// SessionView is one session on /server: a number, never its text.
type SessionView struct {
	Num          int64   `json:"num"`
	Model        string  `json:"model"`
	Next         string  `json:"next"`
	Tokens       int64   `json:"tokens"`
	TokensPerSec float64 `json:"tokens_per_s"` // over the last 5 s
	LastBatch    int     `json:"last_batch"`
	LastQueueMs  float64 `json:"last_queue_ms"`
	LastModelMs  float64 `json:"last_model_ms"`
	KVAllocated  int64   `json:"kv_allocated"`
	KVUsed       int64   `json:"kv_used"`
	Scratch      int64   `json:"scratch"`
	ConnectedS   float64 `json:"connected_s"`
}

// ServerView is the /api/server answer.
type ServerView struct {
	At           time.Time     `json:"at"`
	Sessions     []SessionView `json:"sessions"`
	TokensPerSec float64       `json:"tokens_per_s"` // sum over sessions
	TokensTotal  int64         `json:"tokens_total"`
	Batching     bool          `json:"batching"`
	Schedulers   []serve.Stats `json:"schedulers"`
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
	v := ServerView{At: now, Sessions: []SessionView{}}
	s.live.mu.Lock()
	all := make([]*liveSession, 0, len(s.live.m))
	for ls := range s.live.m {
		all = append(all, ls)
	}
	s.live.mu.Unlock()
	for _, ls := range all {
		ls.mu.Lock()
		keep := ls.recent[:0]
		for _, t := range ls.recent {
			if now.Sub(t) <= rateWindow {
				keep = append(keep, t)
			}
		}
		ls.recent = keep
		span := rateWindow.Seconds()
		if age := now.Sub(ls.connected).Seconds(); age < span {
			span = max(age, 0.5)
		}
		sv := SessionView{Num: ls.num, Model: ls.model, Next: ls.stage, Tokens: ls.tokens, TokensPerSec: float64(len(keep)) / span,
			LastBatch: ls.batch, LastQueueMs: ls.queueMs, LastModelMs: ls.modelMs, KVAllocated: ls.kvAlloc, KVUsed: ls.kvUsed, Scratch: ls.scratch,
			ConnectedS: now.Sub(ls.connected).Seconds()}
		ls.mu.Unlock()
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
	v.Memory.KV = s.conns.kvBytes.Load()
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
	s.metrics.reg.MustRegister(
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
