package engine

// quantized_q4k_test.go: a model quantized to Q4_K at load: Q4_K blocks
// where 256 divides a row, Q8_0 where only 32 does, the float weights kept
// as Original, and the forward pass equal to the float64 reference on the
// dequantized weights.

import (
	"testing"

	"github.com/inferscope/inferscope/engine/quant"
)

func TestQuantizedQ4_KAtLoad(t *testing.T) {
	c := Config{Arch: ArchLlama, Dim: 256, HiddenDim: 352, NLayers: 2, NHeads: 4, NKVHeads: 2, HeadDim: 64,
		VocabSize: 300, SeqLen: 64, NormEps: 1e-5, RopeTheta: 10000, Rope: RopeHalf, TiedHead: false, BOS: 1, EOS: 2}
	base, err := RandomModel("q4k", c, 9)
	if err != nil {
		t.Fatal(err)
	}
	base = perturbed(base, 9)
	m := base.WithWeights(Q4_K)
	if m.Precision() != "q4_k" {
		t.Fatalf("precision %s, want q4_k", m.Precision())
	}
	if m.Original == nil || m.Original.Layers[0].Wq.F32 == nil {
		t.Fatal("the float weights are not kept as Original")
	}
	l := &m.Weights.Layers[0]
	for _, x := range []struct {
		name string
		got  *Mat
		orig *Mat
		want quant.Type
	}{{"wq", &l.Wq, &base.Weights.Layers[0].Wq, quant.Q4_K}, {"up", &l.WUp, &base.Weights.Layers[0].WUp, quant.Q4_K},
		{"down (352 columns: Q8_0)", &l.WDown, &base.Weights.Layers[0].WDown, quant.Q8_0}} {
		if x.got.Q == nil || x.got.Q.Type != x.want {
			t.Fatalf("%s: %+v, want %s", x.name, x.got.Q, x.want)
		}
		want := make([]byte, x.got.Q.Bytes())
		if err := quant.Quantize(x.want, want, x.orig.Dense()); err != nil {
			t.Fatal(err)
		}
		if string(want) != string(x.got.Q.Data) {
			t.Errorf("%s: blocks are not quant.Quantize's", x.name)
		}
	}
	prompt := []int{1, 17, 250, 3, 99, 42, 7, 8, 120, 5, 6, 77, 200, 31, 2, 9}
	e := checkAgainstRef64(t, m, prompt, 20, 1e-4)
	t.Logf("max |logit − float64 reference| / logit scale: %.2g", e)
	checkBatchBitIdentical(t, m)
}
