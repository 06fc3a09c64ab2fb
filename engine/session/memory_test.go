package session

import (
	"context"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/engine"
)

// wideModel is stories260K's tokenizer on a random model with many heads
// and a long context.
func wideModel(t *testing.T, heads, seqLen int) *engine.Model {
	t.Helper()
	st := loadStories(t)
	c := st.Config
	c.NHeads, c.NKVHeads, c.HeadDim, c.SeqLen = heads, heads, c.Dim/heads, seqLen
	m, err := engine.RandomModel("wide", c, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.Tokenizer = st.Tokenizer
	return m
}

// TestScratchIsSizedByTheRun: attention scratch is heads × the run's
// positions, not × the model's context (a 262144-position model used to
// cost heads × 262144 floats per session), and it is counted in
// MemoryBytes; the KV cache counts as it fills.
func TestScratchIsSizedByTheRun(t *testing.T) {
	m := wideModel(t, 16, 262144)
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 8})
	start := s.MemoryBytes()
	if start > 1<<20 {
		t.Errorf("a 8-token run on a 262144-context model holds %d bytes at start", start)
	}
	for !s.Done() {
		if _, err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if grew := s.MemoryBytes() - start; grew < 8*m.Config.KVBytesPerToken() {
		t.Errorf("memory grew %d bytes over the run, want at least the KV of 8 more positions (%d)", grew, 8*m.Config.KVBytesPerToken())
	}
}

func TestRunMemoryIsCheckedBeforeAllocating(t *testing.T) {
	m := wideModel(t, 16, 262144)
	_, err := New(m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 262000, MaxBytes: 4 << 20})
	if err == nil || !strings.Contains(err.Error(), "MiB left for runs") {
		t.Fatalf("a run needing ~20 MiB of scratch with 4 MiB left: %v", err)
	}
	if _, err := New(m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 100, MaxBytes: 4 << 20}); err != nil {
		t.Errorf("a small run: %v", err)
	}
}

// TestAllAttentionIsCapped: all_attention's event grows with the square of
// the prompt; past the cap the start is refused naming the longest prompt
// that fits.
func TestAllAttentionIsCapped(t *testing.T) {
	m := wideModel(t, 16, 2048)
	long := strings.Repeat("Once upon a time there was a little girl. ", 40)
	_, err := New(m, Config{Prompt: long, Sampling: greedy(), MaxNewTokens: 5, AllAttention: true})
	if err == nil || !strings.Contains(err.Error(), "turn all_attention off") || !strings.Contains(err.Error(), "shorten the prompt to") {
		t.Fatalf("err %v", err)
	}
	if _, err := New(m, Config{Prompt: long, Sampling: greedy(), MaxNewTokens: 5}); err != nil {
		t.Errorf("the same prompt without all_attention: %v", err)
	}
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 5, AllAttention: true})
	for s.Next() != StageLogits {
		if _, err := s.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
