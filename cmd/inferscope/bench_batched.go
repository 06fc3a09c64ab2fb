//go:build !engineonly

package main

// bench_batched.go: bench --concurrent's batched half, which runs the decode
// steps through the server's scheduler (internal/serve); the engine-only
// build (-tags engineonly) leaves the scheduler and this out.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/serve"
)

func init() {
	defaultMaxBatch = serve.DefaultOptions().MaxBatch
	benchBatched = func(m *engine.Model, n, promptN, genN, maxBatch int) (concurrentResult, error) {
		return benchConcurrent(m, n, promptN, genN, serve.Options{MaxBatch: maxBatch, MaxWait: serve.DefaultOptions().MaxWait})
	}
}

func benchConcurrent(m *engine.Model, n, promptN, genN int, opt serve.Options) (concurrentResult, error) {
	r := concurrentResult{Model: m.Name, Sessions: n, PromptTokens: promptN, GenTokens: genN, MaxBatch: opt.MaxBatch}
	if promptN+genN > m.Config.SeqLen {
		return r, fmt.Errorf("%s: prompt %d + gen %d exceeds the context %d", m.Name, promptN, genN, m.Config.SeqLen)
	}
	// unbatched: each session its own forward passes, all at once
	seqs, err := concSeqs(m, n, promptN, genN)
	if err != nil {
		return r, err
	}
	wall, cpu, itl, err := decodeAllCPU(seqs, genN, func(s *concSeq) ([]float32, error) { return m.Forward(s.st, s.kv, []int{s.tok}, nil) }, nil)
	if err != nil {
		return r, err
	}
	r.AggUnbatched = round(float64(n*genN)/wall.Seconds(), 1)
	if cpu > 0 {
		r.CPUUnbatched = round(float64(n*genN)/cpu.Seconds(), 1)
	}
	r.ITLp50Unbatched, r.ITLp99Unbatched = pctl(itl, 0.5), pctl(itl, 0.99)

	// batched: the same steps through the scheduler
	// (the passes and queue times of the timed steps only)
	var cpuBatched time.Duration
	run := func(extra func()) (time.Duration, []float64, []float64, serve.Stats, error) {
		seqs, err := concSeqs(m, n, promptN, genN)
		if err != nil {
			return 0, nil, nil, serve.Stats{}, err
		}
		b := serve.New(m, opt)
		var qmu sync.Mutex
		var queue []float64
		var st0 serve.Stats
		if extra != nil {
			go extra()
		}
		wall, cpu, itl, err := decodeAllCPU(seqs, genN, func(s *concSeq) ([]float32, error) {
			seq := &engine.BatchSeq{State: s.st, KV: s.kv, Token: s.tok}
			slot, err := b.Decode(context.Background(), seq)
			qmu.Lock()
			queue = append(queue, slot.Wait.Seconds()*1000)
			qmu.Unlock()
			return seq.Logits, err
		}, func() {
			qmu.Lock()
			queue = queue[:0]
			qmu.Unlock()
			st0 = b.Stats()
		})
		b.Close()
		cpuBatched = cpu
		st := b.Stats()
		st.Passes, st.Steps = st.Passes-st0.Passes, st.Steps-st0.Steps
		return wall, itl, queue, st, err
	}
	wall, itl, queue, st, err := run(nil)
	if err != nil {
		return r, err
	}
	r.AggBatched = round(float64(n*genN)/wall.Seconds(), 1)
	r.Speedup = round(r.AggBatched/r.AggUnbatched, 2)
	if cpuBatched > 0 && r.CPUUnbatched > 0 {
		r.CPUBatched = round(float64(n*genN)/cpuBatched.Seconds(), 1)
		r.SpeedupCPU = round(r.CPUBatched/r.CPUUnbatched, 2)
	}
	r.ITLp50Batched, r.ITLp99Batched = pctl(itl, 0.5), pctl(itl, 0.99)
	r.QueueP50ms, r.QueueP99ms = pctl(queue, 0.5), pctl(queue, 0.99)
	r.Passes = st.Passes
	if st.Passes > 0 {
		r.MeanBatchSize = round(float64(st.Steps)/float64(st.Passes), 2)
	}
	// the same with a long prompt prefilling beside the batches
	long := min(m.Config.SeqLen, 512)
	r.LongPrefillTokens = long
	_, itl, _, _, err = run(func() {
		prompt := make([]int, long)
		for i := range prompt {
			prompt[i] = i % m.Config.VocabSize
		}
		kv, _ := engine.NewKVCacheOf(m.Config, long, benchKV)
		t0 := time.Now()
		m.Forward(engine.NewState(m.Config), kv, prompt, nil)
		r.LongPrefillMs = round(time.Since(t0).Seconds()*1000, 1)
	})
	if err != nil {
		return r, err
	}
	r.ITLp99WithLongPrefill = pctl(itl, 0.99)
	return r, nil
}
