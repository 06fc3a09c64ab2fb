package web_test

// rebind_test.go: DNS rebinding: requests naming a foreign Host are
// refused.

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/web/ws"
)

// TestDNSRebindingIsRefused: requests naming a foreign Host (what a
// rebinding page's requests carry), with a matching Origin, get 403 on
// every route and the websocket does not upgrade; loopback names and IP
// literals are served.
func TestDNSRebindingIsRefused(t *testing.T) {
	ts := newWSServer(t, ws.Limits{})
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	for _, path := range []string{"/", "/lab", "/api/models", "/api/pull", "/metrics", "/healthz", "/static/css/app.css", "/nope"} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		req.Host = "rebind.example:" + port
		req.Header.Set("Origin", "http://rebind.example:"+port)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "--allow-host") {
			t.Errorf("%s with Host rebind.example: %d %.80s", path, resp.StatusCode, b)
		}
	}
	post, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/pull", strings.NewReader(`{"repo":"a/b"}`))
	post.Host = "rebind.example:" + port
	post.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(post); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /api/pull with Host rebind.example: %v %v", resp.StatusCode, err)
	}
	h := http.Header{"Host": {"rebind.example:" + port}, "Origin": {"http://rebind.example:" + port}}
	d := websocket.Dialer{}
	_, resp, err := d.Dial(wsURL(ts), h)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("websocket with Host rebind.example: err %v, response %v", err, resp)
	}
	// a foreign origin on the right host is refused too
	_, resp, err = d.Dial(wsURL(ts), http.Header{"Origin": {"http://rebind.example:" + port}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("websocket with Origin rebind.example: err %v", err)
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port} {
		_, resp, err := d.Dial(wsURL(ts), http.Header{"Host": {host}, "Origin": {"http://" + host}})
		if err != nil {
			t.Errorf("websocket with Host %s: %v %v", host, err, resp)
		}
	}
}
