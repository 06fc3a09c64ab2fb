package web

// e2e_test.go: the home page in headless Chromium, with axe-core.

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/inferscope/inferscope/internal/browsertest"
)

func TestBrowserHome(t *testing.T) {
	ts := httptest.NewServer(newTestServer(t))
	defer ts.Close()
	b := browsertest.New(t)

	if err := chromedp.Do(b.Ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="home-title"]`))); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(b.Ctx, chromedp.Text(chromedp.CSS(`[data-testid="home-title"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(title, "language model") {
		t.Errorf("home title %q", title)
	}
	lessons, err := chromedp.Run(b.Ctx, chromedp.Text(chromedp.CSS(`[data-testid="lesson-list"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lessons, "What happens after you press send") {
		t.Errorf("lesson list %q", lessons)
	}
	b.Screenshot(t, "home")
	b.AssertNoJSErrors(t)
}
