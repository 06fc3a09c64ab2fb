package web_test

// bench_browser_test.go: browser benchmarks: step round trip and page weight in headless Chromium.

import (
	"io"
	"net/http"
	"regexp"
	"sort"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
)

// BenchmarkBrowserStepRoundTrip measures, in Chromium, the time from
// clicking "Next token" to the new token being rendered, with the default
// model; it reports p50/p99 over b.N tokens.
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
	for i := 0; i < b.N; i++ {
		if i%200 == 0 && i > 0 {
			chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-reset"]`)))
			if err := waitJS(ctx, `!document.getElementById("btn-token").disabled && document.querySelectorAll('[data-testid="gen-tok"]').length === 0`); err != nil {
				b.Fatal(err)
			}
		}
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`new Promise(res => {
			const n = document.querySelectorAll('[data-testid="gen-tok"]').length;
			const t0 = performance.now();
			const obs = new MutationObserver(() => {
				if (document.querySelectorAll('[data-testid="gen-tok"]').length > n && document.body.dataset.busy === "0") { obs.disconnect(); res(performance.now() - t0); }
			});
			obs.observe(document.body, {subtree: true, childList: true, attributes: true});
			document.getElementById("btn-token").click();
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, ms)
	}
	sort.Float64s(lat)
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
	b.ReportMetric(lat[len(lat)*99/100], "p99-ms")
}

// BenchmarkPageWeight reports the bytes a browser downloads for /lab.
func BenchmarkPageWeight(b *testing.B) {
	ts, _ := labServer(b)
	for i := 0; i < b.N; i++ {
		total := 0
		get := func(path string) string {
			resp, err := http.Get(ts.URL + path)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			total += len(body)
			return string(body)
		}
		html := get("/lab")
		for _, m := range regexp.MustCompile(`(?:src|href)="(/static/[^"]+)"`).FindAllStringSubmatch(html, -1) {
			get(m[1])
		}
		b.ReportMetric(float64(total)/1024, "KiB")
	}
}
