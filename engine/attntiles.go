package engine

// attntiles.go: a prompt's attention in tiles of consecutive rows: the
// rows of a tile read each block of cached keys and values once for all
// of them, as a matrix product Q·Kᵀ (every query of the tile against the
// block's keys, in one kernel call that keeps the keys in the first-level
// cache), the fused softmax per row, then P·V (every row's weights against
// the block's values, four query heads per pass over the values). The
// numbers are attnkernels.go's, bit for bit: each score is the same dot16,
// each row's softmax covers its own positions of the block, and a row's
// weighted sum runs over the positions the whole tile sees, then goes on
// over the few more that the later rows of the tile see (causal), in
// position order as one call would (TestAttendTilesBitExact).

import "math"

// attnTileRows is the rows of a tile.
const attnTileRows = 8

// attnTile is rows r0..r0+n−1 of one span.
type attnTile struct{ r0, n int }

// tileScratch is one worker's scratch for a tile (grown, never shrunk).
type tileScratch struct {
	q, s, o []float32 // the tile's queries [n·G][hd], scores then e [n·G][attnBlock], o_b [n·G][hd]
	kw, vw  []float32 // a 16-bit cache's block of keys and values, widened
}

// tileable reports whether pass p's rows at layer l can go in tiles: a
// layer that keeps every position (one run from the cache, blocks that
// start at position 0 for every row).
func (w *attnWork) tileable() bool {
	if w.window > 0 {
		return false
	}
	for _, s := range w.p.spans {
		if s.kv.ring(w.l) {
			return false
		}
	}
	return true
}

// makeTiles splits every span into tiles.
func (sc *attnScratch) makeTiles(p *pass) {
	sc.tiles = sc.tiles[:0]
	for _, s := range p.spans {
		for r := 0; r < s.n; r += attnTileRows {
			sc.tiles = append(sc.tiles, attnTile{s.r0 + r, min(attnTileRows, s.n-r)})
		}
	}
}

// tileRows is a worker's share of the tiles, short ones paired with long
// ones (see rows).
func (w *attnWork) tileRows(wk, lo, hi int) {
	sc := &w.a.attn
	T := len(sc.tiles)
	for it := lo; it < hi; it++ {
		t := it / 2
		if it%2 == 1 {
			t = T - 1 - it/2
		}
		w.tile(wk, sc.tiles[t])
	}
}

// tile computes every block of the tile's rows into their slots (worker
// wk's attnTileRows slots), then combines each row.
func (w *attnWork) tile(wk int, t attnTile) {
	c := w.c
	H, hd, kvd, qd := c.NHeads, c.HeadDim, c.KVDim(), c.QDim()
	G := H / c.NKVHeads
	sc := &w.a.attn
	ts := &sc.tileScr[wk]
	s := &w.p.spans[w.p.spanOf[t.r0]]
	n0 := w.p.pos(t.r0) + 1 // the first row's positions; row i sees n0+i
	nLast := n0 + t.n - 1
	slots := sc.slots[wk*attnTileRows : wk*attnTileRows+t.n]
	Q := t.n * G
	for b := 0; b*attnBlock < nLast; b++ {
		lo := b * attnBlock
		hiAll := min(nLast, lo+attnBlock)     // the last row's end of the block
		cmn := max(lo, min(n0, lo+attnBlock)) // every row's (lo: the first rows end before the block)
		for kvh := range c.NKVHeads {
			h0 := kvh * G
			runs, _ := s.kvRuns(w.l, 0, nLast-1, kvh*hd, kvd, w.a.k, w.a.v)
			ru := runs[0]
			var k, v []float32
			ld := kvd
			if ru.k16 != nil { // the block widened once for every row of the tile
				kvWiden(ts.kw, ru.k16[lo*kvd:], hiAll-lo, hd, kvd, ru.prec)
				kvWiden(ts.vw, ru.v16[lo*kvd:], hiAll-lo, hd, kvd, ru.prec)
				k, v, ld = ts.kw, ts.vw, hd
			} else {
				k, v = ru.k[lo*kvd:], ru.v[lo*kvd:]
			}
			for i := range t.n { // the queries, [row][head of this group]
				copy(ts.q[i*G*hd:(i+1)*G*hd], w.a.q[(t.r0+i)*qd+h0*hd:])
			}
			// Q·Kᵀ: every query against the positions every row sees, then
			// each later row's few more
			if cmn > lo {
				w.ak.scores(ts.s, attnBlock, ts.q[:Q*hd], k, v, ld, cmn-lo, hd, Q, w.scale)
			}
			for i := range t.n {
				if e := min(n0+i, lo+attnBlock); e > cmn {
					o := (cmn - lo) * ld
					w.ak.scores(ts.s[i*G*attnBlock+cmn-lo:], attnBlock, ts.q[i*G*hd:(i+1)*G*hd], k[o:], v[o:], ld, e-cmn, hd, G, w.scale)
				}
			}
			for i := range t.n { // each row's softmax over its own positions of the block
				nb := min(n0+i, lo+attnBlock) - lo
				if nb <= 0 {
					continue
				}
				sl := &slots[i]
				for g := range G {
					row := ts.s[(i*G+g)*attnBlock : (i*G+g)*attnBlock+nb]
					if w.softcap > 0 {
						for j, x := range row {
							row[j] = w.softcap * float32(math.Tanh(float64(x/w.softcap)))
						}
					}
					j := sl.ml(h0+g, b)
					sl.m[j], sl.l[j] = w.ak.softmax(row)
					copy(sl.s[(h0+g)*sl.ld+lo:], row)
				}
			}
			// P·V over the common positions for every query, then each
			// later row's sum goes on over its own
			if cmn > lo {
				w.ak.wsum(ts.o, hd, ts.s, attnBlock, v, ld, cmn-lo, hd, Q, false, nil, nil)
			}
			for i := range t.n {
				if n0+i <= lo {
					continue
				}
				og := ts.o[i*G*hd : (i+1)*G*hd]
				if e := min(n0+i, lo+attnBlock); e > cmn {
					o := (cmn - lo) * ld
					w.ak.wsum(og, hd, ts.s[i*G*attnBlock+cmn-lo:], attnBlock, v[o:], ld, e-cmn, hd, G, cmn > lo, nil, nil)
				}
				sl := &slots[i]
				for g := range G {
					copy(sl.o[((h0+g)*sl.nb+b)*hd:((h0+g)*sl.nb+b+1)*hd], og[g*hd:(g+1)*hd])
				}
			}
		}
	}
	for i := range t.n {
		w.combine(&slots[i], t.r0+i)
	}
}

// growTiles sizes the tile scratch of every worker for heads per group G.
func (sc *attnScratch) growTiles(G, hd int, wide bool) {
	for len(sc.tileScr) < maxWorkers() {
		sc.tileScr = append(sc.tileScr, tileScratch{})
	}
	Q := attnTileRows * G
	for i := range sc.tileScr {
		ts := &sc.tileScr[i]
		if len(ts.q) < Q*hd || len(ts.s) < Q*attnBlock {
			ts.q, ts.s, ts.o = make([]float32, Q*hd), make([]float32, Q*attnBlock), make([]float32, Q*hd)
		}
		if wide && len(ts.kw) < attnBlock*hd {
			ts.kw, ts.vw = workerBuf(attnBlock*hd), workerBuf(attnBlock*hd)
		}
	}
}
