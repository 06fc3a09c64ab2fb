package engine

// mapfile_test.go: a checkpoint changed on disk after it was loaded
// (truncated, as `cp` over it does first) changes nothing for the model:
// mapped in place, the truncate waits until the mapping is a copy (a bare
// mapping made the next read of a weight a SIGBUS that killed the process).

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/testenv"
)

func TestCheckpointTruncatedOnDiskAfterLoad(t *testing.T) {
	dir := testenv.Stories260KCopy(t)
	m, err := LoadModel(filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := m.Tokenizer.Encode("Once upon a time", tokenizer.EncodeOptions{AddBOS: true})
	toks := tokenIDs(enc)
	logits := func() []float32 {
		st := NewState(m.Config)
		kv, err := NewKVCache(m.Config, m.Config.SeqLen)
		if err != nil {
			t.Fatal(err)
		}
		var l []float32
		for _, tok := range toks { // one position at a time, as decode does
			if l, err = m.Forward(st, kv, []int{tok}, nil); err != nil {
				t.Fatal(err)
			}
		}
		return append([]float32(nil), l...)
	}
	before := logits()
	for _, size := range []int64{100 << 10, 0} { // truncated, then emptied
		if err := os.Truncate(filepath.Join(dir, "stories260K.bin"), size); err != nil {
			t.Fatal(err)
		}
		after := logits()
		for i := range before {
			if before[i] != after[i] {
				t.Fatalf("file truncated to %d bytes: logit %d %g, was %g", size, i, after[i], before[i])
			}
		}
	}
	// loading the truncated file is an error naming it, not a crash
	if _, err := LoadModel(filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin")); err == nil {
		t.Error("loading an emptied checkpoint succeeded")
	}
}
