package engine

// attnkernels.go: attention's arithmetic for every head layout (MHA, GQA,
// MQA): each query against the cached keys, a softmax, the weighted sum of
// the values, in blocks of attnBlock positions so that a long context
// splits across workers even for one row (a decode step), and the query
// heads that share a key/value head read its cache rows once.
//
// The numbers are defined by the pure-Go kernels below; the SIMD kernels
// (attnkernels_amd64.s) repeat their operations in their order, so every
// path gives the same bits (TestAttnKernelsBitExact). The products of the
// scores and of the weighted sums are fused with their adds (one rounding,
// VFMADD231PS; fused.F32 in Go): as exact as two roundings or more, and half the
// instructions of the kernels' inner loops (a decode step's attention at
// depth 2000 took 0.95 of the time, a prompt's 0.85). Every other multiply
// and add is rounded on its own. For a row attending to n positions, per
// head:
//
//	s_p   = dot16(q, k_p) · scale        16 lanes, lane d%16 sums q_d·k_{p,d} in order (fused), combined as sum16
//	block b = positions [b·B, min(n, (b+1)·B)), B = attnBlock:
//	m_b   = max s_p
//	e_p   = expAtt(s_p − m_b)
//	l_b   = Σ e_p                        16 lanes (p%16), combined as sum16
//	o_b   = Σ e_p · v_p                  in position order (fused)
//	M     = max m_b,  c_b = expAtt(m_b − M)
//	out   = (Σ_b c_b·o_b) / (Σ_b c_b·l_b)   in block order
//	weight_p = (e_p·c_b) / Σ_b c_b·l_b   (what the hooks read)
//
// With one block (n ≤ B) this is the textbook softmax: c_0 = 1, out =
// Σ e_p·v_p / Σ e_p, weight_p = e_p / Σ e_p (every position of a model
// whose context is 256, like the default one). How the blocks and heads
// are spread over workers never changes a value.

import (
	"math"

	"github.com/inferscope/inferscope/engine/internal/fused"
)

// attnBlock is the positions per block (a multiple of 16).
const attnBlock = 256

// attnWideRows is the positions of a 16-bit cache widened at a time (a
// multiple of 16; 64 rows of 128 dimensions are 32 KiB, within a core's
// first-level data cache).
const attnWideRows = 64

// expAtt is e^x for x ≤ 0 in float32, with expf's steps (Cephes: x = k·ln2
// + r, a degree-6 polynomial for e^r, ·2^k) except that k is rounded from
// the float32 sum x·log2e + 0.5, as the SIMD kernels compute it; below
// −87.33654 (where e^x leaves float32's normal range, and is below 2^−126
// of the softmax's largest term, which is 1) it is 0. Every product that
// an add follows is rounded by a float32 conversion (no FMA; see expf).
func expAtt(x float32) float32 {
	if x != x {
		return x
	}
	if x < -87.33654 {
		return 0
	}
	t := float32(x * 1.442695041)
	k := float32(math.Floor(float64(float32(t + 0.5))))
	r := float32(x-float32(k*0.693359375)) + float32(k*2.12194440e-4)
	p := float32(1.9875691500e-4)
	p = float32(p*r) + 1.3981999507e-3
	p = float32(p*r) + 8.3334519073e-3
	p = float32(p*r) + 4.1665795894e-2
	p = float32(p*r) + 1.6666665459e-1
	p = float32(p*r) + 5.0000001201e-1
	p = float32(float32(float32(p*r)*r)+r) + 1
	return p * math.Float32frombits(uint32(int32(k)+127)<<23)
}

// attnKernels is one implementation of the three block kernels and the
// combine's weighted sum.
type attnKernels struct {
	name string
	// scores sets s[g·lds+p] = dot16(q_g, k_p)·scale for g < G, p < n, where
	// q_g = q[g·hd:] and k_p = k[p·ldk:]; v is rows (stride ldk) that a
	// kernel may prefetch meanwhile, n of them: the same positions' values
	// for wsum, or the next head's keys (blockHeads).
	scores func(s []float32, lds int, q, k, v []float32, ldk, n, hd, G int, scale float32)
	// softmax replaces s by e_p = expAtt(s_p − m) and returns m = max s_p
	// and l = Σ e_p (16 lanes, sum16); len(s) ≥ 1.
	softmax func(s []float32) (m, l float32)
	// wsum sets o[g·ldo+j] = Σ_p e[g·lde+p]·v[p·ldv+j] (position order) for
	// g < G, j < hd, p < n, or with acc adds those terms to o, one after
	// another in the same order (a sum that goes on over a second run of
	// rows); pk and pv (either maybe empty) are where the next head's keys
	// and values start (stride ldv), which a kernel may prefetch meanwhile.
	wsum func(o []float32, ldo int, e []float32, lde int, v []float32, ldv, n, hd, G int, acc bool, pk, pv []float32)
	// mix sets out[j] = Σ_b cs[b]·os[b·len(out)+j], from 0 in block order,
	// each product rounded on its own (attnmix.go); len(cs) ≥ 1.
	mix func(out, os, cs []float32)
}

var goAttn = attnKernels{name: "go", scores: attnScoresGo, softmax: attnSoftmaxGo, wsum: attnWsumGo, mix: attnMixGo}

// attnSIMD maps a SIMD kernel set's name to its attention kernels (set by
// the architecture file).
var attnSIMD = map[string]*attnKernels{}

// attnOverride, when set (tests), is used instead.
var attnOverride *attnKernels

// attnFor is the attention kernels that go with the kernel set in use.
func attnFor(k *kernelSet) *attnKernels {
	if attnOverride != nil {
		return attnOverride
	}
	if a := attnSIMD[k.name]; a != nil {
		return a
	}
	return &goAttn
}

func attnScoresGo(s []float32, lds int, q, k, _ []float32, ldk, n, hd, G int, scale float32) {
	for g := range G {
		qg := q[g*hd : (g+1)*hd]
		sg := s[g*lds : g*lds+n]
		for p := range sg {
			kp := k[p*ldk : p*ldk+hd]
			var a [16]float32
			for d, x := range qg {
				a[d&15] = fused.F32(x, kp[d], a[d&15])
			}
			sg[p] = sum16(&a) * scale
		}
	}
}

func attnSoftmaxGo(s []float32) (m, l float32) {
	m = s[0]
	for _, v := range s[1:] {
		m = max(m, v)
	}
	var a [16]float32
	for p, v := range s {
		e := expAtt(v - m)
		s[p] = e
		a[p&15] += e
	}
	return m, sum16(&a)
}

func attnWsumGo(o []float32, ldo int, e []float32, lde int, v []float32, ldv, n, hd, G int, acc bool, _, _ []float32) {
	for g := range G {
		og := o[g*ldo : g*ldo+hd]
		if !acc {
			clear(og)
		}
		for p, ep := range e[g*lde : g*lde+n] {
			vp := v[p*ldv : p*ldv+hd]
			for j, x := range vp {
				og[j] = fused.F32(ep, x, og[j])
			}
		}
	}
}

// attnSlot is the scratch of one row in flight: every head's scores (then
// exponentials) and each block's partial results.
type attnSlot struct {
	ld, nb int       // positions (a multiple of 16) and blocks per head it holds
	mst    int       // H rounded up to 16: the stride of m and l
	s      []float32 // [H][ld] scores, then e_p
	o      []float32 // [H][nb][hd] o_b
	m, l   []float32 // [nb][mst] m_b, l_b: a block's own cache lines (its worker's)
	cm, cl []float32 // [nb] one head's m_b, l_b gathered for combine
}

// ml is where head h's m_b and l_b of block b sit in m and l.
func (sl *attnSlot) ml(h, b int) int { return b*sl.mst + h }

// attnScratch is attention's scratch: slots reused from pass to pass (grown
// by doubling, never shrunk: a steady decode allocates nothing).
type attnScratch struct {
	slots            []attnSlot
	wide             [][]float32              // per worker: a 16-bit cache's rows of one chunk, widened
	tiles            []attnTile               // a prompt's tiles of rows (attntiles.go)
	tileScr          []tileScratch            // per worker
	tilesFn          func(worker, lo, hi int) // w.tileRows, bound
	w                attnWork                 // the layer in flight
	rowsFn, blocksFn func(worker, lo, hi int) // w's methods, bound to bound
	headsFn          func(worker, lo, hi int) // w.heads, bound to bound
	bound            *attnWork
}

// slot returns slot i sized for n positions of H heads of hd dimensions.
func (sc *attnScratch) slot(i, n, H, hd, limit int) *attnSlot {
	for len(sc.slots) <= i {
		sc.slots = append(sc.slots, attnSlot{})
	}
	sl := &sc.slots[i]
	if sl.ld < n || sl.mst < H {
		// ld a multiple of 16: the workers sharing a row's blocks write
		// whole cache lines of its scores (none writes a line of another's)
		ld := (max(n, min(2*sl.ld, limit)) + 15) &^ 15
		nb := (ld + attnBlock - 1) / attnBlock
		mst := (H + 15) &^ 15
		*sl = attnSlot{ld: ld, nb: nb, mst: mst, s: make([]float32, H*ld), o: make([]float32, H*nb*hd),
			m: make([]float32, nb*mst), l: make([]float32, nb*mst), cm: make([]float32, nb), cl: make([]float32, nb)}
	}
	return sl
}

func (sc *attnScratch) bytes() int64 {
	var n int
	for _, sl := range sc.slots {
		n += len(sl.s) + len(sl.o) + len(sl.m) + len(sl.l) + len(sl.cm) + len(sl.cl)
	}
	for _, w := range sc.wide {
		n += len(w)
	}
	for _, t := range sc.tileScr {
		n += len(t.q) + len(t.s) + len(t.o) + len(t.kw) + len(t.vw)
	}
	return 4 * int64(n)
}

// attnTiled turns the tiled prompt path on (tests compare it with the
// row-at-a-time one).
var attnTiled = true

// attnHeadsSplit is the fewest positions a decode step's one block of
// attention must span for its key/value heads to be split across workers
// (a var: the tests turn the split off to compare). One layer of gpt2-124M
// on 2 threads, caches warm: 128 positions 17.3–17.9 → 11.0–11.6 µs, 250
// positions 34.6–39.4 → 18.6–19.0; at 24–32 positions about even there,
// but in whole steps (the cache cold, read by both threads) 16 rather
// than 64 took 0.980–0.992 of the time at positions 16–48.
var attnHeadsSplit = 16

// attnRowsAlone is the most rows a pass splits by blocks (a decode step,
// a small batch or a short prompt); with more, each worker takes whole rows.
const attnRowsAlone = 8

// attend runs the attention of every row of pass p at layer l (its queries
// in a.q; the keys and values in the caches, or for a sliding layer's ring
// this pass's rows in a.k, a.v: see kvRuns) into a.ao. It allocates
// nothing once the scratch has grown to the pass's size.
func (a *acts) attend(c Config, p *pass, l int) {
	R, H, hd := len(p.tokens), c.NHeads, c.HeadDim
	sc := &a.attn
	sc.w = attnWork{a: a, c: c, p: p, l: l, ak: attnFor(kern), scale: c.AttnScale(), softcap: float32(c.AttnSoftcap)}
	if c.Sliding(l) {
		sc.w.window = c.Window
	}
	if sc.bound != &sc.w { // bound once: a method value made per call would be allocated per call
		sc.rowsFn, sc.blocksFn, sc.tilesFn, sc.headsFn, sc.bound = sc.w.rows, sc.w.blocks, sc.w.tileRows, sc.w.heads, &sc.w
	}
	w := &sc.w
	if p.wide16() {
		for len(sc.wide) < maxWorkers() {
			sc.wide = append(sc.wide, nil)
		}
		for i := range sc.wide {
			if len(sc.wide[i]) < attnWideRows*hd {
				sc.wide[i] = workerBuf(attnWideRows * hd)
			}
		}
	}
	if R > attnRowsAlone && attnTiled && w.tileable() {
		for i := range maxWorkers() * attnTileRows {
			sc.slot(i, p.maxLen(), H, hd, c.SeqLen)
		}
		sc.growTiles(H/c.NKVHeads, hd, p.wide16())
		sc.makeTiles(p)
		parallelFor(len(sc.tiles), 1, sc.tilesFn)
	} else if R > attnRowsAlone {
		for i := range maxWorkers() {
			sc.slot(i, p.maxLen(), H, hd, c.SeqLen)
		}
		parallelFor(R, 1, sc.rowsFn)
	} else {
		// one slot per row; items are (row, block) pairs
		items := 0
		for r := range R {
			first, n := w.visible(r)
			sc.slot(r, n-first, H, hd, c.SeqLen)
			items += (n - first + attnBlock - 1) / attnBlock
		}
		if first, n := w.visible(0); R == 1 && items == 1 && c.NKVHeads > 1 && n-first >= attnHeadsSplit {
			// one row of one block (a decode step at a short context):
			// its key/value heads are the items, so the other workers
			// do not wait out the step's attention
			parallelFor(c.NKVHeads, 1, sc.headsFn)
		} else {
			parallelFor(items, 1, sc.blocksFn)
		}
		for r := range R {
			w.combine(&sc.slots[r], r)
		}
	}
	sc.w = attnWork{} // keep no pass alive
}

// rows is a worker's share of whole rows (passes of more than
// attnRowsAlone rows), in an order that pairs short rows with long ones (a
// prompt's rows attend to 1..T positions): the static split gives each
// worker about the same positions.
func (w *attnWork) rows(wk, lo, hi int) {
	R := len(w.p.tokens)
	sl := &w.a.attn.slots[wk]
	for it := lo; it < hi; it++ {
		r := it / 2
		if it%2 == 1 {
			r = R - 1 - it/2
		}
		first, n := w.visible(r)
		for b := 0; b*attnBlock < n-first; b++ {
			w.block(wk, sl, r, b, true, b > 0)
		}
		w.combine(sl, r)
	}
}

// blocks is a worker's share of the (row, block) items of a pass of few
// rows, each row in its own slot.
func (w *attnWork) blocks(wk, lo, hi int) {
	r, b0 := 0, 0 // row r's blocks are items b0..
	for it := lo; it < hi; it++ {
		first, n := w.visible(r)
		for it-b0 >= (n-first+attnBlock-1)/attnBlock {
			b0 += (n - first + attnBlock - 1) / attnBlock
			r++
			first, n = w.visible(r)
		}
		// the next block is prefetched only when this worker runs it (the
		// next worker's first block would be read twice, once for nothing);
		// a block after this worker's previous one of the same row is warm:
		// that block fetched its rows
		w.block(wk, &w.a.attn.slots[r], r, it-b0, it+1 < hi, it > lo && it > b0)
	}
}

// attnWork is one layer's attention in flight.
type attnWork struct {
	a       *acts
	c       Config
	p       *pass
	l       int
	ak      *attnKernels
	scale   float32
	softcap float32 // > 0: scores become softcap·tanh(score/softcap) (Gemma 2)
	window  int     // > 0: a sliding layer's window
}

// visible is the positions row r attends to, first..n−1: its own and the
// earlier ones of its sequence (causal), in a sliding layer only the last
// window of them. Blocks count from first.
func (w *attnWork) visible(r int) (first, n int) {
	n = w.p.pos(r) + 1
	if w.window > 0 {
		first = max(0, n-w.window)
	}
	return first, n
}

// block computes block b of row r's visible positions for every head into
// the slot: scores, m_b, e_p, l_b, o_b. The query heads of one key/value
// head go together, so its rows are read once. The rows come in up to
// three runs (kvRuns: a ring's wrap, this pass's rows); the weighted sum
// goes on across them in position order.
func (w *attnWork) block(wk int, sl *attnSlot, r, b int, pfNext, warm bool) {
	w.blockHeads(wk, sl, r, b, 0, w.c.NKVHeads, pfNext, warm)
}

// heads is a worker's share of key/value heads [lo, hi) of the one block
// of a pass's one row (attend's split of a short decode step).
func (w *attnWork) heads(wk, lo, hi int) {
	w.blockHeads(wk, &w.a.attn.slots[0], 0, 0, lo, hi, false, false)
}

// blockHeads is block for key/value heads kv0..kv1−1 (and their query
// heads) only: each head's scores, softmax and weighted sum are its own,
// so a block computed in several parts has the bits it has in one. pfNext
// says that this worker runs the row's next block next (its first head's
// rows are fetched meanwhile), warm that the block before this one was
// this worker's and fetched head kv0's rows.
func (w *attnWork) blockHeads(wk int, sl *attnSlot, r, b, kv0, kv1 int, pfNext, warm bool) {
	c := w.c
	H, hd, kvd, qd := c.NHeads, c.HeadDim, c.KVDim(), c.QDim()
	G := H / c.NKVHeads
	s := &w.p.spans[w.p.spanOf[r]]
	first, n := w.visible(r)
	p0 := b * attnBlock // from first
	nb := min(attnBlock, n-first-p0)
	q := w.a.q[r*qd : (r+1)*qd]
	var wide []float32 // a 16-bit cache's rows of one chunk, widened
	if len(w.a.attn.wide) > wk {
		wide = w.a.attn.wide[wk]
	}
	for kvh := kv0; kvh < kv1; kvh++ {
		h0 := kvh * G
		sc := sl.s[h0*sl.ld+p0:]
		runs, nr := s.kvRuns(w.l, first, n-1, kvh*hd, kvd, w.a.k, w.a.v)
		qg := q[h0*hd : (h0+G)*hd]
		// the rows of the next head of this block (or, for the last head,
		// the next block's first head when this worker runs it), fetched
		// while this head computes (a float32 cache of one run). A head
		// whose own rows were fetched so (warm: every head but a worker's
		// first) has its scores fetch the next keys and its weighted sums
		// the next values, so the reads run on through the arithmetic; the
		// first has its scores fetch its own values and its sums both of
		// the next rows. One head ahead, not a block: the arithmetic left
		// when a worker's reads end is one head's, not a whole block's (on
		// 2 threads a block of SmolLM2's three heads left about 10 µs a
		// layer): at depth 2000 SmolLM2's attention took 0.96 of the time,
		// and gpt2's twelve heads at depth 1000 0.85.
		var nextK, nextV []float32
		if ru := &runs[0]; nr == 1 && ru.k16 == nil {
			if kvh+1 < kv1 {
				o := p0*kvd + hd
				nextK, nextV = ru.k[o:], ru.v[o:]
			} else if p1 := p0 + attnBlock; pfNext && p1 < ru.n {
				o := p1*kvd - (kvh-kv0)*hd // head kv0's rows
				nextK, nextV = ru.k[o:], ru.v[o:]
			}
		}
		keysEarly := (warm || kvh > kv0) && len(nextK) > (nb-1)*kvd
		for _, ru := range runs[:nr] { // scores of the block's positions in each run
			lo, hi := max(p0, ru.i), min(p0+nb, ru.i+ru.n)
			if lo >= hi {
				continue
			}
			if ru.k16 == nil {
				o := (lo - ru.i) * kvd
				pf := ru.v[o:] // this block's values, for the weighted sum
				if keysEarly {
					pf = nextK
				}
				w.ak.scores(sc[lo-p0:], sl.ld, qg, ru.k[o:], pf, kvd, hi-lo, hd, G, w.scale)
				continue
			}
			// a 16-bit cache's rows widened (exactly) a chunk at a time
			// into the worker's scratch, which stays in the core's first
			// cache, for the float32 kernels: the bits of a float32 cache
			// holding the rounded values
			for c0 := lo; c0 < hi; c0 += attnWideRows {
				c1 := min(hi, c0+attnWideRows)
				kvWiden(wide, ru.k16[(c0-ru.i)*kvd:], c1-c0, hd, kvd, ru.prec)
				w.ak.scores(sc[c0-p0:], sl.ld, qg, wide, wide, hd, c1-c0, hd, G, w.scale)
			}
		}
		if w.softcap > 0 { // Gemma2Attention: softcap·tanh(score/softcap)
			for g := range G {
				vis := sc[g*sl.ld : g*sl.ld+nb]
				for i, v := range vis {
					vis[i] = w.softcap * float32(math.Tanh(float64(v/w.softcap)))
				}
			}
		}
		for g := range G {
			i := sl.ml(h0+g, b)
			sl.m[i], sl.l[i] = w.ak.softmax(sc[g*sl.ld : g*sl.ld+nb])
		}
		o := sl.o[(h0*sl.nb+b)*hd:]
		acc := false
		for _, ru := range runs[:nr] {
			lo, hi := max(p0, ru.i), min(p0+nb, ru.i+ru.n)
			if lo >= hi {
				continue
			}
			if ru.k16 != nil { // widened a chunk at a time, the sum going on in position order
				for c0 := lo; c0 < hi; c0 += attnWideRows {
					c1 := min(hi, c0+attnWideRows)
					kvWiden(wide, ru.v16[(c0-ru.i)*kvd:], c1-c0, hd, kvd, ru.prec)
					w.ak.wsum(o, sl.nb*hd, sc[c0-p0:], sl.ld, wide, hd, c1-c0, hd, G, acc, nil, nil)
					acc = true
				}
				continue
			}
			pk := nextK
			if keysEarly {
				pk = nil
			}
			w.ak.wsum(o, sl.nb*hd, sc[lo-p0:], sl.ld, ru.v[(lo-ru.i)*kvd:], kvd, hi-lo, hd, G, acc, pk, nextV)
			acc = true
		}
	}
}

// combine joins row r's blocks into its output rows of a.ao and, where the
// sequence's record keeps them, the weights (0 before the window).
func (w *attnWork) combine(sl *attnSlot, r int) {
	c := w.c
	H, hd, qd := c.NHeads, c.HeadDim, c.QDim()
	s := &w.p.spans[w.p.spanOf[r]]
	first, n := w.visible(r)
	m := n - first
	nblk := (m + attnBlock - 1) / attnBlock
	for h := range H {
		out := w.a.ao[r*qd+h*hd : r*qd+(h+1)*hd]
		cs, ls := sl.cm[:nblk], sl.cl[:nblk]
		for b := range nblk {
			cs[b], ls[b] = sl.m[sl.ml(h, b)], sl.l[sl.ml(h, b)]
		}
		sum := attnCombine(w.ak, out, sl.o[h*sl.nb*hd:], cs, ls)
		if wt := s.rec.weights(r-s.r0, h, n); wt != nil {
			clear(wt[:first])
			wt = wt[first:]
			e := sl.s[h*sl.ld : h*sl.ld+m]
			for b, cb := range cs {
				lo, hi := b*attnBlock, min(m, (b+1)*attnBlock)
				scaleDiv(wt[lo:hi], e[lo:hi], cb, sum)
			}
		}
	}
}

// attnCombine sets out = (Σ_b c_b·o_b) / Σ_b c_b·l_b over the blocks of one
// head (o_b = os[b·hd:], hd = len(out)), replacing ms (each block's m_b) by
// c_b = expAtt(m_b − M), M = max m_b (1 for a lone block: ak's softmax
// computes exactly these), and returns the denominator.
func attnCombine(ak *attnKernels, out, os, ms, ls []float32) float32 {
	if len(ms) == 1 {
		ms[0] = 1
		l := ls[0]
		scaleDiv(out, os[:len(out)], 1, l) // x·1 is x: x / l
		return l
	}
	ak.softmax(ms)
	var sum float32
	for b, c := range ms {
		sum += float32(c * ls[b])
	}
	ak.mix(out, os, ms)
	scaleDiv(out, out, 1, sum)
	return sum
}

// wide16 reports whether a sequence of the pass keeps a 16-bit cache (whose
// blocks attention widens into per-worker scratch).
func (p *pass) wide16() bool {
	for _, s := range p.spans {
		if s.kv.Prec != KVF32 {
			return true
		}
	}
	return false
}
