package engine

// quantized_test.go: block-quantized weights in the forward pass (models
// quantized at load with Model.Quantized) against an independent float64
// reference run on the dequantized weights, and a batched decode step on
// them bit for bit a lone step's. The float64 reference (ref64) is also
// what the GGUF tests (gguf_load_test.go) measure against.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/inferscope/inferscope/engine/quant"
)

// ref64 is a float64 forward pass written from the families' definitions
// (Hugging Face's LlamaForCausalLM and GPT2LMHeadModel, and the Config
// features of the other decoder families: q/k norms, (1 + w) norms, post
// norms, GeGLU, embedding and score scales, soft-caps, sliding windows,
// partial and rescaled RoPE — its frequencies from Config.ropeInvFreq,
// which TestRopeInvFreq checks against the reference formulas; RoPE on the
// pairs Config.Rope names), one position at a time with its own cache, on m's
// weights as float64 (block types dequantized). It shares no code with the
// engine's forward pass but Mat.Row (the dequantization, which is exact).
type ref64 struct {
	m                 *Model
	emb, head         [][]float64
	layers            []ref64Layer
	kc, vc            [][][]float64 // [layer][pos][kv_dim]
	pos               int
	finalNorm, finalB []float64
}

type ref64Layer struct {
	wq, wk, wv, wo, gate, up, down [][]float64
	bq, bk, bv, bo, bup, bdown     []float64
	n1, n1b, n2, n2b               []float64
	qn, kn, postAttn, postMLP      []float64
}

func dense64(m *Mat) [][]float64 {
	if m.Empty() {
		return nil
	}
	out := make([][]float64, m.Rows)
	row := make([]float32, m.Cols)
	for o := range out {
		out[o] = vec64(m.Row(o, row))
	}
	return out
}

func vec64(v []float32) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func newRef64(m *Model) *ref64 {
	w := &m.Weights
	r := &ref64{m: m, emb: dense64(&w.TokenEmbed), head: dense64(&w.Head), finalNorm: vec64(w.FinalNorm), finalB: vec64(w.FinalNormBias)}
	for i := range w.Layers {
		l := &w.Layers[i]
		r.layers = append(r.layers, ref64Layer{wq: dense64(&l.Wq), wk: dense64(&l.Wk), wv: dense64(&l.Wv), wo: dense64(&l.Wo),
			gate: dense64(&l.WGate), up: dense64(&l.WUp), down: dense64(&l.WDown),
			bq: vec64(l.Bq), bk: vec64(l.Bk), bv: vec64(l.Bv), bo: vec64(l.Bo), bup: vec64(l.BUp), bdown: vec64(l.BDown),
			n1: vec64(l.AttnNorm), n1b: vec64(l.AttnNormBias), n2: vec64(l.MLPNorm), n2b: vec64(l.MLPNormBias),
			qn: vec64(l.QNorm), kn: vec64(l.KNorm), postAttn: vec64(l.PostAttnNorm), postMLP: vec64(l.PostMLPNorm)})
	}
	r.kc, r.vc = make([][][]float64, len(w.Layers)), make([][][]float64, len(w.Layers))
	return r
}

func mv64(w [][]float64, x, b []float64) []float64 {
	out := make([]float64, len(w))
	for o, row := range w {
		var s float64
		for i, v := range row {
			s += v * x[i]
		}
		if b != nil {
			s += b[o]
		}
		out[o] = s
	}
	return out
}

func (r *ref64) norm(x, g, b []float64) []float64 {
	c := r.m.Config
	out := make([]float64, len(x))
	eps := float64(c.NormEps)
	if c.Arch == ArchGPT2 {
		var mean, vr float64
		for _, v := range x {
			mean += v
		}
		mean /= float64(len(x))
		for _, v := range x {
			vr += (v - mean) * (v - mean)
		}
		inv := 1 / math.Sqrt(vr/float64(len(x))+eps)
		for i, v := range x {
			out[i] = (v-mean)*inv*g[i] + b[i]
		}
		return out
	}
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	inv := 1 / math.Sqrt(ss/float64(len(x))+eps)
	for i, v := range x {
		w := g[i]
		if c.NormPlusOne {
			w++
		}
		out[i] = v * inv * w
	}
	return out
}

func softcap64(x, capv float64) float64 {
	if capv == 0 {
		return x
	}
	return capv * math.Tanh(x/capv)
}

func (r *ref64) rope(v []float64, local bool) {
	c := r.m.Config
	if c.Rope == RopeNone {
		return
	}
	hd, rot := c.HeadDim, c.Rotary()
	inv := c.ropeInvFreq(local)
	for h := 0; h < len(v); h += hd {
		for j := 0; j < rot/2; j++ {
			ang := float64(r.pos) * inv[j]
			a, b := h+j, h+j+rot/2
			if c.Rope == RopeAdjacent {
				a, b = h+2*j, h+2*j+1
			}
			x0, x1 := v[a], v[b]
			v[a], v[b] = x0*math.Cos(ang)-x1*math.Sin(ang), x0*math.Sin(ang)+x1*math.Cos(ang)
		}
	}
}

// step runs token tok at the next position and returns its logits.
func (r *ref64) step(tok int) []float64 {
	c := r.m.Config
	x := append([]float64(nil), r.emb[tok]...)
	if c.EmbedScale != 0 {
		for i := range x {
			x[i] *= float64(c.EmbedScale)
		}
	}
	if pe := r.m.Weights.PosEmbed; pe != nil {
		for i := range x {
			x[i] += float64(pe[r.pos*c.Dim+i])
		}
	}
	hd, group := c.HeadDim, c.NHeads/c.NKVHeads
	for li, l := range r.layers {
		h := r.norm(x, l.n1, l.n1b)
		q, k, v := mv64(l.wq, h, l.bq), mv64(l.wk, h, l.bk), mv64(l.wv, h, l.bv)
		if l.qn != nil {
			for o := 0; o < len(q); o += hd {
				copy(q[o:o+hd], r.norm(q[o:o+hd], l.qn, nil))
			}
			for o := 0; o < len(k); o += hd {
				copy(k[o:o+hd], r.norm(k[o:o+hd], l.kn, nil))
			}
		}
		local := c.Sliding(li)
		r.rope(q, local)
		r.rope(k, local)
		first := 0
		if local {
			first = max(0, r.pos+1-c.Window)
		}
		scale := 1 / math.Sqrt(float64(hd))
		if c.QueryScale > 0 {
			scale = c.QueryScale
		}
		r.kc[li], r.vc[li] = append(r.kc[li], k), append(r.vc[li], v)
		ao := make([]float64, c.QDim())
		for hh := range c.NHeads {
			kvh := hh / group
			att := make([]float64, r.pos+1)
			mx := math.Inf(-1)
			for p := range att {
				if p < first {
					att[p] = math.Inf(-1)
					continue
				}
				var s float64
				for i := range hd {
					s += q[hh*hd+i] * r.kc[li][p][kvh*hd+i]
				}
				att[p] = softcap64(s*scale, c.AttnSoftcap)
				mx = max(mx, att[p])
			}
			var sum float64
			for p := range att {
				att[p] = math.Exp(att[p] - mx)
				sum += att[p]
			}
			for p := range att {
				for i := range hd {
					ao[hh*hd+i] += att[p] / sum * r.vc[li][p][kvh*hd+i]
				}
			}
		}
		o := mv64(l.wo, ao, l.bo)
		if l.postAttn != nil {
			o = r.norm(o, l.postAttn, nil)
		}
		for i, v := range o {
			x[i] += v
		}
		h = r.norm(x, l.n2, l.n2b)
		var a []float64
		if l.gate != nil { // SwiGLU
			g, u := mv64(l.gate, h, nil), mv64(l.up, h, nil)
			a = make([]float64, len(g))
			for i, v := range g {
				if c.MLP == MLPGeGLU {
					a[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v))) * u[i]
				} else {
					a[i] = v / (1 + math.Exp(-v)) * u[i]
				}
			}
		} else { // GELU, tanh form (gelu_new)
			a = mv64(l.up, h, l.bup)
			for i, v := range a {
				a[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
			}
		}
		dn := mv64(l.down, a, l.bdown)
		if l.postMLP != nil {
			dn = r.norm(dn, l.postMLP, nil)
		}
		for i, v := range dn {
			x[i] += v
		}
	}
	r.pos++
	out := mv64(r.head, r.norm(x, r.finalNorm, r.finalB), nil)
	for i, v := range out {
		out[i] = softcap64(v, c.FinalSoftcap)
	}
	return out
}

// relErr is max|got − want| / max|want|: a logit's error relative to the
// position's logit scale.
func relErr(got []float32, want []float64) float64 {
	var d, s float64
	for i, w := range want {
		d = max(d, math.Abs(float64(got[i])-w))
		s = max(s, math.Abs(w))
	}
	return d / s
}

// maxRelDiff is relErr between two float32 logit rows.
func maxRelDiff(got, want []float32) float64 { return relErr(got, vec64(want)) }

// argmax64 and the gap between the two largest values.
func argmax64(x []float64) (int, float64) {
	best, second := 0, math.Inf(-1)
	for i, v := range x {
		if v > x[best] {
			second, best = x[best], i
		} else if i != best && v > second {
			second = v
		}
	}
	return best, x[best] - second
}

// checkAgainstRef64 runs prompt through m (one prefill pass, every
// position's logits) and then steps greedy cached decode steps, comparing
// every logit row with ref64 on m's own weights; it returns the largest
// relative error and fails above tol. Greedy tokens must agree with the
// reference's wherever its top two logits are further apart than the
// error could close.
func checkAgainstRef64(t *testing.T, m *Model, prompt []int, steps int, tol float64) float64 {
	t.Helper()
	ref := newRef64(m)
	st := NewState(m.Config)
	kv, err := NewKVCache(m.Config, len(prompt)+steps)
	if err != nil {
		t.Fatal(err)
	}
	all, err := m.ForwardAll(st, kv, prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	V := m.Config.VocabSize
	worst := 0.0
	var want []float64
	for p, tok := range prompt {
		want = ref.step(tok)
		e := relErr(all[p*V:(p+1)*V], want)
		worst = max(worst, e)
		if e > tol {
			t.Errorf("prompt position %d: logits differ from the float64 reference by %.3g of their scale (tol %g)", p, e, tol)
		}
	}
	last := append([]float32(nil), all[(len(prompt)-1)*V:]...)
	for s := range steps {
		tok := argmax(last)
		if rt, gap := argmax64(want); rt != tok && gap > 10*tol*maxAbs64(want) {
			t.Errorf("step %d: greedy token %d, the reference's %d (gap %.3g)", s, tok, rt, gap)
		}
		got, err := m.Forward(st, kv, []int{tok}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want = ref.step(tok)
		e := relErr(got, want)
		worst = max(worst, e)
		if e > tol {
			t.Errorf("decode step %d: logits differ from the float64 reference by %.3g of their scale (tol %g)", s, e, tol)
		}
		last = append(last[:0], got...)
	}
	return worst
}

func maxAbs64(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// checkBatchBitIdentical: each of 9 sequences decoded in batches of 1, 4
// and 9 gets, bit for bit, the logits of its lone decode steps.
func checkBatchBitIdentical(t *testing.T, m *Model) {
	t.Helper()
	const steps = 3
	seqs := prefilled(t, m, 9, 21)
	alone := make([][][]float32, len(seqs))
	for i, s := range seqs {
		st, kv, tok := NewState(m.Config), cloneKV(s.kv), s.tok
		for range steps {
			l, err := m.Forward(st, kv, []int{tok}, nil)
			if err != nil {
				t.Fatal(err)
			}
			alone[i] = append(alone[i], append([]float32(nil), l...))
			tok = argmax(l)
		}
	}
	for _, size := range []int{1, 4, 9} {
		bs := NewBatchState(m.Config, size)
		for first := 0; first+size <= len(seqs); first += size {
			batch := make([]*BatchSeq, size)
			for j := range batch {
				s := seqs[first+j]
				batch[j] = &BatchSeq{State: NewState(m.Config), KV: cloneKV(s.kv), Token: s.tok}
			}
			for k := range steps {
				if err := m.ForwardBatch(bs, batch); err != nil {
					t.Fatal(err)
				}
				for j, b := range batch {
					if b.Err != nil {
						t.Fatal(b.Err)
					}
					if i, diff := firstDiff(b.Logits, alone[first+j][k]); i >= 0 {
						t.Fatalf("batch of %d, sequence %d, step %d: logit %d is %s", size, first+j, k, i, diff)
					}
					b.Token = argmax(b.Logits)
				}
			}
		}
	}
}

// perturbed gives a random model's norms and biases random values, so that
// a loader that dropped or swapped them would show.
func perturbed(m *Model, seed uint64) *Model {
	r := rand.New(rand.NewPCG(seed, 1))
	set := func(s []float32, base float64) {
		for i := range s {
			s[i] = float32(base + 0.1*r.NormFloat64())
		}
	}
	w := &m.Weights
	for i := range w.Layers {
		l := &w.Layers[i]
		set(l.AttnNorm, 1)
		set(l.MLPNorm, 1)
		for _, b := range [][]float32{l.AttnNormBias, l.MLPNormBias, l.Bq, l.Bk, l.Bv, l.Bo, l.BUp, l.BDown} {
			set(b, 0)
		}
	}
	set(w.FinalNorm, 1)
	set(w.FinalNormBias, 0)
	return m
}

// inOut is m stored [in][out] (GPT-2's Conv1D layout).
func inOut(m *Mat) Mat {
	if m.Empty() {
		return *m
	}
	d := m.Dense()
	t := make([]float32, len(d))
	for o := 0; o < m.Rows; o++ {
		for i := 0; i < m.Cols; i++ {
			t[i*m.Rows+o] = d[o*m.Cols+i]
		}
	}
	return Mat{Rows: m.Rows, Cols: m.Cols, InOut: true, Ld: m.Rows, F32: t}
}

// quantShapes are small models whose every matrix is a whole number of
// 32-value blocks (Q8_0, Q4_0): Llama with grouped-query attention and an
// untied head, GPT-2 with its Conv1D matrices stored [in][out].
var quantShapes = map[string]Config{
	"llama-gqa": {Arch: ArchLlama, Dim: 64, HiddenDim: 160, NLayers: 2, NHeads: 4, NKVHeads: 2, HeadDim: 16,
		VocabSize: 300, SeqLen: 64, NormEps: 1e-5, RopeTheta: 10000, Rope: RopeHalf, TiedHead: false, BOS: 1, EOS: 2},
	"gpt2": {Arch: ArchGPT2, Dim: 64, HiddenDim: 256, NLayers: 2, NHeads: 4, NKVHeads: 4, HeadDim: 16,
		VocabSize: 300, SeqLen: 64, NormEps: 1e-5, Rope: RopeNone, TiedHead: true, BOS: 0, EOS: 0},
}

// TestQuantizedAtLoad: a model quantized at load (--weights q8_0|q4_0)
// holds block matrices that are quant.Quantize's bytes, computes what the
// float64 reference computes on its dequantized weights (prefill of 16
// positions through the GEMM, of 5 through the row kernels, 20 cached
// greedy steps), and batches bit for bit.
func TestQuantizedAtLoad(t *testing.T) {
	for name, c := range quantShapes {
		base, err := RandomModel(name, c, 7)
		if err != nil {
			t.Fatal(err)
		}
		base = perturbed(base, 7)
		if c.Arch == ArchGPT2 { // as the HF loader keeps GPT-2's matrices: [in][out]
			for i := range base.Weights.Layers {
				for _, m := range base.Weights.Layers[i].mats() {
					*m = inOut(m)
				}
			}
		}
		for _, d := range []DType{Q8_0, Q4_0} {
			t.Run(name+"/"+d.String(), func(t *testing.T) {
				m := base.WithWeights(d)
				if m.Precision() != d.String() {
					t.Fatalf("precision %s, want %s", m.Precision(), d)
				}
				wq := &m.Weights.Layers[0].Wq
				want := make([]byte, wq.Q.Bytes())
				if err := quant.Quantize(quantTypes[d], want, base.Weights.Layers[0].Wq.Dense()); err != nil {
					t.Fatal(err)
				}
				if string(want) != string(wq.Q.Data) {
					t.Error("Wq's blocks are not quant.Quantize's")
				}
				if got, f32 := m.Weights.Bytes(), base.Weights.Bytes(); got*3 > f32 {
					t.Errorf("quantized weights take %d bytes, F32 %d", got, f32)
				}
				prompt := []int{1, 17, 250, 3, 99, 42, 7, 8, 120, 5, 6, 77, 200, 31, 2, 9}
				e16 := checkAgainstRef64(t, m, prompt, 20, 1e-4)
				e5 := checkAgainstRef64(t, m, prompt[:5], 2, 1e-4)
				t.Logf("max |logit − float64 reference| / logit scale: prefill 16 + 20 steps %.2g, prefill 5 %.2g", e16, e5)
				checkBatchBitIdentical(t, m)
			})
		}
	}
}

// TestPackQuantPanel packs panels of block matrices (a whole and a part
// stripe of 256 inputs, a full and a partial panel, an offset, two panel
// widths) and compares every value with the row dequantized whole; the
// columns past n must come out zero over whatever the buffer held.
func TestPackQuantPanel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		typ        quant.Type
		rows, cols int
		o0, n, nr  int
	}{
		{quant.Q8_0, 40, 288, 0, 32, 32},
		{quant.Q8_0, 40, 768, 35, 5, 32},
		{quant.Q8_0, 20, 96, 4, 16, 16},
		{quant.Q4_K, 33, 768, 1, 32, 32},
		{quant.Q4_K, 33, 512, 30, 3, 16},
		{quant.Q6_K, 8, 256, 0, 8, 32},
		{quant.F16, 9, 300, 2, 7, 16},
	} {
		t.Run(fmt.Sprintf("%s/%dx%d/o0=%d/n=%d/nr=%d", tc.typ, tc.rows, tc.cols, tc.o0, tc.n, tc.nr), func(t *testing.T) {
			rb, err := tc.typ.RowBytes(tc.cols)
			if err != nil {
				t.Fatal(err)
			}
			data := make([]byte, tc.rows*rb)
			row := make([]float32, tc.cols)
			for i := range tc.rows {
				if tc.typ == quant.Q6_K { // no quantizer here: random blocks (any bits dequantize)
					for b := range data[i*rb : (i+1)*rb] {
						data[i*rb+b] = byte(r.Uint32())
					}
					continue
				}
				for c := range row {
					row[c] = float32(r.NormFloat64())
				}
				if err := quant.Quantize(tc.typ, data[i*rb:(i+1)*rb], row); err != nil {
					t.Fatal(err)
				}
			}
			q, err := quant.NewMatrix(tc.typ, data, tc.rows, tc.cols)
			if err != nil {
				t.Fatal(err)
			}
			w, err := QuantMat(q)
			if err != nil {
				t.Fatal(err)
			}
			bp := make([]float32, tc.cols*tc.nr)
			for i := range bp {
				bp[i] = float32(math.NaN())
			}
			packQuantPanel(bp, &w, tc.o0, tc.n, tc.nr)
			for j := range tc.nr {
				if j < tc.n {
					q.Row(tc.o0+j, row)
				}
				for c := range tc.cols {
					want := float32(0)
					if j < tc.n {
						want = row[c]
					}
					if got := bp[c*tc.nr+j]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("panel[%d][%d] = %v, want %v (row %d, input %d)", c, j, got, want, tc.o0+j, c)
					}
				}
			}
		})
	}
}
