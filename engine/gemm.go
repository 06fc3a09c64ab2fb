package engine

// gemm.go: the prefill GEMM: weights packed into panels of nr outputs, multiplied with tiles of
// mr positions, in float32 or (opt-in) as bfloat16 dot products of BF16 weights and rounded activations.

import (
	"os"
	"unsafe"
)

// bf16Dot has prefill passes over BF16 weights multiply in bfloat16 pairs
// (the kernel set's gemmBF16, VDPBF16PS where the CPU has AVX512_BF16):
// the activations are rounded to bfloat16 for the product, as ggml does,
// which halves the operand bytes and doubles the multiply rate, but moves
// the logits by about bf16's rounding of the activations (far beyond the
// float32 rounding the exact path shows: see TestBF16DotLogits). Off by
// default: a lab's activations are the engine's float32 values. Set with
// INFERSCOPE_BF16_DOT=1 or SetBF16Dot.
var bf16Dot = os.Getenv("INFERSCOPE_BF16_DOT") == "1"

// SetBF16Dot switches the BF16 dot-product prefill on or off and returns
// the previous setting. Not safe while a forward pass runs.
func SetBF16Dot(on bool) bool { old := bf16Dot; bf16Dot = on; return old }

// BF16DotAvailable reports whether the kernel set in use has the BF16
// dot-product tile (otherwise SetBF16Dot(true) changes nothing).
func BF16DotAvailable() bool { return kern.gemmBF16 != nil && kern != &goKernels }

// gemm runs the jobs on x [T][in] as packed GEMM: units of work are panels
// of nr outputs (a job's last panel may be partial), each packed by the
// worker that owns it and multiplied with every tile of mr positions.
func (a *acts) gemm(x []float32, T int, jobs []linJob) {
	k := kern
	nr, mr := k.nr, k.mr
	in := jobs[0].w.Cols
	panels := make([]int, len(jobs)+1) // first panel of each job
	for i, j := range jobs {
		panels[i+1] = panels[i] + (j.w.Rows+nr-1)/nr
	}
	if bf16Dot && k.gemmBF16 != nil && allBF16(jobs) {
		xp, kp := a.pairRows(x, T, in, mr)
		parallelFor(panels[len(jobs)], 1, func(w, lo, hi int) {
			bp := unsafe.Slice((*uint32)(unsafe.Pointer(&a.pack[w][0])), kp*nr)
			tile := a.tile[w][:mr*nr]
			for ji, j := range jobs {
				for p := max(lo, panels[ji]); p < min(hi, panels[ji+1]); p++ {
					o0 := (p - panels[ji]) * nr
					n := min(nr, j.w.Rows-o0)
					packPairs(bp, j.w, o0, n, nr, kp)
					for t0 := 0; t0 < T; t0 += mr {
						m := min(mr, T-t0)
						if m == mr && n == nr {
							k.gemmBF16(kp, xp[t0*kp:], kp, bp, j.out[t0*j.w.Rows+o0:], j.w.Rows)
						} else {
							k.gemmBF16(kp, xp[t0*kp:], kp, bp, tile, nr)
							copyTile(j.out, j.w.Rows, t0, o0, m, n, tile, nr)
						}
						addBias(j, t0, o0, m, n)
					}
				}
			}
		})
		return
	}
	// The last T%mr positions go through a zero-padded copy of their rows.
	full := T - T%mr
	var tail []float32
	if full < T {
		tail = a.gemmTail[:mr*in]
		clear(tail)
		copy(tail, x[full*in:T*in])
	}
	parallelFor(panels[len(jobs)], 1, func(w, lo, hi int) {
		bp := a.pack[w][:in*nr]
		tile := a.tile[w][:mr*nr]
		for ji, j := range jobs {
			for p := max(lo, panels[ji]); p < min(hi, panels[ji+1]); p++ {
				o0 := (p - panels[ji]) * nr
				gemmPanel(k, j, x, tail, T, full, o0, min(nr, j.w.Rows-o0), bp, tile)
			}
		}
	})
}

// allBF16 reports whether every job's matrix is plain BF16 [out][in].
func allBF16(jobs []linJob) bool {
	for _, j := range jobs {
		if j.w.DType != BF16 || j.w.InOut || j.w.Q != nil {
			return false
		}
	}
	return true
}

// pairRows rounds x [T][in] to bfloat16 pairs: a.xpair [T'][kp] with
// kp = ⌈in/2⌉ (an odd in padded with a zero), T' = T rounded up to mr
// (the padding rows zero).
func (a *acts) pairRows(x []float32, T, in, mr int) ([]uint32, int) {
	kp := (in + 1) / 2
	rows := (T + mr - 1) / mr * mr
	if cap(a.xpair) < rows*kp {
		a.xpair = make([]uint32, rows*kp)
	}
	xp := a.xpair[:rows*kp]
	for t := 0; t < T; t++ {
		row := x[t*in : (t+1)*in]
		d := xp[t*kp : (t+1)*kp]
		for p := range in / 2 {
			d[p] = uint32(f32ToBF16(row[2*p])) | uint32(f32ToBF16(row[2*p+1]))<<16
		}
		if in%2 == 1 {
			d[kp-1] = uint32(f32ToBF16(row[in-1]))
		}
	}
	clear(xp[T*kp:])
	return xp, kp
}

// packPairs writes outputs o0..o0+n-1 of BF16 w as a panel [kp][nr] of
// pairs (column j: inputs 2p and 2p+1 of output o0+j); columns past n and
// an odd input count's last high half are zero.
func packPairs(bp []uint32, w *Mat, o0, n, nr, kp int) {
	in := w.Cols
	if n < nr || in%2 == 1 {
		clear(bp[:kp*nr])
	}
	for j := 0; j < n; j++ {
		row := w.BF16[(o0+j)*w.Ld+w.Off : (o0+j)*w.Ld+w.Off+in]
		for p := range in / 2 {
			bp[p*nr+j] = uint32(row[2*p]) | uint32(row[2*p+1])<<16
		}
		if in%2 == 1 {
			bp[(kp-1)*nr+j] = uint32(row[in-1])
		}
	}
}

// copyTile copies the m×n corner of an edge tile into out [T][rows] at (t0, o0).
func copyTile(out []float32, rows, t0, o0, m, n int, tile []float32, nr int) {
	for i := 0; i < m; i++ {
		copy(out[(t0+i)*rows+o0:(t0+i)*rows+o0+n], tile[i*nr:i*nr+n])
	}
}

// addBias adds job j's bias to outputs o0..o0+n-1 of positions t0..t0+m-1.
func addBias(j linJob, t0, o0, m, n int) {
	if j.bias == nil {
		return
	}
	rows := j.w.Rows
	b := j.bias[o0 : o0+n]
	for i := 0; i < m; i++ {
		addVec(j.out[(t0+i)*rows+o0:(t0+i)*rows+o0+n], b)
	}
}

// packRows32, where the CPU has it, packs the first columns of 32 float32
// rows (stride ld) into a [in][32] panel and returns how many it did (a
// multiple of 16; the rest go column by column).
var packRows32 func(dst, src []float32, ld, in int) int

// packBand32, where set (AVX-512), copies np pieces of 32 floats of src
// to dst at a stride of dstride floats, prefetching pf bytes past src
// (linearInOut's panels from one input row's band: inout.go).
var packBand32 func(dst, src []float32, np, dstride, pf int)

// packPanel writes outputs o0..o0+n-1 of w as a [in][nr] panel (columns past
// n are zero), widening BF16.
func packPanel(bp []float32, w *Mat, o0, n, nr int) {
	in := w.Cols
	switch {
	case w.Q != nil: // block-quantized (quantized.go)
		packQuantPanel(bp, w, o0, n, nr)
	case w.InOut && w.DType == F32:
		for i := 0; i < in; i++ {
			s := i*w.Ld + w.Off + o0
			d := bp[i*nr : i*nr+nr]
			copy(d, w.F32[s:s+n])
			clear(d[n:])
		}
		return
	case w.DType == F32 && !w.InOut:
		// column by column of the panel: the stores run in order and the
		// n rows' current cache lines stay in L1 (writing row by row would
		// store with a stride of nr floats)
		done := 0
		if n == 32 && nr == 32 && packRows32 != nil {
			done = packRows32(bp, w.F32[o0*w.Ld+w.Off:], w.Ld, in)
			if done == in {
				return
			}
		}
		if n < nr {
			clear(bp[:in*nr])
		}
		var rows [maxNR][]float32
		for j := 0; j < n; j++ {
			rows[j] = w.F32[(o0+j)*w.Ld+w.Off : (o0+j)*w.Ld+w.Off+in]
		}
		for i := done; i < in; i++ {
			d := bp[i*nr : i*nr+n]
			for j := range d {
				d[j] = rows[j][i]
			}
		}
	case w.DType == BF16 && !w.InOut:
		if n < nr {
			clear(bp[:in*nr])
		}
		var rows [maxNR][]uint16
		for j := 0; j < n; j++ {
			rows[j] = w.BF16[(o0+j)*w.Ld+w.Off : (o0+j)*w.Ld+w.Off+in]
		}
		for i := 0; i < in; i++ {
			d := bp[i*nr : i*nr+n]
			for j := range d {
				d[j] = bf16ToF32(rows[j][i])
			}
		}
	default:
		clear(bp[:in*nr])
		for j := 0; j < n; j++ {
			for i := 0; i < in; i++ {
				bp[i*nr+j] = w.At(o0+j, i)
			}
		}
	}
}

// gemmPanel computes outputs o0..o0+n-1 of job j for all T positions.
func gemmPanel(k *kernelSet, j linJob, x, tail []float32, T, full, o0, n int, bp, tile []float32) {
	nr, mr := k.nr, k.mr
	in := j.w.Cols
	rows := j.w.Rows
	packPanel(bp, j.w, o0, n, nr)
	for t0 := 0; t0 < T; t0 += mr {
		m := min(mr, T-t0)
		a, lda := x[t0*in:], in
		if t0 >= full {
			a = tail
		}
		if m == mr && n == nr && j.bias != nil && k.gemmTileBias != nil {
			k.gemmTileBias(in, a, lda, bp, j.out[t0*rows+o0:], rows, j.bias[o0:])
			continue // the bias added in the tile's stores
		}
		if m == mr && n == nr {
			k.gemmTile(in, a, lda, bp, j.out[t0*rows+o0:], rows)
		} else {
			k.gemmTile(in, a, lda, bp, tile, nr)
			copyTile(j.out, rows, t0, o0, m, n, tile, nr)
		}
		addBias(j, t0, o0, m, n)
	}
}
