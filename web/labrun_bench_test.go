package web_test

// labrun_bench_test.go: the lab's 250-token "Run to end" on the server,
// thinned as the page asks (detail_ms 250), against the bare decode loop
// of the same tokens, in alternating rounds; no browser.

import (
	"bytes"
	"runtime/metrics"
	"sort"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/cputime"
)

// BenchmarkLabRunVsBare reports the run over the websocket (ws-thin-ms,
// from the run command to the stop event, the messages read whole but
// not parsed: the server's part), the bare loop (bare-ms: prefill and greedy decode of
// the same prompt and length, no session), their ratio per round
// (lab-vs-bare, median; the goal is ≥ 0.85), the process CPU
// time of each and the share of the run's CPU the garbage collector took
// (gc-cpu-%).
func BenchmarkLabRunVsBare(b *testing.B) {
	ts, m := labServer(b)
	var ws, bare, ratio, cpuRatio []float64
	var gcSum, wsCPUSum, allocSum float64
	wsRunLean(b, ts.URL) // warm: the server's first run sizes its pools
	for i := 0; i < b.N; i++ {
		var wsCPU, bareCPU float64
		for k := range 2 {
			if (i+k)%2 == 0 {
				c0 := cputime.Process().Seconds()
				d := bareDecode(b, m, 250)
				bareCPU = cputime.Process().Seconds() - c0
				bare = append(bare, float64(d.Microseconds())/1000)
			} else {
				c0, g0, a0 := cputime.Process().Seconds(), gcSeconds(), allocBytes()
				d := wsRunLean(b, ts.URL)
				c1, g1, a1 := cputime.Process().Seconds(), gcSeconds(), allocBytes()
				wsCPU = c1 - c0
				wsCPUSum, gcSum, allocSum = wsCPUSum+wsCPU, gcSum+g1-g0, allocSum+a1-a0
				ws = append(ws, float64(d.Microseconds())/1000)
			}
		}
		ratio = append(ratio, bare[len(bare)-1]/ws[len(ws)-1])
		cpuRatio = append(cpuRatio, bareCPU/wsCPU)
	}
	b.ReportMetric(median(ws), "ws-thin-ms")
	b.ReportMetric(median(bare), "bare-ms")
	b.ReportMetric(median(ratio), "lab-vs-bare")
	b.ReportMetric(median(cpuRatio), "lab-vs-bare-cpu")
	// the collector's CPU over the runs (it runs when the heap has grown
	// enough, not in every run) and the bytes a run allocates
	b.ReportMetric(100*gcSum/wsCPUSum, "gc-cpu-%")
	b.ReportMetric(allocSum/float64(b.N)/1024, "alloc-KiB/run")
}

// bareDecode is the run's arithmetic alone: the prompt's prefill and
// greedy decode steps to n tokens.
func bareDecode(b *testing.B, m *engine.Model, n int) time.Duration {
	start := time.Now()
	toks, err := m.Tokenizer.Encode(benchPrompt, tokenizer.EncodeOptions{AddBOS: m.Tokenizer.BOS() >= 0})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = t.ID
	}
	st := engine.NewState(m.Config)
	kv, err := engine.NewKVCache(m.Config, min(m.Config.SeqLen, len(ids)+n))
	if err != nil {
		b.Fatal(err)
	}
	logits, err := m.Forward(st, kv, ids, nil)
	if err != nil {
		b.Fatal(err)
	}
	for g := 1; g < n && kv.Len < kv.Cap; g++ {
		next := 0
		for j, v := range logits {
			if v > logits[next] {
				next = j
			}
		}
		if logits, err = m.Forward(st, kv, []int{next}, nil); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

var gcSample = []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/gc/heap/allocs:bytes"}}

// gcSeconds is the runtime's estimate of the CPU time its collector took.
func gcSeconds() float64 { metrics.Read(gcSample); return gcSample[0].Value.Float64() }

// allocBytes is the bytes the heap has allocated so far.
func allocBytes() float64 { metrics.Read(gcSample); return float64(gcSample[1].Value.Uint64()) }

// BenchmarkLabRunOnly is the thinned run alone (for a CPU profile of the
// server's part).
func BenchmarkLabRunOnly(b *testing.B) {
	ts, _ := labServer(b)
	for i := 0; i < b.N; i++ {
		wsRunLean(b, ts.URL)
	}
}

// wsRunLean is wsRun with the lab's settings and detail_ms 250, reading
// every message into one buffer without parsing it: the client costs
// next to nothing beside the server it measures.
func wsRunLean(b *testing.B, url string) time.Duration {
	c, _, err := websocket.DefaultDialer.Dial("ws"+url[len("http"):]+"/ws", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	start := `{"type":"start","id":1,"payload":{"prompt":"` + benchPrompt + `","max_new_tokens":250,"sampling":{"temperature":0,"top_p":1},"all_attention":true,"lens":true}}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(start)); err != nil {
		b.Fatal(err)
	}
	var t0 time.Time
	var buf bytes.Buffer
	for {
		_, r, err := c.NextReader()
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		switch {
		case bytes.HasPrefix(data, []byte(`{"type":"error"`)):
			b.Fatalf("ws run: %s", data)
		case t0.IsZero() && bytes.HasPrefix(data, []byte(`{"type":"started"`)):
			t0 = time.Now()
			if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"run","id":2,"payload":{"detail_ms":250}}`)); err != nil {
				b.Fatal(err)
			}
		case bytes.HasPrefix(data, []byte(`{"type":"event"`)) && bytes.Contains(data, []byte(`"stage":"stop"`)):
			return time.Since(t0)
		}
	}
}
