package main

// bench.go: the bench command: prefill/decode speed on synthetic shapes or a model, as JSON.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/internal/cputime"
	"github.com/inferscope/inferscope/internal/enginebench"
)

func init() {
	register(&command{name: "bench", summary: "measure prefill/decode speed on named shapes or a model; prints JSON", run: runBench})
}

// benchResult is one model's figures; every rate is measured in this run.
type benchResult struct {
	Model               string  `json:"model"`
	WeightsPrecision    string  `json:"weights_precision"`
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
	// PrefillGFLOPs is the prefill's matrix arithmetic (2 flops per weight
	// per position, plus attention's scores and sums) per second.
	PrefillGFLOPs float64 `json:"prefill_gflops_per_s"`
	// BytesPerDecodeToken is what one decode step must read: every weight
	// matrix once, plus the KV cache at the average position of the run.
	BytesPerDecodeToken int64 `json:"bytes_per_decode_token"`
	// DecodeMedianTokensPerSec is 1 ÷ the median decode step.
	DecodeMedianTokensPerSec float64 `json:"decode_median_tokens_per_s"`
	// DecodeCPUTokensPerSec is decode steps per second of the process's CPU
	// time (every thread's) over the timed steps: on a machine shared with
	// other work, where wall-clock rates vary with the load, the figure to
	// compare (llama-bench's the same way: scripts/bench/gguf_peers.sh).
	DecodeCPUTokensPerSec float64 `json:"decode_cpu_tokens_per_s"`
	// ReadBandwidthMedianGBps is the median of the probe runs made just
	// before and just after this model's decode (4 each), so the bound and
	// the decode see the same machine load.
	ReadBandwidthMedianGBps float64 `json:"read_bandwidth_median_GB_per_s,omitempty"`
	// BandwidthBoundTokensPerSec is that median read bandwidth ÷ bytes per
	// decode step: the decode rate a memory-bound engine could reach at best.
	BandwidthBoundTokensPerSec float64 `json:"bandwidth_bound_tokens_per_s"`
	// DecodeVsBandwidthBound is the median decode rate ÷ the bound (median
	// against median); DecodeVsBestBandwidthBound the mean decode rate ÷
	// the best probe run's bound (the stricter figure earlier reports used:
	// on a loaded machine the best short probe run catches a quiet moment).
	DecodeVsBandwidthBound     float64 `json:"decode_vs_bandwidth_bound"`
	DecodeVsBestBandwidthBound float64 `json:"decode_vs_best_bandwidth_bound"`
	PrefillVsTokenByToken      float64 `json:"prefill_speedup_vs_token_by_token"`
}

// labResult is the lab's run as the server streams it to the page
// (bench_lab.go): a greedy run of GenTokens started with the lab's
// settings (every position's attention, the logit lens) and run with
// detail_ms 250, read over a websocket in this process without parsing,
// against the bare loop (prefill, forward and argmax) of the same prompt
// and length, in alternating rounds; medians over the rounds.
type labResult struct {
	Model     string  `json:"model"`
	GenTokens int     `json:"gen_tokens"`
	Rounds    int     `json:"rounds"`
	LabMs     float64 `json:"lab_run_ms"` // the run command to the stop event
	BareMs    float64 `json:"bare_ms"`
	// LabVsBare is the bare loop's time ÷ the run's (median of the
	// rounds' ratios); LabVsBareCPU the same with the process's CPU time.
	LabVsBare    float64 `json:"lab_vs_bare"`
	LabVsBareCPU float64 `json:"lab_vs_bare_cpu"`
	// OverheadUsPerToken is what the run adds per token beside its forward
	// passes: (run time − the stop event's model_ms) ÷ tokens, median of
	// the rounds (stages, events, thinning, encoding, the pool's wake-ups).
	OverheadUsPerToken float64 `json:"overhead_us_per_token"`
	// GCCPUPercent is the collector's share of the runs' CPU time (the
	// runtime's estimate); AllocKiBPerRun what a run allocates.
	GCCPUPercent   float64 `json:"gc_cpu_percent"`
	AllocKiBPerRun float64 `json:"alloc_KiB_per_run"`
}

type benchReport struct {
	Machine struct {
		CPUs    int    `json:"cpus"`
		Kernels string `json:"kernels"`
		KVCache string `json:"kv_cache"` // --kv-cache: every part's KV cache precision
		// ReadBandwidthGBps is the best of 7 runs of a streaming read
		// (vector loads of whole cache lines, 64-bit sums) on every thread,
		// independent of the engine's kernels; 0 when skipped.
		// ReadBandwidthMedianGBps is the median of the same runs, ReadProbe
		// the loop used (avx512, avx2, go).
		ReadBandwidthGBps       float64 `json:"read_bandwidth_GB_per_s"`
		ReadBandwidthMedianGBps float64 `json:"read_bandwidth_median_GB_per_s,omitempty"`
		ReadProbe               string  `json:"read_probe,omitempty"`
		BandwidthProbeSize      int     `json:"bandwidth_probe_bytes"`
		// PeakRSS is this process's peak resident memory (VmHWM) at the end:
		// with --probe-bytes 0 and one --model it is the model's footprint.
		PeakRSS int64 `json:"peak_rss_bytes,omitempty"`
		// GGUFInPlace says, for a --model GGUF file, whether the file was
		// mapped in place (a read lease held) at the end, or read into a
		// private copy (no lease could be taken).
		GGUFInPlace *bool `json:"gguf_weights_in_place,omitempty"`
	} `json:"machine"`
	Results []benchResult `json:"results"`
	// Concurrent is --concurrent N's figures, Generate --model's generate
	// path against its bare decode (bench_concurrent.go).
	Concurrent []concurrentResult `json:"concurrent,omitempty"`
	Generate   []generateResult   `json:"generate,omitempty"`
	// Paired is --paired's figures (bench_paired.go).
	Paired []pairedResult `json:"paired,omitempty"`
	// Long is --depth's figures (bench_long.go), Lab --model's thinned lab
	// run against its bare decode (bench_lab.go).
	Long []longResult `json:"long_context,omitempty"`
	Lab  []labResult  `json:"lab_run,omitempty"`
}

// benchBatched runs --concurrent's batched half through the server's
// scheduler; bench_batched.go sets it, and it stays nil in the engine-only
// build. defaultMaxBatch is the scheduler's default batch size.
var (
	benchBatched    func(m *engine.Model, n, promptN, genN, maxBatch int) (concurrentResult, error)
	defaultMaxBatch = 32
	// benchLab runs the lab's thinned run through the web server
	// (bench_lab.go); nil in the engine-only build.
	benchLab func(m *engine.Model, genN, rounds int) (labResult, error)
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "bench [--shape NAME[,NAME]] [--model PATH] [--weights f32|bf16|q8_0|q4_0|q4_k] [--prompt-tokens N] [--gen-tokens N] [--probe-bytes N] [--depth N] [--rounds N] [--kv-cache f32|f16|bf16] [--concurrent N [--max-batch B]] [--cpuprofile FILE] [--memprofile FILE] [--paired] [--decode-only] [--write-llama2c PATH] [--write-hf DIR]", stderr)
	var names []string
	for n := range engine.Shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	shapes := fs.String("shape", "stories15M,gpt2-124M,smollm2-135M", "named shapes with synthetic weights: "+strings.Join(names, ", "))
	modelPath := fs.String("model", "", `also bench a model: "default" or a path (HF directory or llama2.c .bin)`)
	promptN := fs.Int("prompt-tokens", 128, "prompt length for prefill (unset: 128, or what the context leaves beside --gen-tokens)")
	genN := fs.Int("gen-tokens", 64, "decode steps")
	writeL2C := fs.String("write-llama2c", "", "write a random-weight stories15M llama2.c checkpoint (and tokenizer.bin beside it) to PATH and exit")
	writeHF := fs.String("write-hf", "", "write the first --shape with random weights as a Hugging Face directory (config.json + model.safetensors) to DIR and exit")
	weights := fs.String("weights", "", "weight precision to run: f32, bf16, q8_0, q4_0 or q4_k (default: as stored; synthetic shapes are f32)")
	probe := fs.Int("probe-bytes", 512<<20, "bytes the bandwidth probe streams; 0 skips it")
	concurrent := fs.Int("concurrent", 0, "also run N sessions decoding at once, batched (the server's scheduler) and unbatched, in the same run")
	decodeOnly := fs.Bool("decode-only", false, "measure prefill and decode only: skip the token-by-token prefill baseline, and with a tokenizer the generate path and the lab run")
	paired := fs.Bool("paired", false, "also decode in rounds of probe run, F32 step and BF16 step back to back, and report the per-round ratios' median and quartiles (decode vs the bandwidth bound, BF16 vs F32); needs --probe-bytes > 0")
	maxBatch := fs.Int("max-batch", defaultMaxBatch, "with --concurrent: most decode steps per batched pass")
	depth := fs.Int("depth", 0, "also decode with this many positions already cached (random keys and values), against a short depth and the bandwidth probe in alternating rounds: attention's cost against the KV cache read floor")
	rounds := fs.Int("rounds", 9, "rounds of --depth's and the lab run's alternating measurements (medians reported)")
	kvCache := fs.String("kv-cache", "f32", "KV cache precision of every part: f32, f16 or bf16 (llama.cpp's --cache-type-k/-v)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole bench to FILE (go tool pprof)")
	memProfile := fs.String("memprofile", "", "write a heap profile to FILE when the bench ends (go tool pprof -sample_index=inuse_space): the Go heap live at the last collection")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *memProfile != "" {
		runtime.MemProfileRate = 512 // every allocation of 512 bytes or more, so small heaps are seen whole
		defer func() {
			if err := writeHeapProfile(*memProfile); err != nil {
				fmt.Fprintf(stderr, "--memprofile: %v\n", err)
			}
		}()
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if *concurrent < 0 || *concurrent > 256 || *maxBatch < 1 || *maxBatch > 256 {
		return fmt.Errorf("--concurrent %d / --max-batch %d out of range: allowed 0 to 256 and 1 to 256", *concurrent, *maxBatch)
	}
	if *concurrent > 0 && benchBatched == nil {
		return fmt.Errorf("--concurrent needs the server's scheduler, which this engine-only build (-tags engineonly) leaves out: use the full inferscope binary")
	}
	if *depth < 0 || *rounds < 1 {
		return fmt.Errorf("--depth %d / --rounds %d out of range: --depth at least 0, --rounds at least 1", *depth, *rounds)
	}
	if *paired && *probe <= 0 {
		return fmt.Errorf("--paired needs the bandwidth probe: --probe-bytes must be above 0")
	}
	if *writeL2C != "" {
		return writeLlama2cBench(*writeL2C, stdout)
	}
	dt, convert, err := parseWeightsDType(*weights)
	if err != nil {
		return err
	}
	var rep benchReport
	if benchKV, err = engine.ParseKVPrec(*kvCache); err != nil {
		return fmt.Errorf("--kv-cache: %w", err)
	}
	rep.Machine.KVCache = benchKV.String()
	promptSet := false
	fs.Visit(func(f *flag.Flag) { promptSet = promptSet || f.Name == "prompt-tokens" })
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
	if *writeHF != "" {
		if len(shapeNames) == 0 {
			return fmt.Errorf("--write-hf needs a --shape")
		}
		return writeHFBench(*writeHF, shapeNames[0], stdout)
	}
	rep.Machine.CPUs = runtimeCPUs()
	rep.Machine.Kernels = engine.KernelPath()
	if *probe > 0 {
		rep.Machine.BandwidthProbeSize = *probe
		runs := enginebench.ReadBandwidthRuns(*probe, 0, 7)
		sort.Float64s(runs)
		rep.Machine.ReadBandwidthGBps = round(runs[len(runs)-1]/1e9, 2)
		rep.Machine.ReadBandwidthMedianGBps = round(runs[len(runs)/2]/1e9, 2)
		rep.Machine.ReadProbe = enginebench.ReadProbe()
	}
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
		m, err := (modelFlags{model: modelPath, tokenizer: new(string), weights: weights}).loadAny() // converted as loaded
		if err != nil {
			return err
		}
		todo = append(todo, m)
	}
	for _, m := range todo {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if convert {
			m = m.WithWeights(dt)
		}
		promptN := *promptN
		if !promptSet && promptN+*genN > m.Config.SeqLen && *genN < m.Config.SeqLen {
			// the default prompt gives way to a generation the lab accepts
			// (--gen-tokens 250 on a 256-position model): the rest of the context
			promptN = m.Config.SeqLen - *genN
		}
		r, err := benchModel(m, promptN, *genN, *probe, *decodeOnly)
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, r)
		if *paired {
			pr, err := benchPaired(m, promptN, *genN, *probe)
			if err != nil {
				return err
			}
			rep.Paired = append(rep.Paired, pr)
		}
		if *depth > 0 {
			if *depth >= m.Config.SeqLen {
				return fmt.Errorf("%s: --depth %d leaves no room in the context %d", m.Name, *depth, m.Config.SeqLen)
			}
			lr, err := benchLong(m, *depth, *rounds, *probe)
			if err != nil {
				return err
			}
			rep.Long = append(rep.Long, lr)
		}
		if m.Tokenizer != nil && !*decodeOnly {
			g, err := benchGenerate(m, *genN)
			if err != nil {
				return err
			}
			rep.Generate = append(rep.Generate, g)
			if benchLab != nil {
				lab, err := benchLab(m, *genN, *rounds)
				if err != nil {
					return err
				}
				rep.Lab = append(rep.Lab, lab)
			}
		}
		if *concurrent > 0 {
			cr, err := benchBatched(m, *concurrent, promptN, *genN, *maxBatch)
			if err != nil {
				return err
			}
			rep.Concurrent = append(rep.Concurrent, cr)
		}
	}
	rep.Machine.PeakRSS = peakRSS()
	for _, m := range todo {
		if m.GGUF != nil {
			in := m.GGUF.WeightsInPlace()
			rep.Machine.GGUFInPlace = &in
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// benchKV is the KV cache precision of every part of a bench run
// (--kv-cache).
var benchKV engine.KVPrec

func benchModel(m *engine.Model, promptN, genN, probeBytes int, decodeOnly bool) (benchResult, error) {
	c := m.Config
	if promptN+genN > c.SeqLen {
		return benchResult{}, fmt.Errorf("%s: prompt %d + gen %d exceeds the context %d", m.Name, promptN, genN, c.SeqLen)
	}
	r := benchResult{Model: m.Name, WeightsPrecision: m.Precision(), Params: m.Weights.NumParams(), WeightsBytes: m.Weights.Bytes(),
		KVBytesPerToken: c.KVBytesPerToken(), PromptTokens: promptN, GenTokens: genN}
	rng := rand.New(rand.NewPCG(7, 7))
	prompt := make([]int, promptN)
	for i := range prompt {
		prompt[i] = rng.IntN(c.VocabSize)
	}
	st := engine.NewState(c)
	kv, err := engine.NewKVCacheOf(c, promptN+genN, benchKV)
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
	r.PrefillGFLOPs = round(prefillFlops(c, promptN)/prefill.Seconds()/1e9, 1)
	var probes []float64
	if probeBytes > 0 {
		probes = enginebench.ReadBandwidthRuns(probeBytes, 0, 4)
	}
	var steps []float64
	cpu0 := cputime.Process()
	for i := 0; i < genN; i++ {
		t0 := time.Now()
		logits, err = m.Forward(st, kv, []int{next}, nil)
		if err != nil {
			return r, err
		}
		next = argmaxF(logits)
		steps = append(steps, time.Since(t0).Seconds())
	}
	if c := cputime.Process() - cpu0; c > 0 {
		r.DecodeCPUTokensPerSec = round(float64(genN)/c.Seconds(), 1)
	}
	var total float64
	for _, s := range steps {
		total += s
	}
	r.DecodeTokensPerSec = round(float64(genN)/total, 1)
	sort.Float64s(steps)
	r.ITLp50ms = round(steps[len(steps)/2]*1000, 3)
	r.DecodeMedianTokensPerSec = round(1/steps[len(steps)/2], 1)
	if probeBytes > 0 {
		probes = append(probes, enginebench.ReadBandwidthRuns(probeBytes, 0, 4)...)
	}
	r.ITLp99ms = round(steps[min(len(steps)-1, len(steps)*99/100)]*1000, 3)
	// per decode step every weight is read once (a tied head is read twice,
	// as embedding row and as the LM head; the row is negligible), and the
	// cache up to the current position
	r.BytesPerDecodeToken = m.Weights.Bytes() + int64(promptN+genN/2)*c.KVBytesPerToken()
	if len(probes) > 0 {
		sort.Float64s(probes)
		med := (probes[(len(probes)-1)/2] + probes[len(probes)/2]) / 2
		bytes := float64(r.BytesPerDecodeToken)
		r.ReadBandwidthMedianGBps = round(med/1e9, 2)
		r.BandwidthBoundTokensPerSec = round(med/bytes, 1)
		r.DecodeVsBandwidthBound = round(r.DecodeMedianTokensPerSec/(med/bytes), 3)
		r.DecodeVsBestBandwidthBound = round(r.DecodeTokensPerSec/(probes[len(probes)-1]/bytes), 3)
	}
	if decodeOnly {
		return r, nil
	}
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

// prefillFlops counts a T-position prefill's multiply-adds ×2: every layer
// matrix for every position, attention's scores and weighted sums over the
// causal triangle, and the LM head for the last position.
func prefillFlops(c engine.Config, T int) float64 {
	d, qd, kvd, hd := float64(c.Dim), float64(c.QDim()), float64(c.KVDim()), float64(c.HiddenDim)
	perPos := d*qd + 2*d*kvd + qd*d + 2*d*hd + hd*d // q, k, v, o, up, down
	if c.Arch != engine.ArchGPT2 {
		perPos += d * hd // gate
	}
	attn := float64(T*(T+1)/2) * qd * 2 // scores and sums
	return 2 * (float64(c.NLayers)*(float64(T)*perPos+attn) + d*float64(c.VocabSize))
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

// peakRSS is the process's peak resident set (VmHWM, Linux); 0 elsewhere.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb * 1024
		}
	}
	return 0
}

// writeHeapProfile writes the heap profile to path: what was live at the last collection, which ran
// while the model was in use (no collection is forced here, which would show only what outlives it).
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
