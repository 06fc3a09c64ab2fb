package ws

// alone.go: one request run by itself on a connection, measured: the
// baseline a class request's aggregate is compared with.

import (
	"context"
	"sort"
	"time"

	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
)

// ClassAlone is the request run once by itself just before the class
// sent it: what one request alone gets on this server now.
type ClassAlone struct {
	TTFTMs      float64 `json:"ttft_ms"`
	Tokens      int     `json:"tokens"`
	GapMs       float64 `json:"gap_ms"` // median wall-clock time between its consecutive tokens
	WallMs      float64 `json:"wall_ms"`
	TokS        float64 `json:"tok_s"`        // Tokens ÷ WallMs
	DecodeSteps int     `json:"decode_steps"` // its decode passes (on the batcher when batching)
	MemoryBytes int64   `json:"memory_bytes"` // its run at the end: scratch plus KV cache
}

// RunAlone runs req once by itself, a stage per fair-queue slot like
// any run of this connection, and measures it.
func (c *Conn) RunAlone(req *wire.StartPayload) (ClassAlone, int64, error) {
	var a ClassAlone
	var run catalog.Run
	var err error
	cfg := c.runConfig(req.SessionConfig())
	if c.withSlot(context.Background(), func() { run, err = c.s.Catalog.NewRun(req.Model, cfg) }) != nil {
		return a, 0, errClosed
	}
	if err != nil {
		return a, 0, err
	}
	if s, ok := run.Runner.(*session.Session); ok && req.NoBatch {
		s.SetScheduler(nil)
	}
	t0 := time.Now()
	var chosen []time.Time
	for !run.Runner.Done() {
		var evs []*session.Event
		if c.withSlot(context.Background(), func() { evs, err = run.Runner.Advance(context.Background(), session.UntilStage, nil) }) != nil {
			return a, 0, errClosed
		}
		if err != nil {
			return a, 0, err
		}
		for _, ev := range evs {
			switch {
			case ev.Sample != nil:
				chosen = append(chosen, time.Now())
			case ev.Append != nil && ev.Append.BatchSize > 0:
				a.DecodeSteps++
			case ev.Stop != nil:
				a.TTFTMs, a.Tokens = ev.Stop.Timings.TTFTMs, ev.Stop.Generated
			}
		}
	}
	a.WallMs = MsOf(time.Since(t0))
	gaps := make([]float64, 0, len(chosen))
	for i := 1; i < len(chosen); i++ {
		gaps = append(gaps, MsOf(chosen[i].Sub(chosen[i-1])))
	}
	if len(gaps) > 0 {
		sort.Float64s(gaps)
		a.GapMs = gaps[len(gaps)/2]
	}
	if a.WallMs > 0 {
		a.TokS = float64(a.Tokens) / (a.WallMs / 1000)
	}
	a.MemoryBytes = run.Runner.MemoryBytes()
	return a, run.Model.WeightsBytes, nil
}

// MsOf is d in milliseconds.
func MsOf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
