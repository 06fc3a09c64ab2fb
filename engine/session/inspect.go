package session

// inspect.go: Inspect — the real tensor behind one part of the model view:
// the residual vector entering and leaving a block, a block's MLP
// activations (top neurons by magnitude), the keys and values the cache
// holds for a position, or one head's attention at the current position
// with every number on its way (inspect_attention.go).

import (
	"fmt"
	"math"
	"sort"
)

// Parts Inspect can show.
const (
	InspectResidual = "residual"
	InspectMLP      = "mlp"
	InspectKV       = "kv"
)

// MaxInspectNeurons bounds an MLP inspection's list.
const MaxInspectNeurons = 64

// InspectRequest names a part: what (residual, mlp, kv or attention), the
// layer, for kv the cached position and for attention the query head;
// residual, mlp and attention show the current position (the last one the
// model ran).
type InspectRequest struct {
	What  string `json:"what"`
	Layer int    `json:"layer"`
	Pos   int    `json:"pos"`
	K     int    `json:"k"`    // mlp: neurons to list (default 16, at most MaxInspectNeurons)
	Head  int    `json:"head"` // attention: the query head
}

// Neuron is one MLP activation.
type Neuron struct {
	Index int     `json:"index"`
	Value float32 `json:"value"`
}

// Inspection is the tensor Inspect found.
type Inspection struct {
	What  string `json:"what"`
	Layer int    `json:"layer"`
	Pos   int    `json:"pos"`
	// residual: the vector entering the block (the previous block's output,
	// or the embedding for layer 0) and the one leaving it.
	In      []float32 `json:"in,omitempty"`
	InNorm  float32   `json:"in_norm,omitempty"`
	Out     []float32 `json:"out,omitempty"`
	OutNorm float32   `json:"out_norm,omitempty"`
	// mlp: the largest activations by magnitude, of Hidden.
	Neurons []Neuron `json:"neurons,omitempty"`
	Hidden  int      `json:"hidden,omitempty"`
	Norm    float32  `json:"norm,omitempty"`
	// kv: per key/value head, the key and value vectors cached for Pos.
	Keys   [][]float32 `json:"keys,omitempty"`
	Values [][]float32 `json:"values,omitempty"`
	// KVType is the cache's precision when it is not f32: the keys and
	// values shown are the stored, rounded ones.
	KVType string `json:"kv_type,omitempty"`
	// attention: the head's query, keys, scores, weights and output.
	Attention *AttentionView `json:"attention,omitempty"`
}

// Inspect returns the tensor behind one part of the model at the current
// step.
func (s *Session) Inspect(r InspectRequest) (*Inspection, error) {
	c := s.m.Config
	if s.cfg.TextOnly {
		return nil, fmt.Errorf("a text-only run keeps no tensors to inspect")
	}
	if !s.view.valid || s.kv.Len == 0 {
		return nil, fmt.Errorf("nothing computed yet: step through prefill first")
	}
	if r.Layer < 0 || r.Layer >= c.NLayers {
		return nil, fmt.Errorf("layer %d out of range: allowed 0 to %d", r.Layer, c.NLayers-1)
	}
	out := &Inspection{What: r.What, Layer: r.Layer, Pos: s.view.pos}
	d, l := c.Dim, r.Layer
	switch r.What {
	case InspectResidual:
		in := s.view.in
		if l > 0 {
			in = s.view.resid[(l-1)*d : l*d]
		}
		out.In = append([]float32(nil), in...)
		out.Out = append([]float32(nil), s.view.resid[l*d:(l+1)*d]...)
		out.InNorm, out.OutNorm = norm(out.In), norm(out.Out)
	case InspectMLP:
		k := r.K
		if k == 0 {
			k = 16
		}
		if k < 1 || k > MaxInspectNeurons {
			return nil, fmt.Errorf("k %d out of range: allowed 1 to %d neurons", k, MaxInspectNeurons)
		}
		a := s.view.mlp[l*c.HiddenDim : (l+1)*c.HiddenDim]
		idx := make([]int, len(a))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return math.Abs(float64(a[idx[i]])) > math.Abs(float64(a[idx[j]])) })
		for _, i := range idx[:min(k, len(idx))] {
			out.Neurons = append(out.Neurons, Neuron{Index: i, Value: a[i]})
		}
		out.Hidden, out.Norm = c.HiddenDim, norm(a)
	case InspectKV:
		if r.Pos < 0 || r.Pos >= s.kv.Len {
			return nil, fmt.Errorf("position %d is not in the KV cache: allowed 0 to %d", r.Pos, s.kv.Len-1)
		}
		out.Pos = r.Pos
		if s.kv.Prec.Bytes() != 4 {
			out.KVType = s.kv.Prec.String()
		}
		hd := c.HeadDim
		key, val, ok := s.kv.Row(l, r.Pos)
		if !ok { // a sliding-window layer keeps its window only
			return nil, fmt.Errorf("position %d has left block %d's sliding window: it keeps the last %d positions (%d to %d)",
				r.Pos, l, s.kv.Slots(l), s.kv.Oldest(l), s.kv.Len-1)
		}
		for h := range c.NKVHeads {
			out.Keys = append(out.Keys, append([]float32(nil), key[h*hd:(h+1)*hd]...))
			out.Values = append(out.Values, append([]float32(nil), val[h*hd:(h+1)*hd]...))
		}
	case InspectAttention:
		if err := s.inspectAttention(r, out); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("cannot inspect %q: allowed residual, mlp, kv, attention", r.What)
	}
	return out, nil
}
