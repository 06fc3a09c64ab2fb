package session

// stages.go: the stage builders — each turns the engine's numbers for one
// stage (embedding rows, a forward pass, logits, a draw, an append) into
// that stage's event.

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/inferscope/inferscope/engine"
)

func (s *Session) isEOS(id int) bool {
	return id >= 0 && id == s.m.Tokenizer.EOS()
}

// embedInfo shows each prompt position's input vectors, formed by the
// engine's own embedding step (engine.Model.Embedding).
func (s *Session) embedInfo() (*EmbedInfoStage, error) {
	info := &EmbedInfoStage{Dim: s.m.Config.Dim, Method: positionMethod(s.m.Weights.PosEmbed != nil)}
	err := s.m.Embedding(s.ids[:s.nPrompt], 0, func(in engine.EmbedInfo) {
		for t, id := range in.Tokens {
			e := EmbedPosition{Pos: in.Pos0 + t, ID: id, Piece: s.m.Tokenizer.Piece(id)}
			e.TokenVec = append([]float32(nil), in.Token[t]...)
			e.Sum = append([]float32(nil), in.Sum[t]...)
			if in.Position != nil {
				e.PosVec = append([]float32(nil), in.Position[t]...)
				e.PosNorm = norm(e.PosVec)
			}
			e.TokenNorm, e.SumNorm = norm(e.TokenVec), norm(e.Sum)
			info.Positions = append(info.Positions, e)
		}
	})
	return info, err
}

// traceHooks records per-layer traces of one forward pass. The time spent
// copying them is added to s.hookTime: it is inspection, not the model's
// compute.
func (s *Session) traceHooks(all bool, out *[]LayerTrace) *engine.Hooks {
	return &engine.Hooks{AllAttention: all, LayerDone: func(l engine.LayerInfo) {
		t0 := time.Now()
		defer func() { s.hookTime += time.Since(t0) }()
		// one block of memory for the layer's norms and weights
		n := len(l.Hidden) + len(l.MLP)
		for _, a := range l.Attn {
			n += len(a)
		}
		buf := make([]float32, n)
		lt := LayerTrace{Layer: l.Layer, Attn: make([]Compact, len(l.Attn))}
		lt.ResidualNorm, buf = buf[:len(l.Hidden):len(l.Hidden)], buf[len(l.Hidden):]
		lt.MLPNorm, buf = buf[:len(l.MLP):len(l.MLP)], buf[len(l.MLP):]
		for i, h := range l.Hidden {
			lt.ResidualNorm[i] = norm(h)
		}
		for i, a := range l.MLP {
			lt.MLPNorm[i] = norm(a)
		}
		for h, a := range l.Attn {
			lt.Attn[h], buf = Compact(buf[:len(a):len(a)]), buf[len(a):]
			copy(lt.Attn[h], a)
		}
		if l.AttnAll != nil {
			lt.AttnAll = make([][]Compact, len(l.AttnAll))
			for t, heads := range l.AttnAll {
				lt.AttnAll[t] = make([]Compact, len(heads))
				for h, a := range heads {
					lt.AttnAll[t][h] = append([]float32(nil), a...)
				}
			}
		}
		*out = append(*out, lt)
	}}
}

// passHooks are the hooks of one forward pass: the Inspect view and the
// lens (viewHooks) with per-layer traces into out; none for a text-only run.
// A decode step's lens is deferred while DeferLens is on.
func (s *Session) passHooks(all, decode bool, out *[]LayerTrace) *engine.Hooks {
	if s.cfg.TextOnly {
		return nil
	}
	light := decode && s.deferLens // Partial: the Inspect view's traces are enough (FillLens)
	var h *engine.Hooks
	if !light {
		h = s.traceHooks(all, out)
	}
	return s.viewHooks(h, light)
}

// rewindHooks are a rewind's recomputation's hooks: the Inspect view and
// the lens, no traces; none for a text-only run.
func (s *Session) rewindHooks() *engine.Hooks {
	if s.cfg.TextOnly {
		return nil
	}
	return s.viewHooks(nil, false)
}

func (s *Session) prefill() (*PrefillInfo, error) {
	info := &PrefillInfo{Positions: s.nPrompt}
	if s.sched != nil { // one prefill at a time on a shared server: waiting for the slot is queue time
		release, wait, err := s.sched.Prefill(context.Background())
		if err != nil {
			return nil, err
		}
		defer release()
		info.QueueMs = msf(wait)
		s.timings.QueueMs += info.QueueMs
	}
	s.hookTime = 0
	start := time.Now()
	all := s.cfg.AllAttention && s.nPrompt <= MaxAllAttention
	logits, err := s.m.Forward(s.st, s.kv, s.ids[:s.nPrompt], s.passHooks(all, false, &info.Layers))
	s.usedWeights = time.Now()
	if err != nil {
		return nil, err
	}
	info.Lens = s.view.lens
	el := time.Since(start)
	info.ModelMs, info.InspectMs = msf(el-s.hookTime), msf(s.hookTime)
	s.timings.ModelMs += info.ModelMs
	s.timings.InspectMs += info.InspectMs
	s.logits = append(s.logits[:0], logits...)
	s.logitPos = s.nPrompt - 1
	s.prevDist = nil
	info.DurationMs = msf(el)
	info.TokensPerSec = float64(s.nPrompt) / el.Seconds()
	s.timings.PrefillMs = info.DurationMs
	s.timings.PrefillTokPerS = info.TokensPerSec
	return info, nil
}

// chain is the sampler chain d applied, step by step: how many candidates
// and how much probability (after temperature) each step left, and the
// likeliest candidate it removed. The cuts keep nested prefixes of the
// sorted candidates, and d.Sorted reaches past every cut it decided.
func (s *Session) chain(d *Distribution) []CutStep {
	p, V, sorted := d.Params, len(s.logits), d.Sorted
	removed := func(at, upto int) *TokenProb {
		if at >= upto || at >= len(sorted) {
			return nil
		}
		tp := s.tokenProb(d, sorted[at], at)
		return &tp
	}
	if p.Greedy() {
		// temperature 0: all the probability on the top token
		return []CutStep{{Rule: "greedy", On: true, Kept: 1, Mass: 1, Removed: removed(1, V)}}
	}
	mass := func(n int) float64 {
		if n >= V {
			return 1
		}
		var m float64
		for _, c := range sorted[:min(n, len(sorted))] {
			m += c.ProbT
		}
		return m
	}
	return []CutStep{
		{Rule: "temperature", On: p.Temperature != 1, Kept: V, Mass: 1},
		{Rule: "top-k", On: p.TopK > 0 && p.TopK < V, Kept: d.AfterK, Mass: mass(d.AfterK), Removed: removed(d.AfterK, V)},
		{Rule: "top-p", On: p.TopP < 1, Kept: d.AfterP, Mass: mass(d.AfterP), Removed: removed(d.AfterP, d.AfterK)},
		{Rule: "min-p", On: p.MinP > 0, Kept: d.Kept, Mass: d.KeptMass, Removed: removed(d.Kept, d.AfterP)},
	}
}

func (s *Session) tokenProb(d *Distribution, c Candidate, rank int) TokenProb {
	return TokenProb{ID: c.ID, Piece: s.m.Tokenizer.Piece(c.ID), Text: string(s.m.Tokenizer.TokenBytes(c.ID)),
		Logit: c.Logit, Prob: float32(c.Prob1), ProbT: float32(c.ProbT), ProbKept: float32(c.ProbKept), Kept: rank < d.Kept, Rank: rank}
}

func (s *Session) logitsStage(recomputed bool) *LogitsInfo {
	start := time.Now()
	var info *LogitsInfo
	buf := s.spare // the previous step's candidates' memory
	if s.dist != nil {
		buf = s.dist.Sorted
	}
	if buf != nil {
		s.prevDist = nil // its candidates are about to be overwritten
	}
	s.spare = nil
	if s.cfg.TextOnly {
		s.dist = newDistributionText(s.logits, s.cfg.Sampling, buf)
		d := s.dist
		info = &LogitsInfo{Pos: s.logitPos, Vocab: len(s.logits), Params: d.Params, AfterTopK: d.AfterK, AfterTopP: d.AfterP,
			Kept: d.Kept, KeptMass: d.KeptMass, Full: s.logits, FromPrefill: s.logitPos == s.nPrompt-1}
	} else {
		light := s.deferLens && !recomputed
		n := s.cfg.TopN
		if light && s.cfg.Sampling.Greedy() {
			// a thin greedy step lists LightTopN candidates and draws none:
			// it ranks only those (complete ranks TopN again if its event is
			// filled in; a sampling step ranks its nucleus, 64 or more, anyway)
			n = min(n, LightTopN)
		}
		s.dist = newDistributionTop(s.logits, s.cfg.Sampling, n, buf)
		info = s.logitsInfoOf(s.dist, s.logits, s.logitPos, s.cfg.TopN, light)
	}
	info.Recomputed = recomputed
	info.DurationMs = msf(time.Since(start))
	s.stepMs += info.DurationMs
	s.timings.InspectMs += info.DurationMs
	return info
}

// logitsInfo is the logits event's view of distribution d over the current
// logits, listing the first topN candidates (the logits stage and Resample
// share it).
func (s *Session) logitsInfo(d *Distribution, topN int) *LogitsInfo {
	return s.logitsInfoOf(d, s.logits, s.logitPos, topN, false)
}

// HistogramBins is the number of bins of a logits event's histogram.
const HistogramBins = 40

// logitsInfoOf is logitsInfo over logits of position pos; light lists
// LightTopN candidates at most and leaves the histogram's counts out (a
// Partial event: see DeferLens).
func (s *Session) logitsInfoOf(d *Distribution, logits []float32, pos, topN int, light bool) *LogitsInfo {
	var pass *engine.LogitPass
	if d.passed && len(d.logits) == len(logits) && (len(logits) == 0 || &d.logits[0] == &logits[0]) {
		pass = &d.pass // the same logits' pass
	}
	st := statsOf(logits, light, pass)
	info := &LogitsInfo{Pos: pos, Vocab: len(logits), Params: d.Params, AfterTopK: d.AfterK, AfterTopP: d.AfterP,
		Kept: d.Kept, KeptMass: d.KeptMass, Entropy1: d.Entropy1, EntropyT: d.EntropyT, Full: logits,
		FromPrefill: pos == s.nPrompt-1}
	info.Mean, info.Histogram = st.mean, st.hist
	if light {
		topN = min(topN, LightTopN)
	}
	info.Min, info.Max = info.Histogram.Lo, info.Histogram.Hi
	info.Chain = s.chain(d)
	info.Top = s.topList(d, topN)
	return info
}

// topList is the first topN candidates of d.
func (s *Session) topList(d *Distribution, topN int) []TokenProb {
	n := min(topN, len(d.Sorted))
	top := make([]TokenProb, 0, n)
	for r := 0; r < n; r++ {
		top = append(top, s.tokenProb(d, d.Sorted[r], r))
	}
	return top
}

// drawFor is the uniform number for generated token `step`: a pure function
// of the seed and the step, so the same seed, settings and prompt give the
// same tokens on every machine, and a rewound run repeats itself.
func drawFor(seed uint64, step int) float64 {
	r := rand.New(rand.NewPCG(seed, uint64(step)+0x5eed))
	return r.Float64()
}

func (s *Session) sample() *SampleInfo {
	start := time.Now()
	if s.dist == nil {
		s.logitsStage(false)
	}
	step := len(s.gen)
	info := s.sampleInfoOf(s.dist, step, s.forced, s.deferLens)
	s.sampledForced = s.forced >= 0
	s.forced = -1
	s.chosen = info.Chosen.ID
	info.Duration = msf(time.Since(start))
	s.stepMs += info.Duration
	s.timings.InspectMs += info.Duration
	if step == 0 {
		s.timings.FirstDecodeMs = s.stepMs
		s.timings.TTFTMs = s.timings.QueueMs + s.timings.TokenizeMs + s.timings.EmbedMs + s.timings.PrefillMs + s.stepMs
	} else {
		s.timings.ITLMs = append(s.timings.ITLMs, s.stepMs)
		s.timings.ITLModelMs = append(s.timings.ITLModelMs, s.stepModelMs)
	}
	s.stepMs, s.stepModelMs = 0, 0
	return info
}

// sampleInfo is the sample stage's decision on distribution d for
// generated token `step`: the forced token (forced ≥ 0), or the rank the
// step's draw lands on, with the cumulative distribution it was read from
// (the sample stage and Resample share it).
func (s *Session) sampleInfo(d *Distribution, step, forced int) *SampleInfo {
	return s.sampleInfoOf(d, step, forced, false)
}

// sampleInfoOf is sampleInfo; light leaves the cumulative distribution
// out (a Partial event: see DeferLens).
func (s *Session) sampleInfoOf(d *Distribution, step, forced int, light bool) *SampleInfo {
	p := d.Params
	info := &SampleInfo{Draw: -1, Step: step, Rule: samplingRule(p)}
	var rank int
	var cand Candidate
	if forced >= 0 {
		cand, rank = d.At(forced)
		info.Forced = true
		info.Rule = forcedRule(info.Rule)
	} else {
		if !p.Greedy() {
			info.Draw = drawFor(p.Seed, step)
		}
		rank = d.Pick(info.Draw)
		cand = d.Sorted[rank]
	}
	info.Chosen = s.tokenProb(d, cand, rank)
	info.Kept = d.Kept
	if s.cfg.TextOnly || light {
		return info
	}
	info.CDF, info.CDFTail = s.cdf(d, rank)
	return info
}

// cdf is the cumulative distribution a sample event shows for a draw that
// landed on rank: the first 64 kept candidates, extended to include the
// chosen one, and the tail beyond them.
func (s *Session) cdf(d *Distribution, rank int) ([]CDFPoint, []CDFRank) {
	var cum float64
	n := min(d.Kept, max(64, rank+1))
	out := make([]CDFPoint, 0, n)
	for i := 0; i < n; i++ {
		cum += d.Sorted[i].ProbKept
		id := d.Sorted[i].ID
		out = append(out, CDFPoint{ID: id, Piece: s.m.Tokenizer.Piece(id), Text: string(s.m.Tokenizer.TokenBytes(id)), Cum: float32(cum)})
	}
	return out, cdfTail(d, len(out), cum)
}

// cdfTail samples the cumulative distribution of the kept candidates from
// rank `from` (0-based) to the last kept rank, at up to 64 ranks spaced
// evenly on a log scale; cum is the cumulative probability before `from`.
func cdfTail(d *Distribution, from int, cum float64) []CDFRank {
	if from >= d.Kept {
		return nil
	}
	const n = 64
	var out []CDFRank
	next := from
	for i := from; i < d.Kept; i++ {
		cum += d.Sorted[i].ProbKept
		if i == next || i == d.Kept-1 {
			out = append(out, CDFRank{Rank: i, Cum: float32(cum)})
			// the next sampled rank: ratio (Kept/from)^(1/n) further on
			step := math.Pow(float64(d.Kept)/float64(max(from, 1)), 1.0/n)
			next = max(i+1, int(float64(i+1)*step))
		}
	}
	return out
}

func (s *Session) memory() MemoryBudget {
	mb := MemoryBudget{Weights: s.m.Weights.Bytes(), KVAllocated: s.kv.BytesAllocated(), KVUsed: s.kv.BytesUsed(s.m.Config), Scratch: s.st.Bytes(),
		KVType: s.kv.Prec.String(), KVUsedF32: s.kv.BytesUsedAs(s.m.Config, engine.KVF32)}
	mb.Total = mb.Weights + mb.KVAllocated + mb.Scratch
	return mb
}

func (s *Session) appendToken() (*AppendInfo, error) {
	c := s.m.Config
	id := s.chosen
	s.gen = append(s.gen, id)
	s.ids = append(s.ids, id)
	piece := s.dec.Add(id)
	s.text.WriteString(piece)
	info := &AppendInfo{ID: id, Piece: s.m.Tokenizer.Piece(id), Text: piece, Step: len(s.gen) - 1, Pos: len(s.ids) - 1,
		CacheCap: s.kv.Cap, Layers: c.NLayers, KVHeads: c.NKVHeads, HeadDim: c.HeadDim, BytesPerToken: c.KVBytesPerToken()}
	// stop conditions that end the run before the new token is processed
	if len(s.cfg.StopStrings) > 0 {
		gen := s.text.String() + s.dec.Pending()
		for _, stop := range s.cfg.StopStrings {
			// checked after every token, so the first match is always new; it
			// may span several tokens
			if strings.Contains(gen, stop) {
				s.pending = pendingStop{StopString, stopStringDetail(stop)}
				break
			}
		}
	}
	if s.pending.reason == "" && len(s.gen) >= s.cfg.MaxNewTokens {
		s.pending = pendingStop{StopMaxTokens, maxTokensDetail(s.cfg.MaxNewTokens)}
	}
	if s.pending.reason == "" && s.kv.Len >= s.kv.Cap {
		s.pending = pendingStop{StopContextFull, contextFullDetail(s.kv.Cap)}
	}
	if s.pending.reason != "" {
		s.next = StageStop
	} else {
		start := time.Now()
		feed := []int{id}
		if s.cfg.NoCache { // throw the cache away and recompute every position
			s.kv.Truncate(0)
			feed = s.ids
		}
		var traces []LayerTrace
		if !s.cfg.TextOnly && !s.deferLens {
			traces = make([]LayerTrace, 0, c.NLayers)
		}
		s.hookTime = 0
		var logits []float32
		var err error
		if s.sched != nil && !s.cfg.NoCache {
			// a decode step shares one batched forward pass with other
			// sessions' steps; the time it waited for its batch is queue time
			seq := &engine.BatchSeq{State: s.st, KV: s.kv, Token: id, Hooks: s.passHooks(false, true, &traces)}
			var slot Slot
			slot, err = s.sched.Decode(context.Background(), seq)
			logits = seq.Logits
			info.QueueMs, info.BatchSize, info.BatchModelMs = msf(slot.Wait), slot.Batch, msf(slot.Model)
			start = start.Add(slot.Wait)
		} else {
			logits, err = s.m.Forward(s.st, s.kv, feed, s.passHooks(false, true, &traces))
			info.BatchSize = 1
		}
		s.usedWeights = time.Now()
		if err != nil {
			return nil, err
		}
		info.Lens = s.view.lens
		for i := range traces { // report the new position only
			lt := &traces[i]
			lt.ResidualNorm = lt.ResidualNorm[len(lt.ResidualNorm)-1:]
			lt.MLPNorm = lt.MLPNorm[len(lt.MLPNorm)-1:]
		}
		if len(traces) > 0 {
			info.LayerTraces = traces
		}
		el := time.Since(start)
		info.ModelMs, info.InspectMs = msf(el-s.hookTime), msf(s.hookTime)
		s.timings.ModelMs += info.ModelMs
		s.timings.InspectMs += info.InspectMs
		s.timings.QueueMs += info.QueueMs
		s.stepModelMs += info.ModelMs
		// the step before keeps its logits and distribution for FillLens
		s.prevLogits, s.logits = s.logits, s.prevLogits
		s.logits = append(s.logits[:0], logits...)
		s.prevPos, s.prevDist = s.logitPos, s.dist
		s.logitPos = len(s.ids) - 1
		if s.dist != nil {
			s.spare = s.dist.Sorted
		}
		s.dist = nil
		info.Forwarded = true
		info.DurationMs = msf(el)
		s.stepMs += info.DurationMs
		s.next = StageLogits
	}
	info.CacheLen = s.kv.Len
	info.BytesUsed = s.kv.BytesUsed(c)
	info.Memory = s.memory()
	return info, nil
}

func (s *Session) stop(reason, detail string) *Event {
	t := s.timings
	if n := len(t.ITLModelMs); n > 0 {
		var sum float64
		for _, v := range t.ITLModelMs {
			sum += v
		}
		if sum > 0 {
			t.ModelTokPerS = float64(n) / (sum / 1000)
		}
	}
	if len(t.ITLMs) > 0 {
		sorted := append([]float64(nil), t.ITLMs...)
		sort.Float64s(sorted)
		t.ITLp50Ms = sorted[len(sorted)/2]
		var sum float64
		for _, v := range t.ITLMs {
			sum += v
		}
		t.OutputTokPerS = float64(len(t.ITLMs)+1) / ((sum + t.FirstDecodeMs) / 1000)
	} else if t.FirstDecodeMs > 0 {
		t.OutputTokPerS = 1 / (t.FirstDecodeMs / 1000)
	}
	if math.IsInf(t.OutputTokPerS, 0) || math.IsNaN(t.OutputTokPerS) {
		t.OutputTokPerS = 0
	}
	s.stopped = &StopInfo{Reason: reason, Detail: detail, Generated: len(s.gen), Text: s.text.String() + s.dec.Pending(), Timings: t}
	if !s.cfg.TextOnly {
		// a hash begun after the run's last forward pass, or within the
		// last WeightsRecheckEvery: the weights are read-only memory (a
		// write would fault), so the hash is an audit a server shares
		// across the runs that stop within seconds, not one per run
		now := time.Now()
		since := now.Add(-WeightsRecheckEvery)
		if u := s.usedWeights; !u.IsZero() && u.Before(since) {
			since = u
		}
		afterHex, at := s.m.RecheckWeightsAt(since)
		s.stopped.ChecksumBefore, s.stopped.ChecksumAfter, s.stopped.WeightsUnchanged = s.before, afterHex, afterHex == s.before
		s.stopped.ChecksumAgeMs = max(0, msf(now.Sub(at)))
	}
	s.next = StageStop
	s.seq++
	return &Event{Seq: s.seq, Stage: StageStop, Next: StageStop, Stop: s.stopped}
}

func msf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// WeightsRecheckEvery is how old a hash of the weights a run's stop may
// share (see stop).
const WeightsRecheckEvery = 5 * time.Second

// norm is the Euclidean norm of v, accumulated in float64.
func norm(v []float32) float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return float32(math.Sqrt(s))
}
