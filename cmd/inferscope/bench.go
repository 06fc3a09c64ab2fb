package main

// bench.go: the bench command: prefill/decode speed on synthetic shapes or a model, as JSON.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/inferscope/inferscope/engine"
)

func init() {
	register(&command{name: "bench", summary: "measure prefill/decode speed on named shapes or a model; prints JSON", run: runBench})
}

// benchResult is one model's figures; every rate is measured in this run.
type benchResult struct {
	Model               string  `json:"model"`
	Params              int64   `json:"params"`
	WeightsBytes        int64   `json:"weights_bytes"`
	KVBytesPerToken     int64   `json:"kv_bytes_per_token"`
	PromptTokens        int     `json:"prompt_tokens"`
	GenTokens           int     `json:"gen_tokens"`
	PrefillTokensPerSec float64 `json:"prefill_tokens_per_s"`
	DecodeTokensPerSec  float64 `json:"decode_tokens_per_s"`
	TTFTms              float64 `json:"time_to_first_token_ms"`
	ITLp50ms            float64 `json:"inter_token_latency_p50_ms"`
	ITLp99ms            float64 `json:"inter_token_latency_p99_ms"`
	// BandwidthBoundTokensPerSec is read bandwidth ÷ weight bytes read per
	// token: the decode rate a memory-bound engine could reach at best.
	BandwidthBoundTokensPerSec float64 `json:"bandwidth_bound_tokens_per_s"`
	DecodeVsBandwidthBound     float64 `json:"decode_vs_bandwidth_bound"`
	PrefillVsTokenByToken      float64 `json:"prefill_speedup_vs_token_by_token"`
}

type benchReport struct {
	Machine struct {
		CPUs               int     `json:"cpus"`
		ReadBandwidthGBps  float64 `json:"read_bandwidth_GB_per_s"`
		BandwidthProbeSize int     `json:"bandwidth_probe_bytes"`
	} `json:"machine"`
	Results []benchResult `json:"results"`
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "bench [--shape NAME[,NAME]] [--model PATH] [--prompt-tokens N] [--gen-tokens N] [--write-llama2c PATH]", stderr)
	var names []string
	for n := range engine.Shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	shapes := fs.String("shape", "stories15M,gpt2-124M,smollm2-135M", "named shapes with synthetic weights: "+strings.Join(names, ", "))
	modelPath := fs.String("model", "", `also bench a model: "default" or a path (HF directory or llama2.c .bin)`)
	promptN := fs.Int("prompt-tokens", 128, "prompt length for prefill")
	genN := fs.Int("gen-tokens", 64, "decode steps")
	writeL2C := fs.String("write-llama2c", "", "write a random-weight stories15M llama2.c checkpoint (and tokenizer.bin beside it) to PATH and exit")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *writeL2C != "" {
		return writeLlama2cBench(*writeL2C, stdout)
	}
	if *promptN < 1 || *genN < 1 {
		return fmt.Errorf("--prompt-tokens and --gen-tokens must be at least 1")
	}
	var shapeNames []string
	if *shapes != "" {
		shapeNames = strings.Split(*shapes, ",")
	}
	for _, n := range shapeNames { // check every flag before the slow probe
		if _, ok := engine.Shapes[n]; !ok {
			return fmt.Errorf("unknown shape %q (known: %s)", n, strings.Join(names, ", "))
		}
	}
	var rep benchReport
	rep.Machine.CPUs = runtimeCPUs()
	rep.Machine.BandwidthProbeSize = 512 << 20
	bw := engine.MeasureReadBandwidth(rep.Machine.BandwidthProbeSize, 0)
	rep.Machine.ReadBandwidthGBps = round(bw/1e9, 2)
	var todo []*engine.Model
	if len(shapeNames) > 0 {
		for _, n := range shapeNames {
			m, err := engine.RandomModel(n, engine.Shapes[n], 1)
			if err != nil {
				return err
			}
			todo = append(todo, m)
		}
	}
	if *modelPath != "" {
		m, err := (modelFlags{model: modelPath, tokenizer: new(string)}).loadAny()
		if err != nil {
			return err
		}
		todo = append(todo, m)
	}
	for _, m := range todo {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r, err := benchModel(m, *promptN, *genN, bw)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, r)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

func benchModel(m *engine.Model, promptN, genN int, bw float64) (benchResult, error) {
	c := m.Config
	if promptN+genN > c.SeqLen {
		return benchResult{}, fmt.Errorf("%s: prompt %d + gen %d exceeds the context %d", m.Name, promptN, genN, c.SeqLen)
	}
	r := benchResult{Model: m.Name, Params: m.Weights.NumParams(), WeightsBytes: m.Weights.Bytes(),
		KVBytesPerToken: c.KVBytesPerToken(), PromptTokens: promptN, GenTokens: genN}
	rng := rand.New(rand.NewPCG(7, 7))
	prompt := make([]int, promptN)
	for i := range prompt {
		prompt[i] = rng.IntN(c.VocabSize)
	}
	st := engine.NewState(c)
	kv, err := engine.NewKVCache(c, promptN+genN)
	if err != nil {
		return r, err
	}
	// warm-up pass (page in weights, size scratch)
	if _, err := m.Forward(st, kv, prompt, nil); err != nil {
		return r, err
	}
	kv.Truncate(0)
	start := time.Now()
	logits, err := m.Forward(st, kv, prompt, nil)
	if err != nil {
		return r, err
	}
	prefill := time.Since(start)
	next := argmaxF(logits)
	r.TTFTms = ms(time.Since(start))
	r.PrefillTokensPerSec = round(float64(promptN)/prefill.Seconds(), 1)
	var steps []float64
	for i := 0; i < genN; i++ {
		t0 := time.Now()
		logits, err = m.Forward(st, kv, []int{next}, nil)
		if err != nil {
			return r, err
		}
		next = argmaxF(logits)
		steps = append(steps, time.Since(t0).Seconds())
	}
	var total float64
	for _, s := range steps {
		total += s
	}
	r.DecodeTokensPerSec = round(float64(genN)/total, 1)
	sort.Float64s(steps)
	r.ITLp50ms = round(steps[len(steps)/2]*1000, 3)
	r.ITLp99ms = round(steps[min(len(steps)-1, len(steps)*99/100)]*1000, 3)
	// per decode step every weight is read once (a tied head is read twice,
	// as embedding row and as the LM head; the row is negligible)
	perToken := float64(m.Weights.Bytes())
	r.BandwidthBoundTokensPerSec = round(bw/perToken, 1)
	r.DecodeVsBandwidthBound = round(r.DecodeTokensPerSec/r.BandwidthBoundTokensPerSec, 3)
	// token-by-token prefill baseline on the same prompt (≤ 32 tokens to bound the time)
	n := min(promptN, 32)
	kv.Truncate(0)
	t0 := time.Now()
	for _, tok := range prompt[:n] {
		if _, err := m.Forward(st, kv, []int{tok}, nil); err != nil {
			return r, err
		}
	}
	one := float64(n) / time.Since(t0).Seconds()
	r.PrefillVsTokenByToken = round(r.PrefillTokensPerSec/one, 2)
	return r, nil
}

func argmaxF(v []float32) int {
	b := 0
	for i, x := range v {
		if x > v[b] {
			b = i
		}
	}
	return b
}

func ms(d time.Duration) float64 { return round(d.Seconds()*1000, 3) }

func round(x float64, places int) float64 {
	p := 1.0
	for range places {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}

// writeLlama2cBench writes stories15M random weights in llama2.c format plus
// a 32000-entry tokenizer.bin so llama2.c's run.c can run the same model.
func writeLlama2cBench(path string, stdout io.Writer) error {
	m, err := engine.RandomModel("stories15M", engine.Shapes["stories15M"], 1)
	if err != nil {
		return err
	}
	if err := engine.WriteLlama2c(path, m); err != nil {
		return err
	}
	tokPath := filepath.Join(filepath.Dir(path), "tokenizer.bin")
	var b []byte
	b = appendI32(b, 16)
	for i := 0; i < m.Config.VocabSize; i++ {
		var p string
		switch {
		case i == 0:
			p = "<unk>"
		case i == 1:
			p = "\n<s>\n"
		case i == 2:
			p = "\n</s>\n"
		case i < 259:
			p = fmt.Sprintf("<0x%02X>", i-3)
		default:
			p = fmt.Sprintf(" w%d", i)
		}
		b = appendF32(b, float32(-i))
		b = appendI32(b, int32(len(p)))
		b = append(b, p...)
	}
	if err := os.WriteFile(tokPath, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes) and %s\n", path, 28+4*m.Weights.NumParams(), tokPath)
	return nil
}
