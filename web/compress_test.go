package web

// compress_test.go: gzip for pages and static files, HEAD for every GET
// page, and the vocabulary search behind the lab's force box.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web/catalog"
)

// defaultEngineCatalog is a catalog holding the embedded default model.
func defaultEngineCatalog(t testing.TB) *catalog.EngineCatalog {
	t.Helper()
	cat, err := catalog.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func catalogServer(t *testing.T) (*Server, *catalog.EngineCatalog) {
	t.Helper()
	cat := defaultEngineCatalog(t)
	s, err := New(Options{Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	return s, cat
}

// getPaths are the pages and files a browser GETs.
var getPaths = []string{"/", "/lab", "/compare", "/lessons", "/lessons/after-send", "/healthz", "/api/models", "/static/js/lab.js", "/static/css/app.css", "/static/img/favicon.svg"}

func TestHeadAnswersEveryGetPage(t *testing.T) {
	s, _ := catalogServer(t)
	for _, p := range getPaths {
		get := httptest.NewRecorder()
		s.ServeHTTP(get, localRequest(http.MethodGet, p, nil))
		head := httptest.NewRecorder()
		s.ServeHTTP(head, localRequest(http.MethodHead, p, nil))
		if head.Code != get.Code || get.Code != http.StatusOK {
			t.Errorf("%s: HEAD %d, GET %d; want both 200", p, head.Code, get.Code)
		}
		if head.Body.Len() != 0 {
			t.Errorf("%s: HEAD sent %d body bytes", p, head.Body.Len())
		}
		if hc, gc := head.Header().Get("Content-Type"), get.Header().Get("Content-Type"); hc != gc {
			t.Errorf("%s: HEAD Content-Type %q, GET %q", p, hc, gc)
		}
	}
	// a POST-only route still refuses HEAD and GET's 404s stay 404s
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, localRequest(http.MethodHead, "/no/such/page", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("HEAD of a missing page: %d", rec.Code)
	}
}

func TestGzip(t *testing.T) {
	s, _ := catalogServer(t)
	tests := []struct {
		path    string
		gzipped bool
	}{
		{"/lab", true}, {"/compare", true}, {"/", true}, {"/lessons/sampling", true},
		{"/static/js/lab.js", true}, {"/static/js/panels.js", true}, {"/static/css/app.css", true},
		{"/healthz", false}, // too small to be worth it
	}
	for _, tt := range tests {
		plain := httptest.NewRecorder()
		s.ServeHTTP(plain, localRequest(http.MethodGet, tt.path, nil))
		req := localRequest(http.MethodGet, tt.path, nil)
		req.Header.Set("Accept-Encoding", "br;q=1.0, gzip;q=0.8")
		zipped := httptest.NewRecorder()
		s.ServeHTTP(zipped, req)
		if plain.Header().Get("Content-Encoding") != "" {
			t.Errorf("%s: compressed for a client that did not ask", tt.path)
		}
		if got := zipped.Header().Get("Content-Encoding") == "gzip"; got != tt.gzipped {
			t.Errorf("%s: gzip %v, want %v", tt.path, got, tt.gzipped)
			continue
		}
		if !tt.gzipped {
			continue
		}
		zr, err := gzip.NewReader(zipped.Body)
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		body, _ := io.ReadAll(zr)
		if !bytes.Equal(body, plain.Body.Bytes()) && !strings.HasPrefix(tt.path, "/lessons") {
			t.Errorf("%s: gunzipped body differs from the plain one (%d vs %d bytes)", tt.path, len(body), plain.Body.Len())
		}
		if zipped.Body.Len() >= plain.Body.Len() && zipped.Body.Len() > 0 {
			t.Errorf("%s: gzip did not shrink it", tt.path)
		}
		if !strings.Contains(zipped.Header().Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: no Vary: Accept-Encoding", tt.path)
		}
	}
	// gzip;q=0 means no
	req := localRequest(http.MethodGet, "/static/js/lab.js", nil)
	req.Header.Set("Accept-Encoding", "gzip;q=0")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 got a gzipped body")
	}
	// a compressed asset revalidates with its own ETag
	req = localRequest(http.MethodGet, "/static/js/lab.js", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	req.Header.Set("If-None-Match", rec.Header().Get("ETag"))
	rec2 := httptest.NewRecorder()
	s.ServeHTTP(rec2, req)
	if rec2.Code != http.StatusNotModified || rec2.Header().Get("Content-Encoding") != "" {
		t.Errorf("revalidating the gzipped asset: %d, Content-Encoding %q", rec2.Code, rec2.Header().Get("Content-Encoding"))
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tt := range []struct {
		header string
		want   bool
	}{
		{"", false}, {"gzip", true}, {"deflate, gzip", true}, {"GZIP", true}, {"gzip;q=0", false}, {"gzip; q=0.5", true},
		{"*", true}, {"br", false}, {"identity", false}, {"gzip;q=abc", false},
	} {
		if got := acceptsGzip(tt.header); got != tt.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestSearchVocab(t *testing.T) {
	s, cat := catalogServer(t)
	m, _ := cat.Model("")
	tk := m.Tokenizer
	// a multi-letter token of the vocabulary, and its id
	id := -1
	for i := 0; i < m.Config.VocabSize; i++ {
		if tx := string(tk.TokenBytes(i)); len(tx) >= 4 && strings.HasPrefix(tx, " ") && !tk.IsSpecial(i) {
			id = i
			break
		}
	}
	if id < 0 {
		t.Fatal("no word token in the vocabulary")
	}
	text := string(tk.TokenBytes(id))
	tests := []struct {
		name, q string
		check   func([]catalog.VocabEntry) string
		status  int
	}{
		{"by id", " " + strconv.Itoa(id) + " ", func(es []catalog.VocabEntry) string {
			if len(es) != 1 || es[0].ID != id || es[0].Text != text {
				return "want exactly the token"
			}
			return ""
		}, 200},
		{"by text, exact first", text, func(es []catalog.VocabEntry) string {
			if len(es) == 0 || es[0].ID != id {
				return "want the exact match first"
			}
			for _, e := range es {
				if !strings.Contains(strings.ToLower(e.Text), strings.ToLower(strings.TrimSpace(text))) && !strings.Contains(strings.ToLower(e.Piece), strings.ToLower(strings.TrimSpace(text))) {
					return "a result that does not contain the query: " + e.Text
				}
			}
			return ""
		}, 200},
		{"a byte piece", string(tk.Piece(195)), func(es []catalog.VocabEntry) string {
			for _, e := range es {
				if e.ID == 195 && e.Text == "" && len(e.Bytes) == 1 {
					return ""
				}
			}
			return "want token 195 as one byte with no text"
		}, 200},
		{"no match", "\u2603\u2603\u2603", func(es []catalog.VocabEntry) string {
			if len(es) != 0 {
				return "want none"
			}
			return ""
		}, 200},
		{"id out of range", strconv.Itoa(m.Config.VocabSize), nil, 400},
		{"too long", strings.Repeat("a", 300), nil, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := localRequest(http.MethodGet, "/api/vocab?q="+url.QueryEscape(tt.q), nil)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body.String())
			}
			if tt.check == nil {
				var e map[string]string
				json.Unmarshal(rec.Body.Bytes(), &e)
				if e["error"] == "" {
					t.Errorf("error answer without a message: %s", rec.Body.String())
				}
				return
			}
			var out struct{ Tokens []catalog.VocabEntry }
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Tokens) > maxVocabResults {
				t.Errorf("%d results, limit %d", len(out.Tokens), maxVocabResults)
			}
			if msg := tt.check(out.Tokens); msg != "" {
				t.Errorf("q=%q: %s; got %+v", tt.q, msg, out.Tokens[:min(5, len(out.Tokens))])
			}
		})
	}
	// a server without a searchable catalog says so
	rec := httptest.NewRecorder()
	newTestServer(t).ServeHTTP(rec, localRequest(http.MethodGet, "/api/vocab?q=a", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("no catalog: status %d", rec.Code)
	}
}
