package main

// bench_paired.go: paired measurements that hold on a loaded machine: every decode step next to a
// bandwidth-probe run (decode against the bound) and next to a BF16 step of the same model.

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/enginebench"
)

// pairedResult is --paired's figures for one model. Each of Steps rounds
// runs a probe pass, an F32 decode step and a BF16 decode step back to back
// (the order flips every round, F32 always in the middle), so each ratio
// compares two measurements taken milliseconds apart: a load that comes
// and goes over seconds moves both. Figures are the median and the
// quartiles of the per-round ratios.
type pairedResult struct {
	Model               string `json:"model"`
	Steps               int    `json:"steps"`
	ProbeBytes          int    `json:"probe_bytes"`
	ReadProbe           string `json:"read_probe"`
	BytesPerDecodeToken int64  `json:"bytes_per_decode_token"`
	// DecodeVsBound is, per round, (bytes per decode step ÷ the F32 step's
	// time) ÷ the adjacent probe run's bytes/second.
	DecodeVsBound    quartiles `json:"decode_vs_bandwidth_bound"`
	DecodeGBps       float64   `json:"decode_median_GB_per_s"`
	ProbeGBps        float64   `json:"probe_median_GB_per_s"`
	F32TokensPerSec  float64   `json:"f32_median_tokens_per_s"`
	BF16TokensPerSec float64   `json:"bf16_median_tokens_per_s,omitempty"`
	// BF16Speedup is, per round, the F32 step's time ÷ the BF16 step's
	// (the same model rounded to bfloat16, the same positions).
	BF16Speedup *quartiles `json:"bf16_speedup_vs_f32,omitempty"`
	// BF16VsBound is DecodeVsBound for the BF16 step, against its own
	// bytes per step (BF16BytesPerDecodeToken: the converted weights and
	// the same cache) and the same round's probe run.
	BF16VsBound             *quartiles `json:"bf16_vs_bandwidth_bound,omitempty"`
	BF16BytesPerDecodeToken int64      `json:"bf16_bytes_per_decode_token,omitempty"`
}

type quartiles struct {
	Median float64 `json:"median"`
	P25    float64 `json:"p25"`
	P75    float64 `json:"p75"`
}

func quartilesOf(v []float64) quartiles {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	at := func(q float64) float64 { // linear interpolation between order statistics
		x := q * float64(len(s)-1)
		i := int(x)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (x-float64(i))*(s[i+1]-s[i])
	}
	return quartiles{Median: round(at(0.5), 3), P25: round(at(0.25), 3), P75: round(at(0.75), 3)}
}

func median(v []float64) float64 { return quartilesOf(v).Median }

// decoder is one model decoding greedily from a prompt, a step at a time.
type decoder struct {
	m    *engine.Model
	st   *engine.State
	kv   *engine.KVCache
	next int
}

func newDecoder(m *engine.Model, prompt []int, steps int) (*decoder, error) {
	d := &decoder{m: m, st: engine.NewState(m.Config)}
	var err error
	if d.kv, err = engine.NewKVCacheOf(m.Config, len(prompt)+steps, benchKV); err != nil {
		return nil, err
	}
	logits, err := m.Forward(d.st, d.kv, prompt, nil)
	if err != nil {
		return nil, err
	}
	d.next = argmaxF(logits)
	return d, nil
}

// step decodes one token and returns its time in seconds.
func (d *decoder) step() (float64, error) {
	t0 := time.Now()
	logits, err := d.m.Forward(d.st, d.kv, []int{d.next}, nil)
	if err != nil {
		return 0, err
	}
	d.next = argmaxF(logits)
	return time.Since(t0).Seconds(), nil
}

// benchPaired runs --paired for an F32 model (a BF16 one gets the probe
// pairs only).
func benchPaired(m *engine.Model, promptN, genN, probeBytes int) (pairedResult, error) {
	c := m.Config
	if promptN+genN > c.SeqLen {
		return pairedResult{}, fmt.Errorf("%s: prompt %d + gen %d exceeds the context %d", m.Name, promptN, genN, c.SeqLen)
	}
	bytes := m.Weights.Bytes() + int64(promptN+genN/2)*c.KVBytesPerToken()
	r := pairedResult{Model: m.Name, Steps: genN, ProbeBytes: probeBytes, ReadProbe: enginebench.ReadProbe(), BytesPerDecodeToken: bytes}
	rng := rand.New(rand.NewPCG(7, 7))
	prompt := make([]int, promptN)
	for i := range prompt {
		prompt[i] = rng.IntN(c.VocabSize)
	}
	f, err := newDecoder(m, prompt, genN)
	if err != nil {
		return r, err
	}
	var b *decoder
	if m.Weights.DType() == engine.F32 {
		if b, err = newDecoder(m.WithWeights(engine.BF16), prompt, genN); err != nil {
			return r, err
		}
	}
	probe := enginebench.NewBandwidthProbe(probeBytes)
	var vsBound, speedup, decodeBW, probeBW, tf32, tbf16, bVsBound []float64
	var bbytes int64
	if b != nil {
		bbytes = b.m.Weights.Bytes() + int64(promptN+genN/2)*c.KVBytesPerToken()
		r.BF16BytesPerDecodeToken = bbytes
	}
	for i := 0; i < genN; i++ {
		var bw, tf, tb float64
		if i%2 == 0 {
			bw = probe.Run(0)
		} else if b != nil {
			if tb, err = b.step(); err != nil {
				return r, err
			}
		}
		if tf, err = f.step(); err != nil {
			return r, err
		}
		if i%2 == 0 {
			if b != nil {
				if tb, err = b.step(); err != nil {
					return r, err
				}
			}
		} else {
			bw = probe.Run(0)
		}
		vsBound = append(vsBound, float64(bytes)/tf/bw)
		decodeBW = append(decodeBW, float64(bytes)/tf/1e9)
		probeBW = append(probeBW, bw/1e9)
		tf32 = append(tf32, 1/tf)
		if b != nil {
			speedup = append(speedup, tf/tb)
			tbf16 = append(tbf16, 1/tb)
			bVsBound = append(bVsBound, float64(bbytes)/tb/bw)
		}
	}
	r.DecodeVsBound = quartilesOf(vsBound)
	r.DecodeGBps, r.ProbeGBps = round(median(decodeBW), 2), round(median(probeBW), 2)
	r.F32TokensPerSec = round(median(tf32), 1)
	if b != nil {
		q := quartilesOf(speedup)
		r.BF16Speedup = &q
		qb := quartilesOf(bVsBound)
		r.BF16VsBound = &qb
		r.BF16TokensPerSec = round(median(tbf16), 1)
	}
	return r, nil
}
