package web_test

// serverview_test.go: /api/server and /server show the open sessions, the
// scheduler's batches and memory, never a prompt; with batching on,
// concurrent runs share forward passes and every event still arrives in
// order; the page shows a second session appear and the batch size rise.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/internal/serve"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

func batchServer(t testing.TB, on bool) *httptest.Server {
	t.Helper()
	cat, _ := batchingCatalog(t, on, serve.Options{MaxBatch: 16, MaxWait: 2 * time.Millisecond})
	return serveCatalog(t, web.Options{Catalog: cat, Limits: ws.Limits{MaxSessions: 64, MaxSessionsPerVisitor: 64, MsgsPerSecond: 1e6, Burst: 1e6}})
}

type appendFields struct {
	Stage  string `json:"stage"`
	Seq    int    `json:"seq"`
	Append *struct {
		Forwarded bool    `json:"forwarded"`
		BatchSize int     `json:"batch_size"`
		QueueMs   float64 `json:"queue_ms"`
		ModelMs   float64 `json:"model_ms"`
	} `json:"append"`
}

// runAll starts a run and sends "run"; it returns the batch size of every
// decode step, checking the events arrive in order.
func runAll(t testing.TB, w *wsClient, prompt string, n int) []int {
	w.send("start", startPayload(prompt, n))
	if m := w.read(); m.Type != wire.MsgStarted {
		t.Fatalf("start: %s %s", m.Type, m.Payload)
	}
	w.send("run", nil)
	var sizes []int
	for seq := 1; ; seq++ {
		m := w.read()
		if m.Type != wire.MsgEvent {
			t.Fatalf("got %s %s during a run", m.Type, m.Payload)
		}
		var e appendFields
		json.Unmarshal(m.Payload, &e)
		if e.Seq != seq {
			t.Fatalf("event %d after %d: lost or reordered", e.Seq, seq-1)
		}
		if e.Append != nil && e.Append.Forwarded {
			if e.Append.QueueMs < 0 || e.Append.ModelMs <= 0 {
				t.Errorf("append event: queue %v ms, model %v ms", e.Append.QueueMs, e.Append.ModelMs)
			}
			sizes = append(sizes, e.Append.BatchSize)
		}
		if e.Stage == "stop" {
			return sizes
		}
	}
}

func getServerView(t testing.TB, ts *httptest.Server) (web.ServerView, string) {
	t.Helper()
	res, err := http.Get(ts.URL + "/api/server")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("/api/server: %d %s", res.StatusCode, b)
	}
	var v web.ServerView
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v, string(b)
}

func TestServerViewAndBatching(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("batching=%v", on), func(t *testing.T) {
			ts := batchServer(t, on)
			const clients, tokens = 6, 40
			var wg sync.WaitGroup
			ws := make([]*wsClient, clients)
			sizes := make([][]int, clients)
			for i := range ws {
				ws[i] = dial(t, ts)
			}
			for i := range ws {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sizes[i] = runAll(t, ws[i], fmt.Sprintf("secret prompt number %d", i), tokens)
				}()
			}
			wg.Wait()
			largest := 0
			for _, ss := range sizes {
				for _, s := range ss {
					largest = max(largest, s)
					if !on && s != 1 {
						t.Errorf("batching off: a step shared a pass of %d", s)
					}
				}
			}
			v, body := getServerView(t, ts)
			if strings.Contains(body, "secret prompt") {
				t.Error("/api/server shows a prompt")
			}
			if len(v.Sessions) != clients || v.TokensTotal != clients*tokens || v.Batching != on {
				t.Errorf("view: %d sessions, %d tokens, batching %v; want %d, %d, %v", len(v.Sessions), v.TokensTotal, v.Batching, clients, clients*tokens, on)
			}
			if v.Memory.Weights <= 0 || v.Memory.KV <= 0 || v.Memory.Total != v.Memory.Weights+v.Memory.KV+v.Memory.Scratch || v.Memory.MaxKV <= 0 {
				t.Errorf("memory %+v", v.Memory)
			}
			for _, s := range v.Sessions {
				if s.KVAllocated <= 0 || s.KVUsed <= 0 || s.KVUsed > s.KVAllocated || s.Tokens != tokens {
					t.Errorf("session %+v", s)
				}
			}
			if on {
				if len(v.Schedulers) != 1 || v.Schedulers[0].Steps != clients*(tokens-1) {
					t.Fatalf("schedulers %+v, want %d steps", v.Schedulers, clients*(tokens-1))
				}
				if largest < 2 {
					t.Errorf("%d concurrent runs never shared a forward pass", clients)
				}
			} else if len(v.Schedulers) != 0 {
				t.Errorf("batching off but schedulers %+v", v.Schedulers)
			}
			res, err := http.Get(ts.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			mb, _ := io.ReadAll(res.Body)
			res.Body.Close()
			for _, name := range []string{"inferscope_batch_steps_total", "inferscope_decode_queue", "inferscope_memory_bytes", "inferscope_tokens_per_second"} {
				if !strings.Contains(string(mb), name) {
					t.Errorf("/metrics lacks %s", name)
				}
			}
		})
	}
}

func TestServerViewRefusesOtherSites(t *testing.T) {
	ts := batchServer(t, true)
	req, _ := http.NewRequest("GET", ts.URL+"/api/server", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site read of /api/server: %d, want 403", res.StatusCode)
	}
	req, _ = http.NewRequest("GET", ts.URL+"/api/server", nil)
	req.Host = "evil.example"
	if res, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("/api/server for Host evil.example: %d, want 403", res.StatusCode)
	}
}

func TestBrowserServerView(t *testing.T) {
	t.Parallel() // pages and answers only, no timings: runs beside the other parallel browser tests
	ts := batchServer(t, true)
	b := browsertest.New(t)
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(ts.URL+"/server"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="server-view"]`))); err != nil {
		t.Fatal(err)
	}
	sessions := `document.querySelector('[data-testid="srv-sessions"]').textContent`
	if err := waitJS(b.Ctx, sessions+`.startsWith("0 of")`); err != nil {
		t.Fatal(err, evalJS[string](t, b.Ctx, `document.querySelector('[data-testid="srv-status"]').textContent`), b.JSErrors())
	}
	first := dial(t, ts)
	if err := waitJS(b.Ctx, sessions+`.startsWith("1 of")`); err != nil {
		t.Fatal(err)
	}
	second := dial(t, ts)
	if err := waitJS(b.Ctx, sessions+`.startsWith("2 of") && document.querySelectorAll('[data-testid="srv-session-row"]').length === 2`); err != nil {
		t.Fatal(err)
	}
	// load: 8 runs at once; the batch size per pass rises above 1
	var wg sync.WaitGroup
	clients := []*wsClient{first, second}
	for range 6 {
		clients = append(clients, dial(t, ts))
	}
	for i, w := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); runAll(t, w, fmt.Sprintf("Load %d", i), 40) }()
	}
	err := waitJS(b.Ctx, `+document.querySelector('[data-testid="srv-ticks"]').dataset.max >= 2`)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := waitJS(b.Ctx, `document.querySelectorAll('[data-testid="srv-session-row"]').length === 8`); err != nil {
		t.Fatal(err)
	}
	if txt := evalJS[string](t, b.Ctx, `document.querySelector('[data-testid="server-view"]').textContent`); strings.Contains(txt, "Load 3") {
		t.Error("the server view shows a prompt")
	}
	b.Screenshot(t, "server")
	b.AssertAccessible(t, "server view")
	b.SetDark(t, true)
	b.AssertAccessible(t, "server view, dark")
	b.SetViewport(t, 390, 844, true)
	b.ViewportScreenshot(t, "server-phone-dark")
	b.AssertNoJSErrors(t)
}

// BenchmarkLoadBatching is the 64-session load test (64 × 200 tokens on the
// default model, step round trips) with batching off and on in one run.
func BenchmarkLoadBatching(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("batching=%v", on), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				ts := batchServer(b, on)
				loadRun(b, ts, 64, 200)
			}
		})
	}
}
