package web_test

// visitors_test.go: per-visitor and per-address session limits, idle
// expiry, the connection cap.

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/inferscope/inferscope/models"
	"github.com/inferscope/inferscope/web"
	"github.com/inferscope/inferscope/web/catalog"
	"github.com/inferscope/inferscope/web/wire"
	"github.com/inferscope/inferscope/web/ws"
)

// fromAddr dials from a given loopback address (127.0.0.0/8 is all
// loopback on Linux), so tests have several "visitors".
func fromAddr(ip string) websocket.Dialer {
	return websocket.Dialer{NetDialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
}

func httpFrom(ip string) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}}
}

func dialWith(t testing.TB, d websocket.Dialer, url string, h http.Header) *wsClient {
	t.Helper()
	c, _, err := d.Dial(url, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w := &wsClient{t: t, c: c}
	if m := w.read(); m.Type != wire.MsgWelcome {
		t.Fatalf("first message %s", m.Type)
	}
	return w
}

// TestSessionsPerVisitor: one address cannot hold every session; another
// address still gets in; behind a trusted proxy the header decides.
func TestSessionsPerVisitor(t *testing.T) {
	ts := newWSServer(t, ws.Limits{MaxSessions: 10, MaxSessionsPerVisitor: 2})
	a1, a2 := dial(t, ts), dial(t, ts)
	c, _, err := websocket.DefaultDialer.Dial(wsURL(ts), nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &wsClient{t: t, c: c}
	w.expectError("too_many_sessions")
	if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseTryAgainLater) {
		t.Errorf("third session from one address: %v, want close 1013", err)
	}
	other := dialWith(t, fromAddr("127.0.0.2"), wsURL(ts), nil)
	runToEnd(t, other, "The", 3)
	a1.c.Close()
	// the server has released a1's session (a2 and other remain)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(metricsText(t, ts), "\ninferscope_sessions 2\n"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a closed session was never released")
		}
	}
	runToEnd(t, dial(t, ts), "The", 2) // a slot is free again
	_ = a2

	m, _ := models.Default()
	cat := catalog.NewEngineCatalog()
	cat.Add(m, "", true)
	srv, _ := web.New(web.Options{Catalog: cat, ClientIPHeader: "X-Forwarded-For", Limits: ws.Limits{MaxSessionsPerVisitor: 1}})
	ps := newServerFor(t, srv)
	dialWith(t, websocket.Dialer{}, wsURL(ps), http.Header{"X-Forwarded-For": {"10.0.0.1"}})
	dialWith(t, websocket.Dialer{}, wsURL(ps), http.Header{"X-Forwarded-For": {"203.0.113.9, 10.0.0.2"}})
	c, _, err = websocket.DefaultDialer.Dial(wsURL(ps), http.Header{"X-Forwarded-For": {"10.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	(&wsClient{t: t, c: c}).expectError("too_many_sessions")
	c.Close()
}

// TestIdleSessionExpires: a session with no command (pings do not count)
// for the idle timeout gets closing with code "idle"; resume brings the run
// back on a new connection.
func TestIdleSessionExpires(t *testing.T) {
	ts := newWSServer(t, ws.Limits{IdleTimeout: 400 * time.Millisecond})
	w := dial(t, ts)
	start := startPayload("The", 5)
	w.send("start", start)
	w.read()
	w.send("step", nil)
	w.event()
	deadline := time.Now().Add(5 * time.Second)
	var closing struct{ Code, Reason string }
	for time.Now().Before(deadline) {
		w.send("ping", nil)
		m := w.read()
		if m.Type == wire.MsgClosing {
			json.Unmarshal(m.Payload, &closing)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if closing.Code != "idle" || !strings.Contains(closing.Reason, "resume") {
		t.Fatalf("closing %+v, want code idle", closing)
	}
	w.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := w.c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("after closing: %v", err)
	}
	r := dial(t, ts)
	r.send("resume", map[string]any{"start": start, "log": []string{"step"}})
	if m := r.read(); m.Type != wire.MsgResumed {
		t.Fatalf("resume: %s %s", m.Type, m.Payload)
	}
}

// TestSlowHTTPIsCut: half-sent headers are cut after the read-header
// timeout, idle keep-alive connections after the idle timeout, and one
// address's flood of connections is capped so others are still served.
func TestSlowHTTPIsCut(t *testing.T) {
	addr := strings.TrimPrefix(serveReal(t, ws.Limits{ReadHeaderTimeout: 300 * time.Millisecond,
		HTTPIdleTimeout: 300 * time.Millisecond, MaxConnsPerVisitor: 20}), "http://")
	closedWithin := func(c net.Conn, d time.Duration) bool {
		c.SetReadDeadline(time.Now().Add(d))
		_, err := io.ReadAll(c)
		return err == nil // EOF: the server closed it
	}
	// a header sent one byte and then nothing
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("GET / HTTP/1.1\r\nHo"))
	if !closedWithin(c, 3*time.Second) {
		t.Error("a half-sent header kept its connection past the read-header timeout")
	}
	c.Close()
	// an idle keep-alive connection
	c, _ = net.Dial("tcp", addr)
	c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v", err)
	}
	io.ReadAll(resp.Body)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle keep-alive connection: %v, want closed (EOF)", err)
	}
	c.Close()
	// a flood from one address
	var flood []net.Conn
	for range 60 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET / HTTP/1.1\r\n"))
		flood = append(flood, c)
	}
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	resp, err = httpFrom("127.0.0.2").Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz from another address during the flood: %v", err)
	}
	resp.Body.Close()
	resp, err = httpFrom("127.0.0.2").Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	refused := 0.0
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "inferscope_connections_refused_total "); ok {
			json.Unmarshal([]byte(v), &refused)
		}
	}
	if refused < 30 {
		t.Errorf("60 connections from one address with a cap of 20: %g refused", refused)
	}
}

func newServerFor(t testing.TB, srv *web.Server) *httptest.Server {
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

// TestRateLimitCountsEveryFrame: binary frames use the message budget too,
// and rate_limited names the refused command's id.
func TestRateLimitCountsEveryFrame(t *testing.T) {
	ts := newWSServer(t, ws.Limits{MsgsPerSecond: 1, Burst: 5})
	w := dial(t, ts)
	for i := 0; i < 40; i++ {
		w.c.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3})
	}
	badFrames, limited := 0, 0
	for i := 0; i < 40; i++ {
		m := w.read()
		var e wire.ErrorPayload
		json.Unmarshal(m.Payload, &e)
		switch e.Code {
		case "bad_frame":
			badFrames++
		case "rate_limited":
			limited++
		}
	}
	if badFrames > 6 || limited < 34 {
		t.Errorf("40 binary frames with a burst of 5: %d bad_frame, %d rate_limited", badFrames, limited)
	}
	w.c.WriteMessage(websocket.TextMessage, []byte(`{"type":"ping","id":4242}`))
	m := w.read()
	if m.Type != wire.MsgError || m.ID != 4242 || !strings.Contains(string(m.Payload), "rate_limited") {
		t.Errorf("rate_limited reply: %s id %d %s, want id 4242", m.Type, m.ID, m.Payload)
	}
}
