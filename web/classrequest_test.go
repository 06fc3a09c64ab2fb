package web_test

// classrequest_test.go: the class is the load test. 30 students follow a
// room; the presenter sends a class request; every student's client (one
// that behaves like the page: its own /ws session, start with the class
// tag, run) completes, the presenter's rows carry exactly what each
// student's own events report, the batch sizes add up to what /api/server
// counted, and the aggregate is the students' tokens over the wall time.

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// classResult is what one student's client saw of its own request.
type classResult struct {
	row     string
	timings map[string]any
	batches []int
	tokens  int
	rows    int // rows in the room_class_result it got
	noBatch bool
	err     error
}

type classRowView struct {
	Row           string    `json:"row"`
	State         string    `json:"state"`
	Error         string    `json:"error"`
	StartMs       int64     `json:"start_ms"`
	EndMs         int64     `json:"end_ms"`
	Tokens        int       `json:"tokens"`
	TokenAt       []float64 `json:"token_at"`
	Batches       []int     `json:"batches"`
	QueueMs       float64   `json:"queue_ms"`
	TokenizeMs    float64   `json:"tokenize_ms"`
	EmbedMs       float64   `json:"embed_ms"`
	PrefillMs     float64   `json:"prefill_ms"`
	FirstDecodeMs float64   `json:"first_decode_ms"`
	TTFTMs        float64   `json:"ttft_ms"`
	TokS          float64   `json:"tok_s"`
	MemoryBytes   int64     `json:"memory_bytes"`
}

type classStateView struct {
	ID       int64 `json:"id"`
	Batch    bool  `json:"batch"`
	Expected int   `json:"expected"`
	Done     bool  `json:"done"`
	Alone    struct {
		Tokens      int     `json:"tokens"`
		TokS        float64 `json:"tok_s"`
		DecodeSteps int     `json:"decode_steps"`
		MemoryBytes int64   `json:"memory_bytes"`
	} `json:"alone"`
	Weights   int64          `json:"weights_bytes"`
	Budget    int64          `json:"budget_bytes"`
	Rows      []classRowView `json:"rows"`
	Aggregate struct {
		Rows     int     `json:"rows"`
		Finished int     `json:"finished"`
		Tokens   int     `json:"tokens"`
		WallMs   float64 `json:"wall_ms"`
		TokS     float64 `json:"tok_s"`
	} `json:"aggregate"`
}

// classStudent follows the room as the page does and, on room_class, sends
// the request as its own session; it returns what it saw.
func classStudent(base, code, cookie, row string, out chan<- classResult) {
	res := classResult{row: row}
	defer func() { out <- res }()
	h := http.Header{"Cookie": {"inferscope_visitor=" + cookie}}
	ws := "ws" + strings.TrimPrefix(base, "http")
	f, _, err := websocket.DefaultDialer.Dial(ws+"/ws/room?code="+code, h)
	if err != nil {
		res.err = err
		return
	}
	defer f.Close()
	read := func(c *websocket.Conn) (string, json.RawMessage, error) {
		c.SetReadDeadline(time.Now().Add(60 * time.Second))
		var m struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		err := c.ReadJSON(&m)
		return m.Type, m.Payload, err
	}
	for {
		typ, p, err := read(f)
		if err != nil {
			res.err = fmt.Errorf("following: %w", err)
			return
		}
		if typ != wire.MsgRoomClass {
			continue
		}
		var req struct {
			ID    int64          `json:"id"`
			Start map[string]any `json:"start"`
			Batch bool           `json:"batch"`
		}
		json.Unmarshal(p, &req)
		start := req.Start
		start["class"] = map[string]any{"code": code, "id": req.ID, "row": res.row}
		start["no_batch"] = !req.Batch
		res.noBatch = !req.Batch
		s, _, err := websocket.DefaultDialer.Dial(ws+"/ws", h)
		if err != nil {
			res.err = err
			return
		}
		s.WriteJSON(map[string]any{"type": "start", "id": 1, "payload": start})
		s.WriteJSON(map[string]any{"type": "run", "id": 2, "payload": map[string]any{"detail_ms": 1000}})
		var events []json.RawMessage
		seen := map[int]bool{}
		for res.timings == nil {
			typ, p, err := read(s)
			if err != nil {
				res.err = fmt.Errorf("own request: %w", err)
				s.Close()
				return
			}
			switch typ {
			case wire.MsgEvent:
				events = append(events, p)
			case wire.MsgEvents, wire.MsgDetail:
				var g struct {
					Events []json.RawMessage `json:"events"`
				}
				json.Unmarshal(p, &g)
				events = append(events, g.Events...)
			case wire.MsgError:
				res.err = fmt.Errorf("own request: %s", p)
				s.Close()
				return
			}
			for _, e := range events {
				var ev struct {
					Seq    int    `json:"seq"`
					Stage  string `json:"stage"`
					Append *struct {
						BatchSize int `json:"batch_size"`
					} `json:"append"`
					Stop *struct {
						Generated int            `json:"generated"`
						Timings   map[string]any `json:"timings"`
					} `json:"stop"`
				}
				json.Unmarshal(e, &ev)
				if seen[ev.Seq] {
					continue // a thinned event's detail, sent again in full before the stop
				}
				seen[ev.Seq] = true
				if ev.Append != nil && ev.Append.BatchSize > 0 {
					res.batches = append(res.batches, ev.Append.BatchSize)
				}
				if ev.Stop != nil {
					res.timings, res.tokens = ev.Stop.Timings, ev.Stop.Generated
				}
			}
			events = events[:0]
		}
		s.Close() // the request is over: its session and memory go back
		for {
			typ, p, err := read(f)
			if err != nil {
				res.err = fmt.Errorf("waiting for the class's results: %w", err)
				return
			}
			if typ == wire.MsgRoomClassResult {
				var r struct {
					Rows []json.RawMessage `json:"rows"`
				}
				json.Unmarshal(p, &r)
				res.rows = len(r.Rows)
				return
			}
		}
	}
}

// awaitClass reads the presenter's messages until the class request is done
// and returns its final state.
func awaitClass(tb testing.TB, p *wsClient) classStateView {
	tb.Helper()
	var st classStateView
	for !st.Done {
		switch m := p.read(); m.Type {
		case wire.MsgRoomClassState:
			st = classStateView{}
			json.Unmarshal(m.Payload, &st)
		case wire.MsgError:
			tb.Fatalf("room_class: %s", m.Payload)
		}
	}
	return st
}

// batcherTotals is the default model's batcher passes and steps from /api/server.
func batcherTotals(t *testing.T, base string) (passes, steps int64) {
	t.Helper()
	resp, err := http.Get(base + "/api/server")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v web.ServerView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	for _, s := range v.Schedulers {
		passes += s.Passes
		steps += s.Steps
	}
	return passes, steps
}

func TestClassRequest(t *testing.T) {
	const students, tokens = 30, 24
	cat, _ := batchingCatalog(t, true, serve.DefaultOptions())
	srv, err := web.New(web.Options{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})

	// refused by name: nobody follows yet
	start := map[string]any{"prompt": "Once upon a time", "max_new_tokens": tokens, "sampling": map[string]any{"temperature": 0}}
	p.send("room_class", map[string]any{"code": room.Code, "key": room.Key, "start": start, "batch": true})
	if m := readReply(p); !strings.Contains(string(m.Payload), "nobody follows") {
		t.Fatalf("a class request with no class: %s %s", m.Type, m.Payload)
	}

	for _, batch := range []bool{true, false} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			out := make(chan classResult, students)
			var wg sync.WaitGroup
			for i := range students {
				wg.Add(1)
				cookie := fmt.Sprintf("%c%c%020d", 'A'+i%26, 'a'+i/26, i)
				row := fmt.Sprintf("%08x", 0xc1a55000+i)
				go func() { defer wg.Done(); classStudent(ts.URL, room.Code, cookie, row, out) }()
			}
			waitCounts(t, p, func(c counts) bool { return c.Followers == students })
			passes0, steps0 := batcherTotals(t, ts.URL)
			p.send("room_class", map[string]any{"code": room.Code, "key": room.Key, "start": start, "batch": batch})
			st := awaitClass(t, p)
			wg.Wait()
			close(out)
			mine := map[string]classResult{}
			for r := range out {
				if r.err != nil {
					t.Fatalf("a student: %v", r.err)
				}
				if r.rows != students {
					t.Errorf("student %s got %d rows in the class's results, want %d", r.row, r.rows, students)
				}
				mine[r.row] = r
			}
			if st.Expected != students || len(st.Rows) != students || st.Aggregate.Finished != students {
				t.Fatalf("presenter's state: expected %d, %d rows, %d finished; want %d of each", st.Expected, len(st.Rows), st.Aggregate.Finished, students)
			}
			var sumTokens int
			var first, last int64
			var steps int
			var passes float64
			for _, row := range st.Rows {
				own, ok := mine[row.Row]
				if !ok || row.State != "done" {
					t.Fatalf("row %s: state %s (%s), a student's: %v", row.Row, row.State, row.Error, ok)
				}
				sum := row.QueueMs + row.TokenizeMs + row.EmbedMs + row.PrefillMs + row.FirstDecodeMs
				if math.Abs(sum-row.TTFTMs) > 1e-9 {
					t.Errorf("row %s: queue + tokenize + embed + prefill + first decode = %.6f, TTFT %.6f", row.Row, sum, row.TTFTMs)
				}
				for k, v := range map[string]float64{"ttft_ms": row.TTFTMs, "tokenize_ms": row.TokenizeMs, "embed_ms": row.EmbedMs, "prefill_ms": row.PrefillMs, "first_decode_ms": row.FirstDecodeMs} {
					if own.timings[k] != v {
						t.Errorf("row %s: %s %v, the student's own stop event says %v", row.Row, k, v, own.timings[k])
					}
				}
				if fmt.Sprint(row.Batches) != fmt.Sprint(own.batches) || row.Tokens != own.tokens || row.Tokens != tokens {
					t.Errorf("row %s: batches %v tokens %d; the student's events: %v, %d (want %d tokens)", row.Row, row.Batches, row.Tokens, own.batches, own.tokens, tokens)
				}
				if !batch {
					for _, b := range row.Batches {
						if b != 1 {
							t.Fatalf("row %s without batching: a pass of %d", row.Row, b)
						}
					}
				}
				sumTokens += row.Tokens
				if first == 0 || row.StartMs < first {
					first = row.StartMs
				}
				last = max(last, row.EndMs)
				steps += len(row.Batches)
				for _, b := range row.Batches {
					passes += 1 / float64(b)
				}
			}
			wall := float64(last - first)
			if st.Aggregate.Tokens != sumTokens || math.Abs(st.Aggregate.WallMs-wall) > 1e-9 || math.Abs(st.Aggregate.TokS-float64(sumTokens)/(wall/1000)) > 1e-9 {
				t.Errorf("aggregate %+v; the rows: %d tokens over %.0f ms", st.Aggregate, sumTokens, wall)
			}
			// the batch sizes the students saw are the passes the server counted
			passes1, steps1 := batcherTotals(t, ts.URL)
			alone := int64(0)
			if batch {
				alone = int64(st.Alone.DecodeSteps)
			} else {
				steps, passes = 0, 0 // unbatched runs never reach the batcher
			}
			if steps1-steps0 != int64(steps)+alone || passes1-passes0 != int64(math.Round(passes))+alone {
				t.Errorf("/api/server counted %d steps in %d passes; the class's rows %d in %.2f, and the baseline %d alone", steps1-steps0, passes1-passes0, steps, passes, alone)
			}
			bs := []int{}
			for _, row := range st.Rows {
				bs = append(bs, row.Batches...)
			}
			sort.Ints(bs)
			t.Logf("batch=%v: %d students × %d tokens; aggregate %.0f tok/s over %.0f ms, alone %.0f tok/s (%.2f×); largest batch %d; memory per run %d B, weights %d B",
				batch, students, tokens, st.Aggregate.TokS, st.Aggregate.WallMs, st.Alone.TokS, st.Aggregate.TokS/st.Alone.TokS, bs[len(bs)-1], st.Alone.MemoryBytes, st.Weights)
		})
	}
}

// TestClassRequestRefusedWhenTooBig: a class that would not fit the
// server's memory for runs is refused by name, with how many would fit.
func TestClassRequestRefusedWhenTooBig(t *testing.T) {
	cat, _ := defaultCatalog(t)
	srv, _ := web.New(web.Options{Catalog: cat, Limits: ws.Limits{MaxKVBytes: 3 << 20}})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	p := dial(t, ts)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	for i := range 12 {
		dialRoomAs(t, ts.URL, room.Code, fmt.Sprintf("%022d", i))
	}
	waitCounts(t, p, func(c counts) bool { return c.Followers == 12 })
	p.send("room_class", map[string]any{"code": room.Code, "key": room.Key, "batch": true,
		"start": map[string]any{"prompt": "Once upon a time", "max_new_tokens": 200}})
	m := readReply(p)
	var e wire.ErrorPayload
	json.Unmarshal(m.Payload, &e)
	if e.Code != "class_too_big" || !strings.Contains(e.Message, "12 students follow") || !strings.Contains(e.Message, "max-kv-bytes") {
		t.Fatalf("a class too big for memory: %s %s", m.Type, m.Payload)
	}
	t.Log(e.Message)
}

// TestClassRequestAcrossReplicas: with rooms over NATS each replica runs
// its own students' requests and the presenter's state merges them.
func TestClassRequestAcrossReplicas(t *testing.T) {
	url := startNATS(t)
	a, b := natsReplica(t, url), natsReplica(t, url)
	p := dial(t, a)
	room := openRoom(t, p, map[string]any{"page": "/lab"})
	const students = 6
	out := make(chan classResult, students)
	var wg sync.WaitGroup
	for i := range students {
		base := a.URL
		if i%2 == 1 {
			base = b.URL
		}
		cookie, row := fmt.Sprintf("R%021d", i), fmt.Sprintf("%08x", 0xbeef0000+i)
		wg.Add(1)
		go func() { defer wg.Done(); classStudent(base, room.Code, cookie, row, out) }()
	}
	waitCounts(t, p, func(c counts) bool { return c.Followers == students })
	p.send("room_class", map[string]any{"code": room.Code, "key": room.Key, "batch": true,
		"start": map[string]any{"prompt": "The President said", "max_new_tokens": 12}})
	st := awaitClass(t, p)
	wg.Wait()
	close(out)
	for r := range out {
		if r.err != nil || r.rows != students {
			t.Fatalf("a student: %v, %d rows in the results", r.err, r.rows)
		}
	}
	if st.Aggregate.Finished != students || st.Aggregate.Tokens != students*12 {
		t.Errorf("merged state: %+v, want %d students × 12 tokens", st.Aggregate, students)
	}
}

// BenchmarkClassRequest: a class of 30 sends one 64-token request at once,
// batched and unbatched in alternating rounds on one server (so both see
// the same machine), on the default model. Reported: the class's aggregate
// output (all students' tokens ÷ the wall time from the first request's
// arrival to the last one's end) each way, their ratio, and the median
// time to first token.
func BenchmarkClassRequest(b *testing.B) {
	const students, tokens, rounds = 30, 64, 3
	for i := 0; i < b.N; i++ {
		cat, _ := batchingCatalog(b, true, serve.DefaultOptions())
		srv, err := web.New(web.Options{Catalog: cat})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		p := dial(b, ts)
		room := openRoom(b, p, map[string]any{"page": "/lab"})
		agg := map[bool][]float64{}
		ttft := map[bool][]float64{}
		for r := 0; r < 2*rounds; r++ {
			batch := r%2 == 0
			out := make(chan classResult, students)
			var wg sync.WaitGroup
			for k := range students {
				wg.Add(1)
				cookie, row := fmt.Sprintf("B%02d%019d", r, k), fmt.Sprintf("%08x", 0xb0000000+r*100+k)
				go func() { defer wg.Done(); classStudent(ts.URL, room.Code, cookie, row, out) }()
			}
			waitCounts(b, p, func(c counts) bool { return c.Followers == students })
			p.send("room_class", map[string]any{"code": room.Code, "key": room.Key, "batch": batch,
				"start": map[string]any{"prompt": "Once upon a time", "max_new_tokens": tokens}})
			st := awaitClass(b, p)
			wg.Wait()
			close(out)
			for res := range out {
				if res.err != nil {
					b.Fatal(res.err)
				}
			}
			if st.Aggregate.Finished != students {
				b.Fatalf("%d of %d finished", st.Aggregate.Finished, students)
			}
			agg[batch] = append(agg[batch], st.Aggregate.TokS)
			var t []float64
			for _, row := range st.Rows {
				t = append(t, row.TTFTMs)
			}
			sort.Float64s(t)
			ttft[batch] = append(ttft[batch], t[len(t)/2])
			// the class's sockets close; the next round's class joins afresh
			waitCounts(b, p, func(c counts) bool { return c.Followers == 0 })
		}
		med := func(v []float64) float64 { s := append([]float64(nil), v...); sort.Float64s(s); return s[len(s)/2] }
		b.ReportMetric(med(agg[true]), "batched-tok/s")
		b.ReportMetric(med(agg[false]), "unbatched-tok/s")
		b.ReportMetric(med(agg[true])/med(agg[false]), "batched/unbatched")
		b.ReportMetric(med(ttft[true]), "batched-ttft-ms")
		b.ReportMetric(med(ttft[false]), "unbatched-ttft-ms")
		b.Logf("30 students × %d tokens, %d rounds each way: aggregate batched %v, unbatched %v tok/s", tokens, rounds, agg[true], agg[false])
		ts.Close()
	}
}
