package web_test

// machineview_test.go: /api/machine answers this machine's measured read
// bandwidth for a model-sized and a large buffer, its threads and memory;
// ?probe=model measures the model-sized buffer alone; other sites' pages
// are refused.

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/inferscope/inferscope/web"
)

func TestAPIMachine(t *testing.T) {
	ts, m := labServer(t)
	get := func(path string, site string) (*http.Response, web.MachineView) {
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
		var v web.MachineView
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		return resp, v
	}
	resp, v := get("/api/machine", "same-origin")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	weights := m.Weights.Bytes()
	if v.WeightsLive != weights || v.Threads < 1 || v.Probe == "" {
		t.Errorf("weights %d (model %d), threads %d, probe %q", v.WeightsLive, weights, v.Threads, v.Probe)
	}
	if v.ModelSized.Bytes < int(weights) || v.ModelSized.Bytes >= int(weights)+1<<20 || v.Large.Bytes != 256<<20 {
		t.Errorf("buffers %d and %d bytes; want the weights' size rounded up to a MiB (%d) and 256 MiB", v.ModelSized.Bytes, v.Large.Bytes, weights)
	}
	for _, bw := range []web.Bandwidth{v.ModelSized, v.Large} {
		if bw.BestGBps <= 0 || bw.MedianGBps <= 0 || bw.MedianGBps > bw.BestGBps || bw.Runs < 3 {
			t.Errorf("probe %+v", bw)
		}
	}
	if _, again := get("/api/machine", ""); again.Large.MeasuredAgoMs <= 0 {
		t.Errorf("a second call within 5 s measured the large buffer again (%+v); want the kept answer", again.Large)
	}
	if _, mv := get("/api/machine?probe=model", ""); mv.ModelSized.BestGBps <= 0 || mv.ModelSized.MeasuredAgoMs != 0 || mv.Large.Bytes != 0 {
		t.Errorf("?probe=model: %+v", mv)
	}
	if resp, _ := get("/api/machine", "cross-site"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site read: status %d, want 403", resp.StatusCode)
	}
}
