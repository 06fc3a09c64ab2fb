package main

// bench_long.go: bench --depth N: decode with N positions already cached
// (random keys and values: attention's cost does not depend on them)
// against decode at a short depth and the read-bandwidth probe, in
// alternating rounds, so attention's share of a long-context step is
// measured against the KV cache bytes it must read.

import (
	"math/rand/v2"
	"sort"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/quant"
	"github.com/inferscope/inferscope/internal/cputime"
	"github.com/inferscope/inferscope/internal/enginebench"
)

// longResult is one model's long-context figures (medians over rounds).
type longResult struct {
	Model  string `json:"model"`
	Depth  int    `json:"depth"`
	Short  int    `json:"short_depth"`
	Rounds int    `json:"rounds"`
	// DecodeMs and ShortDecodeMs are one decode step with Depth and Short
	// positions cached; AttentionMs is their difference (median of the
	// per-round differences): what the longer context costs.
	DecodeMs      float64 `json:"decode_ms"`
	ShortDecodeMs float64 `json:"short_decode_ms"`
	AttentionMs   float64 `json:"attention_ms"`
	// KVBytes is the cache a step at Depth reads (every layer's keys and
	// values of Depth+1 positions); KVReadMs those bytes at the probe's
	// median read bandwidth of the same rounds: the floor for AttentionMs.
	// AttentionTimedMs is the attention of a step at Depth timed where it
	// runs (every layer's, engine.Hooks.Attended: queries against the
	// cache, softmax, weighted sums; no projections), median over rounds:
	// a steadier figure than AttentionMs, a difference of two whole steps
	// that each move by milliseconds on a shared host. Its ratio to the
	// floor is the median of each round's (that round's probe run).
	AttentionTimedMs        float64 `json:"attention_timed_ms"`
	AttentionTimedVsKVFloor float64 `json:"attention_timed_vs_kv_read_floor"`
	ShortAttentionTimedMs   float64 `json:"short_attention_timed_ms"`
	KVBytes                 int64   `json:"kv_bytes"`
	KVCache                 string  `json:"kv_cache"` // its precision (--kv-cache)
	ReadBandwidthGBps       float64 `json:"read_bandwidth_median_GB_per_s"`
	KVReadMs                float64 `json:"kv_read_floor_ms"`
	AttentionVsKVFloor      float64 `json:"attention_vs_kv_read_floor"`
	// DecodeVsReadFloor is the whole step at Depth against reading every
	// weight and the cache once at that bandwidth.
	ReadFloorMs       float64 `json:"read_floor_ms"`
	DecodeVsReadFloor float64 `json:"decode_vs_read_floor"`
	// CPU time of a step (all threads), Depth and Short, medians: on a
	// busy machine a steadier figure than the wall clock.
	DecodeCPUMs      float64 `json:"decode_cpu_ms"`
	ShortDecodeCPUMs float64 `json:"short_decode_cpu_ms"`
}

// benchLong measures decode at depth against decode at a short depth and
// the bandwidth probe (probeBytes > 0), rounds times each, alternating.
func benchLong(m *engine.Model, depth, rounds, probeBytes int) (longResult, error) {
	c := m.Config
	short := min(16, depth)
	r := longResult{Model: m.Name, Depth: depth, Short: short, Rounds: rounds}
	kvLong, err := engine.NewKVCacheOf(c, depth+1, benchKV)
	if err != nil {
		return r, err
	}
	kvShort, err := engine.NewKVCacheOf(c, short+1, benchKV)
	if err != nil {
		return r, err
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for _, kv := range []*engine.KVCache{kvLong, kvShort} {
		for i := range kv.Key {
			kv.Key[i], kv.Value[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		enc := quant.F32ToF16 // a 16-bit cache: random values rounded
		if benchKV == engine.KVBF16 {
			enc = quant.F32ToBF16
		}
		for i := range kv.Key16 {
			kv.Key16[i], kv.Value16[i] = enc(float32(rng.NormFloat64())), enc(float32(rng.NormFloat64()))
		}
	}
	st := engine.NewState(c)
	var attn time.Duration
	hooks := &engine.Hooks{Attended: func(i engine.AttendedInfo) { attn += i.Elapsed }}
	var attnLong, attnShort []float64
	step := func(kv *engine.KVCache, n int) (wall, cpu float64, err error) {
		kv.Len = n
		attn = 0
		c0, t0 := cputime.Process(), time.Now()
		_, err = m.Forward(st, kv, []int{1}, hooks)
		wall, cpu = time.Since(t0).Seconds(), (cputime.Process() - c0).Seconds()
		if n == depth {
			attnLong = append(attnLong, attn.Seconds())
		} else {
			attnShort = append(attnShort, attn.Seconds())
		}
		return wall, cpu, err
	}
	for range 2 { // warm: page in the weights, size the scratch
		if _, _, err := step(kvLong, depth); err != nil {
			return r, err
		}
		if _, _, err := step(kvShort, short); err != nil {
			return r, err
		}
	}
	attnLong, attnShort = attnLong[:0], attnShort[:0]
	var probe *enginebench.BandwidthProbe
	if probeBytes > 0 {
		probe = enginebench.NewBandwidthProbe(probeBytes)
	}
	var long, shortT, diff, bw, longCPU, shortCPU []float64
	for i := range rounds {
		if probe != nil {
			bw = append(bw, probe.Run(0))
		}
		var l, s, lc, sc float64
		for k := range 2 { // which depth goes first alternates
			if (i+k)%2 == 0 {
				l, lc, err = step(kvLong, depth)
			} else {
				s, sc, err = step(kvShort, short)
			}
			if err != nil {
				return r, err
			}
		}
		long, shortT, diff = append(long, l), append(shortT, s), append(diff, l-s)
		longCPU, shortCPU = append(longCPU, lc), append(shortCPU, sc)
	}
	ms := func(v []float64) float64 { return round(medianOf(v)*1000, 3) }
	r.DecodeMs, r.ShortDecodeMs, r.AttentionMs = ms(long), ms(shortT), ms(diff)
	r.DecodeCPUMs, r.ShortDecodeCPUMs = ms(longCPU), ms(shortCPU)
	r.AttentionTimedMs, r.ShortAttentionTimedMs = ms(attnLong), ms(attnShort)
	r.KVBytes = int64(depth+1) * c.KVBytesPerToken() * int64(benchKV.Bytes()) / 4
	r.KVCache = benchKV.String()
	if len(bw) > 0 {
		b := medianOf(bw)
		r.ReadBandwidthGBps = round(b/1e9, 2)
		r.KVReadMs = round(float64(r.KVBytes)/b*1000, 3)
		r.AttentionVsKVFloor = round(r.AttentionMs/r.KVReadMs, 3)
		var ratios []float64 // each round's attention against the probe run just before it
		for i, a := range attnLong {
			ratios = append(ratios, a/(float64(r.KVBytes)/bw[i]))
		}
		r.AttentionTimedVsKVFloor = round(medianOf(ratios), 3)
		r.ReadFloorMs = round(float64(r.KVBytes+m.Weights.Bytes())/b*1000, 3)
		r.DecodeVsReadFloor = round(r.DecodeMs/r.ReadFloorMs, 3)
	}
	return r, nil
}

func medianOf(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}
