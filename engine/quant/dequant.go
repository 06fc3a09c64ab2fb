package quant

// dequant.go: the scalar dequantization of one block of each format, the
// reference every other path is tested against. Each follows ggml's
// dequantize_row_* (ggml-quants.c) and gguf-py's dequantize_blocks: the
// same float32 operations in the same order, never fused (an explicit
// float32 conversion stops the compiler from fusing a multiply and a
// subtract into one FMA, which would round once instead of twice).

import (
	"encoding/binary"
	"math"
)

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

// halfAt reads the fp16 value at b[0:2].
func halfAt(b []byte) float32 { return F16ToF32(le16(b)) }

// dequantQ8_0 writes a block_q8_0's 32 values: d·q.
func dequantQ8_0(dst []float32, b []byte) {
	b = b[:34]
	dst = dst[:32]
	d := halfAt(b)
	for j := range 32 {
		dst[j] = float32(int8(b[2+j])) * d
	}
}

// dequantQ4_0 writes a block_q4_0's 32 values: d·(q−8), q the low nibbles
// of qs for values 0–15 and the high nibbles for 16–31.
func dequantQ4_0(dst []float32, b []byte) {
	b = b[:18]
	dst = dst[:32]
	d := halfAt(b)
	for j := range 16 {
		dst[j] = float32(int(b[2+j]&0x0f)-8) * d
		dst[j+16] = float32(int(b[2+j]>>4)-8) * d
	}
}

// scaleMinK4 unpacks sub-block j's 6-bit scale and min from a K-quant's
// 12 packed bytes: get_scale_min_k4 in ggml-quants.c.
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	q = q[:12]
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0x0f | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// dequantQ4_K writes a block_q4_K's 256 values: eight sub-blocks of 32, sub-block
// j's value d·sc_j·q − dmin·m_j; sub-blocks 2i and 2i+1 take the low and high
// nibbles of qs[32i:32i+32].
func dequantQ4_K(dst []float32, b []byte) {
	b = b[:144]
	dst = dst[:256]
	d, dmin := halfAt(b[0:]), halfAt(b[2:])
	scales, qs := b[4:16], b[16:144]
	for i := range 4 {
		sc, m := scaleMinK4(2*i, scales)
		d1, m1 := d*float32(sc), dmin*float32(m)
		sc, m = scaleMinK4(2*i+1, scales)
		d2, m2 := d*float32(sc), dmin*float32(m)
		q := qs[32*i : 32*i+32]
		y := dst[64*i : 64*i+64]
		for l := range 32 {
			y[l] = float32(d1*float32(q[l]&0x0f)) - m1
			y[l+32] = float32(d2*float32(q[l]>>4)) - m2
		}
	}
}

// dequantQ5_K is dequantQ4_K with a fifth bit per value from qh: bit 2i of
// qh[l] for value 64i+l, bit 2i+1 for value 64i+32+l.
func dequantQ5_K(dst []float32, b []byte) {
	b = b[:176]
	dst = dst[:256]
	d, dmin := halfAt(b[0:]), halfAt(b[2:])
	scales, qh, qs := b[4:16], b[16:48], b[48:176]
	for i := range 4 {
		sc, m := scaleMinK4(2*i, scales)
		d1, m1 := d*float32(sc), dmin*float32(m)
		sc, m = scaleMinK4(2*i+1, scales)
		d2, m2 := d*float32(sc), dmin*float32(m)
		q := qs[32*i : 32*i+32]
		y := dst[64*i : 64*i+64]
		for l := range 32 {
			lo := q[l]&0x0f | (qh[l]>>(2*i)&1)<<4
			hi := q[l]>>4 | (qh[l]>>(2*i+1)&1)<<4
			y[l] = float32(d1*float32(lo)) - m1
			y[l+32] = float32(d2*float32(hi)) - m2
		}
	}
}

// dequantQ6_K writes a block_q6_K's 256 values: sixteen sub-blocks of 16,
// value d·scales[s]·(q−32) with q six bits, the low four from ql and the
// high two from qh (dequantize_row_q6_K's layout, two halves of 128).
func dequantQ6_K(dst []float32, b []byte) {
	b = b[:210]
	dst = dst[:256]
	d := halfAt(b[208:])
	for n := range 2 {
		ql, qh, sc := b[64*n:64*n+64], b[128+32*n:128+32*n+32], b[192+8*n:192+8*n+8]
		y := dst[128*n : 128*n+128]
		for l := range 32 {
			is := l / 16
			q1 := int(ql[l]&0x0f|(qh[l]>>0&3)<<4) - 32
			q2 := int(ql[l+32]&0x0f|(qh[l]>>2&3)<<4) - 32
			q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
			q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
			y[l] = d * float32(int8(sc[is])) * float32(q1)
			y[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
			y[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
			y[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
		}
	}
}

// dequantF32, dequantF16 and dequantBF16 convert little-endian rows.
func dequantF32(dst []float32, b []byte) {
	b = b[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func dequantF16(dst []float32, b []byte) {
	b = b[:2*len(dst)]
	for i := range dst {
		dst[i] = F16ToF32(le16(b[2*i:]))
	}
}

func dequantBF16(dst []float32, b []byte) {
	b = b[:2*len(dst)]
	for i := range dst {
		dst[i] = BF16ToF32(le16(b[2*i:]))
	}
}

// dequantGo converts whole blocks of src into dst (len(dst) values, a
// multiple of the block size) with the scalar code.
func dequantGo(t Type, dst []float32, src []byte) {
	switch t {
	case F32:
		dequantF32(dst, src)
		return
	case F16:
		dequantF16(dst, src)
		return
	case BF16:
		dequantBF16(dst, src)
		return
	}
	switch t {
	case Q8_0, Q4_0, Q4_K, Q5_K, Q6_K:
	default:
		panic("quant: dequantGo: unsupported type " + t.String())
	}
	// each block by a direct call: a function value chosen once would make
	// dst escape, and every caller's buffer a heap allocation (a pure-Go
	// decode step on Q8_0 allocated 11 times a layer)
	l := layouts[t]
	for b := 0; b < len(dst)/l.n; b++ {
		d, s := dst[b*l.n:(b+1)*l.n], src[b*l.bytes:]
		switch t {
		case Q8_0:
			dequantQ8_0(d, s)
		case Q4_0:
			dequantQ4_0(d, s)
		case Q4_K:
			dequantQ4_K(d, s)
		case Q5_K:
			dequantQ5_K(d, s)
		case Q6_K:
			dequantQ6_K(d, s)
		}
	}
}
