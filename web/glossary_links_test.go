package web_test

// glossary_links_test.go: every glossary term links to where it is live
// on this site, and every link lands: the page answers, a lesson section
// exists, a lab panel is on the lab page.

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/lessons"
	"github.com/inferscope/inferscope/web/ws"
)

func TestGlossaryLinksLand(t *testing.T) {
	terms, err := lessons.Glossary()
	if err != nil {
		t.Fatal(err)
	}
	ts := newWSServer(t, ws.Limits{})
	pages := map[string]string{}
	get := func(path string) string {
		if b, ok := pages[path]; ok {
			return b
		}
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		pages[path] = string(b)
		return pages[path]
	}
	if b := get("/lessons/sampling"); !strings.Contains(b, `data-testid="glossary-see"`) {
		t.Error("the lesson's word list has no \"See it live\" links")
	}
	for _, tm := range terms {
		t.Run(tm.Name, func(t *testing.T) {
			if tm.See == "" {
				t.Fatalf("%s has no see: line (where it is live)", tm.Name)
			}
			u, err := url.Parse(tm.See)
			if err != nil {
				t.Fatal(err)
			}
			body := get(u.Path)
			if u.Fragment != "" && !strings.Contains(body, `id="`+u.Fragment+`"`) {
				t.Errorf("%s: %s has no element #%s", tm.Name, u.Path, u.Fragment)
			}
			if s := u.Query().Get("s"); s != "" {
				n, _ := strconv.Atoi(s)
				if !strings.Contains(body, `id="section-`+s+`"`) || n < 1 {
					t.Errorf("%s: %s has no section %s", tm.Name, u.Path, s)
				}
			}
		})
	}
}
