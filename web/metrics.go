package web

import (
	"sync/atomic"
	"time"

	"github.com/inferscope/inferscope/engine"
)

// metrics are the server's counters (exported on /metrics).
type metrics struct {
	sessions   atomic.Int64
	rejected   atomic.Int64
	errors     atomic.Int64
	slowClosed atomic.Int64
	bytesSent  atomic.Int64
	steps      atomic.Int64
	tokens     atomic.Int64
	observe    func(stage string, d time.Duration)
}

func newMetrics() *metrics { return &metrics{} }

func (m *metrics) observeStep(ev *engine.Event, d time.Duration) {
	m.steps.Add(1)
	if ev.Stage == engine.StageAppend {
		m.tokens.Add(1)
	}
	if m.observe != nil {
		m.observe(string(ev.Stage), d)
	}
}
