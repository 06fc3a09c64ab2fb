package web_test

// bench_browser_test.go: the lab's browser budget, measured in headless
// Chromium with the default model (benchmarks, never timed assertions):
// next-token click→rendered latency, a 250-token greedy run against the
// engine doing the same run (what `inferscope trace` does) in the same
// process, Stop→"cancelled" latency, the longest main-thread task during a
// run, and the bytes /lab transfers compressed.

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/session"
	"github.com/inferscope/inferscope/internal/browsertest"
)

// benchPrompt is the prompt every browser benchmark uses.
const benchPrompt = "The President said"

// tokenCountJS counts the generated tokens the page shows.
const tokenCountJS = `document.querySelectorAll('[data-testid="gen-tok"]').length`

// pageIdleJS is true when the page has no command in flight.
const pageIdleJS = `document.body.dataset.busy === "0"`

func percentile(v []float64, p float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

// BenchmarkBrowserStepRoundTrip measures, in Chromium, the time from
// clicking "Next token" to the new token being on screen (the frame after
// the DOM shows it), with the default model; p50/p95/p99 over b.N tokens.
func BenchmarkBrowserStepRoundTrip(b *testing.B) {
	ts, _ := labServer(b)
	br := browsertest.New(b)
	ctx := br.Ctx
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=250&t=0.8")); err != nil {
		b.Fatal(err)
	}
	if err := waitJS(ctx, `!document.getElementById("btn-token").disabled`); err != nil {
		b.Fatal(err)
	}
	var lat []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%200 == 0 && i > 0 {
			chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-reset"]`)))
			if err := waitJS(ctx, `!document.getElementById("btn-token").disabled && `+tokenCountJS+` === 0`); err != nil {
				b.Fatal(err)
			}
		}
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`new Promise(res => {
			const count = () => `+tokenCountJS+`;
			const n = count();
			const t0 = performance.now();
			const obs = new MutationObserver(() => {
				if (count() > n && `+pageIdleJS+`) { obs.disconnect(); requestAnimationFrame(() => res(performance.now() - t0)); }
			});
			obs.observe(document.body, {subtree: true, childList: true, attributes: true});
			document.getElementById("btn-token").click();
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, ms)
	}
	b.ReportMetric(percentile(lat, 0.5), "p50-ms")
	b.ReportMetric(percentile(lat, 0.95), "p95-ms")
	b.ReportMetric(percentile(lat, 0.99), "p99-ms")
}

// traceRun is `inferscope trace`'s loop: step the session to its end and
// encode every event as a JSON line. It returns the wall time and the
// number of generated tokens.
func traceRun(b *testing.B, m *engine.Model, cfg session.Config) (time.Duration, int) {
	start := time.Now()
	s, err := session.New(m, cfg)
	if err != nil {
		b.Fatal(err)
	}
	enc := json.NewEncoder(io.Discard)
	for !s.Done() {
		ev, err := s.Step(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if err := enc.Encode(ev); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start), len(s.Generated())
}

// BenchmarkBrowserRun measures a 250-token greedy "Run to end" in the
// browser (click to the stop shown) against the engine's own run of the
// same settings in the same process, and the longest main-thread task the
// page ran meanwhile (PerformanceObserver "longtask"; 0 when none ≥ 50 ms).
func BenchmarkBrowserRun(b *testing.B) {
	ts, m := labServer(b)
	br := browsertest.New(b)
	ctx := br.Ctx
	cfg := session.Config{Prompt: benchPrompt, Sampling: session.SamplingParams{Temperature: 0, TopP: 1}, MaxNewTokens: 250}
	var ratios, pageMs, engMs, longest []float64
	tokens := 0
	for i := 0; i < b.N; i++ {
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=250&t=0&p=1")); err != nil {
			b.Fatal(err)
		}
		if err := waitJS(ctx, `!document.getElementById("btn-run").disabled`); err != nil {
			b.Fatal(err)
		}
		res, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`new Promise(res => {
			let longest = 0;
			const lo = new PerformanceObserver(l => { for (const e of l.getEntries()) longest = Math.max(longest, e.duration); });
			lo.observe({type: "longtask"});
			const t0 = performance.now();
			const obs = new MutationObserver(() => {
				const st = document.getElementById("stop-text");
				if (st.dataset.reason && `+pageIdleJS+`) {
					obs.disconnect();
					requestAnimationFrame(() => { const t = performance.now() - t0; setTimeout(() => { lo.disconnect(); res([t, longest, `+tokenCountJS+`]); }, 0); });
				}
			});
			obs.observe(document.body, {subtree: true, childList: true, attributes: true});
			document.getElementById("btn-run").click();
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		eng, n := traceRun(b, m, cfg)
		if int(res[2]) != n {
			b.Errorf("page shows %d tokens, the engine generated %d", int(res[2]), n)
		}
		tokens = n
		pageMs = append(pageMs, res[0])
		longest = append(longest, res[1])
		engMs = append(engMs, float64(eng.Microseconds())/1000)
		ratios = append(ratios, res[0]/(float64(eng.Microseconds())/1000))
	}
	b.ReportMetric(percentile(pageMs, 0.5), "page-ms")
	b.ReportMetric(percentile(engMs, 0.5), "trace-ms")
	b.ReportMetric(percentile(ratios, 0.5), "page/trace")
	b.ReportMetric(percentile(longest, 1), "longest-task-ms")
	b.ReportMetric(float64(tokens), "tokens")
}

// BenchmarkBrowserStop measures the time from clicking Stop, 500 ms into a
// 250-token run, to the page showing that the run stopped; it reports
// whether the reason shown was "cancelled" (1) or not (0).
func BenchmarkBrowserStop(b *testing.B) {
	ts, _ := labServer(b)
	br := browsertest.New(b)
	ctx := br.Ctx
	var lat []float64
	cancelled := 1.0
	for i := 0; i < b.N; i++ {
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The%20President%20said&n=250&t=0.8&p=0.9")); err != nil {
			b.Fatal(err)
		}
		if err := waitJS(ctx, `!document.getElementById("btn-run").disabled`); err != nil {
			b.Fatal(err)
		}
		var res []any
		res, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`new Promise(res => {
			document.getElementById("btn-run").click();
			setTimeout(() => {
				const st = document.getElementById("stop-text");
				if (st.dataset.reason) { res([0, st.dataset.reason]); return; }
				const t0 = performance.now();
				const obs = new MutationObserver(() => {
					if (st.dataset.reason) { obs.disconnect(); requestAnimationFrame(() => res([performance.now() - t0, st.dataset.reason])); }
				});
				obs.observe(document.body, {subtree: true, childList: true, attributes: true});
				document.getElementById("btn-cancel").click();
			}, 500);
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, res[0].(float64))
		if res[1] != "cancelled" {
			cancelled = 0
			b.Logf("run %d ended as %v, not cancelled", i, res[1])
		}
		if err := waitJS(ctx, pageIdleJS); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(percentile(lat, 0.5), "p50-ms")
	b.ReportMetric(percentile(lat, 1), "max-ms")
	b.ReportMetric(cancelled, "cancelled")
}

// BenchmarkPageWeight reports the bytes a browser downloads for /lab: the
// page, every static file it links and every module those import, as sent
// to a client that accepts gzip (KiB-wire) and uncompressed (KiB-raw).
func BenchmarkPageWeight(b *testing.B) {
	ts, _ := labServer(b)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	ref := regexp.MustCompile(`(?:src|href)="(/static/[^"]+)"|(?:from|import)\s*\(?\s*"(\.{1,2}/[^"]+|/static/[^"]+)"`)
	for i := 0; i < b.N; i++ {
		wire, raw := 0, 0
		seen := map[string]bool{}
		var get func(path, base string)
		get = func(path, base string) {
			if !strings.HasPrefix(path, "/") {
				path = base[:strings.LastIndex(base, "/")+1] + path
				for strings.Contains(path, "/./") {
					path = strings.Replace(path, "/./", "/", 1)
				}
			}
			if seen[path] {
				return
			}
			seen[path] = true
			req, _ := http.NewRequest("GET", ts.URL+path, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("%s: %s", path, resp.Status)
			}
			wire += len(body)
			if resp.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(strings.NewReader(string(body)))
				if err != nil {
					b.Fatal(err)
				}
				body, _ = io.ReadAll(zr)
			}
			raw += len(body)
			for _, m := range ref.FindAllStringSubmatch(string(body), -1) {
				p := m[1]
				if p == "" {
					p = m[2]
				}
				if strings.HasSuffix(p, ".js") || strings.HasSuffix(p, ".css") || m[1] != "" {
					get(p, path)
				}
			}
		}
		get("/lab", "/")
		b.ReportMetric(float64(wire)/1024, "KiB-wire")
		b.ReportMetric(float64(raw)/1024, "KiB-raw")
	}
}
