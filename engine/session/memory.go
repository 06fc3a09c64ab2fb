package session

// memory.go: what a run costs in memory and the limits on it — the
// scratch buffers (attention weights per position are heads × positions
// floats), the KV cache as it fills, and the size of all_attention events —
// estimated before anything is allocated so a server can refuse a run
// rather than run out of memory.

import (
	"fmt"

	"github.com/inferscope/inferscope/engine"
)

// MaxAllAttentionValues bounds the attention weights one all_attention
// prefill event carries (tokens²/2 × heads × layers); about 7 bytes each
// as JSON, so ≈ 15 MB.
const MaxAllAttentionValues = 2 << 20

// scratchBytes is what engine.NewState allocates for a run of capacity
// positions, plus the all_attention buffer (prompt × heads × context) when
// requested. It mirrors engine.State's buffers.
func scratchBytes(c engine.Config, capacity, workers, prompt int, allAttention bool) int64 {
	n := int64(workers)*int64(capacity) + int64(c.NHeads)*int64(capacity) + int64(c.VocabSize) // att, last, logits
	t := int64(prompt)                                                                         // prefill pass: T rows
	n += t * (3*int64(c.Dim) + 2*int64(c.QDim()) + 2*int64(c.KVDim()) + 2*int64(c.HiddenDim))
	if allAttention {
		n += t * int64(c.NHeads) * int64(c.SeqLen)
	}
	return 4 * n
}

// allAttentionValues is how many weights an all_attention prefill sends.
func allAttentionValues(c engine.Config, prompt int) int64 {
	return int64(prompt) * int64(prompt+1) / 2 * int64(c.NHeads) * int64(c.NLayers)
}

// checkMemory refuses a run whose all_attention event would be too large,
// or whose scratch and prompt KV cache exceed cfg.MaxBytes.
func checkMemory(m *engine.Model, cfg Config, capacity, prompt, workers int) error {
	c := m.Config
	if cfg.AllAttention {
		if v := allAttentionValues(c, prompt); v > MaxAllAttentionValues {
			maxT := prompt
			for maxT > 1 && allAttentionValues(c, maxT) > MaxAllAttentionValues {
				maxT--
			}
			return fmt.Errorf("all_attention for a %d-token prompt is %d attention weights (tokens²/2 × %d heads × %d layers); the limit is %d: shorten the prompt to %d tokens or turn all_attention off",
				prompt, v, c.NHeads, c.NLayers, MaxAllAttentionValues, maxT)
		}
	}
	if cfg.MaxBytes > 0 {
		prec, _ := engine.ParseKVPrec(cfg.KVCache)
		need := scratchBytes(c, capacity, workers, prompt, cfg.AllAttention) + int64(prompt)*c.KVBytesPerToken()*int64(prec.Bytes())/4
		if need > cfg.MaxBytes {
			return fmt.Errorf("this run needs %.1f MiB to start (scratch for %d positions × %d heads and the prompt's KV cache) but the server has %.1f MiB left for runs: lower max_new_tokens, shorten the prompt or try again later",
				float64(need)/(1<<20), capacity, c.NHeads, float64(cfg.MaxBytes)/(1<<20))
		}
	}
	return nil
}

// MemoryBytes is what the run holds now: its scratch buffers and the KV
// cache positions filled so far (the cache's pages are touched only as it
// fills).
func (s *Session) MemoryBytes() int64 {
	return s.st.Bytes() + s.kv.BytesUsed(s.m.Config)
}
