package web_test

// quantview_test.go: /api/quantization measures the default model in every
// compared precision, keeps its answer a few seconds, and refuses bad
// arguments and other sites' pages with errors naming what is allowed.

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/inferscope/inferscope/web"
)

func TestAPIQuantization(t *testing.T) {
	t.Parallel()
	ts, _ := labServer(t)
	get := func(t *testing.T, path, site string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tt := range []struct {
		name, path, site string
		status           int
		want             string // in the body
	}{
		{"steps zero", "/api/quantization?steps=0", "", 400, `steps \"0\": allowed 1 to 64`},
		{"steps too many", "/api/quantization?steps=65", "", 400, "allowed 1 to 64"},
		{"rounds not a number", "/api/quantization?rounds=x", "", 400, `rounds \"x\": allowed 1 to 7`},
		{"cross-site", "/api/quantization", "cross-site", 403, "this site's pages only"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := get(t, tt.path, tt.site)
			if code != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("status %d body %s; want %d with %q", code, body, tt.status, tt.want)
			}
		})
	}
	code, body := get(t, "/api/quantization?steps=4&rounds=1", "same-origin")
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var v web.QuantView
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	if v.PrecisionComparison == nil || v.MeasuredAgoMs != 0 {
		t.Fatalf("first answer %s", body)
	}
	_, again := get(t, "/api/quantization?steps=4&rounds=1", "")
	var w web.QuantView
	if err := json.Unmarshal([]byte(again), &w); err != nil || w.MeasuredAgoMs <= 0 {
		t.Errorf("a second call within 5 s measured again (%s); want the kept answer", again)
	}
}
