package ws

// live.go: each open session's public figures (its model, tokens, memory,
// speed), kept current as its run goes, for /server.

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/catalog"
)

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

// rateWindow is the span tokens/s per session is measured over.
const rateWindow = 5 * time.Second

// setRun records a newly installed run (nil-safe: tests build bare conns).
func (ls *liveSession) setRun(run catalog.Run) {
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

// Sessions is every open session's figures at now, tokens per second
// over the last rateWindow.
func (l *liveSet) Sessions(now time.Time) []SessionView {
	l.mu.Lock()
	all := make([]*liveSession, 0, len(l.m))
	for ls := range l.m {
		all = append(all, ls)
	}
	l.mu.Unlock()
	out := make([]SessionView, 0, len(all))
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
		out = append(out, sv)
	}
	return out
}
