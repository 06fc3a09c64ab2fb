package engine

// validate.go: overflow-safe size checks for the loaders — how many
// weights a config needs, counted without int64 overflow and compared with
// what the files hold before anything is allocated — and the recover that
// turns a loader panic into an error.

import (
	"fmt"
	"math"
)

// sizeSum adds products of non-negative factors and remembers whether any
// step overflowed int64.
type sizeSum struct {
	n        int64
	overflow bool
}

// add adds the product of factors.
func (s *sizeSum) add(factors ...int) {
	p := int64(1)
	for _, f := range factors {
		if f < 0 {
			s.overflow = true
			return
		}
		if f != 0 && p > math.MaxInt64/int64(f) {
			s.overflow = true
			return
		}
		p *= int64(f)
	}
	if s.n > math.MaxInt64-p {
		s.overflow = true
		return
	}
	s.n += p
}

// checkedMul multiplies non-negative int64s; ok is false on overflow.
func checkedMul(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	if a != 0 && b > math.MaxInt64/a {
		return 0, false
	}
	return a * b, true
}

// expectedParams is the number of weights a model of shape c has (norms
// included; the optional q/k/v/o biases of the decoder families not), or
// ok == false if the count overflows int64.
func (c Config) expectedParams() (n int64, ok bool) {
	d, hd, L, qd, kvd, V := c.Dim, c.HiddenDim, c.NLayers, c.QDim(), c.KVDim(), c.VocabSize
	var s sizeSum
	s.add(V, d) // token embeddings
	switch c.Arch {
	case ArchGPT2:
		s.add(c.SeqLen, d) // position embeddings
		s.add(L, 4, d)     // two LayerNorms (weight, bias)
		s.add(L, d, 3, d)  // c_attn
		s.add(L, 3, d)     // its bias
		s.add(L, d, d)     // c_proj
		s.add(L, d)        // its bias
		s.add(L, 2, d, hd) // c_fc, mlp c_proj
		s.add(L, hd)       // c_fc bias
		s.add(L, d)        // mlp c_proj bias
		s.add(2, d)        // final LayerNorm
	default:
		s.add(L, 2, d)      // two RMSNorms
		s.add(L, qd, d)     // wq
		s.add(L, 2, kvd, d) // wk, wv
		s.add(L, d, qd)     // wo
		s.add(L, 3, hd, d)  // gate, up, down
		s.add(d)            // final norm
		if c.QKNorm {
			s.add(L, 2, c.HeadDim) // q_norm, k_norm
		}
		if c.Arch == ArchGemma2 || c.Arch == ArchGemma3 {
			s.add(L, 2, d) // post-attention and post-feedforward norms
		}
		if !c.TiedHead {
			s.add(V, d)
		}
	}
	return s.n, !s.overflow
}

// checkWeightBytes refuses a config whose weights cannot fit in dataBytes
// of tensor data at the smallest supported dtype (2 bytes: F16/BF16), so a
// config.json that claims a million layers fails before the layers are
// allocated.
func checkWeightBytes(c Config, dataBytes int64) error {
	n, ok := c.expectedParams()
	var need int64
	if ok {
		need, ok = checkedMul(n, 2)
	}
	if !ok {
		return fmt.Errorf("config.json: the shape (hidden %d, intermediate %d, layers %d, heads %d, vocab %d, context %d) needs more weights than int64 can count",
			c.Dim, c.HiddenDim, c.NLayers, c.NHeads, c.VocabSize, c.SeqLen)
	}
	if need > dataBytes {
		return fmt.Errorf("config.json: the shape (hidden %d, intermediate %d, layers %d, heads %d, vocab %d, context %d) needs %d weights, at least %d bytes, but the safetensors files hold %d bytes of tensor data: the config does not match the weights",
			c.Dim, c.HiddenDim, c.NLayers, c.NHeads, c.VocabSize, c.SeqLen, n, need, dataBytes)
	}
	return nil
}

// validTokenID keeps a config's special token id if it names a vocabulary
// entry and says "none" (-1) otherwise.
func validTokenID(id, vocab int) int {
	if id < 0 || id >= vocab {
		return -1
	}
	return id
}

// recoverLoad turns a panic while loading what into an error; loaders
// defer it so no file can end the process.
func recoverLoad(what string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("load %s: the files are damaged or unsupported (internal error: %v)", what, r)
	}
}
