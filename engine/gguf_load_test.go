package engine

// gguf_load_test.go: GGUF files as models. Files written here (a small
// GGUF writer laid out as gguf.md and llama.cpp's converter lay them out,
// llama's q/k rows permuted) and files written by llama.cpp's own tools
// (../shared/peers/llama.cpp: hf_to_gguf.py, llama-quantize) load, compute
// what the Hugging Face model they came from computes (F32/F16/BF16) or
// what the float64 reference computes on their dequantized weights
// (quantized types), batch bit for bit, tokenize as the original
// tokenizers do, and bad files are refused by name, never with a panic.
//
// Errors are max|logit − reference| / max|reference logit| over a
// position's vocabulary, the largest over every prompt position and 20
// cached greedy steps.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine/gguf"
	"github.com/inferscope/inferscope/engine/quant"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/testenv"
)

// ggufBuilder writes a GGUF v3 file (metadata, tensor infos, data aligned
// to 32 bytes).
type ggufBuilder struct {
	kv      bytes.Buffer
	nkv     int
	tensors []ggufTensor
}

type ggufTensor struct {
	name string
	dims []uint64
	typ  quant.Type
	data []byte
}

func (b *ggufBuilder) key(k string, typ gguf.ValueType) *bytes.Buffer {
	b.nkv++
	putStr(&b.kv, k)
	binary.Write(&b.kv, binary.LittleEndian, uint32(typ))
	return &b.kv
}

func putStr(w *bytes.Buffer, s string) {
	binary.Write(w, binary.LittleEndian, uint64(len(s)))
	w.WriteString(s)
}

func (b *ggufBuilder) str(k, v string) { putStr(b.key(k, gguf.String), v) }
func (b *ggufBuilder) u32(k string, v uint32) {
	binary.Write(b.key(k, gguf.Uint32), binary.LittleEndian, v)
}
func (b *ggufBuilder) f32(k string, v float32) {
	binary.Write(b.key(k, gguf.Float32), binary.LittleEndian, v)
}
func (b *ggufBuilder) array(k string, elem gguf.ValueType, n int) *bytes.Buffer {
	w := b.key(k, gguf.Array)
	binary.Write(w, binary.LittleEndian, uint32(elem))
	binary.Write(w, binary.LittleEndian, uint64(n))
	return w
}
func (b *ggufBuilder) strs(k string, v []string) {
	w := b.array(k, gguf.String, len(v))
	for _, s := range v {
		putStr(w, s)
	}
}
func (b *ggufBuilder) f32s(k string, v []float32) {
	binary.Write(b.array(k, gguf.Float32, len(v)), binary.LittleEndian, v)
}
func (b *ggufBuilder) i32s(k string, v []int32) {
	binary.Write(b.array(k, gguf.Int32, len(v)), binary.LittleEndian, v)
}

// tensor adds rows × cols values (ggml dims [cols, rows]; rows 0 for a
// vector) stored as typ.
func (b *ggufBuilder) tensor(t testing.TB, name string, typ quant.Type, v []float32, rows, cols int) {
	t.Helper()
	dims := []uint64{uint64(cols)}
	if rows > 0 {
		dims = append(dims, uint64(rows))
	}
	n, err := typ.RowBytes(len(v))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, n)
	if err := quant.Quantize(typ, data, v); err != nil {
		t.Fatal(err)
	}
	b.tensors = append(b.tensors, ggufTensor{name, dims, typ, data})
}

func (b *ggufBuilder) bytes() []byte {
	var w bytes.Buffer
	w.WriteString("GGUF")
	binary.Write(&w, binary.LittleEndian, uint32(3))
	binary.Write(&w, binary.LittleEndian, uint64(len(b.tensors)))
	binary.Write(&w, binary.LittleEndian, uint64(b.nkv))
	w.Write(b.kv.Bytes())
	off := uint64(0)
	for _, t := range b.tensors {
		putStr(&w, t.name)
		binary.Write(&w, binary.LittleEndian, uint32(len(t.dims)))
		binary.Write(&w, binary.LittleEndian, t.dims)
		binary.Write(&w, binary.LittleEndian, uint32(t.typ))
		binary.Write(&w, binary.LittleEndian, off)
		off += uint64(len(t.data)+31) &^ 31
	}
	for w.Len()%32 != 0 {
		w.WriteByte(0)
	}
	for _, t := range b.tensors {
		w.Write(t.data)
		for w.Len()%32 != 0 {
			w.WriteByte(0)
		}
	}
	return w.Bytes()
}

// permuteQK is convert_hf_to_gguf.py's LlamaModel.permute: within each of
// nh heads, row j·hd/2 + i (Hugging Face's rotate-half pairs) becomes row
// 2i + j (adjacent pairs).
func permuteQK(w []float32, nh, cols int) []float32 {
	out := make([]float32, len(w))
	hd := len(w) / cols / nh
	for h := range nh {
		for i := range hd / 2 {
			for j := range 2 {
				src, dst := h*hd+j*hd/2+i, h*hd+2*i+j
				copy(out[dst*cols:(dst+1)*cols], w[src*cols:(src+1)*cols])
			}
		}
	}
	return out
}

// byteAlphabet is GPT-2's byte-level alphabet in byte order.
func byteAlphabet() []string {
	out := make([]string, 256)
	n := 0
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			out[b] = string(rune(b))
		} else {
			out[b] = string(rune(256 + n))
			n++
		}
	}
	return out
}

// ggufFromModel writes m (a Hugging Face-layout random model: Llama with
// rotate-half RoPE, or GPT-2) as llama.cpp's converter would, its matrices
// (and GPT-2's position table) in typ, vectors in F32, with a small
// tokenizer: SentencePiece for Llama, byte-level BPE for GPT-2.
func ggufFromModel(t testing.TB, m *Model, typ quant.Type) []byte {
	t.Helper()
	c, w := m.Config, &m.Weights
	b := &ggufBuilder{}
	arch := string(c.Arch)
	b.str("general.architecture", arch)
	b.str("general.name", "test-"+arch)
	b.u32(arch+".context_length", uint32(c.SeqLen))
	b.u32(arch+".embedding_length", uint32(c.Dim))
	b.u32(arch+".feed_forward_length", uint32(c.HiddenDim))
	b.u32(arch+".block_count", uint32(c.NLayers))
	b.u32(arch+".attention.head_count", uint32(c.NHeads))
	d, V := c.Dim, c.VocabSize
	mat := func(name string, x *Mat) { b.tensor(t, name, typ, x.Dense(), x.Rows, x.Cols) }
	vec := func(name string, v []float32) { b.tensor(t, name, quant.F32, v, 0, len(v)) }
	if c.Arch == ArchLlama {
		b.u32(arch+".attention.head_count_kv", uint32(c.NKVHeads))
		b.u32(arch+".rope.dimension_count", uint32(c.HeadDim))
		b.f32(arch+".rope.freq_base", float32(c.RopeTheta))
		b.f32(arch+".attention.layer_norm_rms_epsilon", c.NormEps)
		toks := []string{"<unk>", "<s>", "</s>"}
		types := []int32{2, 3, 3}
		for i := range 256 {
			toks, types = append(toks, fmt.Sprintf("<0x%02X>", i)), append(types, 6)
		}
		for _, p := range []string{"▁", "t", "h", "e", "▁t", "he", "▁the", "▁he"} {
			toks, types = append(toks, p), append(types, 1)
		}
		for len(toks) < V {
			toks, types = append(toks, fmt.Sprintf("▁w%d", len(toks))), append(types, 1)
		}
		scores := make([]float32, V)
		for i := range scores {
			scores[i] = -float32(i)
		}
		b.str("tokenizer.ggml.model", "llama")
		b.strs("tokenizer.ggml.tokens", toks)
		b.f32s("tokenizer.ggml.scores", scores)
		b.i32s("tokenizer.ggml.token_type", types)
		b.u32("tokenizer.ggml.bos_token_id", 1)
		b.u32("tokenizer.ggml.eos_token_id", 2)
		b.str("tokenizer.chat_template", "{{ messages }}")
		mat("token_embd.weight", &w.TokenEmbed)
		for l := range w.Layers {
			lw, p := &w.Layers[l], fmt.Sprintf("blk.%d.", l)
			vec(p+"attn_norm.weight", lw.AttnNorm)
			b.tensor(t, p+"attn_q.weight", typ, permuteQK(lw.Wq.Dense(), c.NHeads, d), c.QDim(), d)
			b.tensor(t, p+"attn_k.weight", typ, permuteQK(lw.Wk.Dense(), c.NKVHeads, d), c.KVDim(), d)
			mat(p+"attn_v.weight", &lw.Wv)
			mat(p+"attn_output.weight", &lw.Wo)
			vec(p+"ffn_norm.weight", lw.MLPNorm)
			mat(p+"ffn_gate.weight", &lw.WGate)
			mat(p+"ffn_up.weight", &lw.WUp)
			mat(p+"ffn_down.weight", &lw.WDown)
		}
		vec("output_norm.weight", w.FinalNorm)
		if !c.TiedHead {
			mat("output.weight", &w.Head)
		}
		return b.bytes()
	}
	b.f32(arch+".attention.layer_norm_epsilon", c.NormEps)
	alpha := byteAlphabet()
	toks := append([]string(nil), alpha...)
	toks = append(toks, "Ġt", "he", "Ġthe")
	merges := []string{"Ġ t", "h e", "Ġt he"}
	for len(toks) < V-1 {
		toks = append(toks, fmt.Sprintf("[PAD%d]", len(toks)))
	}
	toks = append(toks, "<|endoftext|>")
	types := make([]int32, V)
	for i := range types {
		types[i] = 1
	}
	types[V-1] = 3
	b.str("tokenizer.ggml.model", "gpt2")
	b.str("tokenizer.ggml.pre", "gpt-2")
	b.strs("tokenizer.ggml.tokens", toks)
	b.i32s("tokenizer.ggml.token_type", types)
	b.strs("tokenizer.ggml.merges", merges)
	b.u32("tokenizer.ggml.bos_token_id", uint32(V-1))
	b.u32("tokenizer.ggml.eos_token_id", uint32(V-1))
	mat("token_embd.weight", &w.TokenEmbed)
	b.tensor(t, "position_embd.weight", typ, w.PosEmbed, c.SeqLen, d)
	for l := range w.Layers {
		lw, p := &w.Layers[l], fmt.Sprintf("blk.%d.", l)
		vec(p+"attn_norm.weight", lw.AttnNorm)
		vec(p+"attn_norm.bias", lw.AttnNormBias)
		qkv := append(append(append([]float32(nil), lw.Wq.Dense()...), lw.Wk.Dense()...), lw.Wv.Dense()...)
		b.tensor(t, p+"attn_qkv.weight", typ, qkv, 3*d, d)
		vec(p+"attn_qkv.bias", append(append(append([]float32(nil), lw.Bq...), lw.Bk...), lw.Bv...))
		mat(p+"attn_output.weight", &lw.Wo)
		vec(p+"attn_output.bias", lw.Bo)
		vec(p+"ffn_norm.weight", lw.MLPNorm)
		vec(p+"ffn_norm.bias", lw.MLPNormBias)
		mat(p+"ffn_up.weight", &lw.WUp)
		vec(p+"ffn_up.bias", lw.BUp)
		mat(p+"ffn_down.weight", &lw.WDown)
		vec(p+"ffn_down.bias", lw.BDown)
	}
	vec("output_norm.weight", w.FinalNorm)
	vec("output_norm.bias", w.FinalNormBias)
	return b.bytes()
}

// rounded is m with its matrices (and GPT-2's position table) rounded to
// typ's values, as float32: the model a file of that type stores.
func rounded(t *testing.T, m *Model, typ quant.Type) *Model {
	t.Helper()
	round := func(v []float32) []float32 {
		n, _ := typ.RowBytes(len(v))
		buf := make([]byte, n)
		out := make([]float32, len(v))
		if err := quant.Quantize(typ, buf, v); err != nil {
			t.Fatal(err)
		}
		if err := quant.Dequantize(typ, out, buf); err != nil {
			t.Fatal(err)
		}
		return out
	}
	w := m.Weights.mapMats(func(x *Mat) Mat {
		if x.Empty() {
			return *x
		}
		return NewMat(round(x.Dense()), x.Rows, x.Cols)
	})
	if w.PosEmbed != nil {
		w.PosEmbed = round(w.PosEmbed)
	}
	return &Model{Name: m.Name, Config: m.Config, Weights: w}
}

// compareModels runs prompt through both models (every position), then 20
// cached greedy steps of a, feeding b the same tokens; it returns the
// largest relative logit difference and whether every greedy token agreed.
func compareModels(t *testing.T, a, b *Model, prompt []int, steps int) (worst float64, same bool) {
	t.Helper()
	run := func(m *Model) (*State, *KVCache, []float32) {
		st := NewState(m.Config)
		kv, err := NewKVCache(m.Config, len(prompt)+steps)
		if err != nil {
			t.Fatal(err)
		}
		l, err := m.ForwardAll(st, kv, prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st, kv, append([]float32(nil), l...)
	}
	sa, ka, la := run(a)
	sb, kb, lb := run(b)
	V := a.Config.VocabSize
	for p := range prompt {
		worst = max(worst, maxRelDiff(lb[p*V:(p+1)*V], la[p*V:(p+1)*V]))
	}
	la, lb = la[(len(prompt)-1)*V:], lb[(len(prompt)-1)*V:]
	same = true
	for range steps {
		tok := argmax(la)
		same = same && argmax(lb) == tok
		x, err := a.Forward(sa, ka, []int{tok}, nil)
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.Forward(sb, kb, []int{tok}, nil)
		if err != nil {
			t.Fatal(err)
		}
		la, lb = append(la[:0], x...), append(lb[:0], y...)
		worst = max(worst, maxRelDiff(lb, la))
	}
	return worst, same
}

var ggufPrompt = []int{1, 17, 250, 3, 99, 42, 7, 8, 120, 5, 6, 77, 200, 31, 2, 9}

// TestGGUFWrittenHere: small Llama (GQA, untied head) and GPT-2 models
// written as GGUF files of each type load and compute: F32 what the
// source model computes (≤ 1e-5), F16/BF16 what it computes on the same
// rounded weights (≤ 5e-4), every type what the float64 reference
// computes on the file's dequantized weights (≤ 1e-3), greedy tokens
// equal; batched decode bit for bit a lone step's.
func TestGGUFWrittenHere(t *testing.T) {
	for name, c := range quantShapes {
		src, err := RandomModel(name, c, 11)
		if err != nil {
			t.Fatal(err)
		}
		src = perturbed(src, 11)
		for _, typ := range []quant.Type{quant.F32, quant.F16, quant.BF16, quant.Q8_0, quant.Q4_0} {
			t.Run(name+"/"+typ.String(), func(t *testing.T) {
				m, err := LoadGGUFBytes(ggufFromModel(t, src, typ), "test.gguf")
				if err != nil {
					t.Fatal(err)
				}
				if m.Name != "test-"+string(c.Arch) || m.Config.VocabSize != c.VocabSize || m.Config.TiedHead != c.TiedHead {
					t.Fatalf("name %q, config %+v", m.Name, m.Config)
				}
				if typ != quant.F32 {
					if d, _ := dtypeOfQuant(typ); m.Precision() != d.String() {
						t.Errorf("precision %s, want %s", m.Precision(), d)
					}
				}
				var tol float64
				var want *Model
				switch typ {
				case quant.F32:
					want, tol = src, 1e-5
				case quant.F16, quant.BF16:
					want, tol = rounded(t, src, typ), 5e-4
				}
				if want != nil {
					worst, same := compareModels(t, want, m, ggufPrompt, 20)
					t.Logf("vs the source model: %.2g", worst)
					if worst > tol || !same {
						t.Errorf("logits differ from the source model's by %.3g of their scale (tol %g); greedy tokens equal: %v", worst, tol, same)
					}
				}
				e := checkAgainstRef64(t, m, ggufPrompt, 20, 1e-3)
				t.Logf("vs the float64 reference on the file's weights: %.2g", e)
				if typ.BlockSize() > 1 {
					checkBatchBitIdentical(t, m)
				}
			})
		}
	}
}

// TestGGUFTokenizers: the tokenizers the metadata describes encode and
// decode as expected; special ids and the chat template are on the model.
func TestGGUFTokenizers(t *testing.T) {
	for name, c := range quantShapes {
		src, err := RandomModel(name, c, 3)
		if err != nil {
			t.Fatal(err)
		}
		m, err := LoadGGUFBytes(ggufFromModel(t, src, quant.F32), "t.gguf")
		if err != nil {
			t.Fatal(err)
		}
		tk := m.Tokenizer
		toks, err := tk.Encode("the the", tokenizer.EncodeOptions{AddBOS: true})
		if err != nil {
			t.Fatal(err)
		}
		var pieces []string
		for _, x := range toks {
			pieces = append(pieces, x.Piece)
		}
		want := map[string]string{"llama-gqa": "<s> ▁the ▁the", "gpt2": "<|endoftext|> t he Ġthe"}[name]
		if got := strings.Join(pieces, " "); got != want {
			t.Errorf("%s: %q → %q, want %q", name, "the the", got, want)
		}
		if got := tokenizer.Decode(tk, tokenIDs(toks)); got != "the the" {
			t.Errorf("%s: decode %q", name, got)
		}
		g := m.GGUF
		if c.Arch == ArchLlama && (g.BOS != 1 || g.EOS != 2 || g.UNK != -1 || g.ChatTemplate != "{{ messages }}" || m.Config.BOS != 1 || !tk.IsSpecial(2)) {
			t.Errorf("llama meta %+v, config BOS %d", g, m.Config.BOS)
		}
		if c.Arch == ArchGPT2 && (g.BOS != c.VocabSize-1 || g.TokenizerPre != "gpt-2" || !tk.IsSpecial(c.VocabSize-1)) {
			t.Errorf("gpt2 meta %+v", g)
		}
	}
}

// TestGGUFSentencePieceMatchesLlama2c: llama2.c's tokenizer.bin (stories260K's
// 512 tokens) written as GGUF "llama" metadata (spaces as "▁", byte and
// control token types) encodes every text as the llama2.c tokenizer does.
func TestGGUFSentencePieceMatchesLlama2c(t *testing.T) {
	path := filepath.Join(testenv.Stories260K(), "tok512.bin")
	l2c, err := tokenizer.LoadLlama2cTokenizer(path, 512)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path) // int32 max length; per token float32 score, int32 length, bytes
	if err != nil {
		t.Fatal(err)
	}
	meta := &gguf.Tokenizer{Model: "llama", BOS: 1, EOS: 2, UNK: 0, PAD: -1, SEP: -1, EOT: -1}
	off := 4
	var tokens []string
	for i := range 512 {
		score := math.Float32frombits(binary.LittleEndian.Uint32(raw[off:]))
		n := int(binary.LittleEndian.Uint32(raw[off+4:]))
		p := string(raw[off+8 : off+8+n])
		off += 8 + n
		typ := int32(1)
		switch {
		case i == 0:
			typ = 2
		case i <= 2:
			typ, p = 3, map[int]string{1: "<s>", 2: "</s>"}[i]
		case strings.HasPrefix(p, "<0x"):
			typ = 6
		}
		tokens = append(tokens, strings.ReplaceAll(p, " ", "▁"))
		meta.TokenTypes = append(meta.TokenTypes, typ)
		meta.Scores = append(meta.Scores, score)
	}
	meta.Tokens = gguf.StringArrayOf(tokens)
	tk, err := tokenizer.FromGGUF(meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Once upon a time, there was a little girl named Lily.", "  two  spaces\nand a newline", "héllo wörld 日本", "x"} {
		a, err := l2c.Encode(text, tokenizer.EncodeOptions{AddBOS: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := tk.Encode(text, tokenizer.EncodeOptions{AddBOS: true})
		if err != nil {
			t.Fatal(err)
		}
		if !equalInts(tokenIDs(a), tokenIDs(b)) {
			t.Errorf("%q: GGUF %v, llama2.c %v", text, tokenIDs(b), tokenIDs(a))
		}
		if got := tokenizer.Decode(tk, tokenIDs(b)); got != text {
			t.Errorf("decode %q, want %q", got, text)
		}
	}
}

// TestGGUFRefuses: files the engine cannot run exactly are refused with
// an error naming what is wrong.
func TestGGUFRefuses(t *testing.T) {
	src, err := RandomModel("l", quantShapes["llama-gqa"], 5)
	if err != nil {
		t.Fatal(err)
	}
	good := ggufFromModel(t, src, quant.F32)
	if _, err := LoadGGUFBytes(good, "good"); err != nil {
		t.Fatal(err)
	}
	// edit rewrites a file through gguf.Read: keys and tensors can be
	// changed, dropped or added before it is written again
	edit := func(fn func(b *ggufBuilder, f *gguf.File)) []byte {
		f, err := gguf.Read(good)
		if err != nil {
			t.Fatal(err)
		}
		b := &ggufBuilder{}
		fn(b, f)
		return b.bytes()
	}
	copyKV := func(b *ggufBuilder, f *gguf.File, skip func(string) bool) {
		for _, kv := range f.KV {
			if skip != nil && skip(kv.Key) {
				continue
			}
			switch kv.Value.Type {
			case gguf.String:
				s, _ := kv.Value.Str()
				b.str(kv.Key, s)
			case gguf.Uint32:
				n, _ := kv.Value.Uint()
				b.u32(kv.Key, uint32(n))
			case gguf.Float32:
				x, _ := kv.Value.Float()
				b.f32(kv.Key, float32(x))
			case gguf.Array:
				if s, ok := kv.Value.Strings(); ok {
					b.strs(kv.Key, s)
				} else if x, ok := kv.Value.Float32s(); ok {
					b.f32s(kv.Key, x)
				} else if x, ok := kv.Value.Int32s(); ok {
					b.i32s(kv.Key, x)
				}
			}
		}
	}
	copyTensors := func(b *ggufBuilder, f *gguf.File, fn func(*ggufTensor) bool) {
		for _, ti := range f.Tensors {
			x := ggufTensor{ti.Name, append([]uint64(nil), ti.Dims...), ti.Type, ti.Data}
			if fn == nil || fn(&x) {
				b.tensors = append(b.tensors, x)
			}
		}
	}
	withKey := func(set func(b *ggufBuilder), skip ...string) []byte {
		return edit(func(b *ggufBuilder, f *gguf.File) {
			copyKV(b, f, func(k string) bool {
				for _, s := range skip {
					if k == s {
						return true
					}
				}
				return false
			})
			set(b)
			copyTensors(b, f, nil)
		})
	}
	withTensors := func(fn func(*ggufTensor) bool, extra ...ggufTensor) []byte {
		return edit(func(b *ggufBuilder, f *gguf.File) {
			copyKV(b, f, nil)
			copyTensors(b, f, fn)
			b.tensors = append(b.tensors, extra...)
		})
	}
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"architecture", withKey(func(b *ggufBuilder) { b.str("general.architecture", "mamba") }, "general.architecture"), `architecture "mamba" is not supported`},
		{"no shape", withKey(func(*ggufBuilder) {}, "llama.block_count"), "llama.block_count is missing"},
		{"rope scaling", withKey(func(b *ggufBuilder) { b.str("llama.rope.scaling.type", "yarn") }), `llama.rope.scaling.type "yarn" is not supported`},
		{"experts", withKey(func(b *ggufBuilder) { b.u32("llama.expert_count", 8) }), "llama.expert_count (8) is not supported"},
		{"partial rope", withKey(func(b *ggufBuilder) { b.u32("llama.rope.dimension_count", 8) }, "llama.rope.dimension_count"), "partial RoPE"},
		{"tokenizer model", withKey(func(b *ggufBuilder) { b.str("tokenizer.ggml.model", "bert") }, "tokenizer.ggml.model"), `model "bert" is not supported`},
		{"missing tensor", withTensors(func(x *ggufTensor) bool { return x.name != "blk.1.ffn_up.weight" }), "missing tensor blk.1.ffn_up.weight"},
		{"bad shape", withTensors(func(x *ggufTensor) bool {
			if x.name == "blk.0.attn_k.weight" {
				x.dims = []uint64{x.dims[1], x.dims[0]}
			}
			return true
		}), "tensor blk.0.attn_k.weight has dims [32 64]"},
		{"vector as matrix", withTensors(func(x *ggufTensor) bool {
			if x.name == "output_norm.weight" {
				x.dims = []uint64{32, 2}
			}
			return true
		}), "tensor output_norm.weight has dims [32 2]"},
		{"extra tensor", withTensors(nil, ggufTensor{"blk.0.ffn_gate_inp.weight", []uint64{32}, quant.F32, make([]byte, 128)}), "tensor blk.0.ffn_gate_inp.weight is not part of the llama architecture"},
		{"some biases", withTensors(nil, ggufTensor{"blk.0.attn_q.bias", []uint64{64}, quant.F32, make([]byte, 256)}), "biases on some of q, k, v but not all"},
		{"unknown key", withKey(func(b *ggufBuilder) { b.f32("llama.attention.scale", 0.5) }), "llama.attention.scale (0.5) is not supported"},
		{"rope_freqs size", withTensors(nil, ggufTensor{"rope_freqs.weight", []uint64{7}, quant.F32, make([]byte, 28)}), "tensor rope_freqs.weight has dims [7]"},
		{"unsupported type", withTensors(func(x *ggufTensor) bool {
			if x.name == "blk.0.ffn_up.weight" {
				x.typ = 3 // Q4_1
				x.data = x.data[:len(x.data)/4]
			}
			return true
		}), "has type Q4_1"},
		{"not gguf", []byte("GGML not a gguf file"), "not a GGUF file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadGGUFBytes(tt.file, "bad.gguf")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("a panic: %v", err)
			}
		})
	}
}

// FuzzLoadGGUF: any bytes either load as a model that runs a step or are
// refused with an error; the loader never panics (recoverLoad would turn a
// panic into an "internal error" message, which fails the target).
func FuzzLoadGGUF(f *testing.F) {
	small := map[string]Config{
		"llama": {Arch: ArchLlama, Dim: 32, HiddenDim: 64, NLayers: 1, NHeads: 2, NKVHeads: 1, HeadDim: 16, VocabSize: 300,
			SeqLen: 8, NormEps: 1e-5, RopeTheta: 10000, Rope: RopeHalf, TiedHead: true, BOS: 1, EOS: 2},
		"gpt2": {Arch: ArchGPT2, Dim: 32, HiddenDim: 64, NLayers: 1, NHeads: 2, NKVHeads: 2, HeadDim: 16, VocabSize: 262,
			SeqLen: 8, NormEps: 1e-5, Rope: RopeNone, TiedHead: true, BOS: 0, EOS: 0},
	}
	for _, c := range small {
		m, err := RandomModel("fuzz", c, 1)
		if err != nil {
			f.Fatal(err)
		}
		for _, typ := range []quant.Type{quant.F32, quant.Q8_0, quant.BF16} {
			b := ggufFromModel(f, m, typ)
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	// every other architecture, as llama.cpp's converter lays it out (gguf_arch_test.go)
	for _, name := range []string{"llama3-rope-f32", "mistral-window-f32", "qwen2-bias-bf16", "qwen3-qknorm-f32",
		"phi3-fused-f32", "gemma2-gguf-f32", "gemma3-gguf-f32"} {
		m, err := LoadModel(filepath.Join("testdata/arch", name), "")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(ggufFromArchModel(f, m, quant.F32))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := LoadGGUFBytes(b, "fuzz.gguf")
		if err != nil {
			if strings.Contains(err.Error(), "internal error") {
				t.Fatalf("the loader panicked: %v", err)
			}
			return
		}
		c := m.Config
		if err := c.Validate(); err != nil {
			t.Fatalf("loaded an invalid config: %v", err)
		}
		if int64(c.NLayers)*int64(c.KVDim())*int64(c.SeqLen) > 1<<24 {
			return // too big to run here; its shapes were checked
		}
		kv, err := NewKVCache(c, 2)
		if err != nil {
			return
		}
		if _, err := m.Forward(NewState(c), kv, []int{0, c.VocabSize - 1}, nil); err != nil {
			t.Fatalf("a loaded model does not run: %v", err)
		}
	})
}

// llamaCppFiles makes the GGUF files of llama.cpp's own tools for the
// Llama and GPT-2 shapes below (rows of 256, so every K-quant applies):
// Hugging Face directories → hf_to_gguf.py (F32, F16, BF16) →
// llama-quantize (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K). It returns the source
// models and the files by shape and type.
func llamaCppFiles(t *testing.T) (map[string]*Model, map[string]map[string]string) {
	peer := testenv.SharedDir(t, "peers/llama.cpp")
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		testenv.Unavailable(t, "%s with numpy (apt-get install python3-numpy) to run hf_to_gguf.py: %v", py, err)
	}
	shapes := map[string]Config{
		"llama": {Arch: ArchLlama, Dim: 256, HiddenDim: 512, NLayers: 2, NHeads: 4, NKVHeads: 2, HeadDim: 64,
			VocabSize: 320, SeqLen: 64, NormEps: 1e-5, RopeTheta: 10000, Rope: RopeHalf, TiedHead: false, BOS: 1, EOS: 2},
		"gpt2": {Arch: ArchGPT2, Dim: 256, HiddenDim: 512, NLayers: 2, NHeads: 4, NKVHeads: 4, HeadDim: 64,
			VocabSize: 600, SeqLen: 64, NormEps: 1e-5, Rope: RopeNone, TiedHead: true, BOS: 599, EOS: 599},
	}
	dir := t.TempDir()
	models, files := map[string]*Model{}, map[string]map[string]string{}
	for name, c := range shapes {
		m, err := RandomModel(name, c, 36)
		if err != nil {
			t.Fatal(err)
		}
		m = perturbed(m, 36)
		hf := filepath.Join(dir, name)
		writeHFDir(t, hf, m)
		if models[name], err = LoadHFDir(hf); err != nil {
			t.Fatal(err)
		}
		files[name] = map[string]string{}
		for _, ft := range []string{"f32", "f16", "bf16"} {
			out := filepath.Join(dir, name+"-"+ft+".gguf")
			if b, err := exec.Command(py, filepath.Join(peer, "hf_to_gguf.py"), hf, out, ft).CombinedOutput(); err != nil {
				t.Fatalf("hf_to_gguf.py %s %s: %v\n%s", name, ft, err, b)
			}
			files[name][ft] = out
		}
		for _, q := range []string{"Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"} {
			out := filepath.Join(dir, name+"-"+strings.ToLower(q)+".gguf")
			if b, err := exec.Command(filepath.Join(peer, "bin", "llama-quantize"), files[name]["f32"], out, q, "1").CombinedOutput(); err != nil {
				t.Fatalf("llama-quantize %s %s: %v\n%s", name, q, err, b)
			}
			files[name][strings.ToLower(q)] = out
		}
	}
	return models, files
}

// writeHFDir writes m as a Hugging Face directory (config.json and F32
// model.safetensors; GPT-2's Conv1D matrices [in][out], c_attn fused), as
// `inferscope bench --write-hf` does.
func writeHFDir(t *testing.T, dir string, m *Model) {
	t.Helper()
	c, w := m.Config, &m.Weights
	tensors := map[string][]float32{}
	shapes := map[string][]int{}
	put := func(n string, v []float32, shape ...int) { tensors[n], shapes[n] = v, shape }
	tr := func(x *Mat) []float32 { return inOut(x).F32 }
	var cfg map[string]any
	d := c.Dim
	if c.Arch == ArchGPT2 {
		cfg = map[string]any{"model_type": "gpt2", "n_embd": d, "n_layer": c.NLayers, "n_head": c.NHeads, "n_positions": c.SeqLen,
			"vocab_size": c.VocabSize, "layer_norm_epsilon": c.NormEps, "n_inner": c.HiddenDim, "bos_token_id": c.BOS, "eos_token_id": c.EOS}
		put("wte.weight", w.TokenEmbed.Dense(), c.VocabSize, d)
		put("wpe.weight", w.PosEmbed, c.SeqLen, d)
		for l := range w.Layers {
			lw, p := &w.Layers[l], fmt.Sprintf("h.%d.", l)
			qkv := Mat{Rows: 3 * d, Cols: d, Ld: d, F32: append(append(append([]float32(nil), lw.Wq.Dense()...), lw.Wk.Dense()...), lw.Wv.Dense()...)}
			put(p+"ln_1.weight", lw.AttnNorm, d)
			put(p+"ln_1.bias", lw.AttnNormBias, d)
			put(p+"attn.c_attn.weight", tr(&qkv), d, 3*d)
			put(p+"attn.c_attn.bias", append(append(append([]float32(nil), lw.Bq...), lw.Bk...), lw.Bv...), 3*d)
			put(p+"attn.c_proj.weight", tr(&lw.Wo), d, d)
			put(p+"attn.c_proj.bias", lw.Bo, d)
			put(p+"ln_2.weight", lw.MLPNorm, d)
			put(p+"ln_2.bias", lw.MLPNormBias, d)
			put(p+"mlp.c_fc.weight", tr(&lw.WUp), d, c.HiddenDim)
			put(p+"mlp.c_fc.bias", lw.BUp, c.HiddenDim)
			put(p+"mlp.c_proj.weight", tr(&lw.WDown), c.HiddenDim, d)
			put(p+"mlp.c_proj.bias", lw.BDown, d)
		}
		put("ln_f.weight", w.FinalNorm, d)
		put("ln_f.bias", w.FinalNormBias, d)
	} else {
		cfg = map[string]any{"model_type": "llama", "hidden_size": d, "intermediate_size": c.HiddenDim, "num_hidden_layers": c.NLayers,
			"num_attention_heads": c.NHeads, "num_key_value_heads": c.NKVHeads, "max_position_embeddings": c.SeqLen,
			"vocab_size": c.VocabSize, "rms_norm_eps": c.NormEps, "rope_theta": c.RopeTheta, "tie_word_embeddings": c.TiedHead,
			"bos_token_id": c.BOS, "eos_token_id": c.EOS}
		put("model.embed_tokens.weight", w.TokenEmbed.Dense(), c.VocabSize, d)
		for l := range w.Layers {
			lw, p := &w.Layers[l], fmt.Sprintf("model.layers.%d.", l)
			put(p+"input_layernorm.weight", lw.AttnNorm, d)
			put(p+"post_attention_layernorm.weight", lw.MLPNorm, d)
			for n, x := range map[string]*Mat{"self_attn.q_proj": &lw.Wq, "self_attn.k_proj": &lw.Wk, "self_attn.v_proj": &lw.Wv,
				"self_attn.o_proj": &lw.Wo, "mlp.gate_proj": &lw.WGate, "mlp.up_proj": &lw.WUp, "mlp.down_proj": &lw.WDown} {
				put(p+n+".weight", x.Dense(), x.Rows, x.Cols)
			}
		}
		put("model.norm.weight", w.FinalNorm, d)
		if !c.TiedHead {
			put("lm_head.weight", w.Head.Dense(), c.VocabSize, d)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cb, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cb, 0o644); err != nil {
		t.Fatal(err)
	}
	hdr := map[string]any{}
	var names []string
	var off int
	for n := range tensors {
		names = append(names, n)
	}
	sortStrings(names)
	for _, n := range names {
		hdr[n] = map[string]any{"dtype": "F32", "shape": shapes[n], "data_offsets": []int{off, off + 4*len(tensors[n])}}
		off += 4 * len(tensors[n])
	}
	hj, _ := json.Marshal(hdr)
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, uint64(len(hj)))
	buf.Write(hj)
	for _, n := range names {
		binary.Write(&buf, binary.LittleEndian, tensors[n])
	}
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestGGUFFromLlamaCpp: files made by llama.cpp's converter and quantizer.
// F32 files compute what the Hugging Face directory they came from
// computes (≤ 1e-5 of the logit scale), BF16 files what it computes in
// BF16 (WithWeights), F16 files what it computes on F16-rounded weights
// (≤ 5e-4), greedy tokens equal; every file, quantized ones included,
// what the float64 reference computes on its dequantized weights
// (≤ 1e-3), and quantized files batch bit for bit. The weights are used
// in the file's memory: the model's matrices take the file's tensor bytes.
func TestGGUFFromLlamaCpp(t *testing.T) {
	models, files := llamaCppFiles(t)
	for _, name := range []string{"llama", "gpt2"} {
		hf := models[name]
		for _, ft := range []string{"f32", "f16", "bf16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k"} {
			t.Run(name+"/"+ft, func(t *testing.T) {
				m, err := LoadModel(files[name][ft], "")
				if err != nil {
					t.Fatal(err)
				}
				st, _ := os.Stat(files[name][ft])
				// GPT-2's position table is widened to float32 at load
				widened := 2 * int64(len(m.Weights.PosEmbed))
				if ft == "f32" || ft[0] == 'q' && m.GGUF.TensorTypes["F32"] > 0 {
					widened = 0
				}
				if b := m.Weights.Bytes(); b > st.Size()+widened || b < st.Size()*9/10 {
					t.Errorf("weights take %d bytes, the file has %d", b, st.Size())
				}
				t.Logf("tensor types %v", m.GGUF.TensorTypes)
				var want *Model
				tol := 5e-4
				switch ft {
				case "f32":
					want, tol = hf, 1e-5
				case "bf16": // the HF model in BF16, its position table too (hf_to_gguf.py writes 2-D tensors in BF16)
					want = hf.WithWeights(BF16)
					if want.Weights.PosEmbed != nil {
						w := want.Weights
						w.PosEmbed = rounded(t, &Model{Weights: Weights{PosEmbed: hf.Weights.PosEmbed}}, quant.BF16).Weights.PosEmbed
						want = &Model{Name: want.Name, Config: want.Config, Weights: w}
					}
				case "f16":
					want = rounded(t, hf, quant.F16)
				}
				if want != nil {
					worst, same := compareModels(t, want, m, ggufPrompt, 20)
					t.Logf("vs the Hugging Face directory: %.2g", worst)
					if worst > tol || !same {
						t.Errorf("logits differ from the Hugging Face model's by %.3g of their scale (tol %g); greedy tokens equal: %v", worst, tol, same)
					}
				}
				e := checkAgainstRef64(t, m, ggufPrompt, 20, 1e-3)
				t.Logf("vs the float64 reference on the file's weights: %.2g", e)
				if ft[0] == 'q' {
					checkBatchBitIdentical(t, m)
				}
			})
		}
	}
}

// TestGGUFTinyGPT2: the real GPT-2 tokenizer (50257 tokens, merges) and
// the tiny-gpt2 checkpoint through hf_to_gguf.py: the GGUF model encodes
// texts as the Hugging Face directory's tokenizer does, and computes and
// generates the same (every logit within 1e-5 of the scale, same text).
func TestGGUFTinyGPT2(t *testing.T) {
	peer := testenv.SharedDir(t, "peers/llama.cpp")
	dir := testenv.SharedDir(t, "models/tiny-gpt2")
	if err := exec.Command("/usr/bin/python3", "-c", "import numpy").Run(); err != nil {
		testenv.Unavailable(t, "/usr/bin/python3 with numpy: %v", err)
	}
	out := filepath.Join(t.TempDir(), "tiny-gpt2.gguf")
	if b, err := exec.Command("/usr/bin/python3", filepath.Join(peer, "hf_to_gguf.py"), dir, out, "f32").CombinedOutput(); err != nil {
		t.Fatalf("hf_to_gguf.py: %v\n%s", err, b)
	}
	hf, err := LoadHFDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel(out, "")
	if err != nil {
		t.Fatal(err)
	}
	var prompt []int
	for _, text := range []string{"Hello world", " The quick brown fox's 123 jumps!\n\nover  the\tlazy dog.", "héllo 日本 <|endoftext|>"} {
		a, err := hf.Tokenizer.Encode(text, tokenizer.EncodeOptions{AllowSpecial: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.Tokenizer.Encode(text, tokenizer.EncodeOptions{AllowSpecial: true})
		if err != nil {
			t.Fatal(err)
		}
		if !equalInts(tokenIDs(a), tokenIDs(b)) {
			t.Errorf("%q: GGUF %v, Hugging Face %v", text, tokenIDs(b), tokenIDs(a))
		}
		prompt = append(prompt, tokenIDs(a)...)
	}
	worst, same := compareModels(t, hf, m, prompt, 20)
	t.Logf("vs the Hugging Face directory: %.2g, greedy tokens equal: %v", worst, same)
	if worst > 1e-5 || !same {
		t.Errorf("logits differ by %.3g of their scale; greedy tokens equal: %v", worst, same)
	}
	if m.GGUF.EOS != 50256 || m.Config.EOS != 50256 {
		t.Errorf("eos %d / %d", m.GGUF.EOS, m.Config.EOS)
	}
}
