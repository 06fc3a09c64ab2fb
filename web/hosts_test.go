package web

// hosts_test.go: the Host allowlist and the websocket Origin check.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web/catalog"
)

// localRequest is httptest.NewRequest for a loopback Host (httptest's
// default, example.com, is not on the allowlist).
func localRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	r.Host = "127.0.0.1:8080"
	return r
}

func TestHostPolicy(t *testing.T) {
	p := newHostPolicy([]string{"Class.Example.org", "teacher-laptop:8080", ""})
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:8080": true, "LOCALHOST.": true, "app.localhost": true, "[::1]:8080": true,
		"192.168.1.20:8080": true, "class.example.org:8080": true, "class.example.org.": true, "teacher-laptop": true,
		"rebind.example:8080": false, "127.0.0.1.nip.io": false, "": false, "localhost.evil.com": false, "example.com": false,
	} {
		if got := p.allowed(host); got != want {
			t.Errorf("allowed(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestStateChangeNeedsJSONAndOrigin: POST /api/pull from a cross-site form
// or page is refused before the puller sees it.
func TestStateChangeNeedsJSONAndOrigin(t *testing.T) {
	fp := &fakePuller{st: PullStatus{State: "idle"}}
	s, err := New(Options{Puller: fp})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ctype, origin, site string
		code                      int
		want                      string
	}{
		{"form post", "application/x-www-form-urlencoded", "", "", 415, "application/json"},
		{"text/plain post", "text/plain", "", "", 415, "application/json"},
		{"foreign origin", "application/json", "http://evil.example", "", 403, "may not change"},
		{"cross-site fetch", "application/json", "", "cross-site", 403, "cross-site"},
		{"same origin", "application/json; charset=utf-8", "http://127.0.0.1:8080", "same-origin", 202, "running"},
	}
	for _, tt := range tests {
		req := localRequest(http.MethodPost, "/api/pull", strings.NewReader(`{"repo":"org/model"}`))
		req.Header.Set("Content-Type", tt.ctype)
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		if tt.site != "" {
			req.Header.Set("Sec-Fetch-Site", tt.site)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s: %d %s; want %d with %q", tt.name, rec.Code, rec.Body.String(), tt.code, tt.want)
		}
	}
}

// TestNoServerPathsInModelCards: /api/models and welcome show where a model
// came from without the server's directories.
func TestNoServerPathsInModelCards(t *testing.T) {
	for src, want := range map[string]string{
		"/root/.cache/huggingface/hub/models--org--x/snapshots/abc123": "abc123",
		"models/stories/model.bin":                                     "model.bin",
		"hf-cache:org/x":                                               "hf-cache:org/x",
		"embedded:default":                                             "embedded:default",
		"random:stories15M":                                            "random:stories15M",
	} {
		if got := catalog.DisplaySource(src); got != want {
			t.Errorf("displaySource(%q) = %q, want %q", src, got, want)
		}
	}
}
