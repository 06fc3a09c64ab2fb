package engine

// workerbuf.go: scratch that one worker writes, kept apart from the next
// worker's. A core's hardware prefetchers run ahead of its reads and writes
// into the pages that follow; when those pages hold another core's scratch,
// the lines bounce between the two cores as both write them. The two
// workers' 16 KiB widening buffers of a 16-bit KV cache, allocated side by
// side, made a decode step's attention over an F16 cache at depth 2000
// (SmolLM2-135M, 2 threads) take 3.44–3.57 ms; 8 KiB apart, 2.22–2.34.

// workerGuard is the unused float32s on each side of a worker's scratch
// (8 KiB).
const workerGuard = 2048

// workerBuf returns n zeroed float32s with workerGuard unused ones on each
// side. The engine never touches the guards; they take resident memory only
// where the allocator zeroes reused pages (at most 16 KiB a buffer).
func workerBuf(n int) []float32 {
	b := make([]float32, n+2*workerGuard)
	return b[workerGuard : workerGuard+n : workerGuard+n]
}
