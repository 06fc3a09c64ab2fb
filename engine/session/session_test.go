package session

// session_test.go: the step-through session on a real model: stage order, real values, determinism, rewind, force, stops.

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/testenv"
)

func greedy() SamplingParams { return SamplingParams{Temperature: 0, TopP: 1} }

func runAll(t *testing.T, s *Session) []*Event {
	t.Helper()
	evs, err := s.Advance(context.Background(), UntilStop, nil)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func newSession(t *testing.T, m *engine.Model, cfg Config) *Session {
	t.Helper()
	s, err := New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSessionGreedyMatchesLlama2c(t *testing.T) {
	m := loadStories(t)
	texts, _ := parseExpected(t)
	for prompt, want := range texts {
		t.Run(prompt, func(t *testing.T) {
			s := newSession(t, m, Config{Prompt: prompt, Sampling: greedy(), MaxNewTokens: 64})
			// run.c -n 64 counts positions including BOS: 64 - prompt tokens generated
			s.cfg.MaxNewTokens = 64 - (s.nPrompt - 1)
			evs := runAll(t, s)
			stop := evs[len(evs)-1].Stop
			if got := prompt + stop.Text; got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
			if stop.Reason != StopMaxTokens || !stop.WeightsUnchanged {
				t.Errorf("stop %+v", stop)
			}
		})
	}
}

func TestSessionStagesInOrder(t *testing.T) {
	m := loadStories(t)
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 3})
	var stages []string
	for !s.Done() {
		ev, err := s.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		stages = append(stages, string(ev.Stage))
	}
	want := "tokenize embed prefill logits sample append logits sample append logits sample append stop"
	if got := strings.Join(stages, " "); got != want {
		t.Errorf("stages\n got %s\nwant %s", got, want)
	}
	if _, err := s.Step(context.Background()); err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("step after stop: %v", err)
	}
}

func TestSessionEventsCarryRealValues(t *testing.T) {
	m := loadStories(t)
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: DefaultSampling(), MaxNewTokens: 2})
	evs := runAll(t, s)
	byStage := map[Stage][]*Event{}
	for _, e := range evs {
		byStage[e.Stage] = append(byStage[e.Stage], e)
	}
	tok := byStage[StageTokenize][0].Tokenize
	if tok.Count != 5 || tok.AddedByApp != 1 || tok.ContextLimit != 512 {
		t.Errorf("tokenize %+v", tok)
	}
	emb := byStage[StageEmbed][0].Embed
	if len(emb.Positions) != 5 || len(emb.Positions[1].TokenVec) != 64 || emb.Positions[1].PosVec != nil {
		t.Errorf("embed: %d positions", len(emb.Positions))
	}
	pre := byStage[StagePrefill][0].Prefill
	if pre.Positions != 5 || len(pre.Layers) != 5 || len(pre.Layers[0].Attn) != 8 || len(pre.Layers[0].Attn[0]) != 5 {
		t.Fatalf("prefill shape")
	}
	var sum float32
	for _, a := range pre.Layers[0].Attn[3] {
		sum += a
	}
	if sum < 0.999 || sum > 1.001 {
		t.Errorf("attention weights sum to %v", sum)
	}
	// the first logits event equals a plain forward pass (table: pos 4 top is 432 at 17.799398)
	lg := byStage[StageLogits][0].Logits
	if lg.Top[0].ID != 432 || lg.Top[0].Logit < 17.7993 || lg.Top[0].Logit > 17.7995 || !lg.FromPrefill {
		t.Errorf("first logits top %+v", lg.Top[0])
	}
	smp := byStage[StageSample][0].Sample
	if smp.Draw < 0 || smp.Draw >= 1 || smp.Chosen.Rank >= lg.Kept || len(smp.CDF) == 0 {
		t.Errorf("sample %+v", smp)
	}
	app := byStage[StageAppend][0].Append
	c := m.Config
	if app.CacheLen != 6 || app.BytesUsed != int64(2*c.NLayers*c.NKVHeads*c.HeadDim*6*4) {
		t.Errorf("append cache %d bytes %d", app.CacheLen, app.BytesUsed)
	}
}

func TestSessionDeterminism(t *testing.T) {
	m := loadStories(t)
	gen := func(seed uint64) []int {
		p := DefaultSampling()
		p.Seed = seed
		s := newSession(t, m, Config{Prompt: "The little girl", Sampling: p, MaxNewTokens: 30})
		runAll(t, s)
		return s.Generated()
	}
	a, b, c := gen(7), gen(7), gen(8)
	if !equalInts(a, b) {
		t.Errorf("same seed, different tokens:\n%v\n%v", a, b)
	}
	if equalInts(a, c) {
		t.Errorf("seeds 7 and 8 gave identical runs")
	}
}

func TestSessionRewindEqualsFreshRun(t *testing.T) {
	m := loadStories(t)
	cfg := Config{Prompt: "Once upon a time", Sampling: DefaultSampling(), MaxNewTokens: 20}
	fresh := newSession(t, m, cfg)
	runAll(t, fresh)

	s := newSession(t, m, cfg)
	runAll(t, s)
	if _, err := s.Rewind(7); err != nil {
		t.Fatal(err)
	}
	if len(s.Generated()) != 13 || s.KV().Len != s.nPrompt+13 {
		t.Fatalf("after rewind: %d generated, cache %d", len(s.Generated()), s.KV().Len)
	}
	evs := runAll(t, s)
	if !equalInts(s.Generated(), fresh.Generated()) {
		t.Errorf("rewind + re-run differs:\n%v\n%v", s.Generated(), fresh.Generated())
	}
	if evs[len(evs)-1].Stop.Text != fresh.stopped.Text {
		t.Errorf("text differs")
	}
	if _, err := s.Rewind(99); err == nil {
		t.Errorf("rewinding past the prompt should fail")
	}
}

func TestSessionForcedToken(t *testing.T) {
	m := loadStories(t)
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 5})
	ctx := context.Background()
	for s.Next() != StageSample {
		if _, err := s.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	forced := 383 // not the greedy choice (432)
	if err := s.Force(forced); err != nil {
		t.Fatal(err)
	}
	ev, _ := s.Step(ctx)
	if !ev.Sample.Forced || ev.Sample.Chosen.ID != forced || ev.Sample.Chosen.Rank != 1 {
		t.Fatalf("sample %+v", ev.Sample)
	}
	s.Step(ctx) // append: forward the forced token
	got := s.CurrentLogits()
	// reference: a fresh pass over prompt + forced token
	st := engine.NewState(m.Config)
	kv, _ := engine.NewKVCache(m.Config, 64)
	want, _ := m.Forward(st, kv, append(s.PromptIDs(), forced), nil)
	for i := range want {
		if d := got[i] - want[i]; d > 1e-5 || d < -1e-5 {
			t.Fatalf("logit %d after forced token: %v vs %v", i, got[i], want[i])
		}
	}
	if err := s.Force(-1); err == nil {
		t.Error("negative id accepted")
	}
}

func TestSessionStopString(t *testing.T) {
	m := loadStories(t)
	// greedy continues "Once upon a time" with ", there was a little girl named Lily."
	// " Lily" is split across tokens by this vocabulary.
	base := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 30})
	runAll(t, base)
	text := base.stopped.Text
	stop := "named Li"
	idx := strings.Index(text, stop)
	if idx < 0 {
		t.Fatalf("%q not in %q", stop, text)
	}
	// check that stop really spans ≥ 2 tokens
	var pieces []string
	for _, id := range base.Generated() {
		pieces = append(pieces, string(m.Tokenizer.TokenBytes(id)))
	}
	spans := true
	for _, p := range pieces {
		if strings.Contains(p, stop) {
			spans = false
		}
	}
	if !spans {
		t.Fatalf("stop string inside one token: %q", pieces)
	}
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: greedy(), MaxNewTokens: 30, StopStrings: []string{stop}})
	evs := runAll(t, s)
	st := evs[len(evs)-1].Stop
	if st.Reason != StopString || !strings.HasSuffix(st.Text, stop) && !strings.Contains(st.Text[max(0, len(st.Text)-12):], stop) {
		t.Errorf("stop %q text %q", st.Reason, st.Text)
	}
	if !strings.HasPrefix(text, st.Text) {
		t.Errorf("stopped text %q is not a prefix of %q", st.Text, text)
	}
}

func TestSessionStopConditions(t *testing.T) {
	m := loadStories(t)
	no := false
	tests := []struct {
		name   string
		cfg    Config
		reason string
	}{
		{"max tokens", Config{Prompt: "Hi", Sampling: greedy(), MaxNewTokens: 4}, StopMaxTokens},
		{"context full", Config{Prompt: "Hi", Sampling: greedy(), MaxNewTokens: 512}, StopContextFull},
		{"eos when forced", Config{Prompt: "Hi", Sampling: greedy(), MaxNewTokens: 10}, StopEOS},
		{"eos ignored", Config{Prompt: "Hi", Sampling: greedy(), MaxNewTokens: 3, StopAtEOS: &no}, StopMaxTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, m, tt.cfg)
			if strings.HasPrefix(tt.name, "eos") {
				for s.Next() != StageSample {
					s.Step(context.Background())
				}
				s.Force(m.Tokenizer.EOS())
			}
			evs := runAll(t, s)
			if got := evs[len(evs)-1].Stop.Reason; got != tt.reason {
				t.Errorf("reason %q, want %q", got, tt.reason)
			}
		})
	}
	// cancellation
	s := newSession(t, m, Config{Prompt: "Hi", Sampling: greedy(), MaxNewTokens: 50})
	ctx, cancel := context.WithCancel(context.Background())
	s.Step(ctx)
	cancel()
	ev, err := s.Step(ctx)
	if err != nil || ev.Stop == nil || ev.Stop.Reason != StopCancelled {
		t.Errorf("cancel: %v %+v", err, ev)
	}
}

func TestSessionBadConfig(t *testing.T) {
	m := loadStories(t)
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Prompt: "x", Sampling: SamplingParams{Temperature: -1, TopP: 1}, MaxNewTokens: 5}, "temperature -1"},
		{Config{Prompt: "x", Sampling: greedy(), MaxNewTokens: 0}, "max_new_tokens 0 out of range: allowed 1 to 512"},
		{Config{Prompt: "x", Sampling: greedy(), MaxNewTokens: 513}, "max_new_tokens 513"},
		{Config{Prompt: strings.Repeat("a", MaxPromptBytes+1), Sampling: greedy(), MaxNewTokens: 5}, "the limit is 16384"},
		{Config{Prompt: strings.Repeat("zq ", 600), Sampling: greedy(), MaxNewTokens: 5}, "leaves no room to generate"},
		{Config{Prompt: "bad \xff", Sampling: greedy(), MaxNewTokens: 5}, "not valid UTF-8"},
		{Config{Prompt: "x", Sampling: greedy(), MaxNewTokens: 5, StopStrings: []string{""}}, "stop string"},
		{Config{Chat: []tokenizer.ChatMessage{{Role: "robot", Content: "x"}}, Sampling: greedy(), MaxNewTokens: 5}, `role "robot"`},
	}
	for _, tt := range tests {
		_, err := New(m, tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err %v, want %q", err, tt.want)
		}
	}
}

func TestManySessionsShareOneModel(t *testing.T) {
	m := loadStories(t)
	sum := m.WeightsChecksum()
	var wg sync.WaitGroup
	results := make([][]int, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := DefaultSampling()
			p.Seed = uint64(i % 2)
			s, err := New(m, Config{Prompt: fmt.Sprintf("Once upon a time %d", i%2), Sampling: p, MaxNewTokens: 20})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := s.Advance(context.Background(), UntilStop, nil); err != nil {
				t.Error(err)
			}
			results[i] = s.Generated()
		}()
	}
	wg.Wait()
	for i := 2; i < len(results); i++ {
		if !equalInts(results[i], results[i%2]) {
			t.Errorf("session %d differs from session %d", i, i%2)
		}
	}
	after := m.Weights.Checksum()
	if fmt.Sprintf("%x", after) != sum {
		t.Error("weights changed")
	}
}

// TestSessionNoCacheSameTokens: recomputing everything each step gives the
// same tokens as using the KV cache.
func TestSessionNoCacheSameTokens(t *testing.T) {
	m := loadStories(t)
	a := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: DefaultSampling(), MaxNewTokens: 15})
	b := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: DefaultSampling(), MaxNewTokens: 15, NoCache: true})
	runAll(t, a)
	runAll(t, b)
	if !equalInts(a.Generated(), b.Generated()) {
		t.Errorf("cache on %v\ncache off %v", a.Generated(), b.Generated())
	}
}

// TestSampleCDFReachesChosen: the cumulative distribution sent with a
// sample always includes the chosen candidate, and its cumulative value
// brackets the draw.
func TestSampleCDFReachesChosen(t *testing.T) {
	m := loadStories(t)
	p := SamplingParams{Temperature: 2, TopP: 1, Seed: 3}
	s := newSession(t, m, Config{Prompt: "Once", Sampling: p, MaxNewTokens: 30})
	for _, ev := range runAll(t, s) {
		if ev.Sample == nil {
			continue
		}
		sm := ev.Sample
		r := sm.Chosen.Rank
		if len(sm.CDF) <= r || sm.CDF[r].ID != sm.Chosen.ID {
			t.Fatalf("CDF of %d points lacks the chosen rank %d", len(sm.CDF), r)
		}
		lo := float32(0)
		if r > 0 {
			lo = sm.CDF[r-1].Cum
		}
		if float32(sm.Draw) < lo-1e-6 || float32(sm.Draw) >= sm.CDF[r].Cum+1e-6 {
			t.Errorf("draw %v outside [%v, %v)", sm.Draw, lo, sm.CDF[r].Cum)
		}
		// the listed CDF and its tail together cover every kept candidate
		last := CDFRank{Rank: len(sm.CDF) - 1, Cum: sm.CDF[len(sm.CDF)-1].Cum}
		if len(sm.CDFTail) > 65 {
			t.Errorf("CDF tail of %d points, want at most 65", len(sm.CDFTail))
		}
		for _, pt := range sm.CDFTail {
			if pt.Rank <= last.Rank || pt.Cum < last.Cum-1e-6 {
				t.Fatalf("CDF tail point %+v after %+v: ranks must grow and the sum must not fall", pt, last)
			}
			last = pt
		}
		if last.Rank != sm.Kept-1 || math.Abs(float64(last.Cum)-1) > 1e-4 {
			t.Errorf("CDF ends at rank %d with %v; want the last kept rank %d with 1", last.Rank, last.Cum, sm.Kept-1)
		}
	}
}

func loadStories(t *testing.T) *engine.Model {
	t.Helper()
	dir := testenv.Stories260K()
	m, err := engine.LoadModel(filepath.Join(dir, "stories260K.bin"), filepath.Join(dir, "tok512.bin"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func parseExpected(t *testing.T) (map[string]string, []testenv.ExpectedTop) {
	return testenv.Stories260KExpected(t)
}

func equalInts(a, b []int) bool { return slices.Equal(a, b) }

// The embed stage shows exactly the vectors the forward pass feeds layer 0.
func TestEmbedStageEqualsForwardInput(t *testing.T) {
	m := loadStories(t)
	s := newSession(t, m, Config{Prompt: "Once upon a time", Sampling: DefaultSampling(), MaxNewTokens: 1})
	evs, err := s.Advance(context.Background(), UntilStop, nil)
	if err != nil {
		t.Fatal(err)
	}
	var emb *EmbedInfoStage
	for _, e := range evs {
		if e.Embed != nil {
			emb = e.Embed
		}
	}
	if emb == nil {
		t.Fatal("no embed stage")
	}
	ids := s.PromptIDs()
	var fwd [][]float32
	hooks := &engine.Hooks{Embedded: func(in engine.EmbedInfo) {
		for _, r := range in.Sum {
			fwd = append(fwd, append([]float32(nil), r...))
		}
	}}
	kv, err := engine.NewKVCache(m.Config, len(ids))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forward(engine.NewState(m.Config), kv, ids, hooks); err != nil {
		t.Fatal(err)
	}
	if len(emb.Positions) != len(fwd) {
		t.Fatalf("embed stage has %d positions, forward %d", len(emb.Positions), len(fwd))
	}
	for p, e := range emb.Positions {
		if !slices.Equal(e.Sum, fwd[p]) || e.ID != ids[p] {
			t.Errorf("position %d: embed stage differs from the forward pass input", p)
		}
	}
}
