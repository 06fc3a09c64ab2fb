package engine

// reference_test.go: per-layer logits against PyTorch goldens, and cached decode equals uncached.

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

type goldenSeq struct {
	IDs    []int         `json:"ids"`
	Hidden [][][]float64 `json:"hidden"`
	Logits [][]float64   `json:"logits"`
}

type goldenFile struct {
	Model     string      `json:"model"`
	Format    string      `json:"format"`
	Sequences []goldenSeq `json:"sequences"`
}

func loadReference(t *testing.T, dir string) (*Model, goldenFile) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	path := dir
	if g.Format == "llama2c" {
		path = filepath.Join(dir, "model.bin")
	}
	m, err := LoadModel(path, "")
	if err != nil {
		t.Fatal(err)
	}
	return m, g
}

func maxAbsDiff(got []float32, want []float64) float64 {
	var d float64
	for i := range want {
		d = max(d, math.Abs(float64(got[i])-want[i]))
	}
	return d
}

// TestReferenceGoldens compares every layer's residual stream and every
// position's logits with the torch reference in testdata/reference
// (regenerate: go tool -modfile=tools.mod task goldens).
func TestReferenceGoldens(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/reference/*")
	if len(dirs) < 6 {
		t.Fatalf("found %d reference models, want 6", len(dirs))
	}
	const tol = 1e-4
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, g := loadReference(t, dir)
			var worstHidden, worstLogit float64
			for si, seq := range g.Sequences {
				st := NewState(m.Config)
				kv, err := NewKVCache(m.Config, m.Config.SeqLen)
				if err != nil {
					t.Fatal(err)
				}
				var hidden [][][]float32 // [layer+1][T][dim]
				hooks := &Hooks{
					Embedded: func(e EmbedInfo) { hidden = append(hidden, copyRows(e.Sum)) },
					LayerDone: func(l LayerInfo) {
						hidden = append(hidden, copyRows(l.Hidden))
					},
				}
				logits, err := m.ForwardAll(st, kv, seq.IDs, hooks)
				if err != nil {
					t.Fatal(err)
				}
				if len(hidden) != len(seq.Hidden) {
					t.Fatalf("seq %d: %d hidden states, want %d", si, len(hidden), len(seq.Hidden))
				}
				for l := range seq.Hidden {
					for p := range seq.Hidden[l] {
						d := maxAbsDiff(hidden[l][p], seq.Hidden[l][p])
						worstHidden = max(worstHidden, d)
						if d > tol {
							t.Errorf("seq %d layer %d pos %d: hidden differs by %.3g", si, l, p, d)
						}
					}
				}
				V := m.Config.VocabSize
				for p := range seq.Logits {
					d := maxAbsDiff(logits[p*V:(p+1)*V], seq.Logits[p])
					worstLogit = max(worstLogit, d)
					if d > tol {
						t.Errorf("seq %d pos %d: logits differ by %.3g", si, p, d)
					}
				}
			}
			t.Logf("%s: largest difference vs torch: hidden %.3g, logits %.3g", g.Model, worstHidden, worstLogit)
		})
	}
}

func copyRows(r [][]float32) [][]float32 {
	out := make([][]float32, len(r))
	for i := range r {
		out[i] = append([]float32(nil), r[i]...)
	}
	return out
}

// TestKVCacheConsistency: decoding with the cache equals recomputing the
// whole prefix at every step, and a batched prefill equals feeding the
// tokens one at a time (1e-5).
func TestKVCacheConsistency(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/reference/*")
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, g := loadReference(t, dir)
			ids := g.Sequences[len(g.Sequences)-1].IDs
			V := m.Config.VocabSize
			// batched prefill: all positions in one pass
			st := NewState(m.Config)
			kv, _ := NewKVCache(m.Config, m.Config.SeqLen)
			batched, err := m.ForwardAll(st, kv, ids, nil)
			if err != nil {
				t.Fatal(err)
			}
			batched = append([]float32(nil), batched...)
			// one token at a time with the cache
			st1 := NewState(m.Config)
			kv1, _ := NewKVCache(m.Config, m.Config.SeqLen)
			var worstStep, worstRecompute float64
			for p, id := range ids {
				step, err := m.Forward(st1, kv1, []int{id}, nil)
				if err != nil {
					t.Fatal(err)
				}
				// recompute the whole prefix with a fresh cache
				st2 := NewState(m.Config)
				kv2, _ := NewKVCache(m.Config, m.Config.SeqLen)
				full, err := m.Forward(st2, kv2, ids[:p+1], nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < V; i++ {
					worstStep = max(worstStep, math.Abs(float64(step[i]-batched[p*V+i])))
					worstRecompute = max(worstRecompute, math.Abs(float64(step[i]-full[i])))
				}
			}
			if worstStep > 1e-5 || worstRecompute > 1e-5 {
				t.Errorf("cached decode vs batched prefill %.3g, vs recompute %.3g; want ≤ 1e-5", worstStep, worstRecompute)
			}
			t.Logf("cached vs batched %.3g, cached vs recompute %.3g", worstStep, worstRecompute)
		})
	}
}
