package main

// bench_concurrent.go: bench --concurrent N: N sessions decoding at once,
// each stepping its own sequence, with every decode step batched through
// the server's scheduler (internal/serve) and, in the same run, each
// session running its own forward passes (batching off); and bench of the
// generate path (a whole session: forward plus inspection) against the
// bare decode loop.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/cputime"
)

// concurrentResult is one model's figures with N concurrent sessions.
type concurrentResult struct {
	Model        string `json:"model"`
	Sessions     int    `json:"sessions"`
	PromptTokens int    `json:"prompt_tokens"`
	GenTokens    int    `json:"gen_tokens"` // decode steps per session
	MaxBatch     int    `json:"max_batch"`
	// Aggregate decode tokens per second over all sessions (wall clock).
	AggBatched   float64 `json:"aggregate_decode_tokens_per_s_batched"`
	AggUnbatched float64 `json:"aggregate_decode_tokens_per_s_unbatched"`
	Speedup      float64 `json:"batched_vs_unbatched"`
	// The same per second of the process's CPU time (every thread's) over
	// the timed steps, and their ratio: the figure to compare on a machine
	// shared with other work.
	CPUBatched   float64 `json:"decode_tokens_per_cpu_s_batched"`
	CPUUnbatched float64 `json:"decode_tokens_per_cpu_s_unbatched"`
	SpeedupCPU   float64 `json:"batched_vs_unbatched_cpu"`
	// Inter-token latency seen by each session (all sessions pooled).
	ITLp50Batched   float64 `json:"itl_p50_ms_batched"`
	ITLp99Batched   float64 `json:"itl_p99_ms_batched"`
	ITLp50Unbatched float64 `json:"itl_p50_ms_unbatched"`
	ITLp99Unbatched float64 `json:"itl_p99_ms_unbatched"`
	// Queue: how long a step waited for its batched pass to start.
	QueueP50ms    float64 `json:"queue_p50_ms"`
	QueueP99ms    float64 `json:"queue_p99_ms"`
	MeanBatchSize float64 `json:"mean_batch_size"`
	Passes        int64   `json:"batched_passes"` // batched forward passes for the timed steps (gen_tokens when every pass holds every session)
	// With one more session prefilling a long prompt meanwhile: the decode
	// sessions' inter-token latency p99, and how long that prefill took.
	ITLp99WithLongPrefill float64 `json:"itl_p99_ms_batched_with_long_prefill"`
	LongPrefillTokens     int     `json:"long_prefill_tokens"`
	LongPrefillMs         float64 `json:"long_prefill_ms"`
}

type concSeq struct {
	st  *engine.State
	kv  *engine.KVCache
	tok int
}

// concSeqs makes n sequences with random prompts of promptN tokens, each
// prefilled but for its last prompt token, which is left as the token of
// decodeAllCPU's untimed first step: the prompt and genN timed steps fill
// promptN+genN positions, so every length up to the context runs (as the
// lab allows prompt + max_new_tokens up to the context).
func concSeqs(m *engine.Model, n, promptN, genN int) ([]*concSeq, error) {
	c := m.Config
	rng := rand.New(rand.NewPCG(9, 9))
	out := make([]*concSeq, n)
	for i := range out {
		prompt := make([]int, promptN)
		for j := range prompt {
			prompt[j] = rng.IntN(c.VocabSize)
		}
		kv, err := engine.NewKVCacheOf(c, promptN+genN, benchKV)
		if err != nil {
			return nil, err
		}
		st := engine.NewState(c)
		if promptN > 1 {
			if _, err := m.Forward(st, kv, prompt[:promptN-1], nil); err != nil {
				return nil, err
			}
		}
		out[i] = &concSeq{st: st, kv: kv, tok: prompt[promptN-1]}
	}
	return out, nil
}

// decodeAllCPU runs genN decode steps in every sequence at once, one goroutine
// per session; step is the forward of one step. Every session first runs
// one untimed step (its prompt's last token, concSeqs), and the timed
// steps start together once all have:
// the steady state a server's decoding sessions are in (32 sessions
// created in the same instant would otherwise reach the batcher one by
// one, and the first would run a pass alone and stay a pass behind the
// rest for the whole run). timed, if not nil, is called as they start. It
// returns the wall time of the timed steps, the process's CPU time over
// them (every thread's) and their inter-token latencies.
func decodeAllCPU(seqs []*concSeq, genN int, step func(s *concSeq) ([]float32, error), timed func()) (time.Duration, time.Duration, []float64, error) {
	var mu sync.Mutex
	var itl []float64
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	var wg, warm sync.WaitGroup
	release := make(chan struct{})
	warm.Add(len(seqs))
	for _, s := range seqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			logits, err := step(s) // the untimed step
			warm.Done()
			if err != nil {
				fail(err)
				return
			}
			s.tok = argmaxF(logits)
			<-release
			var mine []float64
			for i := 0; i < genN; i++ {
				t0 := time.Now()
				logits, err := step(s)
				if err != nil {
					fail(err)
					return
				}
				s.tok = argmaxF(logits)
				mine = append(mine, time.Since(t0).Seconds()*1000)
			}
			mu.Lock()
			itl = append(itl, mine...)
			mu.Unlock()
		}()
	}
	warm.Wait()
	if timed != nil {
		timed()
	}
	start, cpu0 := time.Now(), cputime.Process()
	close(release)
	wg.Wait()
	return time.Since(start), cputime.Process() - cpu0, itl, firstErr
}

func pctl(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return round(s[min(len(s)-1, int(float64(len(s))*p))], 3)
}

// generateResult compares the `generate` command's session (text only,
// Config.TextOnly: greedy, and sampled with the CLI's default settings) and
// the lab's full session (every stage's inspection) with the bare decode
// loop, all four interleaved token by token on the same machine load.
type generateResult struct {
	Model                  string  `json:"model"`
	Tokens                 int     `json:"tokens"`
	GenerateTokensPerSec   float64 `json:"generate_tokens_per_s"` // greedy, as `generate --temperature 0` runs
	BareDecodeTokensPerSec float64 `json:"bare_decode_tokens_per_s"`
	GenerateVsBare         float64 `json:"generate_vs_bare_decode"`
	ModelMs                float64 `json:"generate_model_ms"`   // forward time inside the session
	InspectMs              float64 `json:"generate_inspect_ms"` // choosing the token and the events
	// Sampled is `generate` with its default sampling (temperature 0.8,
	// top-p 0.9): the softmax after temperature and a partial top
	// selection per token; its tokens differ from the bare loop's, its
	// positions do not.
	SampledTokensPerSec float64 `json:"generate_sampled_tokens_per_s"`
	SampledVsBare       float64 `json:"generate_sampled_vs_bare_decode"`
	// Lab is a full greedy session as the lab runs it (distribution,
	// top list, histogram, layer traces, Inspect view, weights checksum).
	LabTokensPerSec float64 `json:"lab_session_tokens_per_s"`
	LabVsBare       float64 `json:"lab_session_vs_bare_decode"`
	LabModelMs      float64 `json:"lab_session_model_ms"`
	LabInspectMs    float64 `json:"lab_session_inspect_ms"`
}

// genRunner is one session of benchGenerate with its decode time.
type genRunner struct {
	s      *session.Session
	t      time.Duration // time in Step after prefill
	timing bool
	stop   *session.StopInfo
}

// step runs the session through its next decode forward pass, or to its
// stop.
func (g *genRunner) step() error {
	for !g.s.Done() {
		t0 := time.Now()
		ev, err := g.s.Step(context.Background())
		if err != nil {
			return err
		}
		if g.timing {
			g.t += time.Since(t0)
		}
		switch {
		case ev.Prefill != nil:
			g.timing = true
		case ev.Stop != nil:
			g.stop = ev.Stop
		case ev.Append != nil && ev.Append.Forwarded:
			return nil
		}
	}
	return nil
}

func benchGenerate(m *engine.Model, genN int) (generateResult, error) {
	r := generateResult{Model: m.Name}
	if m.Tokenizer == nil {
		return r, fmt.Errorf("%s has no tokenizer", m.Name)
	}
	no := false
	greedy := session.SamplingParams{Temperature: 0, TopP: 1}
	cfgs := []session.Config{
		{Sampling: greedy, TextOnly: true},                    // generate --temperature 0
		{Sampling: session.DefaultSampling(), TextOnly: true}, // generate
		{Sampling: greedy},                                    // the lab
	}
	runs := make([]*genRunner, len(cfgs))
	for i, cfg := range cfgs {
		cfg.Prompt, cfg.MaxNewTokens, cfg.StopAtEOS = "Once upon a time, there was a little", genN, &no
		cfg.KVCache = benchKV.String()
		s, err := session.New(m, cfg)
		if err != nil {
			return r, err
		}
		runs[i] = &genRunner{s: s}
	}
	// The bare loop: forward and argmax on the greedy session's tokens.
	st := engine.NewState(m.Config)
	kv, err := engine.NewKVCacheOf(m.Config, runs[0].s.KV().Cap, benchKV)
	if err != nil {
		return r, err
	}
	logits, err := m.Forward(st, kv, runs[0].s.PromptIDs(), nil)
	if err != nil {
		return r, err
	}
	next := argmaxF(logits)
	bareToks := []int{next}
	var bareTime time.Duration
	bareN := 0
	bare := func() error {
		// as the session: genN tokens, the last not fed back, or fewer when
		// the prompt and genN pass the context (it stops "context_full")
		if bareN >= genN-1 || kv.Len >= kv.Cap {
			return nil
		}
		t1 := time.Now()
		if logits, err = m.Forward(st, kv, []int{next}, nil); err != nil {
			return err
		}
		next = argmaxF(logits)
		bareTime += time.Since(t1)
		bareN++
		bareToks = append(bareToks, next)
		return nil
	}
	// Each round runs one decode step of each, in an order that rotates.
	steps := []func() error{bare}
	for _, g := range runs {
		steps = append(steps, g.step)
	}
	for round := 0; !runs[0].s.Done() || !runs[1].s.Done() || !runs[2].s.Done(); round++ {
		for i := range steps {
			if err := steps[(round+i)%len(steps)](); err != nil {
				return r, err
			}
		}
	}
	// the same tokens, or the comparison is not of the same work
	if g, l := runs[0].s.Generated(), runs[2].s.Generated(); !slices.Equal(g, bareToks) || !slices.Equal(g, l) {
		return r, fmt.Errorf("generate's greedy tokens %v differ from the bare loop's %v or the lab's %v", g, bareToks, l)
	}
	rate := func(g *genRunner) float64 {
		forwards := g.stop.Generated - 1 // the first token comes from prefill's logits
		return round(float64(forwards)/g.t.Seconds(), 1)
	}
	r.Tokens = runs[0].stop.Generated
	r.BareDecodeTokensPerSec = round(float64(bareN)/bareTime.Seconds(), 1)
	r.GenerateTokensPerSec = rate(runs[0])
	r.GenerateVsBare = round(r.GenerateTokensPerSec/r.BareDecodeTokensPerSec, 3)
	r.ModelMs, r.InspectMs = round(runs[0].stop.Timings.ModelMs, 2), round(runs[0].stop.Timings.InspectMs, 2)
	r.SampledTokensPerSec = rate(runs[1])
	r.SampledVsBare = round(r.SampledTokensPerSec/r.BareDecodeTokensPerSec, 3)
	r.LabTokensPerSec = rate(runs[2])
	r.LabVsBare = round(r.LabTokensPerSec/r.BareDecodeTokensPerSec, 3)
	r.LabModelMs, r.LabInspectMs = round(runs[2].stop.Timings.ModelMs, 2), round(runs[2].stop.Timings.InspectMs, 2)
	return r, nil
}
