package session

// window_test.go: a sliding-window model (the tiny Mistral and Gemma 3
// checkpoints of engine/testdata/arch) in a session: the attention
// inspection of a local layer shows the window as it is (its keys only,
// the positions before it evicted), a global layer every position; the KV
// inspection refuses an evicted position; the cache's bytes stop growing
// at the window; a rewind past what the ring holds recomputes the same
// logits.

import (
	"context"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine"
)

func TestSlidingWindowSession(t *testing.T) {
	for _, name := range []string{"mistral-window-f32", "gemma3-local-global-f32"} {
		t.Run(name, func(t *testing.T) {
			m, err := engine.LoadModel("../testdata/arch/"+name, "")
			if err != nil {
				t.Fatal(err)
			}
			c := m.Config
			s, err := New(m, Config{Prompt: "The President said", Sampling: greedy(), MaxNewTokens: 12, StopAtEOS: new(bool)})
			if err != nil {
				t.Fatal(err)
			}
			stepTo(t, s, StageLogits)
			decodeSteps(t, s, 8)
			pos := s.KV().Len - 1
			if pos+1 <= c.Window {
				t.Fatalf("%d positions: the window of %d never slid", pos+1, c.Window)
			}
			for l := range c.NLayers {
				in, err := s.Inspect(InspectRequest{What: InspectAttention, Layer: l, Head: 1})
				if err != nil {
					t.Fatal(err)
				}
				a := in.Attention
				var sum float32
				for i, k := range a.Keys {
					sum += k.Weight
					kr, _, ok := s.KV().Row(l, k.Pos)
					if !ok || k.Key[0] != kr[a.KVHead*c.HeadDim] {
						t.Fatalf("layer %d key %d (position %d) is not the cache's", l, i, k.Pos)
					}
				}
				if c.Sliding(l) {
					if a.Window != c.Window || a.Evicted != pos+1-c.Window || len(a.Keys) != c.Window || a.Keys[0].Pos != a.Evicted {
						t.Errorf("local layer %d: window %d, evicted %d, %d keys from %d; want %d keys from %d", l, a.Window, a.Evicted, len(a.Keys), a.Keys[0].Pos, c.Window, pos+1-c.Window)
					}
					if _, err := s.Inspect(InspectRequest{What: InspectKV, Layer: l, Pos: 0}); err == nil || !strings.Contains(err.Error(), "sliding window") {
						t.Errorf("local layer %d: inspecting evicted position 0 gave %v", l, err)
					}
				} else if a.Window != 0 || len(a.Keys) != pos+1 {
					t.Errorf("global layer %d: %d keys (window %d), want all %d", l, len(a.Keys), a.Window, pos+1)
				}
				if sum < 0.9999 || sum > 1.0001 {
					t.Errorf("layer %d: the window's weights add up to %g", l, sum)
				}
			}
			var rows int64
			for l := range c.NLayers {
				rows += int64(min(s.KV().Len, s.KV().Slots(l)))
			}
			if got, want := s.KV().BytesUsed(c), rows*2*int64(c.KVDim())*4; got != want || got >= int64(s.KV().Len)*c.KVBytesPerToken() {
				t.Errorf("cache uses %d bytes, want %d (bounded by the windows)", got, want)
			}
			// rewind 5: the ring no longer holds what the new last position
			// looks back on, so every position is recomputed
			if _, err := s.Rewind(5); err != nil {
				t.Fatal(err)
			}
			st := engine.NewState(c)
			kv, _ := engine.NewKVCache(c, c.SeqLen)
			want, err := m.Forward(st, kv, s.ids, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range want {
				if d := v - s.logits[i]; d > 1e-5 || d < -1e-5 {
					t.Fatalf("after the rewind, logit %d is %g, a fresh pass %g", i, s.logits[i], v)
				}
			}
			if _, err := s.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
