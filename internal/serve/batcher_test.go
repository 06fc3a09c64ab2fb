package serve

// batcher_test.go: sessions whose decode steps are batched produce the runs
// they produce alone (same tokens, same logits bit for bit), their events
// carry queue time and batch size, and the limits hold.

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/testenv"
)

func stories(t testing.TB) *engine.Model {
	t.Helper()
	dir := testenv.Stories260K()
	m, err := engine.LoadModel(filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type runOut struct {
	tokens  []int
	logits  [][]float32
	batches []int
	queue   []float64
	seqs    []int
}

func runSession(t *testing.T, m *engine.Model, i int, sc session.Scheduler) runOut {
	t.Helper()
	cfg := session.Config{Prompt: fmt.Sprintf("Once upon a time, %d little cats", i), MaxNewTokens: 24,
		Sampling: session.SamplingParams{Temperature: float64(i%3) * 0.5, TopP: 0.9, Seed: uint64(i)}}
	s, err := session.New(m, cfg)
	if err != nil {
		t.Error(err)
		return runOut{}
	}
	if sc != nil {
		s.SetScheduler(sc)
	}
	var out runOut
	for !s.Done() {
		ev, err := s.Step(context.Background())
		if err != nil {
			t.Error(err)
			return out
		}
		out.seqs = append(out.seqs, ev.Seq)
		if ev.Logits != nil {
			out.logits = append(out.logits, s.CurrentLogits())
		}
		if ev.Append != nil {
			out.tokens = append(out.tokens, ev.Append.ID)
			if ev.Append.Forwarded {
				out.batches = append(out.batches, ev.Append.BatchSize)
				out.queue = append(out.queue, ev.Append.QueueMs)
			}
		}
	}
	return out
}

func TestBatchedSessionsEqualAlone(t *testing.T) {
	m := stories(t)
	const n = 12
	alone := make([]runOut, n)
	for i := range alone {
		alone[i] = runSession(t, m, i, nil)
	}
	b := New(m, Options{MaxBatch: 8, MaxWait: 5 * time.Millisecond})
	defer b.Close()
	batched := make([]runOut, n)
	var wg sync.WaitGroup
	for i := range batched {
		wg.Add(1)
		go func() { defer wg.Done(); batched[i] = runSession(t, m, i, b) }()
	}
	wg.Wait()
	maxSize := 0
	for i := range batched {
		a, g := alone[i], batched[i]
		if fmt.Sprint(a.tokens) != fmt.Sprint(g.tokens) {
			t.Errorf("session %d: batched tokens %v, alone %v", i, g.tokens, a.tokens)
		}
		if len(a.logits) != len(g.logits) {
			t.Fatalf("session %d: %d logits events batched, %d alone", i, len(g.logits), len(a.logits))
		}
		for k := range a.logits {
			for j := range a.logits[k] {
				if math.Float32bits(a.logits[k][j]) != math.Float32bits(g.logits[k][j]) {
					t.Fatalf("session %d step %d: logit %d %v batched, %v alone", i, k, j, g.logits[k][j], a.logits[k][j])
				}
			}
		}
		for k, s := range g.seqs {
			if s != k+1 {
				t.Fatalf("session %d: event seq %v out of order", i, g.seqs)
			}
		}
		for k, sz := range g.batches {
			if sz < 1 || sz > 8 || g.queue[k] < 0 {
				t.Errorf("session %d step %d: batch size %d, queue %v ms", i, k, sz, g.queue[k])
			}
			maxSize = max(maxSize, sz)
		}
		for _, sz := range a.batches {
			if sz != 1 {
				t.Errorf("session %d alone: batch size %d", i, sz)
			}
		}
	}
	if maxSize < 2 {
		t.Errorf("12 concurrent sessions never shared a pass (largest batch %d)", maxSize)
	}
	st := b.Stats()
	if st.Steps == 0 || st.Passes == 0 || st.Passes > st.Steps || len(st.Ticks) == 0 || st.Queued != 0 {
		t.Errorf("stats %+v", st)
	}
	for _, tk := range st.Ticks {
		if tk.Size < 1 || tk.Size > 8 {
			t.Errorf("tick of size %d beyond max batch 8", tk.Size)
		}
	}
}

// TestPrefillSlot: one prefill at a time; the second waits and its wait is
// reported; a cancelled wait gives the context's error.
func TestPrefillSlot(t *testing.T) {
	b := New(stories(t), Options{})
	defer b.Close()
	rel, _, err := b.Prefill(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := b.Prefill(ctx); err == nil {
		t.Fatal("second prefill got the slot while the first held it")
	}
	got := make(chan time.Duration)
	go func() {
		r, w, err := b.Prefill(context.Background())
		if err != nil {
			t.Error(err)
		}
		r()
		got <- w
	}()
	// the stats show it waiting as soon as it waits (no sleep: the
	// condition itself, with a deadline only for a broken batcher)
	for deadline := time.Now().Add(10 * time.Second); ; runtime.Gosched() {
		st := b.Stats()
		if st.PrefillWaiting == 1 && st.PrefillRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats while one waits: %+v, want 1 waiting and 1 running", st)
		}
	}
	rel()
	rel() // twice is harmless
	if w := <-got; w <= 0 {
		t.Errorf("waiting prefill reports %v", w)
	}
}

// TestDecodeErrorsAndClose: a step that cannot run gets its own error; a
// closed batcher refuses new steps.
func TestDecodeErrorsAndClose(t *testing.T) {
	m := stories(t)
	b := New(m, Options{MaxBatch: 2})
	kv, _ := engine.NewKVCache(m.Config, 4)
	_, err := b.Decode(context.Background(), &engine.BatchSeq{State: engine.NewState(m.Config), KV: kv, Token: -3})
	if err == nil {
		t.Error("token -3: no error")
	}
	b.Close()
	if _, err := b.Decode(context.Background(), &engine.BatchSeq{State: engine.NewState(m.Config), KV: kv, Token: 1}); err == nil {
		t.Error("closed batcher ran a step")
	}
}
