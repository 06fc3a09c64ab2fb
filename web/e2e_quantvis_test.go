package web_test

// e2e_quantvis_test.go: quantization made visible in headless Chromium —
// the model view's block display (a block's stored integers, scales,
// values, originals and errors, each equal to the engine's in Go; a
// refused block; a file without originals said so) and the memory panel's
// bytes per parameter; axe-clean, at 1366×900, 1280×720 and 390×844, light
// and dark.

import (
	"fmt"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/engine"
	"github.com/inferscope/inferscope/engine/quant"
	"github.com/inferscope/inferscope/internal/browsertest"
	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
)

type blockRow struct {
	I          int
	Q, V, O, E string
}

func TestBrowserQuantizedBlocks(t *testing.T) {
	t.Parallel()
	dm, err := models.Default()
	if err != nil {
		t.Fatal(err)
	}
	q := dm.WithWeights(engine.Q4_K)
	// the same blocks as a file would hold them: no originals
	file := &engine.Model{Name: dm.Name, Source: dm.Source, Config: q.Config, Weights: q.Weights, Tokenizer: q.Tokenizer}
	for _, tc := range []struct {
		name string
		m    *engine.Model
	}{{"q4_k-at-load", q}, {"q4_k-file", file}} {
		t.Run(tc.name, func(t *testing.T) {
			cat := catalog.NewEngineCatalog()
			if err := cat.Add(tc.m, "", true); err != nil {
				t.Fatal(err)
			}
			srv, err := web.New(web.Options{Catalog: cat})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			checkQuantView(t, ts, tc.m, dm, tc.name)
		})
	}
}

func checkQuantView(t *testing.T, ts *httptest.Server, m, base *engine.Model, name string) {
	b := browsertest.New(t)
	ctx := b.Ctx
	must := func(err error) {
		t.Helper()
		if err != nil {
			b.Screenshot(t, "quantvis-"+name+"-failure")
			t.Fatal(err)
		}
	}
	must(chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/lab?prompt=Once%20upon%20a%20time&n=3")))
	must(waitJS(ctx, `!document.getElementById("btn-token").disabled && document.querySelector('[data-testid="mv-block-form"]') !== null`))
	must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="btn-token"]`))))
	must(waitJS(ctx, `document.querySelectorAll('[data-testid="bytes-per-param"] tr[data-type]').length > 0 && document.body.dataset.busy === "0"`))

	// the memory panel: bytes per parameter by type, from the tensors
	rows := evalJS[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="bytes-per-param"] tr[data-type]')].map(r => [r.dataset.type, r.dataset.bpp, r.dataset.params, r.dataset.bytes, r.lastChild.textContent].join("|"))`)
	bt := m.Weights.ByType()
	if len(rows) != len(bt) {
		t.Fatalf("bytes per parameter: %d rows %q, engine %+v", len(rows), rows, bt)
	}
	wantBPP := map[string]float64{"q4_k": 0.5625, "q8_0": 1.0625, "f32": 4}
	for i, x := range bt {
		want := fmt.Sprintf("%s|%v|%d|%d|%v", x.Type, x.BytesPerParam, x.Params, x.Bytes, strconv.FormatFloat(x.BytesPerParam, 'f', -1, 64))
		if rows[i] != want || x.BytesPerParam != wantBPP[x.Type] {
			t.Errorf("bytes per parameter row %d: page %q, engine %q (want %v for %s)", i, rows[i], want, wantBPP[x.Type], x.Type)
		}
	}
	if got := evalJS[string](t, ctx, `document.querySelector('[data-testid="bytes-per-param-wrap"]').dataset.overall`); got != fmt.Sprint(float64(m.Weights.Bytes())/float64(m.Weights.NumParams())) {
		t.Errorf("overall bytes per parameter %s, engine %d/%d", got, m.Weights.Bytes(), m.Weights.NumParams())
	}

	// a block of Wq (Q4_K) and of the MLP's down projection (Q8_0: 704 columns)
	for _, c := range []struct {
		matrix          string
		layer, row, blk int
		mat             func(w *engine.Weights) *engine.Mat
	}{
		{"wq", 1, 5, 0, func(w *engine.Weights) *engine.Mat { return &w.Layers[1].Wq }},
		{"down", 3, 200, 21, func(w *engine.Weights) *engine.Mat { return &w.Layers[3].WDown }},
	} {
		must(chromedp.Do(ctx, chromedp.SetValue(`#mv-block-matrix`, c.matrix)))
		must(chromedp.Do(ctx, chromedp.SetValue(`#mv-block-layer`, fmt.Sprint(c.layer))))
		must(chromedp.Do(ctx, chromedp.SetValue(`#mv-block-row`, fmt.Sprint(c.row))))
		must(chromedp.Do(ctx, chromedp.SetValue(`#mv-block-index`, fmt.Sprint(c.blk))))
		must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="mv-block-show"]`))))
		must(waitJS(ctx, fmt.Sprintf(`(() => { const o = document.querySelector('[data-testid="mv-block-out"]'); return o.dataset.matrix === %q && o.dataset.row === "%d" && o.dataset.block === "%d" })()`, c.matrix, c.row, c.blk)))
		w := c.mat(&m.Weights)
		typ := w.Q.Type
		n, bb := typ.BlockSize(), typ.BlockBytes()
		raw := w.Q.Data[c.row*w.Q.RowBytes+c.blk*bb : c.row*w.Q.RowBytes+(c.blk+1)*bb]
		vals := make([]float32, n)
		if err := quant.Dequantize(typ, vals, raw); err != nil {
			t.Fatal(err)
		}
		u, err := quant.Unpack(typ, raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := evalJS[string](t, ctx, `document.querySelector('[data-testid="mv-block-out"]').dataset.type`); got != typ.String() {
			t.Errorf("%s: block type %s, engine %s", c.matrix, got, typ)
		}
		if got := evalJS[string](t, ctx, `document.querySelector('[data-testid="mv-block-scales"] [data-key="d"]').dataset.v`); parseF32(t, got) != u.D {
			t.Errorf("%s: d %s, engine %g", c.matrix, got, u.D)
		}
		if typ == quant.Q4_K {
			subs := evalJS[[]string](t, ctx, `[...document.querySelectorAll('[data-testid="mv-block-subs"] tr[data-sub]')].map(r => [...r.children].slice(1).map(c => c.textContent).filter((_, k) => k === 0 || k === 2).join("|"))`)
			if len(subs) != 8 {
				t.Fatalf("%d sub-block rows, want 8", len(subs))
			}
			for j, s := range subs {
				if want := fmt.Sprintf("%d|%d", u.SubScales[j], u.SubMins[j]); s != want {
					t.Errorf("sub-block %d: page %q, engine scale|min %q", j, s, want)
				}
			}
		}
		got := evalJS[[]blockRow](t, ctx, `[...document.querySelectorAll('[data-testid="mv-block-values"] tr[data-i]')].map(r => ({I: +r.dataset.i, Q: r.dataset.q, V: r.dataset.v, O: r.dataset.o || "", E: r.dataset.e || ""}))`)
		if len(got) != n {
			t.Fatalf("%s: %d value rows, want %d", c.matrix, len(got), n)
		}
		var orig []float32
		if m.Original != nil {
			ow := c.mat(m.Original)
			orig = ow.Row(c.row, make([]float32, ow.Cols))[c.blk*n : (c.blk+1)*n]
		}
		for i, r := range got {
			if r.Q != fmt.Sprint(u.Q[i]) || parseF32(t, r.V) != vals[i] {
				t.Fatalf("%s value %d: stored %s value %s, engine %d %g", c.matrix, i, r.Q, r.V, u.Q[i], vals[i])
			}
			if orig == nil {
				if r.O != "" || r.E != "" {
					t.Fatalf("%s value %d: original %q error %q shown for a file without originals", c.matrix, i, r.O, r.E)
				}
				continue
			}
			if parseF32(t, r.O) != orig[i] || parseF32(t, r.E) != orig[i]-vals[i] {
				t.Fatalf("%s value %d: original %s error %s, want %g and %g", c.matrix, i, r.O, r.E, orig[i], orig[i]-vals[i])
			}
		}
		if orig == nil {
			if note := evalJS[string](t, ctx, `(document.querySelector('[data-testid="mv-block-no-original"]') || {}).textContent || ""`); !strings.Contains(note, "not known") {
				t.Errorf("no originals: note %q", note)
			}
		} else {
			var maxE float64
			for i := range orig {
				maxE = max(maxE, math.Abs(float64(orig[i]-vals[i])))
			}
			if got := evalJS[string](t, ctx, `document.querySelector('[data-testid="mv-block-error-summary"]').dataset.max`); parseF64(t, got) != maxE {
				t.Errorf("%s: largest error %s, want %g", c.matrix, got, maxE)
			}
		}
	}
	// a block out of range is refused, saying what is allowed
	must(chromedp.Do(ctx, chromedp.SetValue(`#mv-block-row`, "99999")))
	must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="mv-block-show"]`))))
	must(waitJS(ctx, `document.querySelector('[data-testid="mv-block-error"]') !== null`))
	if msg := evalJS[string](t, ctx, `document.querySelector('[data-testid="mv-block-error"]').textContent`); !strings.Contains(msg, "row 99999 out of range") || !strings.Contains(msg, "rows 0 to") {
		t.Errorf("out-of-range block: %q", msg)
	}
	must(chromedp.Do(ctx, chromedp.SetValue(`#mv-block-row`, "5")))
	must(chromedp.Do(ctx, chromedp.SetValue(`#mv-block-matrix`, "wq")))
	must(chromedp.Do(ctx, chromedp.SetValue(`#mv-block-layer`, "1")))
	must(chromedp.Do(ctx, chromedp.SetValue(`#mv-block-index`, "0")))
	must(chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid="mv-block-show"]`))))
	must(waitJS(ctx, `document.querySelector('[data-testid="mv-block-values"]') !== null`))
	b.AssertNoJSErrors(t)

	for _, vp := range []struct {
		w, h   int64
		mobile bool
	}{{1366, 900, false}, {1280, 720, false}, {390, 844, true}} {
		for _, dark := range []bool{false, true} {
			b.SetViewport(t, vp.w, vp.h, vp.mobile)
			b.SetDark(t, dark)
			mode := map[bool]string{false: "light", true: "dark"}[dark]
			if over := evalJS[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
				t.Errorf("%dx%d: the page scrolls sideways by %d px", vp.w, vp.h, over)
			}
			must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="mv-block-form"]').scrollIntoView({block: "center"})`)))
			b.ViewportScreenshot(t, fmt.Sprintf("quantvis-block-%s-%d-%s", name, vp.w, mode))
			must(chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="bytes-per-param"]').scrollIntoView({block: "center"})`)))
			b.ViewportScreenshot(t, fmt.Sprintf("quantvis-memory-%s-%d-%s", name, vp.w, mode))
			if browsertest.AxeView(vp.w, dark) {
				b.AssertAccessible(t, fmt.Sprintf("lab with a %s block shown, %d px, %s", name, vp.w, mode))
			}
		}
	}
}

func parseF32(t *testing.T, s string) float32 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 32)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return float32(v)
}

func parseF64(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return v
}
