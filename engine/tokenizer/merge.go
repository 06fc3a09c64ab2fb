package tokenizer

// merge.go: the merge loop both BPE families share: lowest-priority pair first, with a heap.

import "container/heap"

// sym is one symbol during BPE merging: a vocabulary id and the input byte
// span it covers.
type sym struct {
	id         int
	start, end int
	inserted   bool // came from no input bytes (dummy prefix)
}

// pairScorer says whether symbols a and b may merge, into which id, and with
// what priority (higher merges first).
type pairScorer func(a, b int) (merged int, prio float64, ok bool)

type cand struct {
	prio        float64
	left, right int // indices into the node array
	lv, rv      int // versions when pushed (stale if changed)
	merged      int
}

type candHeap []cand

func (h candHeap) Len() int { return len(h) }
func (h candHeap) Less(i, j int) bool {
	if h[i].prio != h[j].prio {
		return h[i].prio > h[j].prio
	}
	return h[i].left < h[j].left // leftmost first on ties
}
func (h candHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)   { *h = append(*h, x.(cand)) }
func (h *candHeap) Pop() any     { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

// mergeSymbols repeatedly merges the adjacent pair with the highest priority
// (leftmost on ties) until no pair may merge: the BPE loop of llama2.c's
// run.c and of Hugging Face's BPE, in O(n log n) with a heap over a linked
// list instead of rescanning every pair each round.
func mergeSymbols(syms []sym, score pairScorer) []sym {
	n := len(syms)
	if n < 2 {
		return syms
	}
	prev := make([]int, n)
	next := make([]int, n)
	ver := make([]int, n)
	alive := make([]bool, n)
	for i := range syms {
		prev[i], next[i], alive[i] = i-1, i+1, true
	}
	next[n-1] = -1
	h := &candHeap{}
	push := func(l int) {
		r := next[l]
		if l < 0 || r < 0 {
			return
		}
		if id, p, ok := score(syms[l].id, syms[r].id); ok {
			heap.Push(h, cand{prio: p, left: l, right: r, lv: ver[l], rv: ver[r], merged: id})
		}
	}
	for i := 0; i < n-1; i++ {
		push(i)
	}
	for h.Len() > 0 {
		c := heap.Pop(h).(cand)
		if !alive[c.left] || !alive[c.right] || next[c.left] != c.right || ver[c.left] != c.lv || ver[c.right] != c.rv {
			continue
		}
		l, r := c.left, c.right
		syms[l] = sym{id: c.merged, start: min(syms[l].start, syms[r].start), end: max(syms[l].end, syms[r].end),
			inserted: syms[l].inserted && syms[r].inserted}
		ver[l]++
		alive[r] = false
		next[l] = next[r]
		if next[r] >= 0 {
			prev[next[r]] = l
		}
		if prev[l] >= 0 {
			push(prev[l])
		}
		push(l)
	}
	out := make([]sym, 0, n)
	for i := 0; i >= 0; i = next[i] {
		out = append(out, syms[i])
	}
	return out
}
