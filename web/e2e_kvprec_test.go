package web_test

// e2e_kvprec_test.go: a server whose runs keep an F16 KV cache (serve
// --kv-cache f16): the lab's memory panel says so, with what it saves
// against F32, and the cache line counts 2 bytes a number.

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/ws"
)

func TestBrowserLabKVCachePrecision(t *testing.T) {
	m, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.NewEngineCatalog()
	if err := cat.Add(m, "", true); err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{Catalog: cat, Limits: ws.Limits{KVCache: "f16"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	b := browsertest.New(t)
	ctx := b.Ctx
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "lab-kv-precision-failure")
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("open the lab", chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=The+capital+of+France+is&n=6&t=0")))
	must("ready", waitJS(ctx, labReadyJS))
	must("run", chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('btn-run').click()`)))
	must("stopped", waitJS(ctx, `document.getElementById('main').dataset.runState === 'stopped' && document.body.dataset.busy === '0'`))
	must("the precision note", waitJS(ctx, `!!document.querySelector('[data-testid=kv-precision]')`))
	if got := evalJS[string](t, ctx, `document.querySelector('[data-testid=kv-precision]').dataset.kvType`); got != "f16" {
		t.Errorf("kv-precision says kv_type %q, want f16", got)
	}
	note := evalJS[string](t, ctx, `document.querySelector('[data-testid=kv-precision]').textContent`)
	for _, want := range []string{"stored as F16", "where F32 would take", "saves", "(50.0%)", "rounded to F16 once"} {
		if !strings.Contains(note, want) {
			t.Errorf("precision note lacks %q: %q", want, note)
		}
	}
	if kv := evalJS[string](t, ctx, `document.getElementById('kv-text').textContent`); !strings.Contains(kv, "numbers × 2 bytes") {
		t.Errorf("cache line: %q", kv)
	}
}
