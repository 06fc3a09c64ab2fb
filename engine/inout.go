package engine

// inout.go: decode and batched decode over [in][out] matrices (GPT-2's Conv1D weights, used as
// stored): outputs split across workers, each output one chain of steps over the inputs in order.

// allInOut reports whether every job is a float32 [in][out] matrix.
func allInOut(jobs []linJob) bool {
	for _, j := range jobs {
		if !j.w.InOut || j.w.DType != F32 || j.w.Q != nil || j.w.Empty() {
			return false
		}
	}
	return true
}

// linearInOut runs [in][out] jobs on B rows of x [B][in] (one decode
// step, a batch's sequences, or a short prefill). Workers own bands of
// whole 32-output units and read every input row's part of their band
// (whole cache lines, in order). Every output, whatever the batch, is
// Σ_i x[i]·w[i][o] as one chain of steps in i order from zero, then the
// bias: the kernel set's fused steps for the first outputs of each job
// (all but rows%tCols), Go's for the rest. With B > 1 and the set's
// in-place tile (gemmTileLd) the band's 32-output groups go through it
// 12 sequences at a time, reading each weight once per 12 sequences;
// otherwise each sequence runs gemvT over the band.
func (a *acts) linearInOut(x []float32, B int, jobs []linJob) {
	k := kern
	in := jobs[0].w.Cols
	// units of 32 outputs counted from each job's first, so that which
	// outputs take the kernel set's steps (the first rows-rows%tCols of a
	// job) does not depend on how the units fall to workers
	units := make([]int, len(jobs)+1)
	for i, j := range jobs {
		units[i+1] = units[i] + (j.w.Rows+31)/32
	}
	tile := B > 1 && k.gemmTileLd != nil
	// the last B%mr sequences, zero-padded to a full tile of rows
	var tail []float32
	full := B
	if tile && B%k.mr != 0 {
		full = B - B%k.mr
		if len(a.gemmTail) < k.mr*in {
			a.gemmTail = make([]float32, k.mr*in)
		}
		tail = a.gemmTail[:k.mr*in]
		clear(tail)
		copy(tail, x[full*in:B*in])
	}
	parallelForAligned(units[len(jobs)], 1, 2, func(_, lo, hi int) {
		for ji, j := range jobs {
			u0, u1 := max(lo, units[ji]), min(hi, units[ji+1])
			if u0 < u1 {
				inOutBand(k, j, x, tail, B, full, tile, (u0-units[ji])*32, min((u1-units[ji])*32, j.w.Rows))
			}
		}
	})
}

// inOutBand computes outputs [lo, hi) of job j for B sequences.
func inOutBand(k *kernelSet, j linJob, x, tail []float32, B, full int, tile bool, lo, hi int) {
	w := j.w
	rows, in := w.Rows, w.Cols
	simdEnd := rows - rows%k.tCols
	g := lo
	if tile {
		mr, nr := k.mr, k.nr
		var tmp [maxMR * maxNR]float32
		for ; g+nr <= min(hi, simdEnd); g += nr {
			b := w.F32[w.Off+g:]
			for s0 := 0; s0 < B; s0 += mr {
				if s0 < full {
					k.gemmTileLd(in, x[s0*in:], in, b, w.Ld, j.out[s0*rows+g:], rows)
				} else {
					k.gemmTileLd(in, tail, in, b, w.Ld, tmp[:], nr)
					copyTile(j.out, rows, s0, g, B-s0, nr, tmp[:], nr)
				}
			}
		}
	}
	if g < hi {
		for s := 0; s < B; s++ {
			out := j.out[s*rows+g : s*rows+hi]
			clear(out)
			gemvTAcc(out, w.F32[w.Off+g:], w.Ld, x[s*in:(s+1)*in], in, hi-g)
		}
	}
	addBias(j, 0, lo, B, hi-lo)
}
