package engine

// weighttypes.go: how many bytes each parameter takes, by storage type:
// the memory panel's bytes per parameter (F32 4, BF16 2, Q8_0 1.0625,
// Q4_K 0.5625), counted from the loaded tensors themselves.

import "sort"

// TypeBytes is the parameters stored in one type and the bytes they take.
type TypeBytes struct {
	Type          string  `json:"type"`    // "f32", "bf16", "q8_0", "q4_k", …
	Tensors       int     `json:"tensors"` // matrices and vectors of this type
	Params        int64   `json:"params"`
	Bytes         int64   `json:"bytes"`
	BytesPerParam float64 `json:"bytes_per_param"`
}

// ByType splits the parameters by storage type, the type holding the most
// bytes first (vectors, norms and biases, are float32; a tied head is
// counted once, as in NumParams). The sums equal NumParams and Bytes.
func (w *Weights) ByType() []TypeBytes {
	idx := map[string]int{}
	var out []TypeBytes
	add := func(typ string, params, bytes int64) {
		if params == 0 {
			return
		}
		i, ok := idx[typ]
		if !ok {
			i = len(out)
			idx[typ] = i
			out = append(out, TypeBytes{Type: typ})
		}
		out[i].Tensors++
		out[i].Params += params
		out[i].Bytes += bytes
	}
	vec := func(s []float32) { add(F32.String(), int64(len(s)), 4*int64(len(s))) }
	mat := func(m *Mat) { add(m.DType.String(), int64(m.Len()), m.Bytes()) }
	mat(&w.TokenEmbed)
	vec(w.PosEmbed)
	vec(w.FinalNorm)
	vec(w.FinalNormBias)
	for i := range w.Layers {
		l := &w.Layers[i]
		for _, v := range l.vecs() {
			vec(v)
		}
		for _, m := range l.mats() {
			mat(m)
		}
	}
	if !w.Head.same(&w.TokenEmbed) {
		mat(&w.Head)
	}
	for i := range out {
		out[i].BytesPerParam = float64(out[i].Bytes) / float64(out[i].Params)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Bytes > out[j].Bytes })
	return out
}
