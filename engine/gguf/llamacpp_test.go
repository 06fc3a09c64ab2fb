package gguf

// llamacpp_test.go: files written by llama.cpp's own quantizer
// (../shared/peers/llama.cpp/bin/llama-quantize) read back: Q8_0 and Q4_0
// blocks byte for byte what quant.Quantize writes, K-quant blocks
// dequantized close to the float32 weights they came from.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/inferscope/inferscope/engine/quant"
	"github.com/inferscope/inferscope/internal/testenv"
)

// tinyLlama writes a one-layer F32 llama GGUF (embedding 256, so K-quant
// rows are whole super-blocks) and returns each matrix's values by name.
func tinyLlama(t *testing.T, path string) map[string][]float32 {
	const d, ff, vocab = 256, 512, 256
	type tensor struct {
		name string
		dims []uint64
	}
	tensors := []tensor{
		{"token_embd.weight", []uint64{d, vocab}}, {"output_norm.weight", []uint64{d}}, {"output.weight", []uint64{d, vocab}},
		{"blk.0.attn_norm.weight", []uint64{d}}, {"blk.0.attn_q.weight", []uint64{d, d}}, {"blk.0.attn_k.weight", []uint64{d, d}},
		{"blk.0.attn_v.weight", []uint64{d, d}}, {"blk.0.attn_output.weight", []uint64{d, d}}, {"blk.0.ffn_norm.weight", []uint64{d}},
		{"blk.0.ffn_gate.weight", []uint64{d, ff}}, {"blk.0.ffn_up.weight", []uint64{d, ff}}, {"blk.0.ffn_down.weight", []uint64{ff, d}},
	}
	tokens := make([]string, vocab)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("t%d", i)
	}
	b := new(builder).header(3, uint64(len(tensors)), 12)
	b.str("general.architecture").u32(uint32(String)).str("llama")
	b.kvU32("llama.context_length", 128).kvU32("llama.embedding_length", d).kvU32("llama.block_count", 1)
	b.kvU32("llama.feed_forward_length", ff).kvU32("llama.attention.head_count", 4).kvU32("llama.attention.head_count_kv", 4)
	b.kvU32("llama.rope.dimension_count", 64)
	b.str("llama.attention.layer_norm_rms_epsilon").u32(uint32(Float32)).u32(math.Float32bits(1e-5))
	b.str("tokenizer.ggml.model").u32(uint32(String)).str("gpt2")
	b.str("tokenizer.ggml.tokens").u32(uint32(Array)).u32(uint32(String)).u64(vocab)
	for _, s := range tokens {
		b.str(s)
	}
	b.str("tokenizer.ggml.merges").u32(uint32(Array)).u32(uint32(String)).u64(1).str("t 1")
	off := uint64(0)
	values := map[string][]float32{}
	r := rand.New(rand.NewPCG(36, 3))
	for _, tn := range tensors {
		n := tn.dims[0]
		if len(tn.dims) > 1 {
			n *= tn.dims[1]
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		values[tn.name] = v
		b.tensor(tn.name, quant.F32, off, tn.dims...)
		off += (4*n + 31) &^ 31
	}
	for b.Len()%32 != 0 {
		b.WriteByte(0)
	}
	for _, tn := range tensors {
		v := values[tn.name]
		raw := make([]byte, (4*len(v)+31)&^31)
		for i, x := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
		}
		b.Write(raw)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return values
}

func TestLlamaQuantizeFiles(t *testing.T) {
	bin := filepath.Join(testenv.SharedDir(t, "peers/llama.cpp/bin"), "llama-quantize")
	dir := t.TempDir()
	src := filepath.Join(dir, "f32.gguf")
	values := tinyLlama(t, src)
	if f, err := Open(src); err != nil {
		t.Fatalf("our own F32 file: %v", err)
	} else {
		f.Close()
	}
	for _, c := range []struct {
		ftype string
		typ   quant.Type
		rms   float64 // bound on the relative RMS error of the dequantized weights
	}{
		{"Q8_0", quant.Q8_0, 0.008}, {"Q4_0", quant.Q4_0, 0.11},
		{"Q4_K_M", quant.Q4_K, 0.09}, {"Q5_K_M", quant.Q5_K, 0.045}, {"Q6_K", quant.Q6_K, 0.023},
	} {
		t.Run(c.ftype, func(t *testing.T) {
			out := filepath.Join(dir, c.ftype+".gguf")
			cmd := exec.Command(bin, "--pure", src, out, c.ftype, "1")
			log, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == -1 || errors.As(err, &ee) && ee.ExitCode() == 132 {
				testenv.Unavailable(t, "llama-quantize died (%v): built for another CPU? see ../shared/peers/llama.cpp/README.md", err)
			}
			if err != nil {
				t.Fatalf("llama-quantize: %v\n%s", err, log)
			}
			f, err := Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.HyperParams(); err != nil {
				t.Error(err)
			}
			if tok, err := f.Tokenizer(); err != nil || tok.Tokens.Len() != 256 {
				t.Errorf("tokenizer: %v", err)
			}
			matrices := 0
			for i := range f.Tensors {
				tt := &f.Tensors[i]
				want := values[tt.Name]
				if len(tt.Dims) == 1 {
					if tt.Type != quant.F32 {
						t.Errorf("%s: %s", tt.Name, tt.Type)
					}
					continue
				}
				matrices++
				if tt.Type != c.typ {
					t.Errorf("%s is %s, want %s", tt.Name, tt.Type, c.typ)
					continue
				}
				if c.typ == quant.Q8_0 || c.typ == quant.Q4_0 {
					ours := make([]byte, len(tt.Data))
					if err := quant.Quantize(c.typ, ours, want); err != nil {
						t.Fatal(err)
					}
					bb, diff := c.typ.BlockBytes(), 0
					for j := range ours {
						if ours[j] != tt.Data[j] {
							diff++
							if diff == 1 {
								t.Errorf("%s: block %d byte %d: ours %#02x, llama.cpp %#02x", tt.Name, j/bb, j%bb, ours[j], tt.Data[j])
							}
						}
					}
					if diff > 0 {
						t.Errorf("%s: %d of %d bytes differ from llama.cpp's", tt.Name, diff, len(ours))
					}
				}
				got := make([]float32, len(want))
				if err := quant.Dequantize(tt.Type, got, tt.Data); err != nil {
					t.Fatal(err)
				}
				var se, ss float64
				for j := range want {
					e := float64(got[j]) - float64(want[j])
					se += e * e
					ss += float64(want[j]) * float64(want[j])
				}
				if rel := math.Sqrt(se / ss); rel > c.rms {
					t.Errorf("%s: relative RMS error %.4f > %.2f", tt.Name, rel, c.rms)
				} else if i < 3 {
					t.Logf("%s: relative RMS error %.4f", tt.Name, rel)
				}
			}
			if matrices != 9 {
				t.Errorf("%d matrices, want 9", matrices)
			}
		})
	}
}
