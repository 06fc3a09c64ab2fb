package web_test

// bytebudget_test.go: the per-visitor byte budget through the server: data
// requests refused past it, runs held back.

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// metricValue reads one counter from /metrics.
func metricValue(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics lacks %s", name)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// toLogits starts a run and steps it through prefill, so get_logits and
// sample_n have something to answer.
func toLogits(t *testing.T, w *wsClient) {
	t.Helper()
	w.send("start", startPayload("The President said", 5))
	if m := w.read(); m.Type != wire.MsgStarted {
		t.Fatalf("start: %s %s", m.Type, m.Payload)
	}
	for range 3 {
		w.send("step", nil)
		w.event()
	}
}

// TestByteBudgetRefusesDataRequests: a visitor that keeps asking for the
// 40 KB logit vector runs out of its byte budget and gets a byte_budget
// error naming the request, the limit and when to retry — on every one of
// its connections — while another visitor is still answered.
func TestByteBudgetRefusesDataRequests(t *testing.T) {
	ts := newWSServer(t, ws.Limits{VisitorBytesPerSecond: 1, VisitorByteBurst: 100 << 10})
	a := dial(t, ts)
	toLogits(t, a)
	answered, refused := 0, false
	for range 20 {
		id := a.send("get_logits", nil)
		m := a.read()
		if m.Type == wire.MsgLogits {
			answered++
			continue
		}
		var e wire.ErrorPayload
		json.Unmarshal(m.Payload, &e)
		if m.Type != wire.MsgError || e.Code != "byte_budget" {
			t.Fatalf("got %s %s, want logits or a byte_budget error", m.Type, m.Payload)
		}
		if m.ID != id || !strings.Contains(e.Message, "get_logits") || !strings.Contains(e.Message, "100 KiB") || !strings.Contains(e.Message, "try again in") {
			t.Fatalf("byte_budget error for command %d: id %d, message %q", id, m.ID, e.Message)
		}
		// and when, for the client to retry by itself: the debt at 1 B/s
		// is many seconds, as the message says
		if e.RetryAfterMs < 1000 {
			t.Fatalf("byte_budget error: retry_after_ms %d, want the debt's seconds (%q)", e.RetryAfterMs, e.Message)
		}
		refused = true
		break
	}
	if answered == 0 || !refused {
		t.Fatalf("%d get_logits answered, refused %v: want some answered, then byte_budget", answered, refused)
	}
	a.send("sample_n", map[string]any{"n": 100})
	a.expectError("byte_budget")
	// the budget is the visitor's, not the connection's
	a2 := dial(t, ts)
	a2.send("start", startPayload("The", 3))
	a2.read()
	a2.send("get_logits", nil)
	a2.expectError("byte_budget")
	// another visitor is answered
	b := dialWith(t, fromAddr("127.0.0.2"), wsURL(ts), nil)
	toLogits(t, b)
	b.send("get_logits", nil)
	if m := b.read(); m.Type != wire.MsgLogits {
		t.Fatalf("another visitor's get_logits: %s %s", m.Type, m.Payload)
	}
	if v := metricValue(t, ts.URL, "inferscope_byte_budget_refused_total"); v < 2 {
		t.Errorf("inferscope_byte_budget_refused_total %g, want ≥ 2", v)
	}
}

// TestByteBudgetSlowsRunsWithoutLosingEvents: a run whose events exceed
// the budget is held back until it refills (backpressure), and every event
// still arrives, in order.
func TestByteBudgetSlowsRunsWithoutLosingEvents(t *testing.T) {
	ts := newWSServer(t, ws.Limits{VisitorBytesPerSecond: 512 << 10, VisitorByteBurst: 4 << 10})
	w := dial(t, ts)
	events, _ := runToEnd(t, w, "The President said", 12) // fails on a lost or reordered event
	if events < 3+12*3 {
		t.Fatalf("%d events for 12 tokens", events)
	}
	if v := metricValue(t, ts.URL, "inferscope_byte_budget_waits_total"); v < 1 {
		t.Errorf("inferscope_byte_budget_waits_total %g: the run was never held back by a 4 KiB budget", v)
	}
}

// TestByteBudgetDefaultFitsALesson: the default budget never touches a
// student's ordinary use — a run stepped token by token, with a
// get_logits at every step, sends well under the default burst (100
// tokens here, to keep the test short: under a quarter of the burst).
func TestByteBudgetDefaultFitsALesson(t *testing.T) {
	// the default byte budget; the message rate lifted (a test steps faster than a student)
	ts := newWSServer(t, ws.Limits{MsgsPerSecond: 1e4, Burst: 1e4})
	w := dial(t, ts)
	w.send("start", startPayload("Once upon a time", 100))
	if m := w.read(); m.Type != wire.MsgStarted {
		t.Fatalf("start: %s %s", m.Type, m.Payload)
	}
	for stopped := false; !stopped; {
		w.send("step", nil)
		e := w.event()
		stopped = e.Stage == "stop"
		if e.Stage == "logits" {
			w.send("get_logits", nil)
			if m := w.read(); m.Type != wire.MsgLogits {
				t.Fatalf("get_logits: %s %s", m.Type, m.Payload)
			}
		}
	}
	sent := metricValue(t, ts.URL, "inferscope_ws_bytes_sent_total")
	if burst := float64(ws.DefaultLimits().VisitorByteBurst); sent > burst/4 {
		t.Errorf("a 100-token lesson sent %.0f bytes, more than a quarter of the default burst %.0f", sent, burst)
	}
	t.Logf("a 100-token run stepped stage by stage with get_logits at each step: %.1f MiB", sent/(1<<20))
}

// TestByteBudgetEveryDataCommand: every command that only fetches data is
// refused by name once the visitor's budget is spent (resample used to be
// answered without limit: 14 MiB/s against a 4 MiB/s budget).
func TestByteBudgetEveryDataCommand(t *testing.T) {
	cases := []struct {
		typ     string
		payload any
	}{
		{"get_logits", nil},
		{"sample_n", map[string]any{"n": 100}},
		{"resample", map[string]any{"temperature": 1.2}},
		{"inspect", map[string]any{"what": "kv", "layer": 0}},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			ts := newWSServer(t, ws.Limits{VisitorBytesPerSecond: 1, VisitorByteBurst: 60 << 10})
			a := dial(t, ts)
			toLogits(t, a)
			a.send("step", nil) // logits
			a.event()
			for range 10 { // spend the budget
				a.send("get_logits", nil)
				if m := a.read(); m.Type == wire.MsgError {
					break
				}
			}
			id := a.send(c.typ, c.payload)
			m := a.read()
			var e wire.ErrorPayload
			json.Unmarshal(m.Payload, &e)
			if m.Type != wire.MsgError || e.Code != "byte_budget" || m.ID != id || !strings.Contains(e.Message, c.typ) {
				t.Fatalf("%s past the budget: %s %s, want a byte_budget error naming it", c.typ, m.Type, m.Payload)
			}
		})
	}
}

// TestBrowserByteBudgetRetry: the pages' protocol client sends a data
// request the byte budget refused again when the refusal says
// (retry_after_ms), so a panel asking quickly gets its answers, not an
// error; a refusal whose wait is too long is the answer.
func TestBrowserByteBudgetRetry(t *testing.T) {
	t.Parallel()
	ts := newWSServer(t, ws.Limits{VisitorBytesPerSecond: 256 << 10, VisitorByteBurst: 100 << 10})
	b := browsertest.New(t)
	ctx := b.Ctx
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab")); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `document.body.dataset.busy === "0"`); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(async () => {
  const { Client } = await import("/static/js/protocol.js");
  const c = new Client();
  await c.connect();
  await c.request("start", { prompt: "The President said", max_new_tokens: 5, sampling: { temperature: 0 } });
  for (let i = 0; i < 3; i++) await c.request("step");
  const out = [];
  for (let i = 0; i < 8; i++) {
    try { const m = await c.request("get_logits"); out.push(m.type); } catch (e) { out.push("error " + e.code + ": " + e.message); }
  }
  c.close();
  return out;
})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if g != "logits" {
			t.Errorf("get_logits %d of %d: %s, want the logits (sent again after the refusal's wait)", i+1, len(got), g)
		}
	}
	if v := metricValue(t, ts.URL, "inferscope_byte_budget_refused_total"); v < 1 {
		t.Errorf("inferscope_byte_budget_refused_total %g: the budget never refused, so nothing was retried", v)
	}
	b.AssertNoJSErrors(t)
}

// TestBrowserByteBudgetLongWait: a refusal whose wait is past the
// client's 10 s is not waited for: the request rejects with the server's
// message, in plain English.
func TestBrowserByteBudgetLongWait(t *testing.T) {
	t.Parallel()
	ts := newWSServer(t, ws.Limits{VisitorBytesPerSecond: 1, VisitorByteBurst: 100 << 10})
	b := browsertest.New(t)
	ctx := b.Ctx
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab")); err != nil {
		t.Fatal(err)
	}
	if err := waitJS(ctx, `document.body.dataset.busy === "0"`); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
  const { Client } = await import("/static/js/protocol.js");
  const c = new Client();
  await c.connect();
  await c.request("start", { prompt: "The President said", max_new_tokens: 5, sampling: { temperature: 0 } });
  for (let i = 0; i < 3; i++) await c.request("step");
  for (let i = 0; i < 8; i++) {
    try { await c.request("get_logits"); } catch (e) { c.close(); return e.code + ": " + e.message; }
  }
  c.close();
  return "never refused";
})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "byte_budget: ") || !strings.Contains(got, "try again in") {
		t.Errorf("a refusal with a long wait: %q, want the byte_budget message", got)
	}
}
