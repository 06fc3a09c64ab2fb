package quant

// unpack.go: one stored block taken apart into the numbers a reader can
// follow, for the model view's block display: the integers each value is
// stored as, the block's scale(s) and, for the K types, each sub-block's
// 6-bit (Q4_K, Q5_K) or 8-bit (Q6_K) scale and min. Value(i) recomputes a
// value from them with the dequantizers' own float32 operations, so it
// equals Dequantize bit for bit (tested).

import "fmt"

// Unpacked is one block's stored numbers. Value i is
//
//	Q8_0:        D·Q[i]
//	Q4_0:        D·(Q[i]−8)
//	Q4_K, Q5_K:  (D·SubScale[s])·Q[i] − DMin·SubMin[s]     s = i/32
//	Q6_K:        D·SubScale[s]·(Q[i]−32)                   s = i/16
type Unpacked struct {
	Type      Type
	Q         []int   // the stored integer of every value, as stored (unsigned nibbles, int8 for Q8_0)
	Offset    int     // subtracted from Q before scaling: 8 (Q4_0), 32 (Q6_K), else 0
	D         float32 // the block's (super-block's) scale, stored as fp16
	DMin      float32 // Q4_K, Q5_K: the scale of the sub-block mins, stored as fp16
	SubSize   int     // values per sub-block (K types), 0 when the block has one scale
	SubScales []int   // K types: each sub-block's scale, a multiple of D
	SubMins   []int   // Q4_K, Q5_K: each sub-block's min, a multiple of DMin
	Formula   string  // how a value is made of them, in words
	Bits      float64 // bits per value, scales included
}

// Unpack takes apart one block of type t (t.BlockBytes() bytes). F32, F16
// and BF16 have no blocks and are refused.
func Unpack(t Type, b []byte) (*Unpacked, error) {
	l, ok := layouts[t]
	if !ok || l.n == 1 {
		return nil, fmt.Errorf("quant: %s values are stored one by one, not in blocks (blocks: Q8_0, Q4_0, Q4_K, Q5_K, Q6_K)", t)
	}
	if len(b) != l.bytes {
		return nil, fmt.Errorf("quant: a %s block is %d bytes, not %d", t, l.bytes, len(b))
	}
	u := &Unpacked{Type: t, Q: make([]int, l.n), Bits: float64(8*l.bytes) / float64(l.n)}
	switch t {
	case Q8_0:
		u.D = halfAt(b)
		for j := range 32 {
			u.Q[j] = int(int8(b[2+j]))
		}
		u.Formula = "value = d × q (q a signed 8-bit integer, −128 to 127)"
	case Q4_0:
		u.D, u.Offset = halfAt(b), 8
		for j := range 16 {
			u.Q[j], u.Q[j+16] = int(b[2+j]&0x0f), int(b[2+j]>>4)
		}
		u.Formula = "value = d × (q − 8) (q a 4-bit integer, 0 to 15)"
	case Q4_K, Q5_K:
		u.D, u.DMin, u.SubSize = halfAt(b[0:]), halfAt(b[2:]), 32
		u.SubScales, u.SubMins = make([]int, 8), make([]int, 8)
		for j := range 8 {
			sc, m := scaleMinK4(j, b[4:16])
			u.SubScales[j], u.SubMins[j] = int(sc), int(m)
		}
		qs := b[16:144]
		var qh []byte
		if t == Q5_K {
			qh, qs = b[16:48], b[48:176]
		}
		for i := range 4 {
			for l := range 32 {
				lo, hi := int(qs[32*i+l]&0x0f), int(qs[32*i+l]>>4)
				if qh != nil {
					lo |= int(qh[l]>>(2*i)&1) << 4
					hi |= int(qh[l]>>(2*i+1)&1) << 4
				}
				u.Q[64*i+l], u.Q[64*i+32+l] = lo, hi
			}
		}
		top := map[Type]string{Q4_K: "4-bit, 0 to 15", Q5_K: "5-bit, 0 to 31"}[t]
		u.Formula = "value = (d × scale) × q − dmin × min (q " + top + "; each sub-block of 32 has its own 6-bit scale and min)"
	case Q6_K:
		u.D, u.Offset, u.SubSize = halfAt(b[208:]), 32, 16
		u.SubScales = make([]int, 16)
		for s := range 16 {
			u.SubScales[s] = int(int8(b[192+s]))
		}
		for n := range 2 {
			ql, qh := b[64*n:64*n+64], b[128+32*n:128+32*n+32]
			q := u.Q[128*n : 128*n+128]
			for l := range 32 {
				q[l] = int(ql[l]&0x0f | (qh[l]>>0&3)<<4)
				q[l+32] = int(ql[l+32]&0x0f | (qh[l]>>2&3)<<4)
				q[l+64] = int(ql[l]>>4 | (qh[l]>>4&3)<<4)
				q[l+96] = int(ql[l+32]>>4 | (qh[l]>>6&3)<<4)
			}
		}
		u.Formula = "value = d × scale × (q − 32) (q a 6-bit integer, 0 to 63; each sub-block of 16 has its own signed 8-bit scale)"
	}
	return u, nil
}

// Value recomputes value i from the unpacked numbers with the
// dequantizer's float32 operations.
func (u *Unpacked) Value(i int) float32 {
	q := u.Q[i]
	switch u.Type {
	case Q8_0:
		return float32(q) * u.D
	case Q4_0:
		return float32(q-8) * u.D
	case Q4_K, Q5_K:
		s := i / 32
		d1, m1 := u.D*float32(u.SubScales[s]), u.DMin*float32(u.SubMins[s])
		return float32(d1*float32(q)) - m1
	case Q6_K:
		return u.D * float32(u.SubScales[i/16]) * float32(q-32)
	}
	panic("quant: Value of " + u.Type.String())
}
