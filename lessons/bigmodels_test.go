package lessons_test

// bigmodels_test.go: the serving lesson's "bigger models" data
// (static/js/lessonpanels/bigmodels.json, the published configs of
// well-known models): every field is there, and the parameter count the
// lesson's formula gives from the hyper-parameters is exactly the one each
// model's authors publish. The same formula, applied to the embedded
// default model's config, gives its loaded parameter count.

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/models"
)

type bigModel struct {
	Name, Repo, Arch, Dtype                                           string
	Layers, Hidden, Heads, KVHeads, HeadDim, Intermediate, Vocab, Ctx int64
	Tied                                                              bool
	Params                                                            int64
}

func (b *bigModel) UnmarshalJSON(p []byte) error {
	var r struct {
		Name, Repo, Arch, Dtype string
		Layers, Hidden, Heads   int64
		KVHeads                 int64 `json:"kv_heads"`
		HeadDim                 int64 `json:"head_dim"`
		Intermediate, Vocab     int64
		Context                 int64
		Tied                    bool
		Params                  int64 `json:"params_published"`
	}
	if err := json.Unmarshal(p, &r); err != nil {
		return err
	}
	*b = bigModel{r.Name, r.Repo, r.Arch, r.Dtype, r.Layers, r.Hidden, r.Heads, r.KVHeads, r.HeadDim, r.Intermediate, r.Vocab, r.Context, r.Tied, r.Params}
	return nil
}

// paramsOf is serving.js's paramCount: the weights a config implies.
func paramsOf(m bigModel) int64 {
	d, q, kv := m.Hidden, m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	if m.Arch == "gpt2" { // learned positions, biases, two LayerNorms (weight and bias) per block
		block := 4*d + d*3*d + 3*d + d*d + d + d*m.Intermediate + m.Intermediate + m.Intermediate*d + d
		return m.Vocab*d + m.Ctx*d + m.Layers*block + 2*d
	}
	block := d*q + 2*d*kv + q*d + 3*d*m.Intermediate + 2*d
	n := m.Vocab*d + m.Layers*block + d
	if !m.Tied {
		n += m.Vocab * d
	}
	return n
}

func TestBigModelsData(t *testing.T) {
	b, err := os.ReadFile("../static/js/lessonpanels/bigmodels.json")
	if err != nil {
		t.Fatal(err)
	}
	var data struct{ Models []bigModel }
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	if len(data.Models) != 5 {
		t.Fatalf("%d models, want GPT-2 small, SmolLM2-135M, Llama 3.2 1B, Llama 3.1 8B and 70B", len(data.Models))
	}
	for _, m := range data.Models {
		if m.Name == "" || m.Repo == "" || m.Dtype == "" || m.Layers <= 0 || m.Hidden <= 0 || m.Heads <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 ||
			m.Intermediate <= 0 || m.Vocab <= 0 || m.Ctx <= 0 || m.Heads%m.KVHeads != 0 {
			t.Errorf("%s: incomplete config %+v", m.Name, m)
		}
		if got := paramsOf(m); got != m.Params {
			t.Errorf("%s: the formula gives %d parameters, the authors publish %d", m.Name, got, m.Params)
		}
	}
	dm, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	c := dm.Config
	live := bigModel{Arch: map[bool]string{true: "gpt2", false: "llama"}[c.Arch == engine.ArchGPT2], Layers: int64(c.NLayers), Hidden: int64(c.Dim), Heads: int64(c.NHeads),
		KVHeads: int64(c.NKVHeads), HeadDim: int64(c.HeadDim), Intermediate: int64(c.HiddenDim), Vocab: int64(c.VocabSize), Ctx: int64(c.SeqLen), Tied: c.TiedHead}
	if got, want := paramsOf(live), dm.Weights.Bytes()/4; got != want {
		t.Errorf("default model: the formula gives %d parameters, its weights hold %d", got, want)
	}
}
