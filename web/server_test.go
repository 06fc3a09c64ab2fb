package web

// server_test.go: HTTP routes and static caching headers.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web/views"
)

func newTestServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(Options{
		ModelName: "test-model",
		Lessons:   []views.LessonLink{{Slug: "after-send", Title: "What happens after you press send"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRoutes(t *testing.T) {
	s := newTestServer(t)
	tests := []struct {
		name       string
		path       string
		header     map[string]string
		wantStatus int
		wantType   string
		wantBody   []string
	}{
		{"home", "/", nil, 200, "text/html", []string{`data-testid="home-title"`, "What happens after you press send", "test-model"}},
		{"404 page", "/no/such/page", map[string]string{"Accept": "text/html"}, 404, "text/html", []string{`data-testid="notfound-title"`, "/no/such/page"}},
		{"css", "/static/css/app.css", nil, 200, "text/css", []string{"--accent"}},
		{"js", "/static/js/site.js", nil, 200, "javascript", []string{"aria-current"}},
		{"missing asset", "/static/nope.js", nil, 404, "", nil},
		{"traversal", "/static/../static.go", nil, 404, "", nil},
		{"encoded traversal", "/static/%2e%2e/static.go", nil, 404, "", nil},
		{"go source not served", "/static/static.go", nil, 404, "", nil},
		{"healthz", "/healthz", nil, 200, "text/plain", []string{"ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := localRequest(http.MethodGet, tt.path, nil)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("GET %s: status %d, want %d; body %q", tt.path, rec.Code, tt.wantStatus, rec.Body.String())
			}
			if ct := rec.Header().Get("Content-Type"); !strings.Contains(ct, tt.wantType) {
				t.Errorf("Content-Type %q, want it to contain %q", ct, tt.wantType)
			}
			body, _ := io.ReadAll(rec.Body)
			for _, w := range tt.wantBody {
				if !strings.Contains(string(body), w) {
					t.Errorf("body lacks %q", w)
				}
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("CSP header %q", csp)
			}
			if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("missing nosniff")
			}
		})
	}
}

func TestStaticCaching(t *testing.T) {
	s := newTestServer(t)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, localRequest(http.MethodGet, "/static/css/app.css", nil))
	etag := rec.Header().Get("ETag")
	if etag == "" || !strings.Contains(rec.Header().Get("Cache-Control"), "max-age=") {
		t.Fatalf("want ETag and Cache-Control, got %v", rec.Header())
	}
	req := localRequest(http.MethodGet, "/static/css/app.css", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Fatalf("revalidation: status %d, %d body bytes; want 304 and empty", rec.Code, rec.Body.Len())
	}
}
