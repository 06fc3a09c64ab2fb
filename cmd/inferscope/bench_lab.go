//go:build !engineonly

package main

// bench_lab.go: bench's lab run (labResult): the web server in this
// process, a websocket client that reads every message whole without
// parsing it (the server's part of the page's time), and the bare loop.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/tokenizer"
	"github.com/inferscope/inferscope/internal/cputime"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/ws"
)

func init() { benchLab = benchLabRun }

// labPrompt is the prompt of the lab run (benchGenerate's).
const labPrompt = "Once upon a time, there was a little"

func benchLabRun(m *engine.Model, genN, rounds int) (labResult, error) {
	r := labResult{Model: m.Name, Rounds: rounds}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		return r, err
	}
	srv, err := web.New(web.Options{Catalog: cat, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Limits: ws.Limits{KVCache: benchKV.String()}})
	if err != nil {
		return r, err
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
	// a first run: the server's pools, and how many tokens the run makes
	_, n, _, err := labRun(url, genN)
	if err != nil {
		return r, err
	}
	r.GenTokens = n
	var lab, bare, ratio, cpuRatio, over []float64
	var gcSum, cpuSum, allocSum float64
	for i := range rounds {
		var labCPU, bareCPU float64
		for k := range 2 { // which goes first alternates
			if (i+k)%2 == 0 {
				c0 := cputime.Process()
				d, err := bareRun(m, n)
				if err != nil {
					return r, err
				}
				bareCPU = (cputime.Process() - c0).Seconds()
				bare = append(bare, d.Seconds())
			} else {
				c0, g0, a0 := cputime.Process(), readMetric(gcCPUMetric), readMetric(allocsMetric)
				d, _, model, err := labRun(url, genN)
				if err != nil {
					return r, err
				}
				over = append(over, (d.Seconds()-model.Seconds())/float64(n))
				labCPU = (cputime.Process() - c0).Seconds()
				cpuSum, gcSum, allocSum = cpuSum+labCPU, gcSum+readMetric(gcCPUMetric)-g0, allocSum+readMetric(allocsMetric)-a0
				lab = append(lab, d.Seconds())
			}
		}
		ratio = append(ratio, bare[i]/lab[i])
		if labCPU > 0 {
			cpuRatio = append(cpuRatio, bareCPU/labCPU)
		}
	}
	r.LabMs, r.BareMs = round(medianOf(lab)*1000, 2), round(medianOf(bare)*1000, 2)
	r.LabVsBare = round(medianOf(ratio), 3)
	r.OverheadUsPerToken = round(medianOf(over)*1e6, 1)
	if len(cpuRatio) > 0 {
		r.LabVsBareCPU = round(medianOf(cpuRatio), 3)
	}
	if cpuSum > 0 {
		r.GCCPUPercent = round(100*gcSum/cpuSum, 2)
	}
	r.AllocKiBPerRun = round(allocSum/float64(rounds)/1024, 1)
	return r, nil
}

// labRun starts a run as the lab does and runs it to its end with the
// lab's detail_ms; it returns the time from the run command to the stop
// event, the tokens generated and the run's forward passes' time (its
// stop event's model_ms, the prompt's prefill included).
func labRun(url string, genN int) (time.Duration, int, time.Duration, error) {
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		return 0, 0, 0, err
	}
	defer c.Close()
	start, _ := json.Marshal(map[string]any{"type": "start", "id": 1, "payload": map[string]any{
		"prompt": labPrompt, "max_new_tokens": genN, "stop_at_eos": false,
		"sampling": map[string]any{"temperature": 0, "top_p": 1}, "all_attention": true, "lens": true}})
	if err := c.WriteMessage(websocket.TextMessage, start); err != nil {
		return 0, 0, 0, err
	}
	var t0 time.Time
	var buf bytes.Buffer
	for {
		_, rd, err := c.NextReader()
		if err != nil {
			return 0, 0, 0, err
		}
		buf.Reset()
		if _, err := buf.ReadFrom(rd); err != nil {
			return 0, 0, 0, err
		}
		data := buf.Bytes()
		switch {
		case bytes.HasPrefix(data, []byte(`{"type":"error"`)):
			return 0, 0, 0, fmt.Errorf("lab run: %s", data)
		case t0.IsZero() && bytes.HasPrefix(data, []byte(`{"type":"started"`)):
			t0 = time.Now()
			if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"run","id":2,"payload":{"detail_ms":250}}`)); err != nil {
				return 0, 0, 0, err
			}
		case bytes.HasPrefix(data, []byte(`{"type":"event"`)) && bytes.Contains(data, []byte(`"stage":"stop"`)):
			d := time.Since(t0)
			var msg struct {
				Payload struct {
					Stop struct {
						Generated int
						Timings   struct {
							ModelMs float64 `json:"model_ms"`
						}
					}
				}
			}
			if err := json.Unmarshal(data, &msg); err != nil {
				return 0, 0, 0, err
			}
			model := time.Duration(msg.Payload.Stop.Timings.ModelMs * float64(time.Millisecond))
			return d, msg.Payload.Stop.Generated, model, nil
		}
	}
}

// bareRun is the run's arithmetic alone: the prompt's prefill and greedy
// decode to n tokens (the last one not fed back, as the session).
func bareRun(m *engine.Model, n int) (time.Duration, error) {
	start := time.Now()
	toks, err := m.Tokenizer.Encode(labPrompt, tokenizer.EncodeOptions{AddBOS: m.Tokenizer.BOS() >= 0})
	if err != nil {
		return 0, err
	}
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = t.ID
	}
	st := engine.NewState(m.Config)
	kv, err := engine.NewKVCacheOf(m.Config, min(m.Config.SeqLen, len(ids)+n), benchKV)
	if err != nil {
		return 0, err
	}
	logits, err := m.Forward(st, kv, ids, nil)
	if err != nil {
		return 0, err
	}
	for g := 1; g < n && kv.Len < kv.Cap; g++ {
		if logits, err = m.Forward(st, kv, []int{argmaxF(logits)}, nil); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

const (
	gcCPUMetric  = "/cpu/classes/gc/total:cpu-seconds"
	allocsMetric = "/gc/heap/allocs:bytes"
)

func readMetric(name string) float64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	switch s[0].Value.Kind() {
	case metrics.KindFloat64:
		return s[0].Value.Float64()
	case metrics.KindUint64:
		return float64(s[0].Value.Uint64())
	}
	return 0
}
