package engine

// arch_reference_test.go: every decoder family against the float64 numpy
// reference (scripts/reference/arch_reference.py) on the tiny random
// checkpoints in testdata/arch: the logits of every prompt position, then
// 20 greedy steps through the KV cache (lone and batched), tokens equal.
// The goldens come from Python, not from this test: regenerate them with
// `go tool -modfile=tools.mod task archgoldens` (Debian's python3-numpy).

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

type archGolden struct {
	Model        string      `json:"model"`
	ModelType    string      `json:"model_type"`
	DType        string      `json:"dtype"`
	Prompt       []int       `json:"prompt"`
	PromptLogits [][]float64 `json:"prompt_logits"`
	Steps        []struct {
		Token  int       `json:"token"`
		Logits []float64 `json:"logits"`
	} `json:"steps"`
}

func loadArchGolden(t *testing.T, dir string) (*Model, archGolden) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g archGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return m, g
}

func archDirs(t *testing.T) []string {
	dirs, _ := filepath.Glob("testdata/arch/*/golden.json")
	if len(dirs) < 7 {
		t.Fatalf("found %d architecture goldens, want 7 (llama3, qwen2, qwen3, mistral, phi3, gemma3, gemma2)", len(dirs))
	}
	for i := range dirs {
		dirs[i] = filepath.Dir(dirs[i])
	}
	return dirs
}

// TestArchReference: our logits within 1e-4 of the float64 reference for
// F32 weights (5e-4 for BF16) at every prompt position and through 20
// cached greedy steps, the greedy tokens equal; the same through
// ForwardBatch beside another sequence.
func TestArchReference(t *testing.T) {
	for _, dir := range archDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, g := loadArchGolden(t, dir)
			if string(m.Config.Arch) != g.ModelType {
				t.Fatalf("loaded as %s, golden is %s", m.Config.Arch, g.ModelType)
			}
			tol := 1e-4
			if g.DType == "BF16" {
				tol = 5e-4
			}
			V := m.Config.VocabSize
			st := NewState(m.Config)
			kv, err := NewKVCache(m.Config, m.Config.SeqLen)
			if err != nil {
				t.Fatal(err)
			}
			logits, err := m.ForwardAll(st, kv, g.Prompt, nil)
			if err != nil {
				t.Fatal(err)
			}
			var worstPrompt, worstSteps float64
			for p, want := range g.PromptLogits {
				d := maxAbsDiff(logits[p*V:(p+1)*V], want)
				worstPrompt = max(worstPrompt, d)
				if d > tol {
					t.Errorf("prompt position %d: logits differ by %.3g (tolerance %g)", p, d, tol)
				}
			}
			last := append([]float32(nil), logits[(len(g.Prompt)-1)*V:]...)
			// batched: the same steps in ForwardBatch beside a second sequence
			bs := NewBatchState(m.Config, 2)
			seqs := []*BatchSeq{{State: NewState(m.Config)}, {State: NewState(m.Config)}}
			for _, s := range seqs {
				s.KV, _ = NewKVCache(m.Config, m.Config.SeqLen)
				if _, err := m.Forward(s.State, s.KV, g.Prompt, nil); err != nil {
					t.Fatal(err)
				}
			}
			for i, step := range g.Steps {
				tok := argmax(last)
				if tok != step.Token {
					t.Fatalf("step %d: greedy token %d, reference %d", i, tok, step.Token)
				}
				out, err := m.Forward(st, kv, []int{tok}, nil)
				if err != nil {
					t.Fatal(err)
				}
				d := maxAbsDiff(out, step.Logits)
				worstSteps = max(worstSteps, d)
				if d > tol {
					t.Errorf("step %d (position %d): logits differ by %.3g (tolerance %g)", i, kv.Len-1, d, tol)
				}
				last = append(last[:0], out...)
				seqs[0].Token, seqs[1].Token = tok, (tok+1)%V
				if err := m.ForwardBatch(bs, seqs); err != nil || seqs[0].Err != nil {
					t.Fatal(err, seqs[0].Err)
				}
				if !slices.Equal(seqs[0].Logits, out) {
					t.Fatalf("step %d: batched logits differ from the lone step's (by %.3g)", i, maxAbsDiff(seqs[0].Logits, f64s(out)))
				}
			}
			t.Logf("%s (%s, %s): max |Δlogit| vs float64 reference: prompt %.2g, %d cached greedy steps %.2g",
				g.Model, g.ModelType, g.DType, worstPrompt, len(g.Steps), worstSteps)
		})
	}
}

func f64s(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// TestArchRewindWindow: rewinding a sliding-window cache either truncates
// (when the window still holds what the next position looks back on) or
// refuses with ErrWindowEvicted; recomputing gives the same logits.
func TestArchRewindWindow(t *testing.T) {
	m, g := loadArchGolden(t, "testdata/arch/mistral-window-f32")
	c := m.Config
	if c.Window != 5 || c.LocalLayers() != c.NLayers {
		t.Fatalf("window %d, %d local layers of %d", c.Window, c.LocalLayers(), c.NLayers)
	}
	ids := append([]int(nil), g.Prompt...)
	for _, s := range g.Steps {
		ids = append(ids, s.Token)
	}
	st := NewState(c)
	kv, _ := NewKVCache(c, c.SeqLen)
	if _, err := m.Forward(st, kv, ids, nil); err != nil {
		t.Fatal(err)
	}
	if want := int64(c.NLayers*c.Window) * 2 * int64(c.KVDim()) * 4; kv.BytesUsed(c) != want || kv.BytesAllocated() != want {
		t.Errorf("cache holds %d bytes (%d allocated), want the windows' %d", kv.BytesUsed(c), kv.BytesAllocated(), want)
	}
	if _, _, ok := kv.Row(0, len(ids)-c.Window-1); ok {
		t.Errorf("position %d still readable after leaving the window", len(ids)-c.Window-1)
	}
	if k, _, ok := kv.Row(0, len(ids)-c.Window); !ok || len(k) != c.KVDim() {
		t.Errorf("the window's oldest position is not readable")
	}
	if err := kv.Truncate(len(ids) - 3); err == nil {
		t.Fatal("truncating past the window's reach succeeded")
	}
	if err := kv.Truncate(len(ids) - 1); err != nil {
		t.Fatal(err)
	}
	got, err := m.Forward(st, kv, ids[len(ids)-1:], nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(got, g.Steps[len(g.Steps)-1].Logits); d > 1e-4 {
		t.Errorf("after a one-position rewind: logits differ by %.3g", d)
	}
}

// TestRopeInvFreq: the engine's RoPE frequencies for llama3, linear and
// dynamic rope_scaling (Llama 3.1 8B's and 3.2 1B's real configurations
// among them) against the reference formulas (rope_freqs.json).
func TestRopeInvFreq(t *testing.T) {
	b, err := os.ReadFile("testdata/arch/rope_freqs.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name    string          `json:"name"`
		Config  json.RawMessage `json:"config"`
		InvFreq []float64       `json:"inv_freq"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		c, err := parseHFConfig(tc.Config)
		if err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		got := c.ropeInvFreq(false)
		if len(got) != len(tc.InvFreq) {
			t.Fatalf("%s: %d frequencies, want %d", tc.Name, len(got), len(tc.InvFreq))
		}
		scaled := 0
		for j, want := range tc.InvFreq {
			if math.Abs(got[j]-want) > 1e-12*want {
				t.Errorf("%s: freq %d = %.17g, reference %.17g", tc.Name, j, got[j], want)
			}
			if plain := 1 / math.Pow(c.RopeTheta, float64(2*j)/float64(c.HeadDim)); plain != got[j] {
				scaled++
			}
		}
		t.Logf("%s (%s): %d of %d frequencies rescaled", tc.Name, c.RopeScaling, scaled, len(got))
	}
}
