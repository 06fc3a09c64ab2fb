package engine

// mathx.go: the numeric kernels: matmul, norms, softmax, activations.

import (
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas/gonum"
)

// blas gives SIMD (SSE) dot products on amd64 via gonum's assembly kernels.
var blas gonum.Implementation

// dot is the inner product of two equal-length vectors.
func dot(a, b []float32) float32 {
	return blas.Sdot(len(a), a, 1, b, 1)
}

// parallelFor splits [0,n) into one contiguous chunk per CPU and runs
// fn(worker, lo, hi) on each, returning when all are done. Work below
// minWork items per worker runs on the caller's goroutine. This bounded
// fork-join is the only concurrency in the engine: it never outlives the
// call, and hooks are always called from the caller's goroutine.
func parallelFor(n, minWork int, fn func(worker, lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n/max(minWork, 1) {
		workers = max(n/max(minWork, 1), 1)
	}
	if workers <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for w := 1; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() { defer wg.Done(); fn(w, lo, hi) }()
	}
	fn(0, 0, min(chunk, n))
	wg.Wait()
}

// maxWorkers is how many workers parallelFor may use.
func maxWorkers() int { return runtime.GOMAXPROCS(0) }

// matmul computes out[t][o] = Σ_i x[t][i]·w[o][i] (+ bias[o]) for t < T:
// x is [T][in], w is [outDim][in] (row-major), out is [T][outDim]. With T>1
// (prefill) each weight row is loaded once and used for every position, a
// real matrix-matrix pass; rows are split across cores.
func matmul(out, x, w, bias []float32, T, in, outDim int) {
	parallelFor(outDim, 16, func(_, lo, hi int) {
		for o := lo; o < hi; o++ {
			row := w[o*in : (o+1)*in]
			var b float32
			if bias != nil {
				b = bias[o]
			}
			for t := 0; t < T; t++ {
				out[t*outDim+o] = dot(row, x[t*in:(t+1)*in]) + b
			}
		}
	})
}

// rmsnorm: out = x · g / sqrt(mean(x²) + eps), for each of T rows of width d.
func rmsnorm(out, x, g []float32, T, d int, eps float32) {
	for t := 0; t < T; t++ {
		xr, or := x[t*d:(t+1)*d], out[t*d:(t+1)*d]
		var ss float32
		for _, v := range xr {
			ss += v * v
		}
		inv := float32(1 / math.Sqrt(float64(ss/float32(d)+eps)))
		for i, v := range xr {
			or[i] = g[i] * (v * inv)
		}
	}
}

// layernorm: out = (x - mean) / sqrt(var + eps) · g + b, per row.
func layernorm(out, x, g, b []float32, T, d int, eps float32) {
	for t := 0; t < T; t++ {
		xr, or := x[t*d:(t+1)*d], out[t*d:(t+1)*d]
		var mean float32
		for _, v := range xr {
			mean += v
		}
		mean /= float32(d)
		var vr float32
		for _, v := range xr {
			vr += (v - mean) * (v - mean)
		}
		vr /= float32(d)
		inv := float32(1 / math.Sqrt(float64(vr+eps)))
		for i, v := range xr {
			or[i] = (v-mean)*inv*g[i] + b[i]
		}
	}
}

// softmaxInPlace turns x into probabilities (max-subtracted for stability).
func softmaxInPlace(x []float32) {
	if len(x) == 0 {
		return
	}
	mx := x[0]
	for _, v := range x[1:] {
		mx = max(mx, v)
	}
	var sum float32
	for i, v := range x {
		e := float32(math.Exp(float64(v - mx)))
		x[i] = e
		sum += e
	}
	for i := range x {
		x[i] /= sum
	}
}

// l2 is the Euclidean norm of v.
func l2(v []float32) float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return float32(math.Sqrt(s))
}
