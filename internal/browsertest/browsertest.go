// Package browsertest starts headless Chromium for page tests with chromedp,
// and checks pages with axe-core.
package browsertest

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/testenv"
)

// Debian packages one Chromium build two ways: chromium, the full browser
// run headless, and chromium-headless-shell, the same Blink, V8 and Skia in
// the old headless shell, without the browser's own layers (the shell is
// what Playwright and Puppeteer run headless tests on). The page tests run
// in the shell when it is installed: the web package's browser tests took
// 342 CPU-seconds there against 537 in the full browser (same machine, same
// tests, run back to back), and a page costs about a third as much to
// load. What only the full browser does (its back/forward cache: the shell
// turns it off) is tested there, with NewFull.
var (
	shellNames = []string{"chromium-headless-shell", "chrome-headless-shell"}
	fullNames  = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
)

// FindChromium returns the browser binary the page tests use: $CHROMIUM,
// else Chromium's headless shell, else the full browser, on PATH.
func FindChromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	return lookPath(append(shellNames, fullNames...))
}

// FindFullChromium returns the full browser: $CHROMIUM unless it names a
// headless shell, else chromium or google-chrome on PATH.
func FindFullChromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" && !strings.Contains(filepath.Base(p), "headless-shell") {
		return p, nil
	}
	return lookPath(fullNames)
}

func lookPath(names []string) (string, error) {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %s found on PATH (install Debian's: apt-get install -y chromium chromium-headless-shell, or set CHROMIUM)", strings.Join(names, ", "))
}

// Browser is one headless tab plus the console errors it has logged.
type Browser struct {
	Ctx    context.Context
	mu     sync.Mutex
	errors []string
}

// New opens a tab in headless Chromium (the headless shell where it is
// installed: see FindChromium) for the test and closes it at cleanup. It
// skips with -short or when no browser is installed; with CI=true a missing
// browser is a failure and -short is not used.
func New(t testing.TB) *Browser {
	t.Helper()
	return open(t, FindChromium)
}

// NewFull is New in the full browser, for what the headless shell does not
// do (the back/forward cache).
func NewFull(t testing.TB) *Browser {
	t.Helper()
	return open(t, FindFullChromium)
}

func open(t testing.TB, find func() (string, error)) *Browser {
	t.Helper()
	if testing.Short() && !testenv.InCI() {
		t.Skip("browser test: skipped with -short (CI runs it)")
	}
	bin, err := find()
	if err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	browser, err := acquireBrowser(bin)
	if err != nil {
		t.Fatalf("start chromium (%s): %v", bin, err)
	}
	// a tab of its own in a browser context of its own (cookies, storage
	// and cache apart from every other test's), in the shared browser
	ctx, cancelC := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	// generous: a loaded machine (CI, other jobs) slows Chromium a lot
	ctx, cancelT := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); releaseBrowser(bin) })
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		t.Fatalf("open a tab in chromium (%s): %v", bin, err)
	}
	// the network recorder copies every request and websocket frame into
	// a DevTools event for chromedp to decode; no test reads them, and with
	// them on Chromium and the test binary spent ~11% more CPU
	off := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.Disable, cdp.Empty{})
		return err
	})
	if _, err := chromedp.Run(ctx, off); err != nil {
		t.Fatalf("turn the network recorder off in chromium (%s): %v", bin, err)
	}
	if dir := os.Getenv("INFERSCOPE_JS_PROFILE"); dir != "" {
		profileJS(t, ctx, dir)
	}
	b := &Browser{Ctx: ctx}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				b.mu.Lock()
				b.errors = append(b.errors, m.Text)
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// shared holds the one process of each browser binary that a test
// binary's browser tests share: starting one costs about a second, and each
// test gets a tab in a fresh browser context of it. A browser closes a few
// seconds after its last user, and the kernel kills it if the test binary
// dies (chromedp's Pdeathsig).
var shared = struct {
	mu       sync.Mutex
	browsers map[string]*sharedBrowser
}{browsers: map[string]*sharedBrowser{}}

type sharedBrowser struct {
	ctx    context.Context
	cancel func()
	users  int
	idle   *time.Timer
}

// acquireBrowser returns the shared browser's context for bin, starting it
// if needed; releaseBrowser gives it back.
func acquireBrowser(bin string) (context.Context, error) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	sb := shared.browsers[bin]
	if sb == nil {
		sb = &sharedBrowser{}
		shared.browsers[bin] = sb
	}
	if sb.idle != nil {
		sb.idle.Stop()
		sb.idle = nil
	}
	if sb.ctx == nil || sb.ctx.Err() != nil {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(bin),
			chromedp.NoSandbox,
			chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("no-first-run", true),
			chromedp.WindowSize(1366, 900),
		)
		actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelB := chromedp.NewContext(actx)
		if err := chromedp.Do(bctx); err != nil {
			cancelB()
			cancelA()
			return nil, err
		}
		sb.ctx, sb.cancel = bctx, func() { cancelB(); cancelA() }
	}
	sb.users++
	return sb.ctx, nil
}

func releaseBrowser(bin string) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	sb := shared.browsers[bin]
	if sb.users--; sb.users > 0 {
		return
	}
	sb.idle = time.AfterFunc(5*time.Second, func() {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		if sb.users == 0 && sb.cancel != nil {
			sb.cancel()
			sb.ctx, sb.cancel = nil, nil
		}
	})
}

// JSErrors returns the console errors and uncaught exceptions seen so far.
func (b *Browser) JSErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// AssertNoJSErrors fails the test if the page logged an error.
func (b *Browser) AssertNoJSErrors(t testing.TB) {
	t.Helper()
	if errs := b.JSErrors(); len(errs) > 0 {
		t.Errorf("page logged %d JavaScript errors:\n%s", len(errs), strings.Join(errs, "\n"))
	}
}

// Screenshot saves a full-page PNG as $ARTIFACTS_DIR/name.png; it does
// nothing when ARTIFACTS_DIR is unset (.ci/run sets it).
func (b *Browser) Screenshot(t testing.TB, name string) {
	t.Helper()
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("screenshot dir: %v", err)
		return
	}
	if err := os.WriteFile(dir+"/"+name+".png", png, 0o644); err != nil {
		t.Errorf("write screenshot: %v", err)
	}
}

//go:embed testdata/axe.min.js
var axeSource string

// AxeViolation is one rule axe-core found broken on a page.
type AxeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

// Axe runs axe-core (vendored: testdata/VERSIONS) on the current page and
// returns its violations of impact serious or critical.
//
// It runs only the rules that can report such a violation: axe-core gives
// every node a rule flags the rule's own impact (in 4.14.1 a rule's impact
// is copied onto each of its checks' results, and a node's impact is the
// highest of those), so a rule whose impact is moderate or minor ("region",
// "heading-order", ...) never reports one, and running it only costs time.
// The rules are the ones a default run would use (enabled, not experimental
// or deprecated) with impact serious or critical: TestAxeSeriousRulesOnly
// checks that this finds what a full run finds.
func (b *Browser) Axe(t testing.TB) []AxeViolation {
	t.Helper()
	return b.axe(t, axeSeriousRules)
}

// axeSeriousRules picks the rules Axe runs (see Axe); axeAllRules is a
// default run's.
const (
	axeSeriousRules = `{runOnly: {type: "rule", values: axe._audit.rules.filter(r => r.enabled !== false && (r.impact === "serious" || r.impact === "critical") &&
		!r.tags.includes("experimental") && !r.tags.includes("deprecated")).map(r => r.id)}, resultTypes: ["violations"]}`
	axeAllRules = `{resultTypes: ["violations"]}`
)

func (b *Browser) axe(t testing.TB, options string) []AxeViolation {
	t.Helper()
	var vs []AxeViolation
	// once per document: parsing the 550 KB script again each call costs
	// more than the check
	loaded, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`typeof axe === "object"`))
	if err != nil {
		t.Fatalf("look for axe-core in the page: %v", err)
	}
	if !loaded {
		if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[chromedp.Void](axeSource)); err != nil {
			t.Fatalf("inject axe-core: %v", err)
		}
	}
	vs, err = chromedp.Run(b.Ctx, chromedp.Evaluate[[]AxeViolation](`axe.run(document, `+options+`).then(r =>
		r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v =>
			({id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map(n => n.target.join(" ") + " — " + (n.failureSummary || "").replace(/\s+/g, " ").slice(0, 160))})))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	return vs
}

// AxeView says which views of a test's screenshot matrix (one page state
// at 1366×900, 1280×720 and 390×844, light and dark) get an axe-core run:
// 1366 px in both color schemes, and 390 px in dark. The 1280 px views lay
// out the same elements in the same colors as the 1366 px ones, a little
// narrower; 390 px is the phone layout (other elements shown and hidden)
// in the colors already checked at 1366 px. Every view is still
// screenshotted. An axe-core run costs 0.1–0.9 CPU-seconds (most of it
// color-contrast), and a matrix run everywhere was about a quarter of the
// browser tests' CPU.
func AxeView(width int64, dark bool) bool {
	return width >= 1366 || (width <= 500 && dark)
}

// AssertAccessible fails the test when axe-core finds serious or critical
// violations on the current page; what names the page in the message.
func (b *Browser) AssertAccessible(t testing.TB, what string) {
	t.Helper()
	for _, v := range b.Axe(t) {
		t.Errorf("%s: axe %s (%s): %s\n  %s", what, v.ID, v.Impact, v.Help, strings.Join(v.Targets, "\n  "))
	}
}

// SetDark switches the page's prefers-color-scheme to dark (or back).
func (b *Browser) SetDark(t testing.TB, dark bool) {
	t.Helper()
	v := "light"
	if dark {
		v = "dark"
	}
	set := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
		return err
	})
	if err := chromedp.Do(b.Ctx, set); err != nil {
		t.Fatalf("emulate %s mode: %v", v, err)
	}
}

// SetViewport resizes the page's viewport to w×h CSS pixels.
func (b *Browser) SetViewport(t testing.TB, w, h int64, mobile bool) {
	t.Helper()
	if _, err := chromedp.Run(b.Ctx, chromedp.EmulateViewport(w, h, chromedp.EmulateScale(1), func(p *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
		p.Mobile = mobile
	})); err != nil {
		t.Fatalf("viewport %dx%d: %v", w, h, err)
	}
}

// ViewportScreenshot saves what is on screen (not the whole page) as
// $ARTIFACTS_DIR/name.png; nothing when ARTIFACTS_DIR is unset.
func (b *Browser) ViewportScreenshot(t testing.TB, name string) {
	t.Helper()
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(dir+"/"+name+".png", png, 0o644); err != nil {
		t.Errorf("write screenshot: %v", err)
	}
}
