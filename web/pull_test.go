package web

// pull_test.go: the pull HTTP endpoints against a fake hub.

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type fakePuller struct {
	started string
	st      PullStatus
}

func (f *fakePuller) Presets() any { return []string{"org/model"} }
func (f *fakePuller) Status() PullStatus {
	return f.st
}
func (f *fakePuller) Cancel() error {
	if f.st.State != "running" {
		return errors.New("no download is running")
	}
	f.st.State = "cancelled"
	return nil
}

func (f *fakePuller) Start(repo string) error {
	if repo == "bad" {
		return errors.New(`repo "bad" is not a valid model id`)
	}
	f.started = repo
	f.st = PullStatus{Repo: repo, State: "running", File: "model.safetensors", Done: 10, Total: 100}
	return nil
}

func TestPullEndpoints(t *testing.T) {
	fp := &fakePuller{st: PullStatus{State: "idle"}}
	s, err := New(Options{Puller: fp})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, body string
		code         int
		want         string
	}{
		{"GET", "", 200, `"presets":["org/model"]`},
		{"POST", `{"repo":"org/model"}`, 202, `"state":"running"`},
		{"POST", `{"repo":"bad"}`, 400, "not a valid model id"},
		{"POST", `{nope`, 400, "want a JSON body"},
		{"DELETE", "", 200, `"state":"cancelled"`},
		{"DELETE", "", 409, "no download is running"},
	}
	for _, tt := range tests {
		req := localRequest(tt.method, "/api/pull", strings.NewReader(tt.body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s %s: %d %s; want %d containing %q", tt.method, tt.body, rec.Code, rec.Body.String(), tt.code, tt.want)
		}
	}
	if fp.started != "org/model" {
		t.Errorf("started %q", fp.started)
	}
	s2, _ := New(Options{})
	rec := httptest.NewRecorder()
	s2.ServeHTTP(rec, localRequest(http.MethodGet, "/api/pull", nil))
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "serve --allow-pull") {
		t.Errorf("no puller: %d %s", rec.Code, rec.Body.String())
	}
}
