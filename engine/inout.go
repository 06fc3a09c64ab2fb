package engine

// inout.go: decode, batched decode and short prefills over [in][out] matrices (GPT-2's Conv1D
// weights, used as stored): outputs split across workers, each output one chain of steps over the
// inputs in order.

// allInOut reports whether every job is a float32 [in][out] matrix.
func allInOut(jobs []linJob) bool {
	for _, j := range jobs {
		if !j.w.InOut || j.w.DType != F32 || j.w.Q != nil || j.w.Empty() {
			return false
		}
	}
	return true
}

// inOutBlock is the per-worker panel buffer of the batched path: about
// 256 KiB of weights (a block of input rows × the worker's band), so that
// a block stays in L2 while every tile of sequences reads it.
const inOutBlock = 64 << 10

// linearInOut runs [in][out] jobs on B rows of x [B][in] (one decode
// step, a batch's sequences, or a short prefill). Workers own bands of
// whole 32-output units and read every input row's part of their band
// (contiguous, in order). Every output, whatever the batch, is
// Σ_i x[i]·w[i][o] as one chain of steps in i order from zero, then the
// bias: the kernel set's fused steps for the first outputs of each job
// (all but rows%tCols), Go's for the rest. With B > 1 on a set whose
// tiles compute gemvT's chains (gemmTileAcc set) the band is copied a
// block of input rows at a time into 32-output panels (reading the rows'
// band contiguously) and each panel multiplied 12 sequences at a time,
// the chains going on from block to block; each weight is read from
// memory once per batch. Otherwise each sequence runs gemvT over the band.
func (a *acts) linearInOut(x []float32, B int, jobs []linJob) {
	k := kern
	in := jobs[0].w.Cols
	r := &a.lin
	r.set(linInOut, x, B, jobs)
	// units of 32 outputs counted from each job's first, so that which
	// outputs take the kernel set's steps (the first rows-rows%tCols of a
	// job) does not depend on how the units fall to workers
	for i, j := range jobs {
		r.units[i+1] = r.units[i] + (j.w.Rows+31)/32
	}
	n := r.units[len(jobs)]
	r.k, r.tile = k, B > 1 && k.gemmTileAcc != nil
	if r.tile {
		r.xs = x // x with B rounded up to a multiple of mr (zero rows)
		bp := (B + k.mr - 1) / k.mr * k.mr
		if bp != B {
			if len(a.gemmTail) < bp*in {
				a.gemmTail = make([]float32, bp*in)
			}
			r.xs = a.gemmTail[:bp*in]
			copy(r.xs, x[:B*in])
			clear(r.xs[B*in:])
		}
		// per worker: the panel block, and outputs for the padded rows
		// (a whole tile's worth for every unit it may own)
		if len(a.pack) < maxWorkers() || len(a.pack[0]) < inOutBlock || len(a.tile[0]) < n*k.mr*k.nr {
			a.pack = make([][]float32, maxWorkers())
			a.tile = make([][]float32, maxWorkers())
			for i := range a.pack {
				a.pack[i] = make([]float32, max(inOutBlock, in*maxNR))
				a.tile[i] = make([]float32, max(n*k.mr*k.nr, maxMR*maxNR))
			}
		}
		r.pack, r.pads = a.pack, a.tile
	}
	parallelForAligned(n, 1, 2, r.fn)
	r.done()
	r.pack, r.pads = nil, nil
}

// inOutShare is worker w's share of linearInOut's region: units [lo, hi).
func (r *linRegion) inOutShare(w, lo, hi int) {
	for ji, j := range r.jobs {
		u0, u1 := max(lo, r.units[ji]), min(hi, r.units[ji+1])
		if u0 >= u1 {
			continue
		}
		olo, ohi := (u0-r.units[ji])*32, min((u1-r.units[ji])*32, j.w.Rows)
		if r.tile {
			olo = inOutTiles(r.k, j, r.xs, r.B, r.pack[w][:inOutBlock], r.pads[w], olo, ohi)
		}
		inOutRows(j, r.x, r.B, olo, ohi)
		addBias(j, 0, (u0-r.units[ji])*32, r.B, ohi-(u0-r.units[ji])*32)
	}
}

// inOutTiles computes the whole 32-output groups of [lo, hi) below the
// job's tCols multiple for the B sequences of xs (B rounded up to mr
// rows), bias not added, and returns where it stopped.
func inOutTiles(k *kernelSet, j linJob, xs []float32, B int, buf, pad []float32, lo, hi int) int {
	w := j.w
	rows, in := w.Rows, w.Cols
	mr, nr := k.mr, k.nr
	np := (min(hi, rows-rows%k.tCols) - lo) / nr // panels
	if np <= 0 {
		return lo
	}
	kb := max(1, len(buf)/(np*nr))
	full := B - B%mr
	for k0 := 0; k0 < in; k0 += kb {
		n := min(kb, in-k0)
		// rows k0..k0+n of the band, into np panels [n][nr]
		for i := 0; i < n; i++ {
			src := w.F32[(k0+i)*w.Ld+w.Off+lo : (k0+i)*w.Ld+w.Off+lo+np*nr]
			if nr == 32 && packBand32 != nil { // the band of a row two rows on prefetched meanwhile
				packBand32(buf[i*nr:], src, np, n*nr, 2*4*w.Ld)
				continue
			}
			for p := 0; p < np; p++ {
				copy(buf[p*n*nr+i*nr:p*n*nr+i*nr+nr], src[p*nr:p*nr+nr])
			}
		}
		tileFn, tailFn := k.gemmTileAcc, k.gemmTailAcc
		if k0 == 0 {
			tileFn, tailFn = k.gemmTile, k.gemmTail
		}
		for p := 0; p < np; p++ {
			bp := buf[p*n*nr : (p+1)*n*nr]
			g := lo + p*nr
			for s0 := 0; s0 < B; s0 += mr {
				a := xs[s0*in+k0:]
				switch {
				case s0 < full:
					tileFn(n, a, in, bp, j.out[s0*rows+g:], rows)
				case tailFn != nil && B-full <= k.tailMR:
					// the last few sequences in a smaller tile: no padded rows computed
					tailFn(n, a, in, bp, pad[p*mr*nr:], nr)
				default:
					tileFn(n, a, in, bp, pad[p*mr*nr:], nr)
				}
			}
		}
	}
	if full < B {
		for p := 0; p < np; p++ {
			copyTile(j.out, rows, full, lo+p*nr, B-full, nr, pad[p*mr*nr:], nr)
		}
	}
	return lo + np*nr
}

// inOutRows computes outputs [lo, hi) of job j for each of the B
// sequences with gemvT (bias not added).
func inOutRows(j linJob, x []float32, B, lo, hi int) {
	if lo >= hi {
		return
	}
	w := j.w
	rows, in := w.Rows, w.Cols
	for s := 0; s < B; s++ {
		out := j.out[s*rows+lo : s*rows+hi]
		clear(out)
		gemvTAcc(out, w.F32[w.Off+lo:], w.Ld, x[s*in:(s+1)*in], in, hi-lo)
	}
}
