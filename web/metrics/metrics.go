// Package metrics holds the server's Prometheus counters, gauges and
// histograms; every other web package counts into it.
package metrics

// metrics.go: the Prometheus metrics the server exports.

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/inferscope/inferscope/engine/session"
)

// Metrics are the server's counters, exported on /metrics in Prometheus
// text format. Each Server has its own registry.
type Metrics struct {
	Reg          *prometheus.Registry
	Sessions     atomic.Int64
	Rejected     atomic.Int64
	Errors       atomic.Int64
	SlowClosed   atomic.Int64
	BytesSent    atomic.Int64
	HostRefused  atomic.Int64
	ConnsRefused atomic.Int64
	IdleClosed   atomic.Int64
	BytesRefused atomic.Int64 // data requests refused by the byte budget
	BytesWaits   atomic.Int64 // run stages held back by the byte budget
	steps        *prometheus.CounterVec
	stepTime     *prometheus.HistogramVec
	tokens       prometheus.Counter
	tokRate      prometheus.Gauge
	// byStage caches steps' and stepTime's children per stage (a
	// *stageMetrics per stage name): a run's every stage counts into them,
	// and the label lookup (hashing the label, a locked map) is paid once.
	// A child exists, and shows on /metrics, from its stage's first step.
	byStage sync.Map
}

// stageMetrics are one stage's children of steps and stepTime.
type stageMetrics struct {
	steps prometheus.Counter
	time  prometheus.Observer
}

func New(kvBytes func() float64) *Metrics {
	m := &Metrics{Reg: prometheus.NewRegistry()}
	m.steps = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "inferscope_steps_total", Help: "Engine stages run, by stage."}, []string{"stage"})
	m.stepTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "inferscope_step_seconds", Help: "Compute time of one engine stage.",
		Buckets: prometheus.ExponentialBuckets(0.00005, 2.5, 14)}, []string{"stage"})
	m.tokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "inferscope_tokens_total", Help: "Tokens generated (append stages)."})
	m.tokRate = prometheus.NewGauge(prometheus.GaugeOpts{Name: "inferscope_decode_tokens_per_second", Help: "Decode speed of the most recent append stage (1 / its forward time)."})
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, v *atomic.Int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(v.Load()) })
	}
	m.Reg.MustRegister(m.steps, m.stepTime, m.tokens, m.tokRate,
		gauge("inferscope_sessions", "Open lab sessions (websocket connections).", func() float64 { return float64(m.Sessions.Load()) }),
		gauge("inferscope_kv_cache_bytes", "Memory held by runs across sessions: scratch buffers plus the KV cache filled so far (limit: max_kv_bytes).", kvBytes),
		counter("inferscope_sessions_rejected_total", "Connections refused because the server was full.", &m.Rejected),
		counter("inferscope_client_errors_total", "Error events sent to clients (bad input, limits).", &m.Errors),
		counter("inferscope_slow_clients_closed_total", "Connections closed because the client did not read.", &m.SlowClosed),
		counter("inferscope_ws_bytes_sent_total", "Bytes of websocket messages sent.", &m.BytesSent),
		counter("inferscope_connections_refused_total", "TCP connections closed at once because their address had too many open.", &m.ConnsRefused),
		counter("inferscope_idle_sessions_closed_total", "Sessions closed after the idle timeout without a command.", &m.IdleClosed),
		counter("inferscope_host_refused_total", "Requests refused because their Host is not on the allowlist (DNS rebinding).", &m.HostRefused),
		counter("inferscope_byte_budget_refused_total", "Data requests (get_logits, sample_n, inspect) refused because their visitor's byte budget was spent.", &m.BytesRefused),
		counter("inferscope_byte_budget_waits_total", "Run stages held back until their visitor's byte budget refilled.", &m.BytesWaits),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func (m *Metrics) ObserveStep(ev *session.Event, d time.Duration) {
	sm := m.stage(ev.Stage)
	sm.steps.Inc()
	sm.time.Observe(d.Seconds())
	if ev.Append != nil {
		m.tokens.Inc()
		if ev.Append.DurationMs > 0 {
			m.tokRate.Set(1000 / ev.Append.DurationMs)
		}
	}
}

// stage is stage st's children of steps and stepTime.
func (m *Metrics) stage(st session.Stage) *stageMetrics {
	if v, ok := m.byStage.Load(st); ok {
		return v.(*stageMetrics)
	}
	name := string(st)
	v, _ := m.byStage.LoadOrStore(st, &stageMetrics{steps: m.steps.WithLabelValues(name), time: m.stepTime.WithLabelValues(name)})
	return v.(*stageMetrics)
}
